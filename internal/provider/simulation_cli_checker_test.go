package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// The judge of the simulation through the CLI. It reads the mock's ground
// truth (each backup's true start and end, its outcome, and the command
// whose API key queued it) and the simulation's own log (what each
// command was, when it began and ended, its exit code, the signal sent to
// it and when, and when Terraform printed a trigger complete). Nothing
// the provider reports decides a verdict: the backup id the state names
// after a success is only checked against the truth.
//
// The invariants:
//   - No false success: a command that exits 0 on a change (a release of
//     a trigger, the destroy of a guard) means a good backup that ended by
//     then and that one of the named grants lets stand for the change
//     (cliSimChange.grant); the backup the state names, if any, is one,
//     and not the one it named for the trigger's previous change.
//   - One backup per change: the backups the change's commands queued
//     number at most one, plus one per attempt that was killed (SIGKILL)
//     after its own backup was queued: the one stated limit.
//   - Nothing queued without a change: a plan, an apply with nothing to
//     do or that creates a guard queues no backup.
//   - Liveness: a command that got no signal and met no fault exits 0,
//     within cliSimRunTimeout.

// cliSimGrants are the stated limits the judge grants, by the rule it
// holds the provider to.
type cliSimGrants struct {
	// sameSecond is how long before the previous change went ahead a
	// backup may have started and still count for the next change with
	// reuse_within; it includes the moment Terraform takes to print
	// "complete" after the provider returned.
	sameSecond time.Duration
	// lostAnswer is how long before an attempt began a backup another
	// client queued may pass for its own when its trigger's answer was
	// lost (zero: never).
	lostAnswer time.Duration
}

// cliSimRules are the rules the judge knows, by -simcli.rule.
var cliSimRules = map[string]cliSimGrants{
	// The rule before issue 56 (older commits): records are dated to the second and the service's clock read
	// to within one ("the second or two before" the previous change went
	// ahead), plus a second for Terraform's print; a lost answer recognises
	// the newest backup created since its trigger began, less 10 s for the
	// service's clock and a second for the records' resolution.
	"clock": {sameSecond: 3 * time.Second, lostAnswer: 11 * time.Second},
	// Issue 56's, identity by what the service lists: a backup counts if
	// the read before the operation's POST did not list it, and the floor
	// is what the listing showed when the previous change went ahead. Only
	// Terraform's print is granted.
	"listing": {sameSecond: time.Second},
}

// cliSimChange is one change of one resource of a workspace, a release of
// its trigger or the destroy of its guard, and the commands that attempted it.
type cliSimChange struct {
	key      string
	resource string // "trigger" or "guard"
	// floor: a backup that started before it is the previous change's, and
	// no grant but "began after the first attempt" lets it count; zero
	// when the resource has no earlier change (a trigger's create, a guard).
	floor    time.Time
	floorWhy string
	// previous is the backup the state named for the trigger's previous
	// change, when this change replaces it: never this one's too.
	previous string
	lag      time.Duration // the listing's lag
	grants   cliSimGrants
	attempts []*cliSimRun
	done     *cliSimRun // the attempt that exited 0
}

// floorForNext is the floor of the trigger's next change: when Terraform
// last printed this change's trigger complete (the provider's create or
// update had returned, and with it the change went ahead), less
// sameSecond; or, with no such line seen, when this change's first
// attempt began, the earliest it can have gone ahead.
func (c *cliSimChange) floorForNext(sameSecond time.Duration) (time.Time, string) {
	var last time.Time
	for _, a := range c.attempts {
		for _, t := range a.completes {
			if t.After(last) {
				last = t
			}
		}
	}
	if last.IsZero() {
		return c.attempts[0].start, fmt.Sprintf("%s began (%s printed no trigger complete)", c.attempts[0].label, c.key)
	}
	return last.Add(-sameSecond), fmt.Sprintf("%s went ahead, less %s", c.key, sameSecond)
}

