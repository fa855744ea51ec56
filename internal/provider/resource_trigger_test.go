package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Without wait, create returns once the backup is queued; a later refresh
// shows its outcome, and the unchanged configuration plans nothing and
// sends no POST.
func TestAccTriggerWithoutWaitThenRefresh(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 701, PendingFor: time.Minute, RunningFor: time.Minute})
	id := e.srv.AccountIDs()[0]
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:           cfg,
				ConfigPlanChecks: expectAction(plancheck.ResourceActionCreate),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), bkpID),
					str(addr, "backup_status", "pending"),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("triggered_at"), rfc3339),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("completed_at"), knownvalue.Null()),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("wait_for_completion"), knownvalue.Bool(false)),
					str(addr, "on_conflict", "wait"),
					str(addr, "account_id", id),
				},
				Check: e.expectQueued(id, 1),
			},
			{
				PreConfig: func() { e.clock.Advance(time.Hour) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					str(addr, "backup_status", "success"),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("completed_at"), rfc3339),
				},
				Check: func(s *terraform.State) error {
					if n := e.srv.Requests(mockservice.RouteTrigger); n != 1 {
						return fmt.Errorf("%d POSTs; a re-apply without changes must send none", n)
					}
					return e.expectQueued(id, 1)(s)
				},
			},
		},
	})
}

func TestAccTriggerWaitForSuccess(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 702, PendingFor: 50 * time.Millisecond, RunningFor: 100 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:           e.config(triggerConfig(id, "  wait_for_completion = true\n  triggers = { release = \"v1\" }\n")),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionCreate),
			ConfigStateChecks: []statecheck.StateCheck{
				str(addr, "backup_status", "success"),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("completed_at"), rfc3339),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("triggers"), knownvalue.MapExact(map[string]knownvalue.Check{"release": knownvalue.StringExact("v1")})),
			},
			Check: e.expectQueued(id, 1),
		}},
	})
}

// A backup that fails is an error; the resource is tainted, and the next
// apply triggers again.
func TestAccTriggerWaitForFailedBackupTaints(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 703, PendingFor: 20 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "the platform refused the export"})
	cfg := e.config(triggerConfig(id, "  wait_for_completion = true\n"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      cfg,
				ExpectError: expectError("Backup did not succeed", "of account "+id+` ended with status "failed": the platform refused the export`, "The next apply takes a new backup"),
			},
			{
				PreConfig:        func() { e.srv.SetAccountFailure(id, "") },
				Config:           cfg,
				ConfigPlanChecks: expectAction(plancheck.ResourceActionReplace),
				ConfigStateChecks: []statecheck.StateCheck{
					str(addr, "backup_status", "success"),
				},
				Check: e.expectQueued(id, 2),
			},
		},
	})
}

// On virtual time: a 30-minute timeout passes in the clock's time, as the
// waits move it, with the provider's own poll intervals.
func TestAccTriggerWaitTimesOut(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 704, PendingFor: time.Hour, RunningFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	cfg := e.config(triggerConfig(id, "  wait_for_completion = true\n  timeouts {\n    create = \"30m\"\n  }\n"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ExpectError: regexp.MustCompile(`(?s)Backup still in progress.*` + words("Backup") + `\s+bkp_[A-Za-z0-9]{16}\s+` +
					words("of account "+id+" was still pending after waiting 30m") + `.*` + words("(timeouts.create is 30m0s)")),
			},
			{
				// Tainted: the plan replaces it.
				Config:             cfg,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued", n)
	}
}

// A backup already running: "wait" waits for it and then queues a new one.
func TestAccTriggerConflictWait(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 705, PendingFor: 100 * time.Millisecond, RunningFor: 200 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	var running string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() { running = e.outsideBackup(t, id).ID },
			Config:    e.config(triggerConfig(id, "")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), bkpID),
				str(addr, "backup_status", "pending"),
			},
			Check: func(s *terraform.State) error {
				if got := s.RootModule().Resources[addr].Primary.ID; got == running {
					return fmt.Errorf("the resource adopted the backup that was already running (%s)", running)
				}
				if n := e.srv.Stats().Requests[mockservice.RouteTrigger]; n < 2 {
					return fmt.Errorf("%d POSTs; the first should have met a 409", n)
				}
				return e.expectQueued(id, 2)(s)
			},
		}},
	})
}

func TestAccTriggerConflictFail(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 706, PendingFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	e.outsideBackup(t, id)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(triggerConfig(id, "  on_conflict = \"fail\"\n")),
			ExpectError: errorWithRequestID("Unable to trigger a backup of account "+id, 409, "Conflict",
				"A backup for account "+id+" is already in progress.", `With on_conflict = "fail", the provider does not wait for that backup to end`),
		}},
	})
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued", n)
	}
}

// While waiting for a backup in progress, the create timeout still holds.
func TestAccTriggerConflictWaitTimesOut(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 707, PendingFor: time.Hour, RunningFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	e.outsideBackup(t, id)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.config(triggerConfig(id, "  timeouts {\n    create = \"30m\"\n  }\n")),
			ExpectError: expectError("was already in progress and had not finished after", "(timeouts.create is 30m0s)", "No backup was queued", "Raise timeouts.create"),
		}},
	})
}

func TestAccTriggerRefusals(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 708})
	paused := e.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	lapsed := e.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StateSubscriptionLapsed})
	id := e.srv.AccountIDs()[0]
	gone := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.DeleteAccount(gone)
	readOnly := e.srv.AddKey(mockservice.KeySpec{ReadOnly: true})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: e.config(triggerConfig(paused, "")),
				ExpectError: errorWithRequestID("Unable to trigger a backup of account "+paused, 422, "Unprocessable Entity",
					"Account "+paused+" is not in a backupable state: paused"),
			},
			{
				Config:      e.config(triggerConfig(lapsed, "")),
				ExpectError: expectError("is not in a backupable state: subscription lapsed", "cannot be backed up in its current state"),
			},
			{
				Config: e.configWithKey(readOnly, triggerConfig(id, "")),
				ExpectError: errorWithRequestID("Unable to trigger a backup of account "+id, 403, "You are not authorized to perform this action.",
					"The key's permissions do not allow triggering backups."),
			},
			{
				Config:      e.config(triggerConfig(gone, "")),
				ExpectError: errorWithRequestID("Unable to trigger a backup of account "+gone, 404, "Resource not found."),
			},
		},
	})
	if st := e.srv.Stats(); len(st.BackupsQueued) != 0 {
		t.Errorf("refused triggers queued backups: %v", st.BackupsQueued)
	}
}

// "Accepted but answered 500": the apply succeeds with exactly one backup.
func TestAccTriggerUnknownOutcome(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 709, PendingFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(triggerConfig(id, "")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), bkpID),
				str(addr, "backup_status", "pending"),
			},
			Check: e.expectQueued(id, 1),
		}},
	})
}

// The account deleted out of band: refresh removes the resource and the
// plan proposes a new trigger, not an error.
func TestAccTriggerAccountDeletedOutOfBand(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 710})
	id := e.srv.AccountIDs()[0]
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:        func() { e.srv.DeleteAccount(id) },
				Config:           cfg,
				ConfigPlanChecks: expectAction(plancheck.ResourceActionCreate),
				// The plan is a create; applying it meets the 404 of the deleted account.
				ExpectError: errorWithRequestID("Unable to trigger a backup of account "+id, 404, "Resource not found."),
			},
		},
	})
}

func TestAccTriggerUpdateInPlace(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 711, PendingFor: 20 * time.Millisecond, RunningFor: 20 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	same := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:            e.config(triggerConfig(id, "")),
				ConfigStateChecks: []statecheck.StateCheck{same.AddStateValue(addr, tfjsonpath.New("id"))},
			},
			{
				Config:           e.config(triggerConfig(id, "  wait_for_completion = true\n  on_conflict = \"fail\"\n  timeouts {\n    create = \"5m\"\n  }\n")),
				ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
				ConfigStateChecks: []statecheck.StateCheck{
					same.AddStateValue(addr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("wait_for_completion"), knownvalue.Bool(true)),
					str(addr, "on_conflict", "fail"),
				},
				Check: e.expectQueued(id, 1),
			},
		},
	})
}

func TestAccTriggerReplacedOnTriggersAndAccount(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 712, PendingFor: time.Minute, RunningFor: time.Minute})
	ids := e.srv.AccountIDs()
	differ := statecheck.CompareValue(compare.ValuesDiffer())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:            e.config(triggerConfig(ids[0], "  triggers = { release = \"v1\" }\n")),
				ConfigStateChecks: []statecheck.StateCheck{differ.AddStateValue(addr, tfjsonpath.New("id"))},
			},
			{
				PreConfig:         func() { e.clock.Advance(time.Hour) }, // the first backup finishes
				Config:            e.config(triggerConfig(ids[0], "  triggers = { release = \"v2\" }\n")),
				ConfigPlanChecks:  expectAction(plancheck.ResourceActionReplace),
				ConfigStateChecks: []statecheck.StateCheck{differ.AddStateValue(addr, tfjsonpath.New("id"))},
				Check:             e.expectQueued(ids[0], 2),
			},
			{
				Config:            e.config(triggerConfig(ids[1], "  triggers = { release = \"v2\" }\n")),
				ConfigPlanChecks:  expectAction(plancheck.ResourceActionReplace),
				ConfigStateChecks: []statecheck.StateCheck{differ.AddStateValue(addr, tfjsonpath.New("id"))},
				Check:             e.expectQueued(ids[1], 1),
			},
		},
	})
}

