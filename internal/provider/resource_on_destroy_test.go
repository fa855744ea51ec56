package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// These tests drive the CLI (every binary of the matrix): a destroy is what
// they test, and its exit status, its order and an interrupt are only seen
// from the command.

// guardedDatabase is a stand-in for a database (terraform_data whose
// destroy-time provisioner writes when it was destroyed) guarded by a
// backup_on_destroy of accountID.
func guardedDatabase(accountID, guardExtra string) string {
	return fmt.Sprintf(`
resource "terraform_data" "db" {
  input = "crm"
  provisioner "local-exec" {
    when    = destroy
    command = "date +%%s.%%N > db-destroyed-at"
  }
}

resource "backup_on_destroy" "db" {
  account_id = %q
  depends_on = [terraform_data.db]
%s}
`, accountID, guardExtra)
}

const guardAddr = "backup_on_destroy.db"

// destroyedAt reads when the guarded resource was destroyed.
func (c *cli) destroyedAt() (time.Time, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, "db-destroyed-at"))
	if err != nil {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		c.t.Fatalf("db-destroyed-at: %q", b)
	}
	return time.Unix(0, int64(f*1e9)), true
}

// A healthy account: apply takes no backup; destroy takes one, which has
// succeeded before the guarded resource is destroyed.
func TestAccOnDestroyBacksUpBeforeTheGuardedResource(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2001, PendingFor: 200 * time.Millisecond, RunningFor: 300 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Fatalf("creating the guard queued %d backup(s)", n)
	}
	c.run("destroy", "-auto-approve", "-no-color")
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued by the destroy, want 1", n)
	}
	bks, err := client.Collect(e.rawClient(t).Backups(t.Context(), id, client.ListOptions{Max: 1}))
	if err != nil || len(bks) != 1 || bks[0].Status != client.StatusSuccess || bks[0].CompletedAt == nil {
		t.Fatalf("the backup: %+v %v", bks, err)
	}
	gone, ok := c.destroyedAt()
	if !ok {
		t.Fatal("the guarded resource was not destroyed")
	}
	// completed_at has whole seconds; the backup ended before that
	// second's end, and the guarded resource went after it ended.
	if gone.Before(bks[0].CompletedAt.Truncate(time.Second)) {
		t.Errorf("the guarded resource was destroyed at %s, before the backup completed at %s", gone, bks[0].CompletedAt)
	}
}

// A backup that fails stops the destroy: the guard and the guarded
// resource stay in the state, one backup was taken.
func TestAccOnDestroyFailedBackupStopsTheDestroy(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2002, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "the platform refused the export"})
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the destroy succeeded:\n%s", out)
	}
	for _, want := range []string{"Kept the backup_on_destroy of account " + id + " and what it guards: backup did not succeed", `status "failed"`, "the platform refused the export", "destroying again takes a new backup"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the destroy's output does not say %q:\n%s", want, out)
		}
	}
	if c.state("terraform_data.db") == nil || c.state(guardAddr) == nil {
		t.Error("the guarded resource or the guard left the state")
	}
	if _, gone := c.destroyedAt(); gone {
		t.Error("the guarded resource was destroyed")
	}
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued, want 1", n)
	}
}