// grant says why backup b may stand for the change, as its attempts so
// far ran, or "" when nothing lets it. Each grant is as narrow as what
// the provider states:
//   - it began after the change's first attempt began, which was after
//     the previous change's last attempt ended, whoever queued it (a
//     resumed wait follows the backup an earlier attempt queued);
//   - at or after the floor, and: within an attempt's own reuse_within
//     before that attempt began; within the listing's lag before the
//     first attempt; or, as the rule grants, within grants.lostAnswer
//     before an attempt whose trigger answer was lost;
//   - before the floor, within the listing's lag before the previous
//     change went ahead and an attempt's reuse_within: the listing that
//     change last read, its floor, lagged and hid it (stated limit 2, the
//     in-process judge's grantLaggingListing).
func (c *cliSimChange) grant(b mockservice.BackupTruth) string {
	first := c.attempts[0]
	switch {
	case b.CreatedAt.After(first.start):
		return "began after the change's first attempt " + first.label
	case !c.floor.IsZero() && b.CreatedAt.Before(c.floor):
		return c.hiddenFromFloor(b)
	case c.lag > 0 && b.CreatedAt.After(first.start.Add(-c.lag)):
		return "within the listing lag before " + first.label
	}
	for _, a := range c.attempts {
		if a.reuse > 0 && !b.CreatedAt.Before(a.start.Add(-a.reuse)) {
			return fmt.Sprintf("within reuse_within %s of %s", a.reuse, a.label)
		}
		if a.lostAnswer && c.grants.lostAnswer > 0 && !b.CreatedAt.Before(a.start.Add(-c.grants.lostAnswer)) {
			return fmt.Sprintf("within %s before %s, whose answer was lost (stated limit)", c.grants.lostAnswer, a.label)
		}
	}
	return ""
}

// hiddenFromFloor grants b, started before the floor, when the listing's
// lag may have hidden it from the page the previous change last read as it
// went ahead, and an attempt reused it. The floor stands for that read (a
// page read up to sameSecond before Terraform printed the change complete):
// a backup listed only up to the lag after it (seed 80's r33: begun 3.007 s
// before the print, with a 3 s lag).
func (c *cliSimChange) hiddenFromFloor(b mockservice.BackupTruth) string {
	if c.lag <= 0 || !b.CreatedAt.After(c.floor.Add(-c.lag)) {
		return ""
	}
	for _, a := range c.attempts {
		if a.reuse > 0 && !b.CreatedAt.Before(a.start.Add(-a.reuse)) {
			return fmt.Sprintf("hidden from the floor by the listing lag, within reuse_within %s of %s (stated limit 2)", a.reuse, a.label)
		}
	}
	return ""
}

// goodBy says whether b truly succeeded, with a consistent record, by end.
func cliSimGoodBy(b mockservice.BackupTruth, end time.Time) bool {
	return b.Status == "success" && b.Consistent && !b.CompletedAt.After(end)
}

// judgeDone checks a change whose attempt exited 0 at end: some good
// backup stands for it, and the one the state names (claimed) is one.
func (c *cliSimChange) judgeDone(truth []mockservice.BackupTruth, end time.Time, claimed string, at func(time.Time) string) []string {
	var out []string
	counted := false
	for _, b := range truth {
		if cliSimGoodBy(b, end) && c.grant(b) != "" {
			counted = true
			break
		}
	}
	if !counted {
		out = append(out, fmt.Sprintf("exit 0 at %s, and no good backup stands for it", at(end)))
	}
	if claimed == "" {
		return out
	}
	i := slices.IndexFunc(truth, func(b mockservice.BackupTruth) bool { return b.ID == claimed })
	switch {
	case i < 0:
		out = append(out, fmt.Sprintf("the state names %s, which the service never had", claimed))
	case !cliSimGoodBy(truth[i], end):
		out = append(out, fmt.Sprintf("the state names %s, which had not succeeded by %s (%s)", claimed, at(end), c.describe(truth[i], at)))
	case c.grant(truth[i]) == "":
		out = append(out, fmt.Sprintf("the state names %s, which no grant lets stand for the change (%s)", claimed, c.describe(truth[i], at)))
	}
	if claimed == c.previous {
		// Whatever the clocks: a change never counts the backup of the change before it.
		out = append(out, fmt.Sprintf("the state names %s, the backup it named for the previous change", claimed))
	}
	return out
}