func TestAccTriggerImport(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 713, PendingFor: time.Minute, RunningFor: time.Minute})
	id := e.srv.AccountIDs()[0]
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig:    func() { e.clock.Advance(time.Hour) },
				RefreshState: true,
				Check:        resource.TestCheckResourceAttr(addr, "backup_status", "success"),
			},
			{
				Config:       cfg,
				ResourceName: addr,
				ImportState:  true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return id + "/" + s.RootModule().Resources[addr].Primary.ID, nil
				},
				ImportStateVerify: true,
				// The listing when its change went ahead: an import knows none until its first apply.
				ImportStateVerifyIgnore: []string{"prior_backup_ids"},
			},
			{
				Config:        cfg,
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: id,
				ExpectError:   expectError("Invalid import id", "Expected <account id>/<backup id>"),
			},
		},
	})
}

func TestAccTriggerValidation(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 714})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(triggerConfig("acc_0123", "")),
				ExpectError: expectError("must be an account id"),
				PlanOnly:    true,
			},
			{
				Config:      e.config(triggerConfig("acc_0123456789abcdef", "  on_conflict = \"retry\"\n")),
				ExpectError: expectError(`on_conflict value must be one of: ["wait" "fail"]`),
				PlanOnly:    true,
			},
		},
	})
	e.noRequests()
}

// The paths users take beyond a plain apply: Ctrl-C during a wait, a wait
// that times out, import of a trigger whose configuration has triggers,
// and triggers that say nothing. Each proves "one backup per change" with
// the mock's counters.

// An interrupted wait whose backup is good by the next plan: that plan
// updates the trigger in place, so that the apply which lets the guarded
// change go ahead records when. A backup another pipeline queued before
// that apply then does not count for the next change (reuse_within): the
// floor is not the backup's completion.
func TestAccTriggerInterruptedThenGoodRecordsItsChange(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewStepped()
	// Seconds, and jumps that keep the clocks within the allowance, so that reuse_within can be measured.
	e := newWallClockEnv(t, mockservice.Options{Seed: 1003, Clock: clock, PendingFor: 2 * time.Second, RunningFor: 500 * time.Millisecond})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := func(release, extra string) string {
		return e.config(triggerConfig(id, "  triggers            = { release = \""+release+"\" }\n"+extra) +
			"\nresource \"terraform_data\" \"migration\" {\n  input      = \"" + release + "\"\n  depends_on = [backup_trigger.this]\n}\n")
	}
	c := newCLI(t, e, config("r2", "  wait_for_completion = true\n"))
	_, _ = c.interrupt(func() bool { return e.srv.Requests(mockservice.RouteListBackups) >= 2 }, "apply", "-auto-approve", "-no-color")
	if c.state(addr) == nil || c.state("terraform_data.migration") != nil {
		t.Fatal("want the trigger saved and the guarded change not run after the interrupt")
	}
	clock.Advance(3 * time.Second) // the backup succeeds; another pipeline queues one, which succeeds
	other, err := e.rawClient(t).Trigger(id).Post(t.Context())
	if err != nil || other == nil {
		t.Fatalf("another pipeline's trigger: %v", err)
	}
	clock.Advance(3 * time.Second)

	if plan := c.run("plan", "-no-color"); !strings.Contains(plan, "updated in-place") {
		t.Fatalf("the plan after an interrupted wait, its backup good since, should update the trigger in place:\n%s", plan)
	}
	c.run("apply", "-auto-approve", "-no-color")
	if c.state("terraform_data.migration") == nil {
		t.Fatal("the guarded change did not run")
	}
	c.write(config("r3", "  reuse_within        = \"1h\"\n"))
	c.run("apply", "-auto-approve", "-no-color")
	if st := c.state(addr); st["reused"] == true || e.srv.BackupsQueued(id) != 3 {
		t.Errorf("the next change reused %v (%d backups queued, want 3): a backup queued before its previous change went ahead", st["id"], e.srv.BackupsQueued(id))
	}
}

// resumedWaitPlan is the line of a resumed wait's plan the docs show.
var resumedWaitPlan = regexp.MustCompile(`~ backup_status\s+= "(pending|running|success)" -> \(known after apply\)`)

// TestAccTriggerInterruptedWaitResumes drives the Terraform binary: SIGINT
// while the apply waits for the backup. The trigger is saved untainted
// with a warning; the next plan updates it in place, and the next apply
// resumes the wait for the same backup: no second POST. When the backup
// failed meanwhile, the plan says so and exactly one new backup is taken.
// What depends on the trigger (the guarded change) does not run in the
// interrupted apply, only once the resumed wait has seen a good backup.
func TestAccTriggerInterruptedWaitResumes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		failing bool
	}{{"then succeeds", false}, {"then fails", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := clocktest.NewStepped()
			e := newWallClockEnv(t, mockservice.Options{Seed: 1001, Clock: clock, PendingFor: time.Minute, RunningFor: time.Minute})
			spec := mockservice.AccountSpec{}
			if tc.failing {
				spec.FailWith = "the platform refused the export"
			}
			id := e.srv.AddAccount(spec)
			c := newCLI(t, e, e.config(triggerConfig(id, "  triggers            = { release = \"r2\" }\n  wait_for_completion = true\n")+
				"\nresource \"terraform_data\" \"migration\" {\n  input      = \"r2\"\n  depends_on = [backup_trigger.this]\n}\n"))

			// Interrupt once the backup is queued and has been polled once.
			out, _ := c.interrupt(func() bool { return e.srv.Requests(mockservice.RouteListBackups) >= 2 }, "apply", "-auto-approve", "-no-color")
			if !strings.Contains(out, "Waiting for the backup was interrupted") || !strings.Contains(out, "resumes waiting for this same backup") {
				t.Fatalf("the interrupted apply did not explain itself:\n%s", out)
			}
			// What the docs say Terraform prints: the trigger was saved, so Terraform reports its create complete.
			if !strings.Contains(out, "backup_trigger.this: Creation complete after") {
				t.Errorf("the interrupted apply does not print the trigger's \"Creation complete\", as the docs say:\n%s", out)
			}
			st := c.state(addr)
			if st == nil || st["tainted"] == true || st["backup_status"] != "pending" {
				t.Fatalf("state after the interrupt = %v, want the pending backup, untainted", st)
			}
			backupID := st["id"]
			if c.state("terraform_data.migration") != nil {
				t.Fatal("the change that depends on the trigger ran after the interrupt, before a good backup")
			}

			if tc.failing {
				clock.Advance(3 * time.Minute) // the backup fails
				plan := c.run("plan", "-no-color")
				if !strings.Contains(plan, "must be replaced") || !strings.Contains(plan, "did not succeed") {
					t.Fatalf("the plan after a failed backup should replace the trigger and say why:\n%s", plan)
				}
				e.srv.SetAccountFailure(id, "")
			} else {
				plan := c.run("plan", "-no-color")
				if !strings.Contains(plan, "updated in-place") || strings.Contains(plan, "replaced") {
					t.Fatalf("the plan after an interrupt should resume the wait in place:\n%s", plan)
				}
				// The docs show this line: the update's backup_status is read by the resumed wait.
				if !resumedWaitPlan.MatchString(plan) {
					t.Errorf("the plan does not show backup_status as the docs do (~ backup_status = \"pending\" -> (known after apply)):\n%s", plan)
				}
			}
			// Let the backup in progress (the resumed one, or the new one) end
			// while the apply waits for it.
			// A new backup must be queued first: OpenTofu's apply reads the
			// listing more often before the replacement's POST than Terraform's.
			before, posts := e.srv.Requests(mockservice.RouteListBackups), e.srv.Requests(mockservice.RouteTrigger)
			if tc.failing {
				posts++
			}
			stop := make(chan struct{})
			go func() {
				for e.srv.Requests(mockservice.RouteListBackups) < before+3 || e.srv.Requests(mockservice.RouteTrigger) < posts {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
				clock.Advance(time.Hour)
			}()
			c.run("apply", "-auto-approve", "-no-color")
			close(stop)
			st = c.state(addr)
			wantPOSTs, wantID := 1, backupID
			if tc.failing {
				wantPOSTs = 2
				if st["id"] == backupID {
					t.Errorf("the failed backup was kept; want a new one")
				}
				wantID = st["id"]
			}
			if st["id"] != wantID || st["backup_status"] != "success" || st["tainted"] == true {
				t.Errorf("state after the resumed apply = %v", st)
			}
			if c.state("terraform_data.migration") == nil {
				t.Error("the change that depends on the trigger did not run after the good backup")
			}
			if n := e.srv.Requests(mockservice.RouteTrigger); n != wantPOSTs {
				t.Errorf("%d trigger POSTs, want %d", n, wantPOSTs)
			}
			if n := e.srv.BackupsQueued(id); n != wantPOSTs {
				t.Errorf("%d backups queued, want %d", n, wantPOSTs)
			}
		})
	}
}