// Ctrl-C while the destroy waits: it fails and keeps both resources;
// destroying again follows the same backup (one in all) and succeeds once
// it succeeds.
func TestAccOnDestroyInterruptedThenResumed(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewStepped()
	e := newWallClockEnv(t, mockservice.Options{Seed: 2003, Clock: clock, PendingFor: time.Minute, RunningFor: time.Minute})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	polled := e.srv.Requests(mockservice.RouteListBackups)
	out, err := c.interrupt(func() bool { return e.srv.Requests(mockservice.RouteListBackups) >= polled+2 }, "destroy", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the interrupted destroy succeeded:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "follows this same backup, waiting while it is in progress, instead of queueing another") {
		t.Errorf("the interrupted destroy did not explain itself:\n%s", out)
	}
	if c.state(guardAddr) == nil || c.state("terraform_data.db") == nil {
		t.Fatal("a resource left the state after the interrupt")
	}
	// The backup succeeds meanwhile, within resume_within (10m) on the service's clock too, which
	// shows this machine's time (clocks apart show nothing: the next destroy would take a new backup).
	clock.Advance(3 * time.Minute)
	e.srv.SetClockOffset(time.Since(clock.Now()))
	out = c.run("destroy", "-auto-approve", "-no-color")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "This destroy queued no backup: it followed backup") {
		t.Errorf("the second destroy does not say it followed the first one's backup:\n%s", out)
	}
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued, want 1: the second destroy did not follow the first one's backup", n)
	}
	if _, gone := c.destroyedAt(); !gone {
		t.Error("the guarded resource was not destroyed")
	}
}

// A timed-out destroy records its backup for resume_within (10m by
// default, not timeouts.delete): a destroy within that follows the same
// backup; a later one, or one after an apply that is not a destroy (the
// plan shows the record cleared), takes a new backup, since the data may
// have changed since. A -target apply of the guarded resource does not
// plan the guard, so it does not clear the record (the stated limit that
// the short default bounds).
func TestAccOnDestroyTimedOutThenResumed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		then        func(t *testing.T, e *testEnv, c *cli)
		wantBackups int
	}{
		// The backup ends 6 minutes in, after the first destroy timed
		// out at 5; the record counts until 15.
		{"within resume_within", func(_ *testing.T, e *testEnv, _ *cli) { e.clock.Advance(2 * time.Minute) }, 1},
		{"past resume_within", func(_ *testing.T, e *testEnv, _ *cli) { e.clock.Advance(11 * time.Minute) }, 2},
		// Past it, a destroy that queues nothing (another's backup outlasts its
		// wait) leaves no record: an expired one never stands again (seed 149421).
		{"past resume_within, then a destroy stopped by a conflict", func(t *testing.T, e *testEnv, c *cli) {
			e.clock.Advance(11 * time.Minute)
			e.outsideBackup(t, e.srv.AccountIDs()[0])
			if _, err := c.exec(nil, "destroy", "-auto-approve", "-no-color"); err == nil {
				t.Fatal("the destroy went ahead while another's backup outlasted its wait")
			}
			if st := c.state(guardAddr); st == nil || st["pending_destroy_backup"] != nil {
				t.Errorf("the stopped destroy kept the expired record: %v", st)
			}
		}, 3},
		{"after a -target apply of the guarded resource", func(t *testing.T, e *testEnv, c *cli) {
			id := e.srv.AccountIDs()[0]
			c.write(strings.Replace(e.config(guardedDatabase(id, "  timeouts {\n    delete = \"5m\"\n  }\n")), `"crm"`, `"crm-v2"`, 1))
			c.run("apply", "-auto-approve", "-no-color", "-target=terraform_data.db")
			if st := c.state(guardAddr); st == nil || st["pending_destroy_backup"] == nil {
				t.Errorf("the -target apply cleared the pending backup: %v", st)
			}
			e.clock.Advance(2 * time.Minute)
		}, 1},
		{"after an apply", func(t *testing.T, e *testEnv, c *cli) {
			plan := c.run("plan", "-no-color")
			if !strings.Contains(plan, "pending_destroy_backup") || !strings.Contains(plan, "1 to change") {
				t.Errorf("the plan does not show the pending backup being cleared:\n%s", plan)
			}
			c.run("apply", "-auto-approve", "-no-color")
			if st := c.state(guardAddr); st == nil || st["pending_destroy_backup"] != nil {
				t.Errorf("the apply kept the pending backup: %v", st)
			}
			e.clock.Advance(2 * time.Minute)
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 2004, PendingFor: 3 * time.Minute, RunningFor: 3 * time.Minute})
			id := e.srv.AccountIDs()[0]
			c := newCLI(t, e, e.config(guardedDatabase(id, "  timeouts {\n    delete = \"5m\"\n  }\n")))
			c.run("apply", "-auto-approve", "-no-color")
			out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
			flat := strings.Join(strings.Fields(out), " ")
			if err == nil || !strings.Contains(flat, "and what it guards: backup still in progress") || !strings.Contains(flat, "(timeouts.delete is 5m0s)") {
				t.Fatalf("want the destroy to time out naming timeouts.delete:\n%s", out)
			}
			pending, _ := c.state(guardAddr)["pending_destroy_backup"].(map[string]any)
			if pending == nil || !strings.HasPrefix(fmt.Sprint(pending["backup_id"]), "bkp_") || pending["counts_until"] == nil {
				t.Fatalf("the state does not show the pending backup: %v", c.state(guardAddr))
			}
			// The message names the moment the state records, not a default.
			if until := fmt.Sprint(pending["counts_until"]); !strings.Contains(flat, "a destroy before "+until) {
				t.Errorf("the timed-out destroy does not say it is followed until %s:\n%s", until, out)
			}
			tc.then(t, e, c)
			// A new backup outlasts timeouts.delete too: the destroy after
			// it follows that one.
			for range 2 {
				if _, err := c.exec(nil, "destroy", "-auto-approve", "-no-color"); err == nil {
					break
				}
				if _, gone := c.destroyedAt(); gone {
					t.Fatal("the guarded resource was destroyed by a destroy that failed")
				}
				e.clock.Advance(3 * time.Minute)
			}
			if n := e.srv.BackupsQueued(id); n != tc.wantBackups {
				t.Errorf("%d backups queued, want %d", n, tc.wantBackups)
			}
			if _, gone := c.destroyedAt(); !gone {
				t.Error("the guarded resource was not destroyed")
			}
		})
	}
}

