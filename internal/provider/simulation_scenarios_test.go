package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Scenarios: sequences the simulation plays as written rather than drawn,
// each a case the random sequences found or must reach, judged by the same
// Terraform and the same checker. The seeds the simulation once failed on
// replayed an older generator's draws and are gone: what they found, the
// random sequences reach by their episodes (a wait interrupted and
// resumed before the next change, a clock set back before a lost answer,
// a front's stale Date) and the cases below play as written.

// scenario runs play in a bubble on a bare world and fails on any violation.
func scenario(t *testing.T, play func(w *simWorld)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		w := newBareSimWorld(t, 1)
		play(w)
		time.Sleep(2 * mockservice.MaxLatency)
		if len(w.violations) > 0 {
			w.attachReport(0, 0)
			t.Fatal(w.violations[0].report)
		}
	})
}

// workspace adds a pipeline of the configuration given.
func (w *simWorld) workspace(conf simConfig) *simWorkspace {
	ws := &simWorkspace{w: w, id: len(w.spaces) + 1, conf: conf, state: newSimState(), lineages: map[string]*simLineage{}}
	w.spaces = append(w.spaces, ws)
	return ws
}

// play runs a command of ws alone, as a step does, and says what it was.
func (w *simWorld) play(ws *simWorkspace, kind simCmdKind, set ...func(*simCommand)) *simCommand {
	w.commands++
	cmd := &simCommand{w: w, num: w.commands, ws: ws, kind: kind, alone: true}
	for _, f := range set {
		f(cmd)
	}
	w.lines = append(w.lines, cmd.String())
	cmd.run()
	w.clearFaults()
	w.checkDuplicates()
	return cmd
}

// wantDestroyedAfter fails t unless ws's guarded data is destroyed, with n
// backups of acc in all.
func (w *simWorld) wantDestroyedAfter(t *testing.T, ws *simWorkspace, acc string, n int) {
	t.Helper()
	if got := len(w.srv.Truth(acc)); ws.state.data || got != n {
		t.Errorf("data kept %v, backups %d: want the data destroyed after %d", ws.state.data, got, n)
	}
}

// backupsLast makes every backup pending, then running, that long.
func (w *simWorld) backupsLast(pending, running time.Duration) {
	w.srv.SetBackupLength(func() (time.Duration, time.Duration) { return pending, running })
}

// triggerDirect queues a backup of acc as a caller outside the pipelines
// does, labelled label for the checker ("": another's).
func (w *simWorld) triggerDirect(t *testing.T, acc, label string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/api/v1/accounts/"+acc+"/backup", nil)
	req.Header.Set("X-API-Key", w.key)
	rec := httptest.NewRecorder()
	w.srv.ServeHTTP(rec, req.WithContext(mockservice.WithQueuedBy(req.Context(), label)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("trigger of %s: %d %s", acc, rec.Code, rec.Body)
	}
}

func ctrlC(after time.Duration) func(*simCommand) {
	return func(c *simCommand) { c.stop = simStop{after: after} }
}

func withFault(f mockservice.Fault) func(*simCommand) {
	return func(c *simCommand) { c.fault = &f }
}

// triggerOn is one trigger of an account, release 1, waiting.
func triggerOn(account string) *simTriggerConf {
	return &simTriggerConf{addr: "backup_trigger.t1", account: account, release: 1, wait: true}
}

// A front answers a trigger's POST and its listings with its own 502 page
// dated 30 minutes stale: the trigger is not identified and tainted. Its
// replacement must not take the account's good backup of 12 minutes
// before the first apply as the change's own (issue 56's first finding).
func TestSimScenarioStaleFrontDate(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.srv.AddHistory(acc, mockservice.BackupSpec{CreatedAt: time.Now().Add(-12 * time.Minute)})
		c := triggerOn(acc)
		c.wait = false
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply, withFault(mockservice.Fault{Kind: mockservice.FaultFront, AccountID: acc,
			Front: mockservice.Front{Date: mockservice.FrontDateSkewed, Skew: -30 * time.Minute}}))
		time.Sleep(time.Minute)
		w.play(ws, simCmdApply)
	})
}

