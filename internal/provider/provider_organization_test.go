package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// configForOrg is a provider block with organization_id, followed by body.
func (e *testEnv) configForOrg(org, body string) string {
	return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url        = %q\n  api_key         = %q\n  organization_id = %q\n}\n\n%s",
		e.url, e.key, org, body))
}

const foreignOrg = "org_0000000000000000"

// A key of another organization changes nothing: the trigger fails naming
// both organizations, before any POST; with the right organization the
// same configuration takes its backup, after one token read.
func TestAccProviderOrganizationGuardsTriggers(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2201})
	id := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: e.configForOrg(foreignOrg, triggerConfig(id, "")),
				ExpectError: expectError("API key of another organization for backup_trigger of account "+id,
					"the API key belongs to organization "+e.srv.OrganizationID()+` ("Example Org"), not to the expected `+foreignOrg,
					"nothing was changed", "check which key the provider was given"),
			},
			{
				PreConfig: func() {
					if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
						t.Errorf("%d POSTs under the wrong organization", n)
					}
					if n := e.srv.BackupsQueued(id); n != 0 {
						t.Errorf("%d backups queued under the wrong organization", n)
					}
				},
				Config: e.configForOrg(e.srv.OrganizationID(), triggerConfig(id, "")),
				Check: resource.ComposeAggregateTestCheckFunc(e.expectQueued(id, 1), func(*terraform.State) error {
					// One read per provider process that plans or applies a
					// trigger's creation: the refused plan, then this step's
					// plan and apply. Refreshes and other plans read none.
					if n := e.srv.Requests(mockservice.RouteToken); n != 3 {
						return fmt.Errorf("%d token reads, want 3 (one per process planning or applying a creation)", n)
					}
					return nil
				}),
			},
		},
	})
}

// A value no organization id has is refused at validate time.
func TestAccProviderOrganizationIDValidated(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2202})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.configForOrg("acme-production", triggerConfig(e.srv.AccountIDs()[0], "")),
			PlanOnly:    true,
			ExpectError: expectError("organization_id", "must be an organization id: org_ followed by exactly 16 letters or digits", `got "acme-production"`),
		}},
	})
	e.noRequests()
}

// A guard for a key of another organization is refused when it is
// planned, not when the destroy it exists for is under way: nothing is
// created. The destroy-time backup is guarded too: a guard whose provider
// is later given another organization fails its destroy before the
// guarded resource goes, and nothing is queued.
func TestAccProviderOrganizationGuardsDestroyBackups(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2203, PendingFor: 20 * time.Millisecond, RunningFor: 40 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.configForOrg(foreignOrg, guardedDatabase(id, "")))
	mismatch := regexp.MustCompile(words("not to the expected " + foreignOrg + "; nothing was changed"))
	out, err := c.exec(nil, "plan", "-no-color")
	if err == nil || !mismatch.MatchString(out) || !strings.Contains(out, "API key of another organization for backup_on_destroy of account "+id) {
		t.Fatalf("planning a guard under the wrong organization: %v\n%s", err, out)
	}
	if out, err := c.exec(nil, "apply", "-auto-approve", "-no-color"); err == nil || c.state(guardAddr) != nil {
		t.Fatalf("a guard was created under the wrong organization (%v):\n%s", err, out)
	}

	c.write(e.configForOrg(e.srv.OrganizationID(), guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	c.write(e.configForOrg(foreignOrg, guardedDatabase(id, "")))
	out, err = c.exec(nil, "destroy", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("destroy succeeded under the wrong organization:\n%s", out)
	}
	if !mismatch.MatchString(out) {
		t.Errorf("the error does not name the organizations:\n%s", out)
	}
	if _, gone := c.destroyedAt(); gone {
		t.Error("the guarded resource was destroyed without its backup")
	}
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued under the wrong organization", n)
	}
}

// The action checks organization_id at plan: a key of another
// organization fails the plan of the change it guards, with no POST.
func TestAccProviderOrganizationGuardsActions(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2204})
	id := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsActions,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.configForOrg(foreignOrg, guarded(id, "", "v1", "after_create")),
			ExpectError: expectError("API key of another organization for the backup_trigger action", "not to the expected "+foreignOrg),
		}},
	})
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d POSTs under the wrong organization", n)
	}
}
