package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestAccAccountsDataSourcePagesBothOrders(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 301, Accounts: 137})
	all := e.srv.AccountIDs() // oldest first
	path := func(i int, attr string) tfjsonpath.Path {
		return tfjsonpath.New("accounts").AtSliceIndex(i).AtMapKey(attr)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`
data "backup_accounts" "newest_first" {}
data "backup_accounts" "oldest_first" { order = "asc" }
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_accounts.newest_first", tfjsonpath.New("accounts"), knownvalue.ListSizeExact(137)),
				statecheck.ExpectKnownValue("data.backup_accounts.newest_first", tfjsonpath.New("ids"), knownvalue.ListSizeExact(137)),
				str("data.backup_accounts.newest_first", "order", "desc"),
				statecheck.ExpectKnownValue("data.backup_accounts.newest_first", path(0, "id"), knownvalue.StringExact(all[136])),
				statecheck.ExpectKnownValue("data.backup_accounts.newest_first", tfjsonpath.New("ids").AtSliceIndex(136), knownvalue.StringExact(all[0])),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(0, "id"), knownvalue.StringExact(all[0])),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(136, "id"), knownvalue.StringExact(all[136])),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(0, "name"), knownvalue.StringExact("google_workspace account 1")),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(0, "platform"), knownvalue.StringExact("google_workspace")),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(0, "backup_status"), knownvalue.StringExact("success")),
				statecheck.ExpectKnownValue("data.backup_accounts.oldest_first", path(0, "service_type"), knownvalue.StringExact("backup")),
			},
		}},
	})
	// Each read of each data source pages at 50: ceil(137/50) = 3 requests.
	if n := e.srv.Requests(mockservice.RouteListAccounts); n%3 != 0 {
		t.Errorf("%d listing requests, not a multiple of 3", n)
	}
}

func TestAccAccountsDataSourceFilters(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 302, Accounts: -1})
	slackA, slackB, github := e.filterAccounts()
	list := stringList
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`
data "backup_accounts" "slack" {
  platform = "slack"
  order    = "asc"
}
data "backup_accounts" "failed" {
  backup_status = "failed"
  order         = "asc"
}
data "backup_accounts" "archive" { service_type = "archive" }
data "backup_accounts" "slack_backup" {
  platform     = "slack"
  service_type = "backup"
}
data "backup_accounts" "none" { platform = "salesforce" }
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_accounts.slack", tfjsonpath.New("ids"), list(slackA, slackB)),
				statecheck.ExpectKnownValue("data.backup_accounts.failed", tfjsonpath.New("ids"), list(slackB, github)),
				statecheck.ExpectKnownValue("data.backup_accounts.archive", tfjsonpath.New("ids"), list(slackB)),
				statecheck.ExpectKnownValue("data.backup_accounts.slack_backup", tfjsonpath.New("ids"), list(slackA)),
				statecheck.ExpectKnownValue("data.backup_accounts.none", tfjsonpath.New("ids"), list()),
				statecheck.ExpectKnownValue("data.backup_accounts.none", tfjsonpath.New("accounts"), knownvalue.ListSizeExact(0)),
			},
		}},
	})
}

func TestAccAccountsDataSourceValidatesOrder(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 303})
	var steps []resource.TestStep
	for _, bad := range []string{"ASC", "ascending", ""} {
		steps = append(steps, resource.TestStep{
			Config:      e.config(`data "backup_accounts" "all" { order = "` + bad + `" }`),
			ExpectError: expectError(`value must be one of:`, `"asc"`, `"desc"`),
			PlanOnly:    true,
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: e.factories(), Steps: steps})
	e.noRequests()
}

func TestAccAccountsDataSourceUnauthenticated(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 304})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.configWithKey("bks_wrong", `data "backup_accounts" "all" {}`),
			ExpectError: errorWithRequestID("Unable to list accounts for backup_accounts", 401, "Unauthenticated"),
		}},
	})
}