// A change refused by the service (a paused account) is saved tainted,
// with no backup; the apply that replaces it, once the account is active
// again, must not reuse the backup of the change before, taken before that
// change went ahead: Terraform gives the tainted trigger's Delete no
// private state (issue 56's second finding, by a refusal).
func TestSimScenarioRefusedReplacementKeepsTheFloor(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		c := triggerOn(acc)
		c.reuse = "10m"
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply)
		w.misbehave(simMisbehaviour{kind: simAccountState, account: acc, state: mockservice.StatePaused})
		c.release = 2
		w.play(ws, simCmdApply)
		w.misbehave(simMisbehaviour{kind: simAccountState, account: acc, state: mockservice.StateActive})
		w.play(ws, simCmdApply)
	})
}

// The same by a Ctrl-C: the change before did not wait, so its backup is
// still running when the next change's create waits for it to end; a
// Ctrl-C then saves that create tainted, with no backup, and the apply run
// again must not reuse the backup of the change before.
func TestSimScenarioInterruptedReplacementKeepsTheFloor(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 5*time.Minute)
		w.maxLength = 5*time.Minute + time.Second
		c := triggerOn(acc)
		c.wait, c.reuse = false, "30m"
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply)
		c.release, c.wait = 2, true
		w.play(ws, simCmdApply, ctrlC(20*time.Second))
		w.play(ws, simCmdApply)
	})
}

// The service's clock 30 s behind, on a healthy service: a trigger that
// waits is identified and succeeds, and so does a guard's destroy
// (issue 55's third finding: nothing was identified).
func TestSimScenarioServiceClockBehind(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		w.setOffset(-30 * time.Second)
		acc := w.accounts[0]
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{triggerOn(acc)},
			guard: &simGuardConf{present: true, account: acc, resumeWithin: 10 * time.Minute, timeoutFull: defaultTimeout}})
		w.play(ws, simCmdApply)
		w.play(ws, simCmdDestroy)
	})
}

// A runner killed while it waits for its backup: the pipeline runs the
// apply again, which takes a second backup (the API has no idempotency
// key; grantKilledRunner), and the change goes ahead on it.
func TestSimScenarioKilledRunnerRetries(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, time.Minute)
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{triggerOn(acc)}})
		cmd := w.play(ws, simCmdApply, func(c *simCommand) { c.stop = simStop{after: 20 * time.Second, kill: true} })
		if len(cmd.attempts) != 2 || ws.state.migrated["backup_trigger.t1"] != 1 || len(w.srv.Truth(acc)) != 2 {
			t.Errorf("attempts %d, migrated %v, backups %d: want a retry that went ahead on a second backup",
				len(cmd.attempts), ws.state.migrated, len(w.srv.Truth(acc)))
		}
	})
}

// A guard's destroy stopped by a Ctrl-C while its backup runs: the destroy
// run again within resume_within follows that backup, queues none, and
// the guarded data goes once it succeeded.
func TestSimScenarioStoppedDestroyResumes(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 2*time.Minute)
		ws := w.workspace(simConfig{guard: &simGuardConf{present: true, account: acc, resumeWithin: 10 * time.Minute, timeoutFull: defaultTimeout}})
		w.play(ws, simCmdApply)
		w.play(ws, simCmdDestroy, ctrlC(20*time.Second))
		time.Sleep(time.Minute)
		w.play(ws, simCmdDestroy)
		w.wantDestroyedAfter(t, ws, acc, 1)
	})
}