// judgeQueued checks that the change's commands queued at most one
// backup, plus one per attempt killed after its own was queued.
func (c *cliSimChange) judgeQueued(truth []mockservice.BackupTruth) string {
	by := map[string]int{}
	for _, b := range truth {
		by[b.QueuedBy]++
	}
	queued, allowed := 0, 1
	var labels []string
	for _, a := range c.attempts {
		queued += by[a.label]
		if by[a.label] > 0 {
			labels = append(labels, fmt.Sprintf("%s queued %d", a.label, by[a.label]))
		}
		if a.signal == syscall.SIGKILL && by[a.label] > 0 {
			allowed++
		}
	}
	if queued <= allowed {
		return ""
	}
	return fmt.Sprintf("%d backups queued for one change, at most %d allowed (%s)", queued, allowed, strings.Join(labels, ", "))
}

// describe says when b began and ended, who queued it, and why no grant holds.
func (c *cliSimChange) describe(b mockservice.BackupTruth, at func(time.Time) string) string {
	s := fmt.Sprintf("%s %s, began %s, ended %s, queued by %q", b.ID, b.Status, at(b.CreatedAt), at(b.CompletedAt), b.QueuedBy)
	if g := c.grant(b); g != "" {
		return s + "; " + g
	}
	if !c.floor.IsZero() && b.CreatedAt.Before(c.floor) {
		return s + fmt.Sprintf("; before the floor %s (%s)", at(c.floor), c.floorWhy)
	}
	return s + fmt.Sprintf("; before the first attempt began (%s), and outside every reuse_within", at(c.attempts[0].start))
}

// cliSimViolation is one broken invariant.
type cliSimViolation struct {
	category string
	at       time.Duration // after the simulation began
	subject  string
	msg      string
	detail   string
}

func (v cliSimViolation) String() string {
	return fmt.Sprintf("[%s] at %s, %s: %s\n%s", v.category, v.at, v.subject, v.msg, v.detail)
}

// violate records a violation, once per subject and message.
func (w *cliSimWorld) violate(category, subject, msg, detail string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.violations {
		if v.subject == subject && v.msg == msg {
			return
		}
	}
	v := cliSimViolation{category: category, at: w.since(time.Now()), subject: subject, msg: msg, detail: detail}
	w.violations = append(w.violations, v)
	w.t.Logf("VIOLATION %s", v)
}

// at formats a moment as its offset from the simulation's start.
func (w *cliSimWorld) at(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return "+" + w.since(t).String()
}

// judgeRun judges a command once it has ended.
func (w *cliSimWorld) judgeRun(run *cliSimRun) {
	if *cliSimVerbose {
		w.t.Log(w.runLine(run))
	}
	faults := w.faultDuring(run.start, run.end)
	w.mu.Lock()
	sig := run.signal
	w.mu.Unlock()
	switch {
	case run.timedOut:
		w.violate("hang", run.label, fmt.Sprintf("still running after %s; killed", cliSimRunTimeout), w.runDetail(run))
	case run.exit != 0 && sig == 0 && len(faults) == 0:
		w.violate("liveness", run.label, fmt.Sprintf("exit %d with no signal and no fault", run.exit), w.runDetail(run)+w.signalsDuring(run))
	}
	if run.exit != 0 || run.change == nil {
		return
	}
	c := run.change
	c.done = run
	truth := w.srv.Truth(w.account)
	for _, msg := range c.judgeDone(truth, run.end, run.claimed, w.at) {
		w.violate("false success", c.key, msg, w.changeDetail(c, truth))
	}
	if msg := c.judgeQueued(truth); msg != "" {
		w.violate("second backup", c.key, msg, w.changeDetail(c, truth))
	}
}

// finish judges what only the end can tell: backups queued late (a
// killed command's request served after its death), by any change or by a
// command that had none.
func (w *cliSimWorld) finish() {
	truth := w.srv.Truth(w.account)
	w.mu.Lock()
	changes, runs := slices.Clone(w.changes), slices.Clone(w.runs)
	w.mu.Unlock()
	for _, c := range changes {
		if msg := c.judgeQueued(truth); msg != "" {
			w.violate("second backup", c.key, msg, w.changeDetail(c, truth))
		}
	}
	for _, run := range runs {
		if run.change != nil {
			continue
		}
		for _, b := range truth {
			if b.QueuedBy == run.label {
				w.violate("backup without a change", run.label, fmt.Sprintf("queued %s", b.ID), w.runDetail(run))
			}
		}
	}
}