// The account filters without a service: what they keep, and the warning
// an empty result gets.
func TestAccountFilter(t *testing.T) {
	t.Parallel()
	acc := func(platform, status, service string) client.Account {
		return client.Account{ID: "acc_" + platform, Platform: platform, BackupStatus: status, ServiceType: service}
	}
	platforms := func(n int) []client.Account {
		var out []client.Account
		for i := range n {
			out = append(out, acc(fmt.Sprintf("p%02d", i), "success", "backup"))
		}
		return out
	}
	mixed := []client.Account{
		acc("slack", "success", "backup"),
		acc("slack", "failed", "archive"),
		acc("github", "failed", "backup"),
	}
	const consequence = "So ids is empty."
	null := types.StringNull()
	v := types.StringValue
	cases := []struct {
		name                  string
		platform, status, svc types.String
		accounts              []client.Account
		kept                  int
		summary               string // "": no warning
		detail                []string
		notInDetail           []string
	}{
		{name: "no filter", platform: null, status: null, svc: null, accounts: mixed, kept: 3},
		{name: "platform ignores case", platform: v("Slack"), status: null, svc: null, accounts: mixed, kept: 2},
		{name: "status ignores case", platform: null, status: v("FAILED"), svc: null, accounts: mixed, kept: 2},
		{name: "service type ignores case", platform: null, status: null, svc: v("Archive"), accounts: mixed, kept: 1},
		{name: "every filter at once", platform: v("SLACK"), status: v("Success"), svc: v("BACKUP"), accounts: mixed, kept: 1},
		{
			name: "typo", platform: v("Slak"), status: null, svc: null, kept: 0,
			accounts: []client.Account{acc("slack", "success", "backup"), acc("github", "success", "backup"), acc("slack", "failed", "backup")},
			summary:  "No account matches the filters of backup_accounts",
			detail: []string{
				"The organization has 3 accounts visible to the API key, and none matches every filter that is set:\n" +
					`- platform = "Slak" matches no account. The values of platform among the accounts are "github", "slack".` +
					"\n\n" + consequence,
			},
		},
		{
			name: "leading space", platform: v(" slack"), status: null, svc: null, accounts: mixed, kept: 0,
			summary: "No account matches the filters of backup_accounts",
			detail: []string{
				`platform = " slack" matches no account. "slack" differs from it only in surrounding white space`,
				`The values of platform among the accounts are "github", "slack".`,
			},
		},
		{
			name: "the service's value has the space", platform: v("SLACK"), status: null, svc: null, kept: 0,
			accounts: []client.Account{acc("slack ", "success", "backup"), acc("\tSlack", "success", "backup"), acc("github", "success", "backup")},
			summary:  "No account matches the filters of backup_accounts",
			detail:   []string{`"\tSlack", "slack " differ from it only in surrounding white space`},
		},
		{
			name: "plurals, each filter alone", platform: v("slack"), status: v("failed"), svc: v("backup"),
			accounts: []client.Account{acc("slack", "success", "backup"), acc("github", "failed", "backup"), acc("github", "failed", "archive")},
			kept:     0,
			summary:  "No account matches the filters of backup_accounts",
			detail: []string{
				"The organization has 3 accounts visible",
				`- platform = "slack" alone matches 1 account.` + "\n",
				`- backup_status = "failed" alone matches 2 accounts.` + "\n",
				`- service_type = "backup" alone matches 2 accounts.` + "\n\n",
			},
			notInDetail: []string{"values of", "white space"},
		},
		{
			name: "one account", platform: v("slack"), status: null, svc: null, kept: 0,
			accounts: []client.Account{acc("github", "success", "backup")},
			summary:  "No account matches the filters of backup_accounts",
			detail:   []string{"has 1 account visible", `The only platform among the accounts is "github".`},
		},
		{
			name: "a near miss beside matches", platform: v("slack"), status: v("archived"), svc: null, kept: 0,
			accounts: []client.Account{acc("slack", "success", "backup"), acc("slack ", "success", "backup")},
			summary:  "No account matches the filters of backup_accounts",
			detail: []string{
				`platform = "slack" alone matches 1 account. "slack " differs from it only`,
				`backup_status = "archived" alone matches no account. The only backup_status among the accounts is "success".`,
			},
		},
		{
			name: "ten values shown, then a count", platform: v("x"), status: null, svc: null, accounts: platforms(15), kept: 0,
			summary:     "No account matches the filters of backup_accounts",
			detail:      []string{`are "p00", "p01", "p02", "p03", "p04", "p05", "p06", "p07", "p08", "p09" and 5 more.`},
			notInDetail: []string{`"p10"`},
		},
		{
			name: "ten values, all shown", platform: v("x"), status: null, svc: null, accounts: platforms(10), kept: 0,
			summary:     "No account matches the filters of backup_accounts",
			detail:      []string{`"p08", "p09".`},
			notInDetail: []string{"more"},
		},
		{
			name: "values beyond those kept", platform: v("x"), status: null, svc: null, accounts: platforms(70), kept: 0,
			summary: "No account matches the filters of backup_accounts",
			detail:  []string{`"p09" and at least 41 more.`},
		},
		{
			name: "a long value is cut", platform: v("x"), status: null, svc: null, kept: 0,
			accounts: []client.Account{acc(strings.Repeat("y", 1000), "success", "backup")},
			summary:  "No account matches the filters of backup_accounts",
			detail:   []string{`is "` + strings.Repeat("y", filterValueShownLen) + `…".`},
		},
		{
			name: "filters, no account", platform: v("slack"), status: null, svc: null, kept: 0,
			summary: "No account matches the filters of backup_accounts",
			detail:  []string{"The API key's organization has no accounts visible to it, so no filter can match one.\n\n" + consequence},
		},
		{
			name: "no filter, no account", platform: null, status: null, svc: null, kept: 0,
			summary: "No account is visible to backup_accounts",
			detail:  []string{"The API key's organization has no accounts visible to it. " + consequence},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newAccountFilters(tc.platform, tc.status, tc.svc)
			kept := 0
			for _, a := range tc.accounts {
				if f.keep(a) {
					kept++
				}
			}
			if kept != tc.kept {
				t.Errorf("kept %d accounts, want %d", kept, tc.kept)
			}
			for _, fl := range f.set {
				if len(fl.others) > filterValuesKept || len(fl.near) > filterNearMissesKept {
					t.Errorf("%s: %d values and %d near misses kept, over the bounds", fl.attr, len(fl.others), len(fl.near))
				}
			}
			var diags diag.Diagnostics
			f.warnIfEmpty(&diags, "backup_accounts", consequence)
			if diags.HasError() {
				t.Fatalf("errors: %v", diags)
			}
			if tc.summary == "" {
				if len(diags) != 0 {
					t.Fatalf("want no diagnostic, got %v", diags)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary() != tc.summary {
				t.Fatalf("want one warning %q, got %v", tc.summary, diags)
			}
			detail := diags[0].Detail()
			for _, want := range tc.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, detail)
				}
			}
			for _, not := range tc.notInDetail {
				if strings.Contains(detail, not) {
					t.Errorf("detail has %q:\n%s", not, detail)
				}
			}
		})
	}
}

func TestAccountFilterCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "no account", 1: "1 account", 2: "2 accounts", 1000: "1000 accounts"} {
		if got := plural(n, "account"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// A filter written as the platform's display name ("Slack") finds the
// accounts the service lists as "slack", in both data sources.
func TestAccAccountFilterIgnoresCase(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2801, Accounts: -1})
	slackA, slackB, github := e.filterAccounts()
	ids := stringList
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`
data "backup_accounts" "slack" {
  platform = "Slack"
  order    = "asc"
}
data "backup_accounts" "failed_backups" {
  backup_status = "FAILED"
  service_type  = "Backup"
}
data "backup_stale_accounts" "slack" {
  platform = "SLACK"
  max_age  = "24h"
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_accounts.slack", tfjsonpath.New("ids"), ids(slackA, slackB)),
				statecheck.ExpectKnownValue("data.backup_accounts.slack", tfjsonpath.New("accounts"), knownvalue.ListSizeExact(2)),
				statecheck.ExpectKnownValue("data.backup_accounts.failed_backups", tfjsonpath.New("ids"), ids(github)),
				// Neither slack account has a backup: both checked, both stale.
				statecheck.ExpectKnownValue("data.backup_stale_accounts.slack", tfjsonpath.New("checked"), knownvalue.Int64Exact(2)),
				statecheck.ExpectKnownValue("data.backup_stale_accounts.slack", tfjsonpath.New("ids"), knownvalue.SetExact([]knownvalue.Check{
					knownvalue.StringExact(slackA), knownvalue.StringExact(slackB),
				})),
			},
		}},
	})
}

// A filter that matches nothing warns, naming the filter as written and
// the values the accounts have, at no cost beyond the one listing: "Slak"
// in backup_accounts, " slack" (a stray space) in backup_stale_accounts.
func TestAccAccountFilterNoMatchWarns(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2802}) // one account of each of the 5 platforms
	c := newCLI(t, e, e.config(`
data "backup_accounts" "typo" {
  platform = "Slak"
}
data "backup_stale_accounts" "space" {
  platform = " slack"
  max_age  = "24h"
}

output "ids" {
  value = data.backup_accounts.typo.ids
}
output "checked" {
  value = data.backup_stale_accounts.space.checked
}
`))
	before := e.srv.Stats()
	out := c.run("apply", "-auto-approve", "-no-color")
	values := `"github", "google_workspace", "microsoft_365", "salesforce", "slack".`
	for _, want := range [][]string{
		{"Warning: No account matches the filters of backup_accounts",
			"The organization has 5 accounts visible to the API key, and none matches every filter that is set:",
			`- platform = "Slak" matches no account. The values of platform among the accounts are ` + values,
			"So ids and accounts are empty, and anything built from them (for example a backup_trigger action's account_ids) backs up nothing."},
		{"Warning: No account matches the filters of backup_stale_accounts",
			`- platform = " slack" matches no account. "slack" differs from it only in surrounding white space, which filters do not ignore (they ignore case).`,
			"The values of platform among the accounts are " + values,
			"So checked is 0 and ids is empty"},
	} {
		if !expectError(want...).MatchString(out) {
			t.Errorf("the apply's output lacks, in order, %q:\n%s", want, out)
		}
	}
	if got := c.run("output", "-json", "checked"); strings.TrimSpace(got) != "0" {
		t.Errorf("checked = %s, want 0", got)
	}
	// Read once each, while planning: one page of accounts each, and no
	// backups to read for no account.
	after := e.srv.Stats()
	if n := after.Requests[mockservice.RouteListAccounts] - before.Requests[mockservice.RouteListAccounts]; n != 2 {
		t.Errorf("%d accounts listing requests, want 2", n)
	}
	if n := after.TotalRequests() - before.TotalRequests(); n != 2 {
		t.Errorf("%d requests in all, want the 2 listings", n)
	}
}

// An organization without accounts is worth a word even without filters:
// a pipeline built on it backs up nothing.
func TestAccAccountFilterEmptyOrganizationWarns(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2803, Accounts: -1})
	c := newCLI(t, e, e.config(`
data "backup_accounts" "all" {}
data "backup_stale_accounts" "all" {
  max_age = "24h"
}
`))
	out := c.run("apply", "-auto-approve", "-no-color")
	for _, ds := range []string{"backup_accounts", "backup_stale_accounts"} {
		if !expectError("Warning: No account is visible to "+ds, "The API key's organization has no accounts visible to it.").MatchString(out) {
			t.Errorf("no warning of an empty organization from %s:\n%s", ds, out)
		}
	}
}
