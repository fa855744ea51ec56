package provider

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// The simulation's invariant checker. It judges from the mock's ground
// truth (which backups exist, who queued each, when each truly began and
// ended, whether its record is consistent) and the simulation's own log
// of changes, never from the provider's or the workflow's rules.

// simAllowance is the clock allowance the rules grant (10 s).
const simAllowance = 10 * time.Second

// simViolation is one broken invariant; category sorts findings.
type simViolation struct {
	category string
	msg      string
	op       int
	report   string
}

func (w *simWorld) violate(op *simOp, category, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.violations = append(w.violations, simViolation{category: category, op: op.num,
		msg: fmt.Sprintf("[%s] %s: %s", category, op.String(), fmt.Sprintf(format, args...))})
}

// changeOf is the change a backup's label names.
func changeOf(label string) string {
	key, _, _ := strings.Cut(label, "#")
	return key
}

// good says whether b truly succeeded, with a consistent record, by end.
func good(b mockservice.BackupTruth, end time.Time) bool {
	return b.Status == "success" && b.Consistent && !b.CompletedAt.After(end)
}

// contradictory says whether b would be good but for its record.
func contradictory(b mockservice.BackupTruth, end time.Time) bool {
	return b.Status == "success" && !b.Consistent && !b.CompletedAt.After(end)
}

// counts says whether b may stand for the change: queued by it, reused
// within its reuse_within (less the allowance) of its start, or started
// within the allowance before it (the stated limit of a lost answer: the
// API has no idempotency key, so a backup another client queued seconds
// before this change's trigger may pass for its own). Reuse reads a
// backup's age from its record: one stamped by a service clock that has
// been set back since reads younger by as much (a stated limit).
func (c *simChange) counts(b mockservice.BackupTruth) bool {
	setBack := max(0, b.StampOffset-c.reuseOffset)
	return c.own(b) || (c.anyReuse && !b.CreatedAt.Before(c.first.Add(-c.reuse-simAllowance-setBack)))
}

// own says whether b may be the change's own: queued by it, or started
// within the allowance before it (the stated limit of a lost answer), or
// stamped by a service clock set back since so that its record dates it
// within the allowance of the change's start (a stated limit too).
func (c *simChange) own(b mockservice.BackupTruth) bool {
	if changeOf(b.QueuedBy) == c.key || !b.CreatedAt.Before(c.first.Add(-simAllowance-simDateError)) {
		return true
	}
	setBack := b.StampOffset - c.firstOffset
	dated := b.CreatedAt.Add(setBack) // on true time, as its record reads after the set-back
	return setBack > 0 && !dated.Before(c.first.Add(-simAllowance-simDateError)) && !dated.After(c.first.Add(simAllowance+simDateError))
}

// simDateError is how far the service's clock, as its Date tells it, may
// be misread: a second's resolution.
const simDateError = time.Second

// simSameSecond is the stated limit of "after the previous change went
// ahead": records are dated to the second, and that moment is read through
// Date, so a backup started up to this much before it may count as after.
const simSameSecond = 2 * simDateError

// checkTrigger judges a trigger's create or update reported successful:
// its backup backupID (invariants 1 and 2); one not reported as reused must
// be its own.
func (w *simWorld) checkTrigger(op *simOp, backupID string, waits, reportedReused bool, start, end time.Time) {
	c := op.change
	if backupID == "" {
		// Queued, not yet identified (wait_for_completion = false): one
		// backup of this change must exist.
		truth := w.srv.Truth(w.accounts[0])
		if waits || !slices.ContainsFunc(truth, c.counts) {
			w.violate(op, "no-backup", "reported success with no backup id, and no backup stands for change %s: %s", c.key, w.describeAll(truth))
		}
		return
	}
	i := slices.IndexFunc(w.srv.Truth(w.accounts[0]), func(b mockservice.BackupTruth) bool { return b.ID == backupID })
	if i < 0 {
		w.violate(op, "unknown-backup", "reported backup %s, which the service never had", backupID)
		return
	}
	b := w.srv.Truth(w.accounts[0])[i]
	desc := w.describe(b)
	if waits && !good(b, end) {
		cat := "false-success"
		if contradictory(b, end) {
			cat = "contradictory"
		}
		w.violate(op, cat, "reported backup %s as succeeded by %s: %s", backupID, w.at(end), desc)
	}
	if !waits && !c.own(b) && !c.wentAhead && !b.CompletedAt.After(end) && !good(b, end) {
		// Reused and not waited for, it must still be under way or good as
		// the change goes ahead: one already over, and not good, is no
		// backup for it. (A later update of settings takes and judges none.)
		w.violate(op, "false-success", "reported backup %s, over and not good by %s: %s", backupID, w.at(end), desc)
	}
	if !c.prevWentAhead.IsZero() && b.CreatedAt.Before(c.prevWentAhead.Add(-simSameSecond)) {
		cat := "b"
		if c.anyReuse {
			cat = "a"
		}
		w.violate(op, cat, "backup %s (%s) began before the previous change went ahead at %s", backupID, desc, w.at(c.prevWentAhead))
		return
	}
	if !c.counts(b) {
		w.violate(op, w.notThisChange(c, b), "backup %s (%s) was not queued by this change (%s, began %s), nor within its reuse_within",
			backupID, desc, c.key, w.at(c.first))
	} else if !reportedReused && !c.own(b) {
		w.violate(op, "b", "backup %s (%s), reported as queued by this change (reused = false), was not (%s, began %s)",
			backupID, desc, c.key, w.at(c.first))
	}
}

