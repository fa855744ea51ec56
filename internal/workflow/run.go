package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Kind is what became of a run, a follow-up or one account of many.
type Kind int

// The kinds. Only Succeeded, and NotWaited for a caller that does not
// wait, let a guarded change go ahead (Outcome.Good).
const (
	Refused         Kind = iota + 1 // no backup was queued: refused, or not sent; Err says why
	ConflictNotOver                 // the wait for a backup already in progress stopped; none was queued
	NotIdentified                   // a backup was queued (Confirmed), or perhaps queued, and never found
	Unreadable                      // the recorded backup (BackupID) could not be read; nothing followed or queued
	NotWaited                       // the backup is known, and nobody waited for it to end
	Succeeded                       // waited for, it succeeded and counts
	Failed                          // waited for, it ended in another status or does not count
	TimedOut                        // the wait ran out; the backup goes on
	Interrupted                     // the wait was interrupted; the backup goes on
	Unfollowed                      // polling failed (Err); the backup goes on
)

// Outcome is the one answer of a run: what became of the backup, and why.
type Outcome struct {
	Kind      Kind
	AccountID string
	Backup    *client.Backup // as last read; nil when none is known
	Err       error          // why the outcome is not good; nil for Succeeded and NotWaited
	Waited    time.Duration  // how long the wait that stopped had lasted
	Running   *client.Backup // the backup a ConflictNotOver waited for, when seen
	// TriggeredAt, TriggeredOnService and Confirmed describe a NotIdentified
	// trigger (see Record).
	TriggeredAt, TriggeredOnService time.Time
	Confirmed                       bool
	Misdated                        string // see Rule.Misdated
	BackupID                        string // the backup an Unreadable follow-up could not read
	Reused                          bool   // no backup queued: a recent one counts (RunOptions.ReuseWithin)
	// ReuseRefused says why reuse_within could not be read: a new backup was taken.
	ReuseRefused error
}

// Good says whether the change may go ahead: a backup seen to succeed or,
// for a caller that does not wait, one queued that has not failed.
func (o Outcome) Good(waits bool) bool {
	if waits || o.Kind != NotWaited {
		return o.Kind == Succeeded
	}
	return o.Backup != nil && (client.InProgress(o.Backup.Status) || o.Backup.Good())
}

// Reason is the service's error text for a backup that did not succeed,
// or says there was none.
func (o Outcome) Reason() string {
	if o.Backup != nil && o.Backup.Error != nil && *o.Backup.Error != "" {
		return *o.Backup.Error
	}
	return "the service gave no reason"
}

func refused(err error) Outcome { return Outcome{Kind: Refused, Err: err} }

func notWaited(b *client.Backup) Outcome { return Outcome{Kind: NotWaited, Backup: b} }

// failed: b ended in another status than success or, with why (Rule.Check's
// reason), in a success that does not count.
func failed(b client.Backup, why error) Outcome {
	if why == nil {
		why = fmt.Errorf("backup %s of account %s ended with status %q: %s", b.ID, b.AccountID, b.Status, Outcome{Backup: &b}.Reason())
	}
	return Outcome{Kind: Failed, Backup: &b, Err: why}
}

// Run queues one backup of the account and, with WaitForCompletion, waits
// for it to end; with ReuseWithin, a recent backup may count instead.
func (w *Runner) Run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	run := w.run
	if opts.ReuseWithin > 0 {
		run = w.reuse
	}
	o := run(ctx, accountID, opts)
	o.AccountID = accountID
	return w.onService(o)
}

// onService notes when a trigger not identified began on the service's
// clock, and a backup dated ahead of it, for whichever machine looks next.
func (w *Runner) onService(o Outcome) Outcome {
	if o.Kind == NotIdentified {
		o.Misdated = cmp.Or(o.Misdated, misdatedIn(o.Err))
	}
	if off, ok := w.c.ClockOffset(); ok && o.Kind == NotIdentified && o.TriggeredOnService.IsZero() {
		o.TriggeredOnService = o.TriggeredAt.Add(off)
	}
	return o
}

// PollSettings shape a wait: a poll waits a tenth of the time waited so
// far, at least Initial and at most Max.
type PollSettings struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultPoll notices a backup's end within max(2 s, 10% of the wait), at
// two requests a minute in a long wait.
var DefaultPoll = PollSettings{Initial: 2 * time.Second, Max: 30 * time.Second}

func (p PollSettings) interval(waited time.Duration) time.Duration {
	return max(p.Initial, min(p.Max, waited/10))
}

func (p PollSettings) orDefault() PollSettings {
	if p.Initial <= 0 || p.Max <= 0 {
		return DefaultPoll
	}
	return p
}

// EventKind says what an Event reports.
type EventKind int

// Events of a run.
const (
	EventConflict EventKind = iota + 1 // another backup (Backup) is in progress; it is waited for first
	EventQueued                        // the backup was queued, recovered or adopted
	EventStatus                        // the backup's status changed from Previous
	EventDone                          // the backup reached a terminal status
	EventReused                        // a backup this run did not queue counts for it (ReuseWithin)
)

// Event reports progress of a backup run.
type Event struct {
	Kind     EventKind
	Backup   client.Backup
	Previous string
	Elapsed  time.Duration // since the run (or the wait) began
	Age      time.Duration // of EventReused: how long ago the backup started
}

