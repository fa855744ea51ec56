package provider

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// backup_trigger with reuse_within: a good backup inside the window is
// adopted, one in progress is joined and waited for, one outside the window
// is not; the state says which, and a second plan is empty.
func TestAccTriggerReuseWithin(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4101})
	adopt := e.srv.AddAccount(mockservice.AccountSpec{})
	join := e.srv.AddAccount(mockservice.AccountSpec{})
	outside := e.srv.AddAccount(mockservice.AccountSpec{})
	now := e.clock.Now()
	// A history backup takes 11 minutes: this one ended 9 minutes ago; the
	// next is running; the last ended long before the window.
	e.srv.AddHistory(adopt, mockservice.BackupSpec{ID: "bkp_reuseadopted0001", CreatedAt: now.Add(-20 * time.Minute)})
	e.srv.AddHistory(join, mockservice.BackupSpec{ID: "bkp_reusejoined00001", CreatedAt: now.Add(-3 * time.Minute)})
	e.srv.AddHistory(outside, mockservice.BackupSpec{CreatedAt: now.Add(-2 * time.Hour)})
	config := ""
	for name, id := range map[string]string{"adopt": adopt, "join": join, "outside": outside} {
		config += fmt.Sprintf(`
resource "backup_trigger" %q {
  account_id          = %q
  wait_for_completion = true
  reuse_within        = "30m"
}
`, name, id)
	}
	c := newCLI(t, e, e.config(config))
	c.run("apply", "-auto-approve", "-no-color")
	for name, want := range map[string]struct {
		id     string
		reused bool
	}{"adopt": {"bkp_reuseadopted0001", true}, "join": {"bkp_reusejoined00001", true}, "outside": {"", false}} {
		got := c.state("backup_trigger." + name)
		if got["reused"] != want.reused || got["backup_status"] != "success" || (want.id != "" && got["id"] != want.id) {
			t.Errorf("%s: %v; want reused %t, success, id %q", name, got, want.reused, want.id)
		}
	}
	if q := e.srv.Stats().BackupsQueued; q[adopt] != 0 || q[join] != 0 || q[outside] != 1 {
		t.Errorf("backups queued %v: want one, outside the window only", q)
	}
	expectNoChange(t, c, "plan", "-detailed-exitcode", "-no-color", "-input=false")
}

// Four pipelines applying a waited trigger of one account at the same time,
// with reuse_within, take one backup in all, and every run succeeds.
func TestAccTriggerReuseAcrossConcurrentApplies(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4102})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	config := e.config(triggerConfig(id, "  wait_for_completion = true\n  reuse_within        = \"15m\"\n"))
	const runs = 4
	clis := make([]*cli, runs)
	for i := range clis {
		clis[i] = newCLI(t, e, config)
	}
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
	if q := e.srv.Stats().BackupsQueued[id]; q != 1 || len(ids) != 1 {
		t.Errorf("%d backups queued, ids %v: want one backup, shared by the %d runs", q, ids, runs)
	}
}

// A runner killed while its trigger waits, retried within the window,
// follows the orphan's backup: no second backup, and no success before it.
func TestAccTriggerReuseAfterAKilledRunner(t *testing.T) {
	t.Parallel()
	e := newWallClockEnv(t, mockservice.Options{Seed: 4103, PendingFor: 2 * time.Second, RunningFor: 2 * time.Second})
	id := e.srv.AddAccount(mockservice.AccountSpec{})
	c := newCLI(t, e, e.config(triggerConfig(id, "  wait_for_completion = true\n  reuse_within        = \"15m\"\n")))
	out, err := c.kill(func() bool { return e.srv.BackupsQueued(id) == 1 }, "apply", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("the killed apply succeeded:\n%s", out)
	}
	orphan, err := client.Collect(e.rawClient(t).Backups(t.Context(), id, client.ListOptions{}))
	if err != nil || len(orphan) != 1 {
		t.Fatalf("backups of the killed run: %v, %v", orphan, err)
	}
	c.run("apply", "-auto-approve", "-no-color")
	got := c.state("backup_trigger.this")
	if q := e.srv.BackupsQueued(id); q != 1 || got["id"] != orphan[0].ID || got["reused"] != true || got["backup_status"] != "success" {
		t.Errorf("%d backups queued, state %v: want the orphan %s, reused and succeeded", q, got, orphan[0].ID)
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
	if !strings.Contains(out, "Destroyed after backup bkp_reuseguarded0001") || !strings.Contains(out, "2 destroyed") {
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
// change went ahead (workflow.Rule.After). Found by the simulation.
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
