package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

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