// notThisChange sorts a backup claimed for a change it does not stand for.
func (w *simWorld) notThisChange(c *simChange, b mockservice.BackupTruth) string {
	switch {
	case c.anyReuse && w.offset > 0:
		return "c"
	case c.anyReuse:
		return "reuse-window"
	case strings.HasPrefix(changeOf(b.QueuedBy), strings.SplitN(c.key, ".", 3)[0]+"."+strings.SplitN(c.key, ".", 3)[1]+"."):
		return "b"
	}
	return "b-other"
}

// checkGuard judges a guard's destroy that went ahead (invariants 1 to 3).
func (w *simWorld) checkGuard(op *simOp, start, end time.Time, warnings string) {
	c := op.change
	truth := w.srv.Truth(w.accounts[0])
	for _, b := range truth {
		if good(b, end) && c.counts(b) {
			return
		}
	}
	if op.actor.release {
		deleted, state := w.srv.AccountTruth(w.accounts[0])
		failed := slices.ContainsFunc(truth, func(b mockservice.BackupTruth) bool {
			return c.counts(b) && b.Done && b.Status != "success"
		})
		if deleted || state != mockservice.StateActive || failed {
			return
		}
	}
	cat := "guard-without-proof"
	if slices.ContainsFunc(truth, func(b mockservice.BackupTruth) bool { return contradictory(b, end) && c.counts(b) }) {
		cat = "contradictory"
	} else if c.anyReuse && w.offset > 0 && slices.ContainsFunc(truth, func(b mockservice.BackupTruth) bool {
		return good(b, end) && !b.CreatedAt.Before(c.first.Add(-c.reuse-w.offset-simAllowance))
	}) {
		cat = "c"
	}
	w.violate(op, cat, "the destroy (%s to %s) went ahead with no good backup for it; the account's backups: %s; its warnings: %q",
		w.at(start), w.at(end), w.describeAll(truth), warnings)
}

// checkAction judges an invocation reported successful: each account has
// a backup for it (good, when it waits).
func (w *simWorld) checkAction(op *simOp, start, end time.Time) {
	c := op.change
	for _, acc := range op.ids {
		truth := w.srv.Truth(acc)
		if !slices.ContainsFunc(truth, func(b mockservice.BackupTruth) bool { return (!op.waits || good(b, end)) && c.counts(b) }) {
			cat := "action-without-proof"
			if slices.ContainsFunc(truth, func(b mockservice.BackupTruth) bool { return contradictory(b, end) && c.counts(b) }) {
				cat = "contradictory"
			} else if c.anyReuse && w.offset > 0 {
				cat = "c"
			}
			w.violate(op, cat, "the invocation succeeded with no backup of %s for it; its backups: %s", acc, w.describeAll(truth))
		}
	}
}

// checkHistory: without reuse, a change queues at most one backup, one
// more per killed runner and per backup of it that truly failed or
// contradicts itself (invariant 4).
func (w *simWorld) checkHistory() {
	for _, acc := range w.accounts {
		w.checkDuplicates(acc)
	}
}

func (w *simWorld) checkDuplicates(acc string) {
	queued := map[string][]mockservice.BackupTruth{}
	for _, b := range w.srv.Truth(acc) {
		if b.QueuedBy != "" {
			queued[changeOf(b.QueuedBy)] = append(queued[changeOf(b.QueuedBy)], b)
		}
	}
	keys := make([]string, 0, len(w.changes))
	for k := range w.changes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := w.changes[k]
		bs := queued[k]
		if c.anyReuse || len(bs) <= 1 {
			continue
		}
		allowed := 1 + c.kills
		for _, b := range bs {
			if b.Status != "success" || !b.Consistent {
				allowed++
			}
		}
		if len(bs) > allowed && !c.reported {
			c.reported = true
			w.violations = append(w.violations, simViolation{category: "duplicate", msg: fmt.Sprintf(
				"[duplicate] change %s queued %d backups (%d kills): %s", k, len(bs), c.kills, w.describeAll(bs))})
		}
	}
}

// at is a time as an offset from the sequence's start.
func (w *simWorld) at(t time.Time) string {
	return "+" + t.Sub(w.start).Round(time.Millisecond).String()
}

func (w *simWorld) describe(b mockservice.BackupTruth) string {
	s := fmt.Sprintf("%s %s, began %s, ends %s, queued by %q", b.ID, b.Status, w.at(b.CreatedAt), w.at(b.CompletedAt), b.QueuedBy)
	if !b.Consistent {
		s += ", record inconsistent"
	}
	return s
}

func (w *simWorld) describeAll(bs []mockservice.BackupTruth) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = w.describe(b)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// attachReport writes, into the first violation, the seed, the steps and
// how to replay them.
func (w *simWorld) attachReport(seed uint64, steps int) {
	slices.SortStableFunc(w.violations, func(a, b simViolation) int { return a.op - b.op })
	var b strings.Builder
	fmt.Fprintf(&b, "simulation seed %d failed at step %d of %d (%d users, clock offset %s):\n", seed, len(w.lines)-1, steps, len(w.actors), w.offset)
	for _, l := range w.lines {
		b.WriteString("  " + l + "\n")
	}
	for _, v := range w.violations {
		b.WriteString("  VIOLATION " + v.msg + "\n")
	}
	fmt.Fprintf(&b, "replay: make simulate SEED=%d STEPS=%d", seed, steps)
	w.violations[0].report = b.String()
}