// runDetail describes a command: what it ran, when, its signal and exit, the faults it met, its output's end.
// signalsDuring names the signals any command got while run ran, and their
// process groups beside run's own: a signal run's output shows, which its
// own trap did not send (seed 481052469, w1.36), is then told apart.
func (w *cliSimWorld) signalsDuring(run *cliSimRun) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := fmt.Sprintf("\n  its process group %d; signals sent meanwhile:", run.pgid)
	for _, r := range w.runs {
		if r.signal != 0 && !r.signalAt.Before(run.start) && !r.signalAt.After(run.end) {
			s += fmt.Sprintf(" %s %s to %d at %s;", r.label, r.signal, r.pgid, w.at(r.signalAt))
		}
	}
	return s
}

func (w *cliSimWorld) runDetail(run *cliSimRun) string {
	return w.runLine(run) + "\n" + indent(tail(run.output, 25))
}

func (w *cliSimWorld) runLine(run *cliSimRun) string {
	w.mu.Lock()
	sig, sigAt, lost := run.signal, run.signalAt, run.lostAnswer
	requests := make(map[string]int, len(run.requests))
	for r, n := range run.requests {
		requests[string(r)] = n
	}
	w.mu.Unlock()
	s := fmt.Sprintf("  %s: %s, %s to %s, exit %d, requests %s", run.label, strings.Join(run.args, " "), w.at(run.start), w.at(run.end), run.exit, counts(requests))
	if run.reuse > 0 {
		s += fmt.Sprintf(", reuse_within %s", run.reuse)
	}
	if lost {
		s += ", an answer lost"
	}
	switch {
	case sig != 0:
		s += fmt.Sprintf(", %s (sent %s)", run.trap, w.at(sigAt))
	case run.trap != nil:
		s += fmt.Sprintf(", %s never came", run.trap)
	}
	for _, t := range run.completes {
		s += ", trigger complete " + w.at(t)
	}
	if f := w.faultDuring(run.start, run.end); len(f) > 0 {
		s += ", faults: " + strings.Join(f, "; ")
	}
	if run.claimed != "" {
		s += ", state names " + run.claimed
	}
	if run.taintedEmpty {
		s += ", trigger saved tainted without a backup"
	}
	return s
}

// changeDetail describes a change's attempts and the backups of its time.
func (w *cliSimWorld) changeDetail(c *cliSimChange, truth []mockservice.BackupTruth) string {
	var b strings.Builder
	if !c.floor.IsZero() {
		fmt.Fprintf(&b, "  floor %s: %s\n", w.at(c.floor), c.floorWhy)
	}
	for _, a := range c.attempts {
		b.WriteString(w.runLine(a) + "\n")
	}
	from := c.attempts[0].start.Add(-2 * time.Minute)
	if !c.floor.IsZero() && c.floor.Add(-time.Minute).Before(from) {
		from = c.floor.Add(-time.Minute)
	}
	for _, t := range truth {
		if t.CompletedAt.After(from) {
			fmt.Fprintf(&b, "  backup %s\n", c.describe(t, w.at))
		}
	}
	if c.done != nil {
		b.WriteString(indent(tail(c.done.output, 12)))
	}
	return b.String()
}

func indent(s string) string {
	return "    | " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    | ")
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(len(l)-lines, 0):], "\n")
}

// summary counts what the simulation ran, signalled, queued and found.
func (w *cliSimWorld) summary() string {
	truth := w.srv.Truth(w.account)
	w.mu.Lock()
	defer w.mu.Unlock()
	cmds, signals := map[string]int{}, map[string]int{}
	exits, tainted := 0, 0
	for _, r := range w.runs {
		if r.end.IsZero() {
			continue
		}
		if r.taintedEmpty {
			tainted++
		}
		cmds[r.args[0]]++
		if r.exit == 0 {
			exits++
		}
		if r.signal != 0 {
			name := "SIGINT"
			if r.signal == syscall.SIGKILL {
				name = "SIGKILL"
			}
			signals[name+" "+r.trap.moment]++
		}
	}
	done := map[string]int{}
	for _, c := range w.changes {
		if c.done != nil {
			done[c.resource]++
		}
	}
	queued := 0
	for _, b := range truth {
		if b.QueuedBy != "" {
			queued++
		}
	}
	cats := map[string]int{}
	for _, v := range w.violations {
		cats[v.category]++
	}
	return fmt.Sprintf("commands %s (%d exit 0), signals %s, triggers saved tainted without a backup %d, changes done %s, backups queued %d, 409s %d, faults %d, holds %d, violations %d %s",
		counts(cmds), exits, counts(signals), tainted, counts(done), queued, w.conflicts, len(w.faults), w.holds, len(w.violations), counts(cats))
}