// A guard's destroy stopped with the runner's clock 20 minutes ahead,
// behind a front whose Date is as far ahead, writes a record that stands 21
// minutes by either clock; the next, with both right, past resume_within,
// reads it as standing on the service's: only the bound on this machine's
// clock keeps it to resume_within (workflow.Runner.Destroy), and it takes a
// new backup.
func TestSimScenarioStoppedDestroyOnClocksAhead(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 2*time.Minute)
		g := &simGuardConf{present: true, account: acc, resume: "1m", onConflict: "wait", resumeWithin: time.Minute, timeoutFull: defaultTimeout}
		ws := w.workspace(simConfig{guard: g})
		w.play(ws, simCmdApply)
		w.play(ws, simCmdDestroy, ctrlC(2*time.Second), func(c *simCommand) { c.clock = simRunnerClock{skew: 20 * time.Minute} },
			withFault(mockservice.Fault{Kind: mockservice.FaultFront,
				Front: mockservice.Front{Relay: true, Date: mockservice.FrontDateSkewed, Skew: 20 * time.Minute}}))
		time.Sleep(time.Minute + simAllowance + 45*time.Second)
		w.play(ws, simCmdDestroy)
		w.wantDestroyedAfter(t, ws, acc, 2)
	})
}

// Another's backup, queued just before a trigger and over before a lagging
// listing shows it, answers that trigger 409: the conflict wait goes on
// until the listing shows it, so that the next trigger's backup is looked
// for above it. Sent again at once (sim mutant 23), the trigger meets 409
// after 409 for as long as the other runs: thousands of requests.
func TestSimScenarioConflictWithABackupNotListedYet(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 5*time.Second)
		t1 := triggerOn(acc)
		t1.onConflict = "wait"
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{t1}})
		w.setLag(45 * time.Second)
		w.triggerDirect(t, acc, "") // another's
		w.play(ws, simCmdApply)
		// One 409, then one 202 once the wait is over: never a trigger sent again at once.
		if n := w.srv.Requests(mockservice.RouteTrigger); n != 3 {
			t.Errorf("%d triggers (another's included), want 3", n)
		}
		time.Sleep(time.Minute)
		w.setLag(0)
		w.play(ws, simCmdApply)
		if ws.state.migrated[t1.addr] != 1 {
			t.Errorf("migrated %v: want the change gone ahead", ws.state.migrated)
		}
	})
}

// create_before_destroy's replacement of a tainted trigger (its wait ran
// out) creates first, and cannot see the backup the tainted one recorded:
// it queues a second (grantCreateFirst).
func TestSimScenarioCreateBeforeDestroyOfATaintedTrigger(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 2*time.Minute)
		c := triggerOn(acc)
		c.cbd, c.timeout = true, "30s"
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply)
		time.Sleep(2 * time.Minute)
		c.timeout = ""
		w.play(ws, simCmdApply)
		if ws.state.migrated[c.addr] != 1 || len(ws.state.deposed[c.addr]) != 0 {
			t.Errorf("migrated %v, deposed %d: want the change gone ahead and the tainted trigger deleted", ws.state.migrated, len(ws.state.deposed[c.addr]))
		}
	})
}

