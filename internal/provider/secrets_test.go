package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// noSecret fails a plan or state check whose JSON holds the secret.
type noSecret struct{ secret string }

func (c noSecret) find(what string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if n := strings.Count(string(b), c.secret); n > 0 {
		return fmt.Errorf("the API key appears %d time(s) in the %s JSON", n, what)
	}
	return nil
}

// CheckPlan looks at the whole plan but its input variables: Terraform keeps
// the values of input variables, sensitive ones included, in every plan, so
// a key given through a variable is there whatever the provider does. (The
// docs recommend BACKUP_API_KEY for that reason.)
func (c noSecret) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	p := *req.Plan
	p.Variables = nil
	resp.Error = c.find("plan", p)
}

func (c noSecret) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c.find("state", req.State)
}

// The API key never reaches Terraform's or the provider's logs at TRACE
// level, the state or the plan, over every data source, the resource's
// whole life, retries and error paths. The key is given as users should:
// in BACKUP_API_KEY, or in a sensitive variable.
func TestAccSecretsNeverLeak(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)

	e := newTestEnv(t, mockservice.Options{Seed: 1101, Accounts: 60, AuditLogs: 60,
		PendingFor: 20 * time.Millisecond, RunningFor: 30 * time.Millisecond})
	ids := e.srv.AccountIDs()
	paused := e.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	failing := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "export refused"})
	wrongKey := e.srv.AddKey(mockservice.KeySpec{ExpiresAt: e.clock.Now().Add(-time.Hour)}) // expired: 401
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, PerRoute: true, Times: 1})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1})
	e.setenv(t)

	guard := noSecret{secret: e.key}
	checks := func(step resource.TestStep) resource.TestStep {
		step.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply:             append(step.ConfigPlanChecks.PreApply, guard),
			PostApplyPostRefresh: []plancheck.PlanCheck{guard},
		}
		if step.ExpectError == nil {
			step.ConfigStateChecks = append(step.ConfigStateChecks, guard)
		}
		return step
	}
	everything := withProvider(fmt.Sprintf(`
data "backup_token" "this" {}
data "backup_accounts" "all" {}
data "backup_account" "first" { id = %[1]q }
data "backup_audit_logs" "all" {}
data "backup_account_backups" "first" { account_id = %[1]q }

resource "backup_trigger" "this" {
  account_id          = %[1]q
  wait_for_completion = true
}
`, ids[0]))
	withWait := func(on string) string {
		return strings.Replace(everything, "wait_for_completion = true", "wait_for_completion = true\n  on_conflict = "+on, 1)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			checks(resource.TestStep{Config: everything}),
			checks(resource.TestStep{Config: withWait(`"fail"`)}), // in-place update
			{Config: withWait(`"fail"`), ResourceName: "backup_trigger.this", ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"wait_for_completion", "on_conflict", "prior_backup_ids"}, // settings, not in the import id; the listing when its change went ahead, unknown to an import
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return ids[0] + "/" + s.RootModule().Resources["backup_trigger.this"].Primary.ID, nil
				}},
			checks(resource.TestStep{
				// The same key through a sensitive variable.
				Config: withProvider(`
variable "backup_api_key" {
  type      = string
  sensitive = true
}
provider "backup" {
  api_key = var.backup_api_key
}
data "backup_token" "this" {}
`),
				ConfigVariables: config.Variables{"backup_api_key": config.StringVariable(e.key)},
			}),
			checks(resource.TestStep{
				Config:      withProvider(`data "backup_account" "x" { id = "acc_0000000000000000" }`),
				ExpectError: expectError("No account acc_0000000000000000."),
			}),
			checks(resource.TestStep{
				Config:      withProvider(fmt.Sprintf(`resource "backup_trigger" "p" { account_id = %q }`, paused)),
				ExpectError: expectError("Unable to trigger a backup of account "+paused, "HTTP 422", "paused"),
			}),
			checks(resource.TestStep{
				Config:      withProvider(fmt.Sprintf(`resource "backup_trigger" "f" {`+"\n"+`  account_id = %q`+"\n"+`  wait_for_completion = true`+"\n"+`}`, failing)),
				ExpectError: expectError("Backup did not succeed"),
			}),
			checks(resource.TestStep{
				Config: withProvider(fmt.Sprintf(`
provider "backup" {
  api_key = %q
}
data "backup_token" "this" {}
`, wrongKey)),
				ExpectError: expectError("The API key was rejected"),
			}),
		},
	})

	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) < 100000 || !strings.Contains(string(logs), "Backup Service response") {
		t.Fatalf("the TRACE log (%d bytes) does not hold the provider's logs; the test would prove nothing", len(logs))
	}
	if n := strings.Count(string(logs), e.key); n != 0 {
		i := strings.Index(string(logs), e.key)
		t.Errorf("the API key appears %d time(s) in the TRACE log, first at: %q", n, string(logs[max(i-300, 0):i]))
	}
}