// Refusals stop the destroy before any backup, naming the account and the
// reason.
func TestAccOnDestroyRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2005, PendingFor: time.Hour})
	busy := e.srv.AddAccount(mockservice.AccountSpec{})
	paused := e.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	for _, tc := range []struct {
		name, account, extra string
		before               int // backups queued before the destroy
		want                 []string
	}{
		// Found at plan by the preflight, before anything is destroyed.
		{"409 with on_conflict fail", busy, "  on_conflict = \"fail\"\n", 1, []string{"A backup of account " + busy + ` is in progress and on_conflict is "fail": its backup_on_destroy cannot be destroyed now`,
			"Nothing was destroyed"}},
		{"422", paused, "", 0, []string{"Kept the backup_on_destroy of account " + paused + " and what it guards: unable to trigger a backup", "HTTP 422", "paused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, e, e.config(guardedDatabase(tc.account, tc.extra)))
			c.run("apply", "-auto-approve", "-no-color")
			if tc.before > 0 {
				e.outsideBackup(t, tc.account)
			}
			out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
			flat := strings.Join(strings.Fields(out), " ")
			if err == nil {
				t.Fatalf("the destroy succeeded:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
			if n := e.srv.BackupsQueued(tc.account); n != tc.before {
				t.Errorf("%d backups queued, want %d (none by the destroy)", n, tc.before)
			}
			if _, gone := c.destroyedAt(); gone {
				t.Error("the guarded resource was destroyed")
			}
		})
	}
}

// Removing the guard from the configuration takes one backup, and so does
// replacing the guarded resource when the guard has replace_triggered_by
// its id; an in-place update of it takes none.
func TestAccOnDestroyRemovalAndReplacement(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2006, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	ids := e.srv.AccountIDs()

	// Removal: the guard leaves the configuration, the database stays.
	removed := newCLI(t, e, e.config(guardedDatabase(ids[0], "")))
	removed.run("apply", "-auto-approve", "-no-color")
	if err := os.WriteFile(filepath.Join(removed.dir, "main.tf"), []byte(e.config(`
resource "terraform_data" "db" {
  input = "crm"
}
`)), 0o600); err != nil {
		t.Fatal(err)
	}
	removed.run("apply", "-auto-approve", "-no-color")
	if n := e.srv.BackupsQueued(ids[0]); n != 1 {
		t.Errorf("removal: %d backups queued, want 1", n)
	}

	// Removal of both: one backup, and both leave the state. (The order
	// comes from the dependency the state keeps; Terraform runs no
	// destroy-time provisioner for a removed block, so it is not observed
	// here, as it is by a destroy above.)
	both := newCLI(t, e, e.config(guardedDatabase(ids[2], "")))
	both.run("apply", "-auto-approve", "-no-color")
	if err := os.WriteFile(filepath.Join(both.dir, "main.tf"), []byte(e.config("")), 0o600); err != nil {
		t.Fatal(err)
	}
	both.run("apply", "-auto-approve", "-no-color")
	bks, err := client.Collect(e.rawClient(t).Backups(t.Context(), ids[2], client.ListOptions{}))
	if err != nil || len(bks) != 1 || bks[0].Status != client.StatusSuccess || both.state("terraform_data.db") != nil || both.state(guardAddr) != nil {
		t.Errorf("removal of both: backups %+v (%v)", bks, err)
	}

	// Removal of both, with a backup that fails: the apply stops and the
	// database stays.
	failing := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "export refused"})
	stopped := newCLI(t, e, e.config(guardedDatabase(failing, "")))
	stopped.run("apply", "-auto-approve", "-no-color")
	if err := os.WriteFile(filepath.Join(stopped.dir, "main.tf"), []byte(e.config("")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := stopped.exec(nil, "apply", "-auto-approve", "-no-color"); err == nil || stopped.state("terraform_data.db") == nil {
		t.Errorf("removal of both with a failing backup: the apply went on (%v) or the database left the state:\n%s", err, out)
	}

	// Replacement, as the example guards it: replace_triggered_by the
	// database's id replaces the guard (one backup, before the database
	// goes) when the database is replaced, and not when it is updated in
	// place. depends_on alone guards no replacement (the documented limit).
	cfg := func(lifecycle, input, replace string) string {
		return e.config(fmt.Sprintf(`
resource "terraform_data" "db" {
  input            = %q
  triggers_replace = %q
}

resource "backup_on_destroy" "db" {
  account_id = %q
  depends_on = [terraform_data.db]
%s}
`, input, replace, ids[1], lifecycle))
	}
	for _, tc := range []struct {
		name                        string
		lifecycle                   string
		wantOnUpdate, wantOnReplace int
	}{
		{"replace_triggered_by id", "  lifecycle {\n    replace_triggered_by = [terraform_data.db.id]\n  }\n", 0, 1},
		{"depends_on alone", "", 0, 0},
	} {
		before := e.srv.BackupsQueued(ids[1])
		replaced := newCLI(t, e, cfg(tc.lifecycle, "v1", "r1"))
		replaced.run("apply", "-auto-approve", "-no-color")
		replaced.write(cfg(tc.lifecycle, "v2", "r1")) // in place
		replaced.run("apply", "-auto-approve", "-no-color")
		if n := e.srv.BackupsQueued(ids[1]) - before; n != tc.wantOnUpdate {
			t.Errorf("%s: an in-place update queued %d backups, want %d", tc.name, n, tc.wantOnUpdate)
		}
		replaced.write(cfg(tc.lifecycle, "v2", "r2")) // replacement
		replaced.run("apply", "-auto-approve", "-no-color")
		if n := e.srv.BackupsQueued(ids[1]) - before; n != tc.wantOnReplace {
			t.Errorf("%s: a replacement queued %d backups, want %d", tc.name, n, tc.wantOnReplace)
		}
	}
}

// The correctness rules hold on destroy too: a backup accepted but never
// listed fails the destroy (not a false success) and is recorded by when
// it was triggered; destroying again, once the listing shows it, follows
// that backup and sends no second trigger.
func TestAccOnDestroyQueuedButNotListed(t *testing.T) {
	t.Parallel()
	e, f := newFaultyListingEnv(t, mockservice.Options{Seed: 2007, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	e.srv.AddBackups(id, 3, 0, "") // old finished backups: never taken for this destroy's
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	f.set(e.clock.Now().Add(-time.Second), "") // new backups stay out of the listing
	out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, "a backup was queued") || !strings.Contains(flat, "(pending_destroy_backup.counts_until: this stop plus resume_within) looks for this backup") {
		t.Fatalf("want the destroy to fail, saying the backup was queued and what follows:\n%s", out)
	}
	if _, gone := c.destroyedAt(); gone || c.state("terraform_data.db") == nil {
		t.Fatal("the guarded resource was destroyed without a backup seen to succeed")
	}
	f.set(time.Time{}, "")
	c.run("destroy", "-auto-approve", "-no-color")
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 1 {
		t.Errorf("%d trigger requests, want 1", n)
	}
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued, want 1", n)
	}
	if _, gone := c.destroyedAt(); !gone {
		t.Error("the guarded resource was not destroyed")
	}
}

// Refreshing many guards costs what refreshing finished triggers costs: a
// GET for each of the first few accounts, then one shared listing, and one
// GET to confirm an account the listing misses. A guard whose account was
// deleted stays in the state with a warning: the plan changes nothing.
func TestAccOnDestroyRefreshCostAndDeletedAccount(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2008, Accounts: 30})
	ids := e.srv.AccountIDs()
	cfg := e.config(fmt.Sprintf("resource \"backup_on_destroy\" \"each\" {\n  count      = %d\n  account_id = %s[count.index]\n}\n", len(ids), hclList(ids)))
	c := newCLI(t, e, cfg)
	c.run("apply", "-auto-approve", "-no-color")
	e.srv.DeleteAccount(ids[len(ids)-1])
	e.srv.ResetStats()
	out := c.run("plan", "-no-color")
	gets, pages, tokens := e.srv.Requests(mockservice.RouteGetAccount), e.srv.Requests(mockservice.RouteListAccounts), e.srv.Requests(mockservice.RouteToken)
	// As for triggers (TestAccTriggerRefreshCost): 8 direct reads, then
	// the listing; one more GET proves the deleted account gone.
	if maxGets := 8 + 1; gets > maxGets || pages > 1 || tokens > 1 {
		t.Errorf("refreshing %d guards, one deleted, sent %d account GETs, %d listing pages and %d token reads; want at most %d, 1 and 1",
			len(ids), gets, pages, tokens, maxGets)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "does not exist for this API key") || !strings.Contains(flat, "No changes") {
		t.Errorf("the plan after the account's deletion:\n%s", out)
	}
	if c.state(`backup_on_destroy.each[29]`) == nil {
		t.Error("the guard of the deleted account left the state")
	}
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d trigger requests from a plan", n)
	}
}

