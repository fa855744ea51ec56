package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

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