// simRegressionSeeds are seeds of the deep run that failed, each named for
// what it played; a seed that no longer plays its case (the generator
// changed) becomes a scenario above, or goes.
var simRegressionSeeds = map[uint64]string{
	3771:   "a stop as a trigger's create returned: its change went ahead only with the next apply's migration",
	305008: "a retake of a failed backup with reuse_within, above its first attempt's read: it passes over what that attempt did (a stated limit)",
	66:     "short pages of another host's history and the service's own: the read's newest not on the first page, and a refused cursor",
	306878: "a pass reading on from another host's first page, the read's newest above the service's first page: that host's new backup taken",
	313157: "a trigger whose read before it came from another history, never identified: the change fails closed until a new one replaces it",
	815:    "a read before a trigger from another host's history, a whole pass of short pages without it, then that history's new backup taken",
	332449: "a read from another history, the service's short page and its refused cursor, then that history's new backup taken",
	325357: "a trigger's own backup stamped below the read's newest, which a service clock ahead stamped: never identified (a stated limit)",
	358686: "a wait whose backup another history's page listed, read again from a first page the other host answered: followed to its success",
	376961: "a trigger not waited for, every listing it read answered by another history: that history's backup believed (stated limit 2)",
	414043: "a replacement following a trigger whose read was empty, joined by another create's backup: a backup older than the read adopted",
	409121: "a change after one whose backup failed, with reuse_within: it counts above that change's read before its trigger (a stated limit)",
	382733: "a trigger that does not wait took another deleted trigger's accepted trigger, not found, whose backup had failed: it went ahead",
	430187: "a destroy stopped on a clock ahead, the next refused a listing and stopped: the record, re-armed, stood past resume_within",
	461015: "the same on a runner and a front's Date 20 minutes ahead",
	439262: "a destroy killed before its remote state was written: the trigger it deleted stays, and its change goes on",
	454830: "the workspace an empty-history episode adds, its action invoked by a later step",
	482951: "a create_before_destroy trigger took a tainted trigger's record by its value, its backup below the one another create reused: stuck",
	494374: "a stopped destroy's record, written on a clock ahead, renewed on the service's clock, re-armed by a stop that met a 409: counted 45 minutes later",
	501247: "a destroy 3 s past the stopped one's counts_until, refused by that backup's 409: the next destroy's second backup (a checker fix)",
	510231: "a resend after a lost answer met the previous change's backup's 409, hidden by a lag since: a trigger not waited went ahead on it",
	514687: "a guard reused, under reuse_within, a backup of a listing another history answered: believed, as for a trigger (stated limit 2), not judged against the account's own",
	524455: "a trigger's look met the service's pages out of order (a record dated 30 days late), then another host's history: its backup was taken as the trigger's",
	526915: "a lost answer's backup, hidden by a lagging listing from the look, listed by the read before sending it again: taken for another's, and the next apply queued a second",
	538772: "a create beside a replaced trigger gone ahead unidentified (floor unknown) took a backup that trigger had listed, hidden by a lagging listing from its own read",
	546677: "a wait read past a listing that ended without its backup (3 allowed in a row), and another host's next page followed that host's backup to its success",
	550739: "the same as 546677, of another trigger: a wait ends at the first listing that misreports its backup",
	560472: "a guard's destroy stopped after a POST that got no answer was dated by its trigger's start on the service's clock, two minutes early: its record no longer stood a second later, and the next destroy queued a second backup",
	601591: "a resend after an unknown outcome met a 409 whose backup, listed below a backup dated ahead, could be the earlier trigger's: not identified, yet waited out as another's, and the next apply queued a second",
	618520: "on_conflict = \"fail\" met a 409 from a POST another command sent 40 s late, into a window the checker thought healthy (a checker fix)",
	611595: "a trigger not waited went ahead on its 202 while a 3-minute lag hid another's backup, failed since; a refresh took that one as the trigger's: stated limit (a lagging read), a checker fix",
	619763: "pages of one hid a lost answer's backup, stamped below a backup dated ahead, from the resend's check: sent again, it queued a second",
	650160: "a change gone ahead on a backup not yet listed was replaced while a lagging listing still hid it: the replacement took it for its own",
	631460: "a lost answer's record stamped on a runner clock 9 s ahead: its rerun waited the whole grace, read 56 s on this machine's clock, and failed in a healthy window",
	727310: "a replacement's read before its trigger, a whole listing lagging 2 minutes, lacked the previous change's backup and an older one: that older one, listed above it after the POST, was taken",
	735552: "a lost answer's trigger, past the grace, whose read before the resend timed out was refused and saved with only its floor: the next apply sent a new trigger, a second backup",
	755886: "a stopped destroy, then two stopped on a listing that did not hold its backup: dated by the first stop on the service's clock, the destroy after its window queued a second backup",
	582049: "a retake after a joined backup in progress failed passed over an older good one its join's read listed (reuse_within): a stated limit, a checker fix",
	570657: "a trigger's read before its POST came from another host's history, its conflict's wait from the service's: that host's listing after the POST, lacking the wait's newest backup, had its own taken as the trigger's",
	1501:   "a stopped destroy's record written on a runner clock 9 s ahead",
	27:     "a 202's backup stamped below older ones by a clock set back: the replacement sent it again",
	539:    "a replacement of a trigger not identified, beside one whose floor is unknown, forgot its record",
	664:    "two replaced triggers of one value, each awaiting its backup: both sent again",
	7087:   "an adopted backup not above another replaced trigger's floor: a second sent at once",
	12724:  "create_before_destroy's create counted above another trigger's floor: the previous change's backup",
	11138:  "a create of one value adopted another trigger's record whose change went ahead",
	12144:  "a create whose own timeout ran out as it returned success was not recorded as gone ahead",
	3451:   "a destroy at the edge of resume_within, on a runner clock 9 s ahead (grantResumeEdge)",
	2919:   "the service's clock moved 30 minutes as a destroy stopped (grantResumeClock over the whole span)",
	5875:   "a runner clock stepped forward inside a trigger's lost-answer grace (grantJumpInOperation)",
	2827:   "create_before_destroy's create left no object; the next create of its change (a killed runner before)",
	9697:   "a runner killed while it followed its adopted backup, unsaved: its retry took a second (grantKilledRunner)",
	10149:  "a create of one value adopted another tainted trigger's record and the backup found for it (unpaired)",
	486:    "a tainted trigger replaced with another of its value that went ahead after its backup: kept with that floor, it took a second (grantUnpairedDeferred)",
	683:    "a create that took another trigger's lost record deferred, kept that one's floor, and did not count its previous backup the next apply",
	14238:  "a stopped destroy whose backup the listing dropped, then could not read, kept no service time: the next queued a second",
	15060:  "a clock set back 9 minutes stamped a trigger's backup below older ones; it followed another, which failed, and took a second",
	15191:  "a front's Date, another pipeline's fault, made a runner's clock 12 s off agree with it: reuse within the window counts",
	21756:  "a create of one value adopted another tainted trigger's record of a backup that one reused (unpaired)",
	23877:  "a lagging listing hid another's contradictory backup from the reads before two POSTs; both took it, and each took a second",
	22435:  "an invocation of two accounts, not waiting, read one's backup under way; it failed before the other settled",
	45652:  "a create took another trigger's backup by its triggers value, interrupted; the update that resumed it went ahead",
	46147:  "a backup another trigger started after the listing a change last read, as it went ahead, counted for the next change",
	47729:  "a create_before_destroy trigger's object lost after a kill: its next create knows no floor, and takes no shortcut",
	55400:  "two replaced triggers of one value, one create of it: it takes the one whose backup the other's floor does not list",
	60950:  "a guard's destroy stopped while the runner's clock stepped back: its last read, and so its stop, was minutes early",
	63647:  "a lagging listing hid a change's own backup from the floor it left, and the lag ended at that very instant: the next change reused it",
	74910:  "a create took a replaced trigger's lost record, and identified the backup another create of the process had just queued",
	72536:  "a stopped destroy's record stood 12 minutes on a service clock 30 minutes behind and a runner 3 behind: clocks apart show nothing",
	39680:  "a reuse joined another's running backup, interrupted; it failed, and the retake reuses a good one above the previous change's floor",
	94980:  "a front relayed the listing with a true Date over records a service clock 9 minutes ahead stamped: a reuse read 9 minutes young",
	100927: "a not-waited create adopted a replaced trigger's unidentified record while no listing could be read, and went ahead on it",
	89644:  "two triggers of one value replaced together; the other's read before its trigger listed this one's backup, which it could not adopt: a second",
	90258:  "a trigger's own backup stamped minutes ahead by the service's clock, set back since: a refresh took the later backup listed below it",
	78363:  "a guard's destroy waited out another's backup, then its own went unidentified: dated by the first read, its record never stood",
	75929:  "an accepted trigger's own backup, stamped by a service clock 30 s behind, fell below older ones; a refresh identified a later one",
	98:     "a stopped destroy's record stood, its backup no longer counted, and the destroy renewed it: it said it followed the backup it had queued (misreported-own)",
	227670: "a create took another replaced trigger's record by its triggers value, and a 404 page kept it without the other's floor: the next apply adopted a backup older than the other's change (false success)",
	232669: "a stopped destroy's trigger, its outcome unknown, was never listed; the next destroy sent it again and said it followed the backup it had queued (misreported-own)",
	225862: "a reuse joined another's running backup, which failed; it queued a new one while an older good one in the window was listed, and its retake could not reuse it either",
	192320: "a guard destroy read the service's clock 10.9 s behind the runner's (1 s behind, the runner 9 s ahead, the Date truncated): the stopped one's record could not stand, a second backup (grantResumeClock)",
	170532: "a trigger went ahead unidentified under a lagging listing; the next plan identified it with a later backup listed, kept in its floor: not reused by the next change",
	158850: "a change went ahead in an apply killed before its state was saved; the next change reused that change's backup as recent (grantKilledRunner)",
	776579: "a change went ahead in an apply killed before its state was saved on a backup it reused; the next change reused that same backup as recent (grantKilledRunner, a checker fix)",
	787564: "a lost answer's backup, hidden by a 100 s lag from the first resend (a 409) and stamped below a backup dated ahead, the one backup of a first page: the next destroy, finding nothing above that page's backup, sent the trigger again (grantStampedBelow, a checker fix)",
	148830: "a stopped destroy's lost trigger, processed late, failed: the next destroy found it above the read and reported that failure instead of taking a new backup",
	149421: "a stopped destroy's record read on a clock 12 s behind, as standing too long, was dropped by the next destroy's stop: a later one queued a second backup",
	137631: "a trigger's backup, stamped below older ones, went unidentified; a refresh took a later one as its own, in the floor: not reused by the next change",
	137380: "a create_before_destroy create, knowing no floor, took a backup a lagging listing hid, started before its previous change went ahead (grantLaggingListing)",
	136118: "a create deferred beside a trigger whose floor was unknown kept another trigger's record; the next apply adopted its backup, older than this trigger's previous change",
	126609: "a replacement renewed after its record's backup failed; a listing that dropped that backup before the new trigger let it be taken for the new one's, and a second was queued",
	125452: "a destroy whose record stood on neither clock apart waited out a conflict and stopped, undated: the next, on the earlier stop's date, queued a second",
	117733: "a create_before_destroy create took the unidentified record of another trigger of its value, whose own replacement had just gone ahead, and the backup a later read found for it",
	741423: "a create took the record of another trigger of its value, interrupted with its backup queued, whose create_before_destroy replacement, created first, had gone ahead: that backup, queued 5 ms before this trigger's first create (the guide's replacement limit, a checker fix)",
	909198: "an empty read, then an old backup of 10 s listed a moment later: within the clock allowance, it counted as the trigger's own",
}