// TestAccTriggerTimedOutWaitIsAdopted: a wait that times out fails the
// apply (the trigger is tainted); the replacement on the next apply adopts
// the same backup while it is in progress, or once it has succeeded,
// instead of queueing a second backup for the same change. One that failed
// is taken again.
func TestAccTriggerTimedOutWaitIsAdopted(t *testing.T) {
	for _, tc := range []struct {
		name       string
		advance    time.Duration // mock time passed before the second apply
		failing    bool
		wantPOSTs  int
		wantStatus string // of the trigger after the second apply
	}{
		// The backup is pending for 30 minutes, then running for 30; the
		// first apply's wait (10 minutes, on the clock) leaves it pending.
		// Still running when the replacement adopts it: the replacement
		// does not wait (wait_for_completion = false), so the state shows
		// the backup as the adoption found it.
		{name: "still running", advance: 30 * time.Minute, wantPOSTs: 1, wantStatus: client.StatusRunning},
		{name: "succeeded since", advance: 2 * time.Hour, wantPOSTs: 1, wantStatus: client.StatusSuccess},
		{name: "failed since", advance: 2 * time.Hour, failing: true, wantPOSTs: 2, wantStatus: client.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, mockservice.Options{Seed: 1002, PendingFor: 30 * time.Minute, RunningFor: 30 * time.Minute})
			spec := mockservice.AccountSpec{}
			if tc.failing {
				spec.FailWith = "quota exceeded"
			}
			id := e.srv.AddAccount(spec)
			body := "  triggers            = { release = \"r1\" }\n  wait_for_completion = %t\n  timeouts {\n    create = \"10m\"\n  }\n"
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: e.factories(),
				Steps: []resource.TestStep{
					{
						Config:      e.config(triggerConfig(id, fmt.Sprintf(body, true))),
						ExpectError: expectError("Backup still in progress", "waits for this same backup"),
					},
					{
						PreConfig: func() { e.clock.Advance(tc.advance) },
						// The replacement does not wait, so that its state
						// is the status the adoption found.
						Config:           e.config(triggerConfig(id, fmt.Sprintf(body, false))),
						ConfigPlanChecks: expectAction(plancheck.ResourceActionReplace),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue(addr, tfjsonpath.New("backup_status"), knownvalue.StringExact(tc.wantStatus)),
						},
						Check: e.expectQueued(id, tc.wantPOSTs),
					},
				},
			})
		})
	}
}

// TestAccTriggerImportAdoptsTriggers: a backup taken outside Terraform,
// imported into a configuration with triggers (by the CLI's import and by
// an import block), is adopted in place: no replacement, no POST.
func TestAccTriggerImportAdoptsTriggers(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1003, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	id := e.srv.AccountIDs()[0]
	var backupID string
	take := func(account string, into *string) func() {
		return func() {
			*into = e.outsideBackup(t, account).ID
		}
	}
	cfg := e.config(triggerConfig(id, "  triggers            = { release = \"r1\" }\n  wait_for_completion = true\n  on_conflict         = \"fail\"\n"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig:          take(id, &backupID),
				Config:             cfg,
				ResourceName:       addr,
				ImportState:        true,
				ImportStatePersist: true,
				ImportStateIdFunc:  func(*terraform.State) (string, error) { return id + "/" + backupID, nil },
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					// As an import records it: the backup, and the defaults
					// until the first apply adopts the configuration.
					if len(states) != 1 {
						return fmt.Errorf("%d states imported", len(states))
					}
					want := map[string]string{"account_id": id, "id": backupID, "wait_for_completion": "false", "on_conflict": "wait"}
					for k, v := range want {
						if got := states[0].Attributes[k]; got != v {
							return fmt.Errorf("imported %s = %q, want %q", k, got, v)
						}
					}
					if s := states[0].Attributes["backup_status"]; s == "" || states[0].Attributes["triggered_at"] == "" {
						return fmt.Errorf("the import did not read the backup: status %q", s)
					}
					return nil
				},
			},
			{
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("triggers"), knownvalue.MapExact(map[string]knownvalue.Check{"release": knownvalue.StringExact("r1")})),
					str(addr, "on_conflict", "fail"),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("wait_for_completion"), knownvalue.Bool(true)),
				},
				Check: e.expectPOSTs(1),
			},
			{
				// After the adoption, a change of triggers takes a backup as usual.
				Config:           e.config(triggerConfig(id, "  triggers = { release = \"r2\" }\n")),
				ConfigPlanChecks: expectAction(plancheck.ResourceActionReplace),
				Check:            e.expectQueued(id, 2),
			},
		},
	})
	if n := e.srv.BackupsQueued(id); n != 2 {
		t.Errorf("%d backups queued, want 2 (the one imported, the one for r2)", n)
	}
}

// TestAccTriggerImportBlockAdoptsTriggers: the same through an import
// block (Terraform 1.5+): "1 to import, 0 to add, 1 to change, 0 to destroy".
func TestAccTriggerImportBlockAdoptsTriggers(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1004, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	id := e.srv.AccountIDs()[0]
	b := e.outsideBackup(t, id)
	cfg := e.config(fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n\n", addr, id+"/"+b.ID) +
		triggerConfig(id, "  triggers = { release = \"r1\" }\n"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{str(addr, "id", b.ID)},
			Check:             e.expectPOSTs(1),
		}},
	})
}

// TestAccTriggerEmptyTriggersTakeNoBackup: `triggers = {}` and
// `{ a = null }` say nothing, so adding them to a trigger created without
// them is an in-place update, not a new backup.
func TestAccTriggerEmptyTriggersTakeNoBackup(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1005})
	id := e.srv.AccountIDs()[0]
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: e.config(triggerConfig(id, "")), Check: e.expectQueued(id, 1)},
			{Config: e.config(triggerConfig(id, "  triggers = {}\n")), ConfigPlanChecks: update, Check: e.expectPOSTs(1)},
			{Config: e.config(triggerConfig(id, "  triggers = { a = null }\n")), ConfigPlanChecks: update, Check: e.expectPOSTs(1)},
			{Config: e.config(triggerConfig(id, "  triggers = { a = \"1\" }\n")), ConfigPlanChecks: expectAction(plancheck.ResourceActionReplace), Check: e.expectQueued(id, 2)},
		},
	})
}

// TestAccTriggerTellsWhatHappens: a trigger whose account was deleted is
// dropped with a warning naming the account; destroying triggers warns of
// nothing (that their backups are kept is on the resource's page).
func TestAccTriggerTellsWhatHappens(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 1006})
	accts := e.srv.AccountIDs()[:3]
	c := newCLI(t, e, e.config(fmt.Sprintf(`resource "backup_trigger" "each" {
  count      = 3
  account_id = %s[count.index]
}
`, hclList(accts))))
	c.run("apply", "-auto-approve", "-no-color")

	e.srv.DeleteAccount(accts[0])
	plan := c.run("plan", "-no-color")
	if !expectError("will be created", "Backup trigger removed from state", "of account "+accts[0], "was deleted").MatchString(plan) {
		t.Errorf("the plan does not say why the trigger is created again:\n%s", plan)
	}

	// Backups are kept, as the resource's page says: no warning at every
	// replacement of every pipeline.
	if out := c.run("destroy", "-auto-approve", "-no-color"); strings.Contains(out, "Warning") {
		t.Errorf("destroying triggers warned:\n%s", out)
	}
}

// A runner killed mid-wait (SIGKILL of Terraform, and of the provider with
// it), then a retry: the one stated limit. Nothing recorded the trigger,
// and the API has no idempotency key, so the retry queues a second backup,
// whether the orphan is still running (the retry waits for it first,
// on_conflict = "wait") or done; it reports its own backup, never the
// orphan. "What a backup trigger guarantees" states exactly this.
func TestAccTriggerKilledRunnerRetry(t *testing.T) {
	t.Parallel()
	for _, orphanDone := range []bool{false, true} {
		t.Run(fmt.Sprintf("orphan done=%t", orphanDone), func(t *testing.T) {
			t.Parallel()
			clock := clocktest.NewStepped()
			e := newWallClockEnv(t, mockservice.Options{Seed: 1011, Clock: clock, PendingFor: time.Minute, RunningFor: time.Minute})
			id := e.srv.AddAccount(mockservice.AccountSpec{})
			c := newCLI(t, e, e.config(triggerConfig(id, "  wait_for_completion = true\n")))
			c.kill(func() bool { return e.srv.Requests(mockservice.RouteListBackups) >= 2 }, "apply", "-auto-approve", "-no-color") //nolint:errcheck // killed
			if n := e.srv.BackupsQueued(id); n != 1 {
				t.Fatalf("%d backups queued before the kill, want 1", n)
			}
			orphan := e.srv.NewestBackupID(id)
			if st := c.state(addr); st != nil {
				t.Fatalf("the killed apply recorded the trigger: %v", st)
			}
			if orphanDone {
				clock.Advance(time.Hour)
			}
			wantPOSTs := 3 // the killed one, a 409 while the orphan runs, the retry's
			if orphanDone {
				wantPOSTs = 2
			}
			// The orphan ends once the 409 has named it; the retry's backup
			// ends once the retry has listed it (and knows it by id). Each
			// moves the service's clock once: a clock that kept jumping would
			// be no clock a backup can be recognised by.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				orphanEnded, listedAt := orphanDone, -1
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
						posts, lists := e.srv.Requests(mockservice.RouteTrigger), e.srv.Requests(mockservice.RouteListBackups)
						switch {
						case !orphanEnded && posts >= 2:
							orphanEnded = true
							clock.Advance(time.Hour)
						case posts < wantPOSTs:
						case listedAt < 0:
							listedAt = lists
						case lists > listedAt:
							clock.Advance(time.Hour)
							return
						}
					}
				}
			}()
			c.run("apply", "-auto-approve", "-no-color")
			st := c.state(addr)
			if st == nil || st["id"] == orphan || st["backup_status"] != "success" {
				t.Errorf("the retry reports %v; want its own good backup, not the orphan %s", st, orphan)
			}
			if n := e.srv.BackupsQueued(id); n != 2 {
				t.Errorf("%d backups queued, want 2: the orphan and the retry's own (the documented limit)", n)
			}
			if n := e.srv.Requests(mockservice.RouteTrigger); n != wantPOSTs {
				t.Errorf("%d trigger POSTs, want %d", n, wantPOSTs)
			}
		})
	}
}

// missingBackup is a well-formed backup id no mock account has.
const missingBackup = "bkp_0000000000000000"