// RunOptions shape a run.
type RunOptions struct {
	WaitOnConflict    bool // wait for a backup already in progress, then queue one; else the 409 is the outcome
	WaitForCompletion bool
	// ReuseWithin, when positive, lets a backup started no more than this
	// long before the run count for it (see reuse).
	ReuseWithin time.Duration
	// After is when the resource's previous change went ahead, on the
	// service's clock (Rule.After); zero when none is known.
	After time.Time
	// Progress, when set, is told of each step, from the caller's goroutine.
	Progress func(Event)
}

type emitFunc func(kind EventKind, b client.Backup, prev string)

// progress tells opts.Progress of each step, timed from start.
func (w *Runner) progress(opts RunOptions, start time.Time) emitFunc {
	return func(kind EventKind, b client.Backup, prev string) {
		if opts.Progress != nil {
			opts.Progress(Event{Kind: kind, Backup: b, Previous: prev, Elapsed: w.clock.Now().Sub(start)})
		}
	}
}

// run queues one backup of the account and, with WaitForCompletion, waits
// for it to end, for the resources and the action alike.
func (w *Runner) run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	start := w.clock.Now()
	emit := w.progress(opts, start)
	for {
		tr, o := w.trigger(ctx, accountID, opts)
		if tr != nil {
			if tr.Recovered {
				w.log.Warn(ctx, "the trigger's outcome was unknown; found the backup it queued instead of queueing another",
					map[string]any{"account_id": accountID, "backup_id": tr.Backup.ID})
			}
			return w.waitOwn(ctx, accountID, &tr.Backup, opts.WaitForCompletion, start, emit)
		}
		if !opts.WaitOnConflict || !errors.Is(o.Err, client.ErrConflict) {
			return o
		}
		if stopped := w.waitOutConflict(ctx, accountID, start, emit); stopped != nil {
			return *stopped
		}
	}
}

// waitOwn tells of b, which this change queued, and waits for it if the
// caller does; it counts by its id whatever its times (Rule.Own).
func (w *Runner) waitOwn(ctx context.Context, accountID string, b *client.Backup, waits bool, start time.Time, emit emitFunc) Outcome {
	emit(EventQueued, *b, "")
	if !waits {
		return notWaited(b)
	}
	return w.waitFrom(ctx, accountID, b, start, emit, Rule{AccountID: accountID, Own: b.ID})
}

// waitOutConflict waits for the account's backup in progress to end; it
// returns the outcome when the wait stopped.
func (w *Runner) waitOutConflict(ctx context.Context, accountID string, start time.Time, emit emitFunc) *Outcome {
	stopped := func(running *client.Backup, err error) *Outcome {
		return &Outcome{Kind: ConflictNotOver, Running: running, Waited: w.clock.Now().Sub(start), Err: err}
	}
	running, err := w.newest(ctx, accountID)
	if err != nil {
		return stopped(nil, err)
	}
	if running == nil || !client.InProgress(running.Status) {
		// Ended since the 409, or not listed: try again a poll interval later.
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(start))); err != nil {
			return stopped(nil, err)
		}
		return nil
	}
	emit(EventConflict, *running, "")
	if _, err := w.poll(ctx, accountID, running, func(client.Backup, string) {}); err != nil {
		return stopped(running, err)
	}
	return nil
}

// waitFrom waits for b, as just read, to end; it counts only if rule
// accepts it then.
func (w *Runner) waitFrom(ctx context.Context, accountID string, b *client.Backup, start time.Time, emit emitFunc, rule Rule) Outcome {
	final, err := w.poll(ctx, accountID, b, func(now client.Backup, prev string) {
		emit(EventStatus, now, prev)
		w.log.Debug(ctx, "backup status changed", map[string]any{
			"account_id": accountID, "backup_id": now.ID, "status": now.Status, "previous_status": prev,
			"elapsed": w.clock.Now().Sub(start).Round(time.Second).String(),
		})
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// Read the status once more, briefly, so that the message tells the truth.
			rctx, cancel := detached(ctx)
			if now, rerr := w.c.FindBackup(rctx, accountID, final.ID); rerr == nil {
				final = now
			}
			cancel()
		}
		o := Outcome{Kind: Unfollowed, Backup: final, Waited: w.clock.Now().Sub(start), Err: err}
		switch {
		case errors.Is(err, context.Canceled):
			o.Kind = Interrupted
		case errors.Is(err, context.DeadlineExceeded):
			o.Kind = TimedOut
		}
		return o
	}
	emit(EventDone, *final, "")
	if final.Status != client.StatusSuccess {
		return failed(*final, nil)
	}
	if err := rule.Check(*final, Final); err != nil {
		return failed(*final, err)
	}
	return Outcome{Kind: Succeeded, Backup: final}
}

// poll reads the backup, from one interval on, until it is no longer in
// progress; on error it returns the last state it saw.
func (w *Runner) poll(ctx context.Context, accountID string, last *client.Backup, changed func(now client.Backup, prev string)) (*client.Backup, error) {
	began := w.clock.Now()
	for client.InProgress(last.Status) {
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(began))); err != nil {
			return last, err
		}
		now, err := w.c.FindBackup(ctx, accountID, last.ID)
		if err != nil {
			return last, cmp.Or(ctx.Err(), err)
		}
		if now.Status != last.Status {
			changed(*now, last.Status)
		}
		last = now
	}
	return last, nil
}