// The way out of a guard that cannot back up its account (paused,
// failing): a removed block with destroy = false (Terraform and OpenTofu
// 1.7+) forgets the guard without destroying it: no backup, the guarded
// resource kept. Removing the guard's block alone destroys the guard,
// which takes a backup and fails.
func TestAccOnDestroyWayOutWithRemovedBlock(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.7.0", "removed blocks")
	e := newTestEnv(t, mockservice.Options{Seed: 2009, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "the connection needs re-authorization"})
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	db := `
resource "terraform_data" "db" {
  input = "crm"
}
`
	c.write(e.config(db))
	if out, err := c.exec(nil, "apply", "-auto-approve", "-no-color"); err == nil {
		t.Fatalf("removing the guard's block destroyed it without a good backup:\n%s", out)
	}
	stuck := e.srv.BackupsQueued(id)
	c.write(e.config(db + `
removed {
  from = backup_on_destroy.db
  lifecycle {
    destroy = false
  }
}
`))
	c.run("apply", "-auto-approve", "-no-color")
	if n := e.srv.BackupsQueued(id) - stuck; n != 0 {
		t.Errorf("the removed block queued %d backups, want none", n)
	}
	if c.state(guardAddr) != nil {
		t.Error("the guard is still in the state")
	}
	if st := c.state("terraform_data.db"); st == nil || st["input"] != "crm" {
		t.Errorf("the guarded resource was not kept: %v", st)
	}
	if _, gone := c.destroyedAt(); gone {
		t.Error("the guarded resource was destroyed")
	}
}