// unknownAccount is a well-formed account id the mock does not know.
const unknownAccount = "acc_0000000000000000"

// importMissing is the error of importing a backup the account lacks.
func importMissing(accountID, backupID string) []string {
	return []string{
		fmt.Sprintf("Cannot import backup %s of account %s: no such backup", backupID, accountID),
		fmt.Sprintf("Account %s has no backup %s", accountID, backupID),
		"the backup_account_backups data source lists the account's backups with their ids",
		"visible only with an API key of the account's organization",
	}
}

// importNoAccount is the error of importing a backup of an unknown account.
func importNoAccount(accountID, backupID string) []string {
	return []string{
		fmt.Sprintf("Cannot import backup %s of account %s: no such account", backupID, accountID),
		"HTTP 404", "No account " + accountID,
		fmt.Sprintf("The Backup Service does not know account %s, so backup %s cannot be imported", accountID, backupID),
		"backup_accounts data source", "backup_account_backups",
		"visible only with an API key of the account's organization",
	}
}

// TestAccTriggerImportUnknownBackup: importing a backup the service does
// not know fails naming the account and the backup, and says where the
// ids are listed, rather than Terraform's generic "non-existent remote
// object"; for an account it does not know too.
func TestAccTriggerImportUnknownBackup(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2851})
	id := e.srv.AccountIDs()[0]
	e.srv.AddBackups(id, 3, 0, "") // a listing to look through, without the one asked for
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStateId: id + "/" + missingBackup,
				ExpectError: expectError(importMissing(id, missingBackup)...),
			},
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStateId: unknownAccount + "/" + missingBackup,
				ExpectError: expectError(importNoAccount(unknownAccount, missingBackup)...),
			},
			{
				// An import block (plan-time import) reads the same way.
				Config: e.config(fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n\n", addr, id+"/"+missingBackup) +
					triggerConfig(id, "")),
				ExpectError: expectError(importMissing(id, missingBackup)...),
			},
		},
	})
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued by a failed import, want 0", n)
	}
}

// TestAccTriggerImportUnknownBackupByIdentity: the same through an import
// block with an identity (Terraform 1.12+).
func TestAccTriggerImportUnknownBackupByIdentity(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2852})
	id := e.srv.AccountIDs()[0]
	byIdentity := func(accountID string) string {
		return e.config(fmt.Sprintf("import {\n  to = %s\n  identity = {\n    account_id = %q\n    id         = %q\n  }\n}\n\n",
			addr, accountID, missingBackup) + triggerConfig(accountID, ""))
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsIdentity,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: byIdentity(id), ExpectError: expectError(importMissing(id, missingBackup)...)},
			{Config: byIdentity(unknownAccount), ExpectError: expectError(importNoAccount(unknownAccount, missingBackup)...)},
		},
	})
}

// TestAccTriggerImportedThenAccountDeleted: only the import's own read
// fails on a missing backup. A refresh of a trigger already imported (the
// mark stays until its first apply) still removes it with a warning, as
// for any trigger whose account went away.
func TestAccTriggerImportedThenAccountDeleted(t *testing.T) {
	// Still pending when refreshed: the refresh reads the backup itself.
	e := newTestEnv(t, mockservice.Options{Seed: 2853, PendingFor: time.Hour, RunningFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	b := e.outsideBackup(t, id)
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStatePersist: true,
				ImportStateId: id + "/" + b.ID,
			},
			{
				PreConfig:          func() { e.srv.DeleteAccount(id) },
				RefreshState:       true,
				ExpectNonEmptyPlan: true, // the configuration's trigger is to be created again
				Check: func(s *terraform.State) error {
					if _, ok := s.RootModule().Resources[addr]; ok {
						return fmt.Errorf("%s is still in the state after its account was deleted", addr)
					}
					return nil
				},
			},
		},
	})
}

// Refresh at scale: what a plan costs in requests, whatever the number of
// triggers and the age of their backups.

// manyTriggers is one trigger per account.
func manyTriggers(accounts []string) string {
	return fmt.Sprintf("resource \"backup_trigger\" \"each\" {\n  count      = %d\n  account_id = %s[count.index]\n}\n", len(accounts), hclList(accounts))
}

func TestAccTriggerRefreshCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		triggers   int
		history    int // newer backups added to every account after the apply
		inProgress int // triggers whose backup is still running at the plan
		deleted    int // accounts deleted out of band
		// want: requests the plan may send, at most, by route.
		maxAccountGets, maxAccountPages, maxBackupPages int
	}{
		// 8 direct reads, then one listing of the 60 accounts (2 pages);
		// never the backups listing, however old the backups.
		{name: "aged finished triggers", triggers: 60, history: 120, maxAccountGets: 8, maxAccountPages: 2, maxBackupPages: 0},
		{name: "one trigger alone", triggers: 1, history: 120, maxAccountGets: 1},
		// In progress: one page each (the backup in progress is the newest).
		{name: "a mix with in-progress ones", triggers: 30, inProgress: 5, history: 0, maxAccountGets: 8, maxAccountPages: 1, maxBackupPages: 5},
		// The listing's miss proves nothing: one direct read (and one token
		// read, for the whole command) proves the account gone.
		{name: "a deleted account", triggers: 30, deleted: 1, history: 60, maxAccountGets: 8 + 1, maxAccountPages: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 1301, Accounts: tc.triggers - tc.inProgress,
				PendingFor: time.Minute, RunningFor: time.Minute})
			finished := e.srv.AccountIDs()
			c := newCLI(t, e, e.config(manyTriggers(finished)))
			c.run("apply", "-auto-approve", "-no-color")
			e.clock.Advance(time.Hour) // every backup finished
			// Refreshed once since: the state holds every final status, as
			// it does for triggers that have lived a while.
			c.run("apply", "-auto-approve", "-no-color", "-refresh-only")
			accounts := finished
			for i := range tc.inProgress {
				accounts = append(accounts, e.srv.AddAccount(mockservice.AccountSpec{Name: fmt.Sprint("busy ", i)}))
			}
			if tc.inProgress > 0 {
				if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(e.config(manyTriggers(accounts))), 0o600); err != nil {
					t.Fatal(err)
				}
				c.run("apply", "-auto-approve", "-no-color") // the new ones stay pending: the mock's clock stands still
			}
			for _, a := range finished {
				e.srv.AddRecentBackups(a, tc.history)
			}
			for _, a := range finished[:tc.deleted] {
				e.srv.DeleteAccount(a)
			}
			e.srv.ResetStats()
			plan := c.run("plan", "-no-color")
			st := e.srv.Stats().Requests
			t.Logf("%d triggers, %d newer backups each: GET account %d, accounts pages %d, backups pages %d",
				len(accounts), tc.history, st[mockservice.RouteGetAccount], st[mockservice.RouteListAccounts], st[mockservice.RouteListBackups])
			if st[mockservice.RouteGetAccount] > tc.maxAccountGets || st[mockservice.RouteListAccounts] > tc.maxAccountPages ||
				st[mockservice.RouteListBackups] > tc.maxBackupPages {
				t.Errorf("the refresh sent %v, want at most %d account reads, %d accounts pages, %d backups pages",
					st, tc.maxAccountGets, tc.maxAccountPages, tc.maxBackupPages)
			}
			wantCreate := fmt.Sprintf("Plan: %d to add", tc.deleted)
			if tc.deleted == 0 {
				wantCreate = "No changes"
			}
			if !strings.Contains(plan, wantCreate) {
				t.Errorf("the plan should show %q:\n%s", wantCreate, plan)
			}
		})
	}
}

// TestAccTriggerRefreshListingFails: when the shared accounts listing
// fails, the plan fails with one error, not one per trigger.
func TestAccTriggerRefreshListingFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 1302, Accounts: 30, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	e.clientOptions = func(o *client.Options) { o.MaxRetries = 0 }
	c := newCLI(t, e, e.config(manyTriggers(e.srv.AccountIDs())))
	c.run("apply", "-auto-approve", "-no-color")
	c.run("apply", "-auto-approve", "-no-color", "-refresh-only") // every status is now final
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListAccounts})
	out, err := c.exec(nil, "plan", "-no-color")
	if err == nil {
		t.Fatalf("the plan succeeded although the accounts listing fails:\n%s", out)
	}
	if n := strings.Count(out, "Unable to check that account"); n != 1 {
		t.Errorf("the failed listing was reported %d times, want once:\n%s", n, out)
	}
	if !expectError("HTTP 500 (Internal Server Error) to GET /api/v1/accounts").MatchString(out) {
		t.Errorf("the error does not say what failed:\n%s", out)
	}
}

// The trigger never claims a backup it did not take and never takes two,
// whatever the service answers: each test plays one way a real deployment
// departs from the mock (a listing that lags or fails, a body without
// data) or one path a user takes (import into a matching configuration, a
// wait switched on for a failed backup, empty provider settings).

// listingFault rewrites the mock's backups listings: hiding backups
// created after hideFrom (a replica that lags behind every POST), or
// answering with a body of its own.
type listingFault struct {
	inner http.Handler
	clock clock.Clock // the mock's: its answers are dated by it, as the mock's own are

	mu       sync.Mutex
	hideFrom time.Time // zero: hide nothing
	body     string    // non-empty: the body of every backups listing
}

func (f *listingFault) set(hideFrom time.Time, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hideFrom, f.body = hideFrom, body
}

