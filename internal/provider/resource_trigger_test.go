package provider

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
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
				"A backup for account "+id+" is already in progress.", `on_conflict is "fail"`),
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
