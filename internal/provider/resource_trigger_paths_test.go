package provider

// The paths users take beyond a plain apply: Ctrl-C during a wait, a wait
// that times out, import of a trigger whose configuration has triggers,
// and triggers that say nothing. Each proves "one backup per change" with
// the mock's counters.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

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
			clock := clock.NewStepped()
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
			}
			// Let the backup in progress (the resumed one, or the new one) end
			// while the apply waits for it.
			before := e.srv.Requests(mockservice.RouteListBackups)
			stop := make(chan struct{})
			go func() {
				for e.srv.Requests(mockservice.RouteListBackups) < before+3 {
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
			clock := clock.NewStepped()
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
			// Once the retry has sent its trigger, backups end quickly.
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
						if e.srv.Requests(mockservice.RouteTrigger) >= 2 {
							clock.Advance(time.Hour)
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
			wantPOSTs := 3 // the killed one, a 409 while the orphan runs, the retry's
			if orphanDone {
				wantPOSTs = 2
			}
			if n := e.srv.Requests(mockservice.RouteTrigger); n != wantPOSTs {
				t.Errorf("%d trigger POSTs, want %d", n, wantPOSTs)
			}
		})
	}
}