// TestSimRegressionSeeds replays each of simRegressionSeeds.
func TestSimRegressionSeeds(t *testing.T) {
	t.Parallel()
	for seed, what := range simRegressionSeeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			if v := runSimulation(t, seed, simSequenceSteps); len(v) > 0 {
				t.Fatalf("%s:\n%s", what, v[0].report)
			}
		})
	}
}

// A trigger's POST held 40 s by the service, the apply stopped a second
// in, on a runner clock 20 minutes behind; the listing lags 17 s. The next
// apply, past the grace on both clocks, sends the trigger again before the
// late backup is listed: the 409 it meets is that backup running, which is
// this change's own, not another's to wait out and follow with a second
// one (deep-run seed 283844).
func TestSimScenarioResendMeetsTheLateBackup(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.accounts[0]
		w.backupsLast(time.Second, 20*time.Second)
		c := triggerOn(acc)
		c.onConflict = "wait"
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply)
		time.Sleep(time.Minute)
		w.setLag(17 * time.Second)
		c.release++
		w.play(ws, simCmdApply, ctrlC(1128*time.Millisecond), func(cmd *simCommand) { cmd.clock = simRunnerClock{skew: -20 * time.Minute} },
			withFault(mockservice.Fault{Kind: mockservice.FaultLatency, Route: mockservice.RouteTrigger, Times: 1, Latency: 40 * time.Second}))
		time.Sleep(5 * time.Second)
		w.play(ws, simCmdApply)
		if n := len(w.srv.Truth(acc)); n != 2 {
			t.Errorf("%d backups; want 2, one a change", n)
		}
	})
}