func (f *listingFault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hideFrom, body := f.hideFrom, f.body
	f.mu.Unlock()
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/backups") || (hideFrom.IsZero() && body == "") {
		f.inner.ServeHTTP(w, r)
		return
	}
	// Dated by the mock's clock, as a replica of the service would be (the
	// HTTP server would date it by the wall clock, minutes from the test's).
	w.Header().Set("Date", f.clock.Now().UTC().Format(http.TimeFormat))
	if body != "" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
		return
	}
	rec := httptest.NewRecorder()
	f.inner.ServeHTTP(rec, r)
	var page struct {
		Data       []map[string]any `json:"data"`
		Pagination map[string]any   `json:"pagination"`
	}
	if rec.Code != http.StatusOK || jsonDecode(rec.Body.Bytes(), &page) != nil {
		copyResponse(w, rec)
		return
	}
	kept := page.Data[:0]
	for _, b := range page.Data {
		created, _ := time.Parse(time.RFC3339, fmt.Sprint(b["created_at"]))
		if created.Before(hideFrom) {
			kept = append(kept, b)
		}
	}
	page.Data = kept
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// newFaultyListingEnv is a test environment whose backups listings go
// through a listingFault. The trigger looks for its backup as long as it
// does for users (IdentifyWithin, UncertainGrace): on the test's clock,
// that costs no time.
func newFaultyListingEnv(t *testing.T, opts mockservice.Options) (*testEnv, *listingFault) {
	t.Helper()
	e := newTestEnv(t, opts)
	f := &listingFault{inner: e.srv, clock: e.clock}
	e.behind(f)
	return e, f
}

// The POST is accepted but the listing never shows the new backup while
// it holds an old one: with wait_for_completion = false the apply warns,
// and saves the trigger with no backup id and when it was triggered; the
// next refresh, once the listing shows it, records it. One POST in all.
func TestAccTriggerQueuedButNotListedIsRecordedThenFound(t *testing.T) {
	e, f := newFaultyListingEnv(t, mockservice.Options{Seed: 1701})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddBackups(id, 3, 0, "")
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { f.set(e.clock.Now().Add(-time.Second), "") },
				Config:    cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					nullAttr(addr, "id"), nullAttr(addr, "backup_status"),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("triggered_at"), rfc3339),
				},
				Check:              resource.ComposeTestCheckFunc(e.expectPOSTs(1), e.expectQueued(id, 1)),
				ExpectNonEmptyPlan: true, // the refresh after apply still cannot see it: the plan looks again
			},
			{
				PreConfig: func() { f.set(time.Time{}, "") },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), bkpID),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("backup_status"), knownvalue.NotNull()),
				},
				Check: resource.ComposeTestCheckFunc(e.expectPOSTs(1), e.expectNewestIs(id, addr)),
			},
		},
	})
}

// expectNewestIs checks that the trigger's id is the account's newest backup.
func (e *testEnv) expectNewestIs(accountID, addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[addr]
		if rs == nil {
			return fmt.Errorf("%s not in state", addr)
		}
		newest := e.srv.NewestBackupID(accountID)
		if rs.Primary.Attributes["id"] != newest {
			return fmt.Errorf("%s records %s; the backup this apply queued is %s", addr, rs.Primary.Attributes["id"], newest)
		}
		return nil
	}
}

// The same with wait_for_completion = true: the apply fails, saying a
// backup was queued and what the next apply does; the next apply finds
// that backup and waits for it. One POST in all, never a year-old backup
// taken as this apply's.
func TestAccTriggerWaitedButNotListedFailsThenAdopts(t *testing.T) {
	e, f := newFaultyListingEnv(t, mockservice.Options{Seed: 1702})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddBackups(id, 3, 0, "")
	cfg := e.config(triggerConfig(id, "  wait_for_completion = true\n"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { f.set(e.clock.Now().Add(-time.Second), "") },
				Config:      cfg,
				ExpectError: expectError("Backup queued but not identified", "accepted it", "a backup was queued", "next apply looks for this backup before anything else, and the change goes ahead only once a backup for it is found"),
			},
			{
				PreConfig: func() { f.set(time.Time{}, "") },
				Config:    cfg,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), bkpID),
					str(addr, "backup_status", "success"),
				},
				Check: resource.ComposeTestCheckFunc(e.expectPOSTs(1), e.expectQueued(id, 1), e.expectNewestIs(id, addr)),
			},
		},
	})
}

// A listing body without its data array ({} from a proxy, say) is an
// error, not an empty listing: the refresh fails and keeps the trigger,
// and the next good refresh plans nothing. No second backup.
func TestAccTriggerRefreshOnBodyWithoutDataKeepsState(t *testing.T) {
	e, f := newFaultyListingEnv(t, mockservice.Options{Seed: 1703, PendingFor: time.Hour})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: cfg, Check: e.expectPOSTs(1)},
			{
				PreConfig:   func() { f.set(time.Time{}, `{}`) },
				Config:      cfg,
				ExpectError: expectError("Unable to read backup", "not the expected JSON", "data array"),
			},
			{
				PreConfig:        func() { f.set(time.Time{}, "") },
				Config:           cfg,
				ConfigPlanChecks: expectAction(plancheck.ResourceActionNoop),
				Check:            resource.ComposeTestCheckFunc(e.expectPOSTs(1), e.expectQueued(id, 1)),
			},
		},
	})
}

// Import into a configuration that matches it (as query
// -generate-config-out writes it): the first apply adopts it in an update,
// so that a later change of triggers takes a new backup.
func TestAccTriggerImportedThenTriggersChangeTakesABackup(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1704})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddBackups(id, 1, 0, "")
	existing := e.srv.NewestBackupID(id)
	plain := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:             plain,
				ResourceName:       addr,
				ImportState:        true,
				ImportStateId:      id + "/" + existing,
				ImportStatePersist: true,
			},
			{
				Config:           plain,
				ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
				Check:            resource.ComposeTestCheckFunc(e.expectPOSTs(0)),
			},
			{
				Config:           e.config(triggerConfig(id, "  triggers = { release = \"r2\" }\n")),
				ConfigPlanChecks: expectAction(plancheck.ResourceActionDestroyBeforeCreate),
				Check:            resource.ComposeTestCheckFunc(e.expectPOSTs(1), e.expectNewestIs(id, addr)),
			},
		},
	})
}

// A failed backup adopted with wait_for_completion switched on (false to
// true) fails the apply, naming the backup; the next plan replaces it.
func TestAccTriggerWaitSwitchedOnForFailedBackupFails(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1705, PendingFor: time.Hour, RunningFor: time.Hour})
	id := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "the platform refused the export"})
	var backupID string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: e.config(triggerConfig(id, "")),
				Check: func(s *terraform.State) error {
					backupID = s.RootModule().Resources[addr].Primary.Attributes["id"]
					e.clock.Advance(3 * time.Hour) // the backup fails
					return nil
				},
			},
			{
				Config:      e.config(triggerConfig(id, "  wait_for_completion = true\n")),
				ExpectError: expectError("Backup did not succeed", "ended with status", "failed", "the platform refused the export"),
			},
			{
				// Replaced: a new backup, still pending when the wait's
				// 10 minutes (on the clock) are up.
				PreConfig: func() { e.srv.SetAccountFailure(id, "") },
				Config:    e.config(triggerConfig(id, "  wait_for_completion = true\n  timeouts { create = \"10m\" }\n")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ExpectError: expectError("Backup still in progress"),
			},
		},
	})
	if backupID == "" {
		t.Fatal("no backup recorded by the first apply")
	}
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 2 {
		t.Errorf("%d POSTs, want 2 (the first backup, and its replacement's)", n)
	}
}

// A trigger whose change had not gone ahead (a wait interrupted, then
// switched off) plans an update that reads its backup, and that update
// records the listing as the next change's floor: prior_backup_ids,
// unknown in the plan, then the page read, its own backup among them.
func TestTriggerUpdateRecordsTheFloorWhenTheChangeGoesAhead(t *testing.T) {
	t.Parallel()
	listing := `{"data":[{"id":"` + ruleBackup + `","account_id":"` + ruleAccount + `","status":"success","created_at":"2026-11-21T10:00:00Z",` +
		`"completed_at":"2026-11-21T10:05:00Z","error":null},{"id":"bkp_older00000000001","account_id":"` + ruleAccount + `","status":"success",` +
		`"created_at":"2026-11-20T10:00:00Z","completed_at":"2026-11-20T10:05:00Z","error":null}],"pagination":{"limit":50,"next_cursor":null}}`
	srv, sch := configured(t, ruleService(t, 200, "application/json", listing, 200))
	s := sch.ResourceSchemas["backup_trigger"]
	before := tfStr("bkp_older00000000001")
	state := func(waits bool, prior tftypes.Value) map[string]tftypes.Value {
		return map[string]tftypes.Value{
			"id": tfStr(ruleBackup), "account_id": tfStr(ruleAccount), "backup_status": tfStr("success"),
			"triggered_at": tfStr("2026-11-21T10:00:00Z"), "completed_at": tfStr("2026-11-21T10:05:00Z"),
			"on_conflict": tfStr("wait"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, waits), "reused": tftypes.NewValue(tftypes.Bool, false),
			"prior_backup_ids": prior,
		}
	}
	config := object(t, s, map[string]tftypes.Value{"account_id": tfStr(ruleAccount), "wait_for_completion": tftypes.NewValue(tftypes.Bool, false)})
	running := client.Backup{ID: ruleBackup, AccountID: ruleAccount, Status: client.StatusRunning, CreatedAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	interrupted, _ := workflow.Record{}.Saved(workflow.Outcome{Kind: workflow.Unsettled, Backup: &running}, workflow.Saving{Creating: true})
	private := privateOf(t, workflow.Key, workflow.Encode(interrupted))
	plan, err := srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: "backup_trigger", PriorState: object(t, s, state(true, before)), ProposedNewState: object(t, s, state(false, before)),
		Config: config, PriorPrivate: private,
	})
	if err != nil || diagText(plan.Diagnostics) != "" {
		t.Fatalf("plan: %v %s", err, diagText(plan.Diagnostics))
	}
	planned, err := plan.PlannedState.Unmarshal(s.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	if v := attributeOf(t, planned, "prior_backup_ids"); v.IsKnown() {
		t.Fatalf("planned prior_backup_ids %v; want unknown: the update records them", v)
	}
	resp, err := srv.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "backup_trigger", PriorState: object(t, s, state(true, before)), PlannedState: plan.PlannedState,
		Config: config, PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil || diagText(resp.Diagnostics) != "" {
		t.Fatalf("apply: %v %s", err, diagText(resp.Diagnostics))
	}
	applied, err := resp.NewState.Unmarshal(s.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	if ids := attributeOf(t, applied, "prior_backup_ids"); !ids.Equal(tfStr(ruleBackup + ",bkp_older00000000001")) {
		t.Fatalf("prior_backup_ids %v; want the page read: its own backup and the one below it", ids)
	}
}

// attributeOf is one attribute of an object value.
func attributeOf(t *testing.T, v tftypes.Value, name string) tftypes.Value {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs[name]
}

// privateOf is the private state of a resource holding one key, as the
// framework encodes it.
func privateOf(t *testing.T, key string, value []byte) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string][]byte{key: value})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The findings of issue 56 through the CLI: which backup counts is decided
// by what the service lists, whatever the clocks and Dates say, and a
// trigger's floor survives Terraform.

