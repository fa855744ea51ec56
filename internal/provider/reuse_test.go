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
