package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Import by identity and terraform query need Terraform 1.12 and 1.14 (and
// OpenTofu 1.12 for identity; OpenTofu has no query).
var (
	needsIdentity = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)}
	needsQuery    = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)}
)

func identityOf(accountID string, backupID knownvalue.Check) map[string]knownvalue.Check {
	return map[string]knownvalue.Check{"account_id": knownvalue.StringExact(accountID), "id": backupID}
}

// TestAccTriggerIdentity: the identity is set on create and kept by
// refresh and update; an import block with that identity adopts the backup
// with no change and no POST; so does the string id.
func TestAccTriggerIdentity(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1201, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	id := e.srv.AccountIDs()[0]
	other := e.srv.AccountIDs()[1]
	b := e.outsideBackup(t, other)
	adopt := func(importArgs string) string {
		return e.config(fmt.Sprintf("import {\n  to = backup_trigger.adopted\n  %s\n}\n\n", importArgs) +
			fmt.Sprintf("resource \"backup_trigger\" \"adopted\" {\n  account_id = %q\n  triggers   = { release = \"r1\" }\n}\n", other))
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsIdentity,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:            e.config(triggerConfig(id, "")),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(addr, identityOf(id, bkpID))},
			},
			{
				// Update in place keeps it.
				Config:            e.config(triggerConfig(id, "  on_conflict = \"fail\"\n")),
				ConfigPlanChecks:  expectAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(addr, identityOf(id, bkpID))},
			},
			{
				// The framework's own round trip: import by the identity in state.
				ResourceName:    addr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				// An imported trigger is adopted in an update on its first
				// apply, even when the configuration matches it, so that a
				// later change of triggers takes a backup.
				Config:             e.config(triggerConfig(id, "")),
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
			},
			{
				Config: adopt(fmt.Sprintf("identity = {\n    account_id = %q\n    id         = %q\n  }", other, b.ID)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("backup_trigger.adopted", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity("backup_trigger.adopted", identityOf(other, knownvalue.StringExact(b.ID))),
					str("backup_trigger.adopted", "id", b.ID),
				},
				Check: e.expectQueued(other, 1),
			},
		},
	})
}

// TestAccTriggerIdentityImportRefusesBadIdentity: a malformed identity is
// refused naming the attribute, with no request.
func TestAccTriggerIdentityImportRefusesBadIdentity(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1202})
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsIdentity,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config("import {\n  to = backup_trigger.x\n  identity = {\n    account_id = \"acc_short\"\n    id = \"bkp_0123456789abcdef\"\n  }\n}\n" +
				"resource \"backup_trigger\" \"x\" {\n  account_id = \"acc_0123456789abcdef\"\n}\n"),
			ExpectError: regexp.MustCompile(`identity.account_id must be an account id`),
		}},
	})
	e.noRequests()
}

// backupsQuery is a list block over an account's backups.
// backupsQuery is a list block over an account's backups. Query files
// take no terraform or provider configuration of their own: they use the
// configuration's, which a plain step before the query steps sets up.
func backupsQuery(name, accountID, extra string, limit int) string {
	return fmt.Sprintf("list \"backup_trigger\" %q {\n  provider = backup\n  limit    = %d\n  include_resource = true\n  config {\n    account_id = %q\n%s  }\n}\n",
		name, limit, accountID, extra)
}

