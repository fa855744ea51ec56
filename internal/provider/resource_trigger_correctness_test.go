package provider

// The trigger never claims a backup it did not take and never takes two,
// whatever the service answers: each test plays one way a real deployment
// departs from the mock (a listing that lags or fails, a body without
// data) or one path a user takes (import into a matching configuration, a
// wait switched on for a failed backup, empty provider settings).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

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
				ExpectError: expectError("Backup queued but not identified", "accepted it", "a backup was queued", "next apply looks for this backup and waits for it"),
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
	interrupted := workflow.Record{}.After(workflow.Outcome{Kind: workflow.Interrupted, Backup: &running})
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
