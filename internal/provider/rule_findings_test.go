package provider

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

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
