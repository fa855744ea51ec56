package workflow

import (
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Rule is which backup counts for one operation (a trigger's change, a
// guard's destroy, an action's account); Check alone decides it.
type Rule struct {
	AccountID string
	After     time.Time // the previous change went ahead then (service's clock): only a later backup counts
	Own       string    // the backup this change queued, by id: the change's whatever its times
	Began     time.Time // this change's trigger began then (this machine's clock)
	// BeganOnService is that moment on the service's clock, as the machine
	// that sent the trigger read it: it holds when another machine looks.
	BeganOnService time.Time
	// Misdated: a backup dated ahead of the service's clock while this
	// trigger's was looked for; never its own, which may be listed below it.
	Misdated string
	// ReuseWithin, when positive, lets a backup started within it before
	// Began count too (reuse_within).
	ReuseWithin time.Duration
	Offset      time.Duration // how far the service's clock runs ahead of this machine's
	OffsetKnown bool
	Allowance   time.Duration
	Now         time.Time // a time beyond it plus Allowance is in the future (a record that lies)
}

// errNotCounted matches every reason Check gives.
var errNotCounted = errors.New("the backup does not count for this change")

// notCountedError is why a backup does not count; Cause is the clocks', for reuse_within.
type notCountedError struct {
	Backup client.Backup
	Why    string
	Cause  error
	ahead  bool // dated ahead of the service's clock: Rule.Misdated
}

func (e *notCountedError) Unwrap() error { return e.Cause }

func (e *notCountedError) Error() string {
	return fmt.Sprintf("backup %s of account %s does not count for this change: %s", e.Backup.ID, e.Backup.AccountID, e.Why)
}

func (e *notCountedError) Is(target error) bool { return target == errNotCounted }

// misdatedIn is the backup err refused as dated ahead of the service's clock, or "".
func misdatedIn(err error) string {
	var nc *notCountedError
	if errors.As(err, &nc) && nc.ahead {
		return nc.Backup.ID
	}
	return ""
}

// Stage is how far a backup has to have gone to pass Check.
type Stage int

// The stages.
const (
	Identified Stage = iota // the operation's, whatever its status
	Candidate               // it may count: in progress or good
	Final                   // it counts: a good backup by a consistent record
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
	case b.ID != "" && b.ID == r.Misdated:
		return &notCountedError{Backup: b, Why: "it was dated ahead of the service's own clock when this change's backup was looked for", ahead: true}
	case r.future(b.CreatedAt):
		return &notCountedError{Backup: b, Why: fmt.Sprintf("it is dated %s, in the future of the service's own clock", stamp(b.CreatedAt)), ahead: true}
	case !r.After.IsZero() && !b.CreatedAt.After(r.After):
		return no("it started at %s, not after the previous change went ahead (%s)", stamp(b.CreatedAt), stamp(r.After))
	case r.ReuseWithin <= 0 && r.predates(b):
		return no("it started at %s, before this change's trigger (%s)", stamp(b.CreatedAt), stamp(r.Began))
	case r.ReuseWithin <= 0:
		return nil // queued since this change's trigger began, as far as the clock allowance tells
	}
	if err := r.reuseOffset(); err != nil {
		return &notCountedError{Backup: b, Why: err.Error(), Cause: err}
	}
	// The clocks agree within the allowance: the record's time is this machine's.
	if b.CreatedAt.Before(r.Began.Add(-r.ReuseWithin)) {
		return no("it started at %s, more than reuse_within (%s) before this change", stamp(b.CreatedAt), r.ReuseWithin)
	}
	return nil
}

// predates: b started before the trigger less the allowance, as dated or on
// this machine's clock; for a recorded trigger, on the service's clock alone.
func (r Rule) predates(b client.Backup) bool {
	if !r.BeganOnService.IsZero() {
		// A recorded trigger: its start on the service's clock is the one
		// time that holds on whichever machine looks (its own clock may not).
		return b.CreatedAt.Before(r.BeganOnService.Add(-r.Allowance))
	}
	floor := r.Began.Add(-r.Allowance)
	return b.CreatedAt.Before(floor) || b.CreatedAt.Add(-r.Offset).Before(floor)
}

// future says whether a service time lies beyond this machine's now plus the allowance.
func (r Rule) future(t time.Time) bool { return t.Add(-r.Offset).After(r.Now.Add(r.Allowance)) }

// mayBeOwn: b, refused by Check, may be this change's own all the same, or
// is dated ahead, so that its own may be listed below it.
func (r Rule) mayBeOwn(b client.Backup) bool {
	if r.future(b.CreatedAt) {
		return true
	}
	if r.predates(b) {
		return false
	}
	return r.After.IsZero() || b.CreatedAt.After(r.After) || r.future(r.After)
}

// reuseOffset says why reuse_within cannot be read from the clocks.
func (r Rule) reuseOffset() error {
	if !r.OffsetKnown {
		return errors.New("the service's clock could not be read from its answers (no Date header), so reuse_within cannot be measured")
	}
	if err := r.clocksApart(); err != nil {
		return fmt.Errorf("%w, so reuse_within cannot be measured", err)
	}
	return nil
}

// clocksApart says how far apart the clocks are, when beyond the allowance.
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

// ServiceNow is the service's time as its latest answer dated it, to the second.
func (w *Runner) ServiceNow() time.Time {
	off, _ := w.c.ClockOffset()
	return w.clock.Now().Add(off).Truncate(time.Second)
}

// rule is the Rule of an operation that began at began, with the service's
// clock as last measured.
func (w *Runner) rule(accountID string, opts RunOptions, began time.Time) Rule {
	return w.measured(Rule{AccountID: accountID, After: opts.After, Began: began, ReuseWithin: opts.ReuseWithin})
}

// measured is r with the service's clock as last measured, and this machine's now.
func (w *Runner) measured(r Rule) Rule {
	r.Offset, r.OffsetKnown = w.c.ClockOffset()
	r.Allowance, r.Now = w.set.ClockAllowance, w.clock.Now()
	return r
}