// privateBytes is private state holding one key.
type privateBytes map[string][]byte

func (p privateBytes) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

// A destroy-time record counts until its own counts_until, shown in
// pending_destroy_backup; an absent, empty or unreadable record, or one of
// another version, is none.
func TestDestroyBackupRecord(t *testing.T) {
	t.Parallel()
	triggered := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		raw       string
		wantOK    bool
		wantUntil time.Time
	}{
		{"timed out", `{"v":1,"phase":"identified","backup_id":"bkp_0123456789abcdef","status":"running","triggered_at":"2026-11-20T10:00:00Z","counts_until":"2026-11-20T10:45:00Z"}`,
			true, triggered.Add(45 * time.Minute)},
		{"not identified", `{"v":1,"phase":"unidentified","triggered_at":"2026-11-20T10:00:00Z","counts_until":"2026-11-20T10:10:00Z"}`,
			true, triggered.Add(10 * time.Minute)},
		{"absent", ``, false, time.Time{}},
		{"another version", `{"v":2,"phase":"identified"}`, false, time.Time{}},
		{"unreadable", `{"v":1,"backup_id":`, false, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := privateBytes{}
			if tc.raw != "" {
				p[workflow.Key] = []byte(tc.raw)
			}
			d := destroyRecord(t.Context(), p)
			ok := !d.Empty()
			if ok != tc.wantOK {
				t.Fatalf("read %+v, ok %t; want ok %t", d, ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if !d.CountsUntil.Equal(tc.wantUntil) || !d.StandsUntil().Equal(tc.wantUntil) {
				t.Errorf("counts until %s, want %s", d.CountsUntil, tc.wantUntil)
			}
			obj := pendingObject(d)
			attrs := obj.Attributes()
			if want := tc.wantUntil.Format(time.RFC3339); attrs["counts_until"].(timetypes.RFC3339).ValueString() != want {
				t.Errorf("pending_destroy_backup.counts_until = %s, want %s", attrs["counts_until"], want)
			}
			if (d.BackupID == "") != attrs["backup_id"].IsNull() {
				t.Errorf("pending_destroy_backup.backup_id = %s for backup id %q", attrs["backup_id"], d.BackupID)
			}
		})
	}
	// What Delete writes reads back the same.
	d := destroyRecord(t.Context(), privateBytes{workflow.Key: []byte(`{"v":1,"phase":"identified","backup_id":"bkp_0123456789abcdef",` +
		`"status":"running","triggered_at":"2026-11-20T10:00:00Z","counts_until":"2026-11-20T11:00:00Z","stopped_on_service":"2026-11-20T10:00:00Z"}`)})
	if back := destroyRecord(t.Context(), privateBytes{workflow.Key: workflow.Encode(d)}); back != d || d.Empty() {
		t.Errorf("round trip: %+v, want %+v", back, d)
	}
}