// A front (a proxy, a load balancer) answers the trigger's POST with its own
// 502 page, dated stale, in the year 0001 or 9999, or not at all readably.
// The trigger is not identified and is saved tainted; its replacement, in
// the next apply's one provider process, never reports the account's good
// backup of 12 minutes before as the change's own (a stale Date once made
// it do so), and takes its own. A front that answers the read before the
// trigger too stops it there: nothing is sent.
func TestAccTriggerFrontPagesNeverMakeABackupCount(t *testing.T) {
	t.Parallel()
	page := "<html><body><h1>502 Bad Gateway</h1></body></html>"
	for name, date := range map[string]func(now time.Time) string{
		"stale by 30 minutes": func(now time.Time) string { return now.Add(-30 * time.Minute).UTC().Format(http.TimeFormat) },
		"year 0001":           func(time.Time) string { return "Mon, 01 Jan 0001 00:00:00 GMT" },
		"year 9999":           func(time.Time) string { return "Fri, 31 Dec 9999 23:59:59 GMT" },
		"unparsable":          func(time.Time) string { return "yesterday" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, f := newFrontEnv(t, mockservice.Options{Seed: 5601})
			id := e.srv.AddAccount(mockservice.AccountSpec{})
			e.srv.AddHistory(id, mockservice.BackupSpec{ID: "bkp_goodbeforeit0001", CreatedAt: e.clock.Now().Add(-12 * time.Minute)})
			bad := answer{http.StatusBadGateway, "text/html", page}
			f.dated(date(e.clock.Now()))
			f.set(func(r *http.Request) (answer, bool) { return bad, r.Method == http.MethodPost })
			c := newCLI(t, e, e.config(triggerConfig(id, "  wait_for_completion = true\n")))
			out, err := c.exec(nil, "apply", "-auto-approve", "-no-color")
			if err == nil || !strings.Contains(out, "Backup queued but not identified") || !strings.Contains(out, "-replace") {
				t.Fatalf("the first apply: %v\n%s", err, out)
			}
			if got := c.state("backup_trigger.this"); got["tainted"] != true || got["id"] != nil ||
				!strings.Contains(fmt.Sprint(got["prior_backup_ids"]), "bkp_goodbeforeit0001") {
				t.Fatalf("saved as %v; want tainted, no id, the good backup among prior_backup_ids", got)
			}
			f.set(nil)
			c.run("apply", "-auto-approve", "-no-color")
			got := c.state("backup_trigger.this")
			if q := e.srv.BackupsQueued(id); got["id"] == "bkp_goodbeforeit0001" || q != 1 || got["id"] != e.srv.NewestBackupID(id) || got["backup_status"] != "success" {
				t.Errorf("the replacement: %v, %d queued; want its own backup, never the good one before it", got, q)
			}
		})
	}
	t.Run("the read before the trigger answered by the front", func(t *testing.T) {
		t.Parallel()
		e, f := newFrontEnv(t, mockservice.Options{Seed: 5602})
		id := e.srv.AddAccount(mockservice.AccountSpec{})
		e.srv.AddHistory(id, mockservice.BackupSpec{CreatedAt: e.clock.Now().Add(-12 * time.Minute)})
		bad := answer{http.StatusBadGateway, "text/html", page}
		f.dated("Mon, 01 Jan 0001 00:00:00 GMT")
		f.set(func(r *http.Request) (answer, bool) {
			return bad, strings.HasSuffix(r.URL.Path, "/backups") || r.Method == http.MethodPost
		})
		c := newCLI(t, e, e.config(triggerConfig(id, "  wait_for_completion = true\n")))
		out, err := c.exec(nil, "apply", "-auto-approve", "-no-color")
		if err == nil || !strings.Contains(out, "before the trigger failed") || !strings.Contains(out, "no backup was queued") {
			t.Fatalf("%v\n%s", err, out)
		}
		if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 || e.srv.BackupsQueued(id) != 0 || c.state("backup_trigger.this") != nil {
			t.Errorf("%d POSTs reached the service, %d queued; want none, and nothing saved", n, e.srv.BackupsQueued(id))
		}
	})
}

// The floor survives a Ctrl-C of a tainted replacement: with reuse_within,
// v2's apply is interrupted while its replacement's create has queued
// nothing, and is saved tainted. Terraform gives the tainted trigger's
// Delete no private state; its prior_backup_ids, in the state, still hold
// v1's backup, so applying v2 again takes a new backup instead of counting
// v1's (before, v2's migration ran with no backup since v1's).
func TestAccTriggerFloorSurvivesAnInterruptedReplacement(t *testing.T) {
	t.Parallel()
	e := newWallClockEnv(t, mockservice.Options{Seed: 5603})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := func(release string) string {
		return e.config(triggerConfig(id, "  wait_for_completion = true\n  reuse_within        = \"10m\"\n  triggers = { release = \""+release+"\" }\n"))
	}
	c := newCLI(t, e, config("v1"))
	c.run("apply", "-auto-approve", "-no-color")
	v1 := fmt.Sprint(c.state("backup_trigger.this")["id"])
	c.write(config("v2"))
	listings := e.srv.Requests(mockservice.RouteListBackups)
	// The replacement's read before its trigger hangs; Ctrl-C comes during it.
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultLatency, Route: mockservice.RouteListBackups, Times: 1, Latency: 8 * time.Second})
	out, err := c.interrupt(func() bool { return e.srv.Requests(mockservice.RouteListBackups) > listings }, "apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the interrupted apply succeeded:\n%s", out)
	}
	saved := c.state("backup_trigger.this")
	if saved["tainted"] != true || saved["id"] != nil || !strings.Contains(fmt.Sprint(saved["prior_backup_ids"]), v1) || e.srv.BackupsQueued(id) != 1 {
		t.Fatalf("saved as %v, %d queued; want tainted, no backup, v1's %s among prior_backup_ids\n%s", saved, e.srv.BackupsQueued(id), v1, out)
	}
	e.srv.ClearFaults()
	c.run("apply", "-auto-approve", "-no-color")
	got := c.state("backup_trigger.this")
	if q := e.srv.BackupsQueued(id); got["id"] == v1 || got["reused"] != false || q != 2 || got["backup_status"] != "success" {
		t.Errorf("v2: %v, %d queued; want a backup of its own, never v1's %s", got, q, v1)
	}
}

// The service's clock 30 seconds or 4 minutes behind this machine's: a
// waited trigger and a guard's destroy identify their backups (before,
// every one failed after 30 s).
func TestAccServiceClockBehindStillIdentifies(t *testing.T) {
	t.Parallel()
	for _, behind := range []time.Duration{30 * time.Second, 4 * time.Minute} {
		t.Run(behind.String(), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 5604})
			e.srv.SetClockOffset(-behind)
			id := e.srv.AddAccount(mockservice.AccountSpec{})
			c := newCLI(t, e, e.config(triggerConfig(id, "  wait_for_completion = true\n")+guardedDatabase(id, "")))
			c.run("apply", "-auto-approve", "-no-color")
			if got := c.state("backup_trigger.this"); got["backup_status"] != "success" {
				t.Fatalf("the trigger: %v", got)
			}
			c.run("destroy", "-auto-approve", "-no-color")
			if q := e.srv.BackupsQueued(id); q != 2 {
				t.Errorf("%d backups queued; want the trigger's and the guard's", q)
			}
		})
	}
}