// A trigger gone ahead on its 202 after an empty read, its backup hidden by
// a lag, is replaced minutes later, while a new trigger of the account takes
// its triggers value. The delete finds that backup listed only past the
// empty read's 90 s and keeps the trigger unidentified, with what the
// listing showed; the new trigger must count none of it (its backup is not
// the old change's) and takes one of this apply.
func TestSimScenarioValueOfAnUnidentifiedTrigger(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.srv.AddAccount(mockservice.AccountSpec{})
		w.accounts = append(w.accounts, acc)
		w.backupsLast(time.Second, 20*time.Second)
		old := &simTriggerConf{addr: "backup_trigger.t1", account: acc, release: 1, onConflict: "wait"}
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{old}})
		w.setLag(2 * time.Minute)
		w.play(ws, simCmdApply)
		if id := attrOf(ws.state.objects[old.addr].value, "id"); id != "" {
			t.Fatalf("the trigger identified %s behind a 2-minute lag; the case needs it unidentified", id)
		}
		first := w.srv.Truth(acc)[0].ID
		time.Sleep(3 * time.Minute)
		w.setLag(0)
		old.release = 2
		taker := &simTriggerConf{addr: "backup_trigger.t2", account: acc, release: 1, wait: true, onConflict: "wait"}
		ws.conf.triggers = append(ws.conf.triggers, taker)
		w.play(ws, simCmdApply)
		if id := attrOf(ws.state.objects[taker.addr].value, "id"); id == "" || id == first {
			t.Errorf("%s holds backup %q; want one of this apply, not the old change's %s", taker.addr, id, first)
		}
	})
}

// An account with no backup yet, whose first trigger the service refuses
// (429, 25 s each) four times: past the 30 s an empty read's reach allows
// for sending, the trigger is not sent then, and the account is read again
// before it is. Its backup, queued 100 s after the first read, is
// identified and waited for (before, past the 90 s an empty read proves
// absence for, it was never identified, and the change was stuck).
func TestSimScenarioRefusalsOutlastAnEmptyRead(t *testing.T) {
	t.Parallel()
	scenario(t, func(w *simWorld) {
		acc := w.srv.AddAccount(mockservice.AccountSpec{})
		w.accounts = append(w.accounts, acc)
		c := triggerOn(acc)
		ws := w.workspace(simConfig{triggers: []*simTriggerConf{c}})
		w.play(ws, simCmdApply, withFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, AccountID: acc,
			Times: 4, RetryAfter: 25 * time.Second}))
		truth := w.srv.Truth(acc)
		if id := attrOf(ws.state.objects[c.addr].value, "id"); len(truth) != 1 || id != truth[0].ID {
			t.Errorf("the trigger holds %q; want the one backup queued, of %d", id, len(truth))
		}
	})
}