func counts(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// The judge's own tests: each grant lets through what it names and no
// more, and the bug the simulation must find (a change counting the
// previous change's backup) is a violation.

func TestSimulationCLIJudge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	fmtAt := func(t time.Time) string { return t.Sub(t0).String() }
	backup := func(id, by string, began, ended time.Duration) mockservice.BackupTruth {
		return mockservice.BackupTruth{ID: id, CreatedAt: at(began), CompletedAt: at(ended), Status: "success", Done: true, Consistent: true, QueuedBy: by}
	}
	// The previous change (v1) went ahead at 10s (printed at 10s); v2's
	// first attempt began at 20s and was interrupted; its second began at 30s.
	v1 := &cliSimChange{key: "v1", resource: "trigger", attempts: []*cliSimRun{{label: "w1.1", start: at(0), completes: []time.Time{at(10 * time.Second)}}}}
	grants := cliSimRules["clock"]
	floor, why := v1.floorForNext(grants.sameSecond)
	if !floor.Equal(at(10*time.Second - grants.sameSecond)) {
		t.Fatalf("floor %s (%s), want the completion less %s", fmtAt(floor), why, grants.sameSecond)
	}
	v2 := func(reuse time.Duration, lost bool) *cliSimChange {
		return &cliSimChange{key: "v2", resource: "trigger", floor: floor, grants: grants, attempts: []*cliSimRun{
			{label: "w1.2", start: at(20 * time.Second), reuse: reuse, signal: syscall.SIGINT},
			{label: "w1.3", start: at(30 * time.Second), reuse: reuse, lostAnswer: lost},
		}}
	}
	previously := func(c *cliSimChange, id string) *cliSimChange {
		c.previous = id
		return c
	}
	b1 := backup("bkp_b1", "w1.1", 2*time.Second, 6*time.Second)             // v1's own
	lastSeconds := backup("bkp_tail", "w2.1", 8*time.Second, 12*time.Second) // another pipeline's, in v1's same second or two
	between := backup("bkp_between", "w2.2", 14*time.Second, 18*time.Second) // another pipeline's, after v1 went ahead
	resumed := backup("bkp_resumed", "w1.2", 21*time.Second, 25*time.Second) // v2's interrupted first attempt's
	end := at(40 * time.Second)

	cases := []struct {
		name    string
		change  *cliSimChange
		truth   []mockservice.BackupTruth
		claimed string
		want    int // violations
	}{
		{"the known bug: v2 reuses v1's backup after a Ctrl-C", v2(10*time.Minute, false), []mockservice.BackupTruth{b1}, "bkp_b1", 2},
		{"the known bug, hidden from the existence check by a later backup", v2(10*time.Minute, false), []mockservice.BackupTruth{b1, between}, "bkp_b1", 1},
		{"reuse of a backup started after v1 went ahead", v2(10*time.Minute, false), []mockservice.BackupTruth{b1, between}, "bkp_between", 0},
		{"reuse of a backup in v1's last seconds (stated limit)", v2(10*time.Minute, false), []mockservice.BackupTruth{b1, lastSeconds}, "bkp_tail", 0},
		{"reuse of v1's own backup, begun in its last seconds", previously(v2(10*time.Minute, false), "bkp_tail"), []mockservice.BackupTruth{b1, lastSeconds}, "bkp_tail", 1},
		{"without reuse_within, another pipeline's earlier backup", v2(0, false), []mockservice.BackupTruth{between}, "bkp_between", 2},
		{"a resumed wait on the first attempt's backup", v2(0, false), []mockservice.BackupTruth{b1, resumed}, "bkp_resumed", 0},
		{"reuse_within shorter than the backup's age", v2(5*time.Second, false), []mockservice.BackupTruth{between}, "bkp_between", 2},
		{"a lost answer grants 11 s before its attempt", v2(0, true), []mockservice.BackupTruth{backup("bkp_near", "w2.3", 19*time.Second, 23*time.Second)}, "bkp_near", 0},
		{"a lost answer grants no more", v2(0, true), []mockservice.BackupTruth{between}, "bkp_between", 2},
		{"a backup not done by the exit", v2(0, false), []mockservice.BackupTruth{backup("bkp_late", "w1.3", 31*time.Second, 45*time.Second)}, "bkp_late", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.change.judgeDone(tc.truth, end, tc.claimed, fmtAt)
			if len(got) != tc.want {
				t.Errorf("%d violations, want %d: %q", len(got), tc.want, got)
			}
		})
	}

	// A lost answer, on a guard (no earlier change): 11 s before its
	// attempt, not 12, under the clock rule; nothing under the listing rule.
	guard := &cliSimChange{key: "g", resource: "guard", grants: grants, attempts: []*cliSimRun{{label: "w1.4", start: at(30 * time.Second), lostAnswer: true}}}
	if g := guard.grant(backup("a", "w2.3", 19*time.Second, 23*time.Second)); g == "" {
		t.Error("a backup 11 s before a guard's lost answer is not granted")
	}
	if g := guard.grant(backup("b", "w2.3", 18*time.Second, 23*time.Second)); g != "" {
		t.Errorf("a backup 12 s before a guard's lost answer is granted: %s", g)
	}
	guard.grants = cliSimRules["listing"]
	if g := guard.grant(backup("a", "w2.3", 29*time.Second, 33*time.Second)); g != "" {
		t.Errorf("the listing rule grants a lost answer: %s", g)
	}
	// A listing lag grants its length before the first attempt, no more.
	lagged := &cliSimChange{key: "l", resource: "guard", lag: 5 * time.Second, attempts: []*cliSimRun{{label: "w1.5", start: at(30 * time.Second)}}}
	if lagged.grant(backup("c", "w2.4", 26*time.Second, 27*time.Second)) == "" || lagged.grant(backup("d", "w2.4", 24*time.Second, 27*time.Second)) != "" {
		t.Error("the listing lag grant is not its length")
	}
	// Before the floor, the lag grants its length before the floor (the
	// previous change's last read), to a reuse only.
	floored := func(reuse time.Duration) *cliSimChange {
		return &cliSimChange{key: "f", resource: "trigger", lag: 3 * time.Second, grants: cliSimRules["listing"], floor: at(20 * time.Second),
			attempts: []*cliSimRun{{label: "w1.6", start: at(30 * time.Second), reuse: reuse}}}
	}
	if floored(time.Minute).grant(backup("e", "w2.5", 17*time.Second+time.Millisecond, 22*time.Second)) == "" ||
		floored(time.Minute).grant(backup("f", "w2.5", 17*time.Second, 22*time.Second)) != "" ||
		floored(0).grant(backup("g", "w2.5", 19*time.Second, 22*time.Second)) != "" {
		t.Error("the lag before the floor is not granted to a reuse alone, for its length")
	}
}