// The CLI path to the stale-Date false success: a trigger that does not
// wait is answered 202, then a front answers the listings with a 502 page
// dated 30 minutes stale, and the listing lags behind its POST. The trigger
// is saved, not tainted, without its backup; a refresh, the front gone but
// the listing still lagging, never takes the account's good backup of 12
// minutes before for it (a start moved 30 minutes back by that Date once
// did), and records its own once listed.
func TestAccTriggerStaleDateNeverIdentifiesAnOlderBackup(t *testing.T) {
	t.Parallel()
	e, f := newFrontEnv(t, mockservice.Options{Seed: 5605})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddHistory(id, mockservice.BackupSpec{ID: "bkp_goodbeforeit0002", CreatedAt: e.clock.Now().Add(-12 * time.Minute)})
	e.srv.SetListingLag(10 * time.Minute)
	posted := false
	f.dated(e.clock.Now().Add(-30 * time.Minute).UTC().Format(http.TimeFormat))
	f.set(func(r *http.Request) (answer, bool) {
		if r.Method == http.MethodPost {
			posted = true
			return answer{}, false
		}
		return answer{http.StatusBadGateway, "text/html", "<html>502 Bad Gateway</html>"}, posted && strings.HasSuffix(r.URL.Path, "/backups")
	})
	c := newCLI(t, e, e.config(triggerConfig(id, "")))
	if out := c.run("apply", "-auto-approve", "-no-color"); !strings.Contains(out, "Backup queued but not identified yet") {
		t.Fatalf("the apply:\n%s", out)
	}
	f.set(nil)
	c.run("apply", "-refresh-only", "-auto-approve", "-no-color")
	if got := c.state("backup_trigger.this"); got["id"] != nil || got["backup_status"] != nil {
		t.Fatalf("refreshed while its backup is not listed: %v; want it still not identified, never bkp_goodbeforeit0002", got)
	}
	e.clock.Advance(11 * time.Minute) // the listing catches up
	c.run("apply", "-refresh-only", "-auto-approve", "-no-color")
	if got := c.state("backup_trigger.this"); got["id"] != e.srv.NewestBackupID(id) || e.srv.BackupsQueued(id) != 1 {
		t.Errorf("refreshed once listed: %v; want its own backup %s", got, e.srv.NewestBackupID(id))
	}
}

// releasedWhileLagging applies release v1 of a trigger that does not wait,
// on an account (with an hour-old backup when history) whose listing lags
// by lag: it goes ahead on its 202, its backup not identified yet.
func releasedWhileLagging(t *testing.T, seed uint64, lag time.Duration, history bool) (*testEnv, *cli, string, func(string) string) {
	t.Helper()
	e := newTestEnv(t, mockservice.Options{Seed: seed})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	if history {
		e.srv.AddHistory(id, mockservice.BackupSpec{CreatedAt: e.clock.Now().Add(-time.Hour)})
	}
	e.srv.SetListingLag(lag)
	release := func(v string) string { return e.config(triggerConfig(id, "  triggers = { release = \""+v+"\" }\n")) }
	c := newCLI(t, e, release("v1"))
	if out := c.run("apply", "-auto-approve", "-no-color"); !strings.Contains(out, "Backup queued but not identified yet") {
		t.Fatalf("the first apply:\n%s", out)
	}
	return e, c, id, release
}

// A trigger that does not wait goes ahead on its 202 while the listing,
// lagging, does not show its backup. Replaced for a new release before the
// listing catches up, its delete fails and keeps it, and nothing is queued:
// the replacement's own read lags too, and would take that backup for its
// own (deep-run seed 650160). Once listed, the replacement takes a new one.
func TestAccTriggerReplacementWaitsForThePreviousBackupToBeListed(t *testing.T) {
	t.Parallel()
	e, c, id, release := releasedWhileLagging(t, 6501, 10*time.Minute, true)
	first := e.srv.NewestBackupID(id)
	e.clock.Advance(time.Minute) // that backup has ended; the listing still hides it
	c.write(release("v2"))
	out, err := c.exec(nil, "apply", "-auto-approve", "-no-color")
	if err == nil || !strings.Contains(out, "Unable to delete the backup_trigger of account "+id) {
		t.Fatalf("the replacement while the listing hides the previous backup: %v\n%s", err, out)
	}
	if got := c.state("backup_trigger.this"); got["triggered_at"] == nil || got["id"] != nil || e.srv.BackupsQueued(id) != 1 {
		t.Fatalf("after the failed replacement: %v, %d queued; want the v1 trigger kept and nothing queued", got, e.srv.BackupsQueued(id))
	}
	e.clock.Advance(10 * time.Minute) // the listing catches up
	e.srv.SetListingLag(0)
	c.run("apply", "-auto-approve", "-no-color")
	if got := c.state("backup_trigger.this"); got["id"] == first || got["id"] != e.srv.NewestBackupID(id) || e.srv.BackupsQueued(id) != 2 {
		t.Errorf("the replacement once listed: %v, %d queued; want a new backup, never %s", got, e.srv.BackupsQueued(id), first)
	}
}

// An account that listed no backup before its trigger, whose listing lagged
// past the time an empty read is believed (90 s): the trigger's backup can
// never be identified. The refresh warns and the plan goes on, so that a new
// triggers value replaces it, as the docs say: the delete finds that backup
// listed, and the replacement takes a new one (a helper's user path: every
// plan failed, and the way out did not work).
func TestAccTriggerNeverIdentifiedAfterAnEmptyReadIsReplacedByANewValue(t *testing.T) {
	t.Parallel()
	e, c, id, release := releasedWhileLagging(t, 6502, 3*time.Minute, false)
	first := e.srv.NewestBackupID(id)
	e.clock.Advance(4 * time.Minute) // listed now, but too long after the empty read to tell
	if out := c.run("plan", "-no-color"); !strings.Contains(out, "Warning: Unable to look for the backup of the trigger") {
		t.Errorf("the plan: want a warning that the trigger's backup cannot be looked for:\n%s", out)
	}
	c.write(release("v2"))
	c.run("apply", "-auto-approve", "-no-color")
	got := c.state("backup_trigger.this")
	if got["id"] == first || e.srv.BackupsQueued(id) != 2 || !strings.Contains(fmt.Sprint(got["prior_backup_ids"]), first) {
		t.Errorf("replaced: %v, %d queued; want a new backup counted above %s", got, e.srv.BackupsQueued(id), first)
	}
}

// backup_trigger with reuse_within, replaced for a new release: a good
// backup listed since the previous change went ahead, inside the window,
// is adopted; one in progress is joined and waited for; one outside the
// window is not, nor is the previous change's own, inside it; the state
// says which, and a second plan is empty. The first create knows no
// previous change: it takes its own backup, and says why.
func TestAccTriggerReuseWithin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4101})
	accounts := map[string]string{}
	for _, name := range []string{"adopt", "join", "outside", "previous"} {
		accounts[name] = e.srv.AddAccount(mockservice.AccountSpec{})
	}
	config := func(release string) string {
		config := ""
		for name, id := range accounts {
			within := "30m"
			if name == "previous" {
				within = "2h" // the previous change's backup is inside it
			}
			config += fmt.Sprintf(`
resource "backup_trigger" %q {
  account_id          = %q
  triggers            = { release = %q }
  wait_for_completion = true
  reuse_within        = %q
}
`, name, id, release, within)
		}
		return config
	}
	// A good backup inside the window before the first create: it knows no
	// previous change, so it cannot tell whether this one is its; it takes
	// its own, and says why.
	e.srv.AddHistory(accounts["adopt"], mockservice.BackupSpec{CreatedAt: e.clock.Now().Add(-15 * time.Minute)})
	c := newCLI(t, e, e.config(config("v1")))
	if out := c.run("apply", "-auto-approve", "-no-color"); !strings.Contains(out, "records no earlier change") {
		t.Errorf("the first create does not say why nothing was reused:\n%s", out)
	}
	first := map[string]string{}
	for name := range accounts {
		first[name] = fmt.Sprint(c.state("backup_trigger." + name)["id"])
	}
	e.clock.Advance(40 * time.Minute)
	now := e.clock.Now()
	// A history backup takes 11 minutes: this one ended 9 minutes ago; the
	// next is running; the third started since v1 but before the window.
	e.srv.AddHistory(accounts["adopt"], mockservice.BackupSpec{ID: "bkp_reuseadopted0001", CreatedAt: now.Add(-20 * time.Minute)})
	e.srv.AddHistory(accounts["join"], mockservice.BackupSpec{ID: "bkp_reusejoined00001", CreatedAt: now.Add(-3 * time.Minute)})
	e.srv.AddHistory(accounts["outside"], mockservice.BackupSpec{CreatedAt: now.Add(-35 * time.Minute)})
	e.srv.ResetStats()
	c.write(e.config(config("v2")))
	// A reuse is what reuse_within asks for: it shows in reused, not as a warning on every run.
	if out := c.run("apply", "-auto-approve", "-no-color"); strings.Contains(out, "Warning") {
		t.Errorf("an apply that reused backups as asked warns:\n%s", out)
	}
	for name, want := range map[string]struct {
		id     string
		reused bool
	}{"adopt": {"bkp_reuseadopted0001", true}, "join": {"bkp_reusejoined00001", true}, "outside": {"", false}, "previous": {"", false}} {
		got := c.state("backup_trigger." + name)
		if got["reused"] != want.reused || got["backup_status"] != "success" || (want.id != "" && got["id"] != want.id) || got["id"] == first[name] {
			t.Errorf("%s: %v; want reused %t, success, id %q, not v1's %s", name, got, want.reused, want.id, first[name])
		}
	}
	if q := e.srv.Stats().BackupsQueued; q[accounts["adopt"]] != 0 || q[accounts["join"]] != 0 || q[accounts["outside"]] != 1 || q[accounts["previous"]] != 1 {
		t.Errorf("backups queued %v: want one, outside the window and for the previous change's only", q)
	}
	expectNoChange(t, c, "plan", "-detailed-exitcode", "-no-color", "-input=false")
}