// TestAccTriggerListQuery: terraform query lists an account's backups,
// newest first, with identities and display names; it filters by status,
// stops at the limit and pages at 50: ⌈limit/50⌉ requests when nothing is
// filtered out.
func TestAccTriggerListQuery(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1203})
	acct := e.srv.AccountIDs()[0]
	e.srv.AddBackups(acct, 130, 4, "quota exceeded") // every 4th failed: 32 of 130
	all, err := client.Collect(e.rawClient(t).Backups(t.Context(), acct, client.ListOptions{}))
	if err != nil || len(all) != 130 {
		t.Fatalf("%d backups, %v", len(all), err)
	}
	newest := all[0]
	var firstFailed client.Backup
	for _, b := range all {
		if b.Status == client.StatusFailed {
			firstFailed = b
			break
		}
	}
	display := func(b client.Backup) string {
		return fmt.Sprintf("%s (%s, %s)", b.ID, b.Status, b.CreatedAt.UTC().Format(time.RFC3339))
	}
	byID := func(b client.Backup) queryfilter.QueryFilter {
		return queryfilter.ByResourceIdentity(map[string]knownvalue.Check{"account_id": knownvalue.StringExact(acct), "id": knownvalue.StringExact(b.ID)})
	}
	var before int
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsQuery,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: e.config("")},
			{
				PreConfig: func() { before = e.srv.Requests(mockservice.RouteListBackups) },
				Query:     true,
				Config:    backupsQuery("recent", acct, "", 60),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("backup_trigger.recent", 60),
					querycheck.ExpectIdentity("backup_trigger.recent", identityOf(acct, knownvalue.StringExact(newest.ID))),
					querycheck.ExpectResourceDisplayName("backup_trigger.recent", byID(newest), knownvalue.StringExact(display(newest))),
					querycheck.ExpectResourceKnownValues("backup_trigger.recent", byID(newest), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("backup_status"), KnownValue: knownvalue.StringExact(newest.Status)},
						{Path: tfjsonpath.New("account_id"), KnownValue: knownvalue.StringExact(acct)},
					}),
				},
			},
			{
				PreConfig: func() {
					// 60 results at 50 a page: 2 requests, whatever Terraform
					// asked of the provider besides.
					if n := e.srv.Requests(mockservice.RouteListBackups) - before; n != 2 {
						t.Errorf("the query of 60 backups sent %d listing requests, want 2", n)
					}
				},
				Query:  true,
				Config: backupsQuery("failed", acct, "    statuses   = [\"failed\"]\n", 20),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("backup_trigger.failed", 20),
					querycheck.ExpectResourceDisplayName("backup_trigger.failed", byID(firstFailed), knownvalue.StringExact(display(firstFailed))),
				},
			},
		},
	})
}

// TestAccTriggerListRefusesBadConfig: a malformed account id or an unknown
// status is refused before any request.
func TestAccTriggerListRefusesBadConfig(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1204})
	acct := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsQuery,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: e.config("")},
			{Query: true, Config: backupsQuery("x", "acc_nope", "", 5), ExpectError: regexp.MustCompile(`must be an account id`)},
			{Query: true, Config: backupsQuery("x", acct, "    statuses   = [\"done\"]\n", 5), ExpectError: regexp.MustCompile(`value must be one of`)},
		},
	})
	e.noRequests()
}

// TestAccTriggerQueryGeneratesImports drives the binary: terraform query
// -generate-config-out writes import and resource blocks; applying them
// imports the backups with no new backup, and the next plan is clean.
func TestAccTriggerQueryGeneratesImports(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 1205})
	acct := e.srv.AccountIDs()[0]
	e.srv.AddBackups(acct, 7, 3, "quota exceeded")
	skipBelow(t, "1.14.0", "terraform query")
	c := newCLI(t, e, e.config(""))
	query := fmt.Sprintf("list \"backup_trigger\" \"history\" {\n  provider = backup\n  limit    = 5\n  include_resource = true\n  config {\n    account_id = %q\n  }\n}\n", acct)
	if err := os.WriteFile(filepath.Join(c.dir, "backups.tfquery.hcl"), []byte(query), 0o600); err != nil {
		t.Fatal(err)
	}
	c.run("query", "-generate-config-out=adopted.tf", "-no-color")
	generated, err := os.ReadFile(filepath.Join(c.dir, "adopted.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(generated), "import {"); n != 5 {
		t.Fatalf("generated %d import blocks, want 5:\n%s", n, generated)
	}
	out := c.run("apply", "-auto-approve", "-no-color")
	if !strings.Contains(out, "5 imported") {
		t.Errorf("apply did not import the 5 backups:\n%s", out)
	}
	if plan := c.run("plan", "-no-color", "-detailed-exitcode"); !strings.Contains(plan, "No changes") {
		t.Errorf("the plan after the import is not clean:\n%s", plan)
	}
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d trigger POSTs, want none", n)
	}
}
