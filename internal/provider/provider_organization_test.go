package provider

import (
	"fmt"
	"regexp"
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
				ExpectError: expectError("Unable to trigger a backup of account "+id,
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
					// One read per apply that triggers; plans and refreshes read none.
					if n := e.srv.Requests(mockservice.RouteToken); n != 2 {
						return fmt.Errorf("%d token reads, want 2 (one per applying provider process)", n)
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
			ExpectError: expectError("organization_id", "must be an organization id: org_ followed by exactly 16 letters or digits", "got: acme-production"),
		}},
	})
	e.noRequests()
}

// The destroy-time backup is guarded too: with a key of another
// organization, destroy fails before the guarded resource goes, and
// nothing is queued.
func TestAccProviderOrganizationGuardsDestroyBackups(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2203, PendingFor: 20 * time.Millisecond, RunningFor: 40 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.configForOrg(foreignOrg, guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("destroy succeeded under the wrong organization:\n%s", out)
	}
	if !regexp.MustCompile(words("not to the expected " + foreignOrg + "; nothing was changed")).MatchString(out) {
		t.Errorf("the error does not name the organizations:\n%s", out)
	}
	if _, gone := c.destroyedAt(); gone {
		t.Error("the guarded resource was destroyed without its backup")
	}
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued under the wrong organization", n)
	}
}
