package workflow

import (
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Rule is which backup counts for one operation: a trigger's create,
// update or replacement, a guard's destroy, one account of an action's
// invocation. Check is the one place that decides it; the lifecycle guide
// states it as a table.
type Rule struct {
	AccountID string
	// After is when the same resource's previous change went ahead, on the
	// service's clock (as its record holds it): only a backup started
	// strictly after it counts. Zero: no earlier change is known.
	After time.Time
	// Own is the backup this change queued, known by id (a resumed wait, an
	// adopted replacement, a destroy that follows the one it began): it is
	// the change's whatever its times.
	Own string
	// Began is when this change's trigger began, on this machine's clock:
	// without Own, the backup it queued started no earlier than Began less
	// Allowance.
	Began time.Time
	// ReuseWithin, when positive, lets a backup started within it before
	// Began count too (reuse_within), on this machine's clock.
	ReuseWithin time.Duration
	// Offset is how far the service's clock runs ahead of this machine's;
	// OffsetKnown says whether it was measured (ClockOffset).
	Offset      time.Duration
	OffsetKnown bool
	Allowance   time.Duration
	// Now bounds what can have started: a time beyond it plus Allowance, on
	// this machine's clock, is in the future (a record that lies).
	Now time.Time
}

// errNotCounted matches every reason Check gives.
var errNotCounted = errors.New("the backup does not count for this change")

// notCountedError is why a backup does not count; Cause, when set, is
// the reason behind Why (the clocks, for reuse_within).
type notCountedError struct {
	Backup client.Backup
	Why    string
	Cause  error
}

func (e *notCountedError) Unwrap() error { return e.Cause }

func (e *notCountedError) Error() string {
	return fmt.Sprintf("backup %s of account %s does not count for this change: %s", e.Backup.ID, e.Backup.AccountID, e.Why)
}

func (e *notCountedError) Is(target error) bool { return target == errNotCounted }

// Stage is how far a backup has to have gone to pass Check.
type Stage int

// The stages.
const (
	// Identified: the backup is the operation's, whatever its status (the
	// trigger's own backup, found after its POST, is followed even if it
	// failed: the failure is then reported).
	Identified Stage = iota
	// Candidate: it may count: in progress (followed until it ends) or good.
	Candidate
	// Final: it counts: a good backup by a consistent record.
	Final
)

// Check says why b does not count for the operation at the given stage, or
// nil when it does.
func (r Rule) Check(b client.Backup, stage Stage) error {
	no := func(format string, args ...any) error {
		return &notCountedError{Backup: b, Why: fmt.Sprintf(format, args...)}
	}
	switch {
	case b.AccountID != r.AccountID:
		return no("it is a backup of account %s", b.AccountID)
	case stage == Final && !b.Good():
		return no("it is not a good backup by a consistent record (%s)", describeRecord(b))
	case stage == Candidate && !b.Good() && !client.InProgress(b.Status):
		return no("it ended with status %q", b.Status)
	case b.ID != "" && b.ID == r.Own:
		return nil
	case !r.After.IsZero() && !b.CreatedAt.After(r.After):
		return no("it started at %s, not after the previous change went ahead (%s)", stamp(b.CreatedAt), stamp(r.After))
	case r.future(b.CreatedAt):
		return no("it is dated %s, in the future of this machine's clock", stamp(b.CreatedAt))
	case r.ReuseWithin <= 0 && r.predates(b):
		return no("it started at %s, before this change's trigger (%s)", stamp(b.CreatedAt), stamp(r.Began))
	case r.ReuseWithin <= 0:
		return nil // queued since this change's trigger began, as far as the clock allowance tells
	}
	if err := r.reuseOffset(); err != nil {
		return &notCountedError{Backup: b, Why: err.Error(), Cause: err}
	}
	// The clocks agree within the allowance: the record's time is read as
	// this machine's.
	if b.CreatedAt.Before(r.Began.Add(-r.ReuseWithin)) {
		return no("it started at %s, more than reuse_within (%s) before this change", stamp(b.CreatedAt), r.ReuseWithin)
	}
	return nil
}

// predates says whether b started before this change's trigger began,
// less the allowance. Both as dated and as read on this machine's clock: a
// service clock that runs ahead dates an older backup after the trigger,
// and a Date that is wrong can only make this stricter.
func (r Rule) predates(b client.Backup) bool {
	floor := r.Began.Add(-r.Allowance)
	return b.CreatedAt.Before(floor) || b.CreatedAt.Add(-r.Offset).Before(floor)
}

// future says whether a time the service dated lies in the future of this
// machine's clock, beyond the allowance.
func (r Rule) future(t time.Time) bool { return t.Add(-r.Offset).After(r.Now.Add(r.Allowance)) }

// mayBeOwn says whether b, refused by Check, may be this change's own
// backup all the same: it started since the trigger, and is not refused as
// older than a previous change that went ahead in the past (dated in the
// future itself, or after a previous change dated so).
func (r Rule) mayBeOwn(b client.Backup) bool {
	if r.predates(b) {
		return false
	}
	return r.After.IsZero() || b.CreatedAt.After(r.After) || r.future(r.After)
}

// reuseOffset says why the window cannot be read: the service's clock is
// unmeasured, or further from this machine's than the allowance.
func (r Rule) reuseOffset() error {
	if !r.OffsetKnown {
		return errors.New("the service's clock could not be read from its answers (no Date header), so reuse_within cannot be measured")
	}
	if err := r.clocksApart(); err != nil {
		return fmt.Errorf("%w, so reuse_within cannot be measured", err)
	}
	return nil
}

// clocksApart says how far apart the clocks are, when the service's clock
// is known to be further from this machine's than the allowance: a
// backup's start then cannot be told from this machine's times.
func (r Rule) clocksApart() error {
	if r.OffsetKnown && abs(r.Offset) > r.Allowance {
		return fmt.Errorf("the service's clock is %s %s this machine's, beyond the %s allowance",
			abs(r.Offset).Round(time.Second), aheadOrBehind(r.Offset), r.Allowance)
	}
	return nil
}

func abs(d time.Duration) time.Duration { return max(d, -d) }

func aheadOrBehind(d time.Duration) string {
	if d < 0 {
		return "behind"
	}
	return "ahead of"
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// describeRecord says what a backup's record holds, for a contradiction.
func describeRecord(b client.Backup) string {
	completed, errText := "no completed_at", "no error"
	if b.CompletedAt != nil {
		completed = "completed_at " + stamp(*b.CompletedAt)
	}
	if b.Error != nil && *b.Error != "" {
		errText = "an error"
	}
	return fmt.Sprintf("status %q, created_at %s, %s, %s", b.Status, stamp(b.CreatedAt), completed, errText)
}

// ServiceNow is the service's time now as its latest answer dated it (this
// machine's without one), to the second, as its records are.
func (w *Runner) ServiceNow() time.Time {
	off, _ := w.c.ClockOffset()
	return w.clock.Now().Add(off).Truncate(time.Second)
}

// toService is a time of this machine's clock on the service's, as last
// measured; fromService the reverse. A trigger recorded without its backup
// keeps when it began on the service's clock: the next apply may run on a
// machine whose clock is minutes from this one's.
func (w *Runner) toService(t time.Time) time.Time {
	off, _ := w.c.ClockOffset()
	return t.Add(off)
}

func (w *Runner) fromService(t time.Time) time.Time {
	off, _ := w.c.ClockOffset()
	return t.Add(-off)
}

// rule is the Rule of an operation that began at began, with the service's
// clock as last measured.
func (w *Runner) rule(accountID string, opts RunOptions, began time.Time) Rule {
	off, known := w.c.ClockOffset()
	return Rule{AccountID: accountID, After: opts.After, Own: opts.own, Began: began, ReuseWithin: opts.ReuseWithin,
		Offset: off, OffsetKnown: known, Allowance: w.set.ClockAllowance, Now: w.clock.Now()}
}