const (
	guardAcct = "acc_0123456789abcdef"
	guardBkp  = "bkp_0123456789abcdef"
)

// guardOutcomes are the outcomes a guard's destroy can stop on.
func guardOutcomes() map[string]workflow.Outcome {
	running := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusRunning}
	failed := running
	failed.Status, failed.Error = client.StatusFailed, new(string)
	*failed.Error = "export refused"
	requestID := "0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d"
	api := func(status int, title, detail string) *client.APIError {
		return &client.APIError{Method: "POST", Path: "/api/v1/accounts/" + guardAcct + "/backup", StatusCode: status, Title: title,
			Detail: detail, RequestID: requestID}
	}
	return map[string]workflow.Outcome{
		"interrupted":         {Kind: workflow.Unsettled, Backup: &running, Waited: 3 * time.Second, Err: context.Canceled},
		"timed out":           {Kind: workflow.Unsettled, Backup: &running, Waited: 5 * time.Minute, Err: context.DeadlineExceeded},
		"failed":              {Kind: workflow.Failed, Backup: &failed, Err: errors.New("backup " + guardBkp + " ended with status \"failed\": export refused")},
		"unfollowed":          {Kind: workflow.Unsettled, Backup: &running, Waited: time.Minute, Err: api(503, "Service Unavailable", "")},
		"unreadable":          {Kind: workflow.Refused, Err: &workflow.UnreadError{BackupID: guardBkp, Err: api(500, "Internal Server Error", "")}},
		"unidentified":        {Kind: workflow.NotIdentified, TriggeredAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Confirmed: true, Err: errNotListed},
		"conflict waited out": {Kind: workflow.Refused, Waited: 5 * time.Minute, Err: &workflow.ConflictWaitError{Running: &running, Err: context.DeadlineExceeded}},
		"conflict, on_conflict fail": {Kind: workflow.Refused,
			Err: &workflow.RefusalError{Err: api(409, "Conflict", "A backup for account "+guardAcct+" is already in progress.")}},
		"paused":    {Kind: workflow.Refused, Err: &workflow.RefusalError{Err: api(422, "Unprocessable Entity", "Account "+guardAcct+" is not in a backupable state: paused")}},
		"not found": {Kind: workflow.Refused, Err: &workflow.RefusalError{Err: api(404, "Not Found", "No account "+guardAcct+".")}},
		"reuse refused, then failed": {Kind: workflow.Failed, Backup: &failed, ReuseRefused: workflow.ErrNoEarlierChange,
			Err: errors.New("backup " + guardBkp + " ended with status \"failed\": export refused")},
	}
}