func TestSimulationCLIJudgeQueued(t *testing.T) {
	mk := func(labels ...string) []mockservice.BackupTruth {
		var out []mockservice.BackupTruth
		for _, l := range labels {
			out = append(out, mockservice.BackupTruth{QueuedBy: l})
		}
		return out
	}
	interrupted := &cliSimChange{attempts: []*cliSimRun{{label: "w1.1", signal: syscall.SIGINT}, {label: "w1.2"}}}
	killed := &cliSimChange{attempts: []*cliSimRun{{label: "w1.1", signal: syscall.SIGKILL}, {label: "w1.2"}}}
	killedEarly := &cliSimChange{attempts: []*cliSimRun{{label: "w1.1", signal: syscall.SIGKILL}, {label: "w1.2"}, {label: "w1.3"}}}
	for _, tc := range []struct {
		name   string
		change *cliSimChange
		truth  []mockservice.BackupTruth
		bad    bool
	}{
		{"one backup", interrupted, mk("w1.1", "w2.1", "w2.2"), false},
		{"a second after a Ctrl-C", interrupted, mk("w1.1", "w1.2"), true},
		{"a second after a kill that had queued one", killed, mk("w1.1", "w1.2"), false},
		{"a second after a kill that had queued none", killedEarly, mk("w1.2", "w1.3"), true},
	} {
		if got := tc.change.judgeQueued(tc.truth); (got != "") != tc.bad {
			t.Errorf("%s: %q, want a violation: %t", tc.name, got, tc.bad)
		}
	}
}