// Four pipelines applying a release to a waited trigger of one account at
// the same time, with reuse_within, take one backup in all, and every run
// succeeds (each took its own for the first release, which nothing preceded).
func TestAccTriggerReuseAcrossConcurrentApplies(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4102})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := func(release string) string {
		return e.config(triggerConfig(id, "  wait_for_completion = true\n  reuse_within        = \"15m\"\n  triggers = { release = \""+release+"\" }\n"))
	}
	const runs = 4
	clis := make([]*cli, runs)
	for i := range clis {
		clis[i] = newCLI(t, e, config("v1"))
		clis[i].run("apply", "-auto-approve", "-no-color")
		clis[i].write(config("v2"))
	}
	// The first release's backups, each started after another's change went
	// ahead, leave the window: the second release's are not among them.
	e.clock.Advance(20 * time.Minute)
	before := e.srv.Stats().BackupsQueued[id]
	var wg sync.WaitGroup
	outs, errs := make([]string, runs), make([]error, runs)
	for i, c := range clis {
		wg.Go(func() { outs[i], errs[i] = c.exec(nil, "apply", "-auto-approve", "-no-color") })
	}
	wg.Wait()
	ids := map[string]bool{}
	for i, c := range clis {
		if errs[i] != nil {
			t.Errorf("run %d failed: %v\n%s", i, errs[i], outs[i])
			continue
		}
		got := c.state("backup_trigger.this")
		if got["backup_status"] != "success" {
			t.Errorf("run %d: %v", i, got)
		}
		ids[fmt.Sprint(got["id"])] = true
	}
	if q := e.srv.Stats().BackupsQueued[id] - before; before != runs || q != 1 || len(ids) != 1 {
		t.Errorf("%d backups for v1, %d for v2, ids %v: want one each for v1, then one shared by the %d runs", before, q, ids, runs)
	}
}

// A runner killed while the replacement of its trigger waits: Terraform
// saved the replaced trigger's removal before the create began, so the
// retry is a create that knows no previous change (OpenTofu keeps the
// replaced trigger, whose floor lets the retry reuse the orphan). With reuse_within it
// takes no shortcut: it waits out the orphan (which may as well be the
// previous change's backup, for all it can tell) and takes its own, the
// stated limit of a killed runner; it never reports the orphan.
func TestAccTriggerReuseAfterAKilledRunner(t *testing.T) {
	t.Parallel()
	e := newWallClockEnv(t, mockservice.Options{Seed: 4103, PendingFor: 2 * time.Second, RunningFor: 2 * time.Second})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := func(release string) string {
		return e.config(triggerConfig(id, "  wait_for_completion = true\n  reuse_within        = \"15m\"\n  triggers = { release = \""+release+"\" }\n"))
	}
	c := newCLI(t, e, config("v1"))
	c.run("apply", "-auto-approve", "-no-color")
	c.write(config("v2"))
	out, err := c.kill(func() bool { return e.srv.BackupsQueued(id) == 2 }, "apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the killed apply succeeded:\n%s", out)
	}
	listed, err := client.Collect(e.rawClient(t).Backups(t.Context(), id, client.ListOptions{}))
	if err != nil || len(listed) != 2 {
		t.Fatalf("backups after the killed run: %v, %v", listed, err)
	}
	orphan := listed[0]
	if state := c.run("state", "list"); strings.TrimSpace(state) != "" {
		// OpenTofu kept the replaced trigger, and with it the previous change's
		// floor: the retry's replacement reuses the orphan, listed above it.
		out = c.run("apply", "-auto-approve", "-no-color")
		got := c.state("backup_trigger.this")
		if q := e.srv.BackupsQueued(id); q != 2 || got["id"] != orphan.ID || got["reused"] != true || got["backup_status"] != "success" {
			t.Errorf("%d backups queued, state %v: want the orphan %s reused, no third backup:\n%s", q, got, orphan.ID, out)
		}
		return
	}
	out = c.run("apply", "-auto-approve", "-no-color")
	got := c.state("backup_trigger.this")
	if q := e.srv.BackupsQueued(id); q != 3 || got["id"] == orphan.ID || got["reused"] != false || got["backup_status"] != "success" ||
		!strings.Contains(out, "records no earlier change") {
		t.Errorf("%d backups queued, state %v: want a third backup, not the orphan %s, and the reason:\n%s", q, got, orphan.ID, out)
	}
}

// backup_on_destroy with reuse_within: a good backup inside the window lets
// the destroy go ahead with no new backup, and a warning names it.
func TestAccOnDestroyReuseWithin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4104})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddHistory(id, mockservice.BackupSpec{ID: "bkp_reuseguarded0001", CreatedAt: e.clock.Now().Add(-20 * time.Minute)})
	c := newCLI(t, e, e.config(guardedDatabase(id, "  reuse_within = \"30m\"\n")))
	c.run("apply", "-auto-approve", "-no-color")
	out := c.run("destroy", "-auto-approve", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "The backup_on_destroy of account "+id+" was destroyed after backup bkp_reuseguarded0001") ||
		!strings.Contains(flat, "is within reuse_within (30m)") || !strings.Contains(out, "2 destroyed") {
		t.Errorf("the destroy did not go ahead on the recent backup, or did not say so:\n%s", out)
	}
	if q := e.srv.BackupsQueued(id); q != 0 {
		t.Errorf("%d backups queued, want none", q)
	}
}

// The action with reuse_within (Terraform 1.14+): a good recent backup
// passes the invocation with no new backup, and the progress names it.
func TestAccActionReuseWithin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4105})
	skipBelow(t, "1.14.0", "apply -invoke")
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddHistory(id, mockservice.BackupSpec{ID: "bkp_reuseinvoked0001", CreatedAt: e.clock.Now().Add(-20 * time.Minute)})
	c := newCLI(t, e, e.config(guarded(id, "    reuse_within = \"30m\"\n", "v1", "before_create")))
	out := c.run("apply", "-auto-approve", "-no-color", "-invoke=action.backup_trigger.pre")
	if !strings.Contains(out, "Reused backup bkp_reuseinvoked0001") {
		t.Errorf("the progress does not name the reused backup:\n%s", out)
	}
	if q := e.srv.BackupsQueued(id); q != 0 {
		t.Errorf("%d backups queued, want none", q)
	}
}

// A change of triggers takes a new backup even with reuse_within: the
// previous change's backup, still inside the window, started before that
// change went ahead (workflow.RunOptions.Since). Found by the simulation.
func TestAccTriggerReuseNeverCrossesAChange(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4104})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := func(release string) string {
		return e.config(fmt.Sprintf(`
resource "backup_trigger" "release" {
  account_id          = %q
  wait_for_completion = true
  reuse_within        = "1h"
  triggers            = { release = %q }
}
`, id, release))
	}
	c := newCLI(t, e, config("v1"))
	c.run("apply", "-auto-approve", "-no-color")
	first := c.state("backup_trigger.release")
	c.write(config("v2"))
	c.run("apply", "-auto-approve", "-no-color")
	second := c.state("backup_trigger.release")
	if second["id"] == first["id"] || second["reused"] != false || second["backup_status"] != "success" {
		t.Fatalf("after the change: %v; before: %v; want a new backup, not reused", second, first)
	}
	if q := e.srv.BackupsQueued(id); q != 2 {
		t.Fatalf("%d backups queued; want one per change", q)
	}
}

// A trigger whose backup failed is planned for replacement with a warning
// that names reuse_within when it is set: the replacement may count a good
// backup in the window instead of taking a new one (a helper's user path:
// the warning promised a new backup, and a good one was reused).
func TestRetakeWarningNamesReuseWithin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var sch fwresource.SchemaResponse
	(&triggerResource{}).Schema(ctx, fwresource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx).(tftypes.Object)
	value := func(reuse string) tftypes.Value {
		attrs := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			attrs[name] = tftypes.NewValue(at, nil)
		}
		attrs["id"] = tftypes.NewValue(tftypes.String, "bkp_0123456789abcdef")
		attrs["account_id"] = tftypes.NewValue(tftypes.String, "acc_0123456789abcdef")
		attrs["backup_status"] = tftypes.NewValue(tftypes.String, client.StatusFailed)
		attrs["wait_for_completion"] = tftypes.NewValue(tftypes.Bool, true)
		attrs["triggers"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"release": tftypes.NewValue(tftypes.String, "v1")})
		if reuse != "" {
			attrs["reuse_within"] = tftypes.NewValue(tftypes.String, reuse)
		}
		return tftypes.NewValue(typ, attrs)
	}
	for _, reuse := range []string{"", "30m"} {
		plan := tfsdk.Plan{Schema: sch.Schema, Raw: value(reuse)}
		resp := &fwresource.ModifyPlanResponse{Plan: plan}
		(&triggerResource{}).ModifyPlan(ctx, fwresource.ModifyPlanRequest{State: tfsdk.State{Schema: sch.Schema, Raw: value("")}, Plan: plan}, resp)
		if len(resp.Diagnostics) != 1 || len(resp.RequiresReplace) == 0 {
			t.Fatalf("reuse_within %q: %v, replaces %v; want one warning and a replacement", reuse, resp.Diagnostics, resp.RequiresReplace)
		}
		if named := strings.Contains(resp.Diagnostics[0].Detail(), "reuse_within"); named != (reuse != "") {
			t.Errorf("reuse_within %q: %q; want reuse_within named only when set", reuse, resp.Diagnostics[0].Detail())
		}
	}
}

// A duration written another way ("60m", then "1h") is a change of a
// setting: an update in place, which queues nothing.
func TestAccTriggerDurationWrittenAnotherWay(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 717})
	id := e.srv.AccountIDs()[0]
	written := func(d string) string {
		return e.config(triggerConfig(id, fmt.Sprintf("  reuse_within = %q\n  triggers = { release = \"v1\" }\n", d)))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: written("60m")},
			{Config: written("1h"), ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate)},
		},
	})
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued, want 1", n)
	}
}