// Every diagnostic of a stopped destroy names the guard (Terraform gives a
// provider no resource address) and, for an error, says what was kept; its
// title reads as a sentence, and no status is told twice.
func TestStoppedDestroyNamesTheGuardAndWhatWasKept(t *testing.T) {
	t.Parallel()
	for name, o := range guardOutcomes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o.AccountID = guardAcct
			var reported diag.Diagnostics
			report(&reported, destroyCaller(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)), 5*time.Minute, o)
			diags := namingGuard(guardAcct, reported)
			if len(diags) == 0 || len(diags) != len(reported) || !diags.HasError() {
				t.Fatalf("diagnostics %v from %v", diags, reported)
			}
			for _, d := range diags {
				summary, detail := d.Summary(), strings.Join(strings.Fields(d.Detail()), " ")
				want := "The backup_on_destroy of account " + guardAcct + ": "
				if d.Severity() == diag.SeverityError {
					want = "Kept the backup_on_destroy of account " + guardAcct + " and what it guards: "
				}
				if !strings.HasPrefix(summary, want) {
					t.Errorf("summary %q, want it to begin %q", summary, want)
				}
				if n := strings.Count(summary, guardAcct); n != 1 {
					t.Errorf("summary %q names the account %d times", summary, n)
				}
				rest := strings.TrimPrefix(summary, want)
				if strings.Contains(rest, ": ") || strings.HasSuffix(summary, ".") || rest == "" {
					t.Errorf("summary %q: want one sentence, the guard then what happened", summary)
				}
				for _, status := range []string{"HTTP 404", "HTTP 409", "HTTP 422", "HTTP 500", "HTTP 503"} {
					if n := strings.Count(summary+" "+detail, status); n > 1 {
						t.Errorf("%s told %d times: %q %q", status, n, summary, detail)
					}
				}
			}
		})
	}
}

func TestLowerFirst(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Backup did not succeed":          "backup did not succeed",
		"reuse_within not applied":        "reuse_within not applied",
		"API key of another organization": "API key of another organization",
		"":                                "",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

// A guarded destroy's backup id reaches the user: its state is gone, so the
// warning shows it, in a summary of its own for each guard.
func TestDestroyedAfterNamesTheBackup(t *testing.T) {
	t.Parallel()
	done := time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)
	b := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusSuccess, CreatedAt: done.Add(-5 * time.Minute), CompletedAt: &done}
	for name, tc := range map[string]struct {
		reused, followed bool
		want             string
	}{
		"its own":         {want: "This destroy queued it: it is the first backup listed above"},
		"reused":          {reused: true, want: "This destroy queued no backup: backup " + guardBkp + ", created at 2026-11-23T10:00:00Z, is within reuse_within (15m)."},
		"a stopped one's": {followed: true, want: "it followed backup " + guardBkp},
	} {
		summary, detail := destroyedAfter(guardAcct, b, tc.reused, tc.followed, "15m")
		if want := "The backup_on_destroy of account " + guardAcct + " was destroyed after backup " + guardBkp; summary != want {
			t.Errorf("%s: summary %q, want %q", name, summary, want)
		}
		for _, w := range []string{"Backup " + guardBkp + " of account " + guardAcct + " succeeded at 2026-11-23T10:05:00Z", tc.want, "this is where the backup's id is shown"} {
			if !strings.Contains(detail, w) {
				t.Errorf("%s: detail %q does not say %q", name, detail, w)
			}
		}
	}
}

// A guarded destroy that took a new backup because reuse_within could not
// be read says why, naming the guard, as a stopped one does; then the
// backup it went ahead after (an audit found the warning dropped).
func TestDestroyedSaysWhyNoBackupWasReused(t *testing.T) {
	t.Parallel()
	done := time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)
	b := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusSuccess, CreatedAt: done.Add(-time.Minute), CompletedAt: &done}
	o := workflow.Outcome{Kind: workflow.Succeeded, AccountID: guardAcct, Backup: &b, ReuseRefused: errors.New("the clocks are 60s apart")}
	diags := destroyedDiagnostics(guardAcct, o, false, "15m")
	if len(diags) != 2 || diags.HasError() {
		t.Fatalf("diagnostics %v: want two warnings", diags)
	}
	if s := diags[0].Summary(); s != "The backup_on_destroy of account "+guardAcct+": reuse_within not applied" ||
		!strings.Contains(diags[0].Detail(), "the clocks are 60s apart") {
		t.Errorf("first %q %q: want why reuse_within was not applied, naming the guard", s, diags[0].Detail())
	}
	if !strings.Contains(diags[1].Summary(), "was destroyed after backup "+guardBkp) {
		t.Errorf("second %q: want the backup the destroy went ahead after", diags[1].Summary())
	}
	o.ReuseRefused = nil
	if diags := destroyedDiagnostics(guardAcct, o, false, "15m"); len(diags) != 1 {
		t.Errorf("diagnostics %v: want the backup's warning alone when reuse_within was read", diags)
	}
}

// A destroy whose account the service proves gone (its 404) stops, naming
// the guard and its account once, and saying what was kept (an audit found
// the account named twice).
func TestDestroyOfAGoneAccountNamesItOnce(t *testing.T) {
	t.Parallel()
	a := ruleAnswers[0] // the service's 404
	srv, sch := configured(t, ruleService(t, a.status, a.contentType, a.body, http.StatusOK))
	schema := sch.ResourceSchemas["backup_on_destroy"]
	null, err := tfprotov6.NewDynamicValue(schema.ValueType(), tftypes.NewValue(schema.ValueType(), nil))
	if err != nil {
		t.Fatal(err)
	}
	none := &null
	resp, err := srv.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "backup_on_destroy",
		PriorState: object(t, schema, map[string]tftypes.Value{"id": tfStr(ruleAccount), "account_id": tfStr(ruleAccount),
			"on_conflict": tfStr("wait"), "resume_within": tfStr("10m")}),
		PlannedState: none,
		Config:       none,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "Kept the backup_on_destroy of account " + ruleAccount + " and what it guards: its account does not exist for this API key"
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != want {
		t.Errorf("diagnostics %s\nwant one error, %q", diagText(resp.Diagnostics), want)
	}
}
