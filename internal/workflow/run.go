package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// PollSettings shape a wait for a backup: a poll waits a tenth of the time
// waited so far, at least Initial and at most Max (see interval).
type PollSettings struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultPoll polls every 2 s for the first 20 s, then every tenth of the
// time waited so far, up to every 30 s: the end of a backup is noticed
// within max(2 s, 10% of the wait), and a long wait costs two requests a
// minute.
var DefaultPoll = PollSettings{Initial: 2 * time.Second, Max: 30 * time.Second}

// interval is the pause before the next poll, after waiting for waited:
// a tenth of it, between Initial and Max.
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
	// EventConflict: another backup of the account is in progress; it is
	// waited for before a new one is queued (Backup is that backup).
	EventConflict EventKind = iota + 1
	// EventQueued: the backup was queued (or recovered after an unknown
	// outcome, or adopted).
	EventQueued
	// EventStatus: the backup's status changed (Previous holds the old one).
	EventStatus
	// EventDone: the backup reached a terminal status.
	EventDone
	// EventReused: a backup this run did not queue counts for it (see
	// RunOptions.ReuseWithin); a backup in progress is then waited for.
	EventReused
)

// Event reports progress of a backup run.
type Event struct {
	Kind     EventKind
	Backup   client.Backup
	Previous string
	// Elapsed since the run (or the wait) began, on the client's clock.
	Elapsed time.Duration
	// Age, of EventReused, is how long before the event the backup
	// started, on the runner's clock (at least 0).
	Age time.Duration
}

// RunOptions shape a run.
type RunOptions struct {
	// WaitOnConflict waits for a backup already in progress, then queues a
	// new one; otherwise the 409 is returned.
	WaitOnConflict bool
	// WaitForCompletion waits until the queued backup ends.
	WaitForCompletion bool
	// ReuseWithin, when positive, lets a backup of the account that
	// started no more than this long before the run count for it, instead
	// of queueing one (see Runner.reuse).
	ReuseWithin time.Duration
	// After is when the same resource's previous change went ahead, on the
	// service's clock: a backup that started before it never counts (see
	// Rule.After). Zero: no earlier change is known.
	After time.Time
	// Progress, when set, is told of each step, from the caller's goroutine.
	Progress func(Event)

	own string // see Rule.Own
}

// errBackupFailed matches a *backupFailedError.
var errBackupFailed = errors.New("the backup did not succeed")

// backupFailedError: the backup ended in a status other than success, or
// in a success that does not count (NotCounted: Rule.Check's reason).
type backupFailedError struct {
	Backup     client.Backup
	NotCounted error
}

func (e *backupFailedError) Error() string {
	if e.NotCounted != nil {
		return e.NotCounted.Error()
	}
	return fmt.Sprintf("backup %s of account %s ended with status %q: %s", e.Backup.ID, e.Backup.AccountID, e.Backup.Status, e.Reason())
}

// Reason is the service's error text for the backup, or says there was none.
func (e *backupFailedError) Reason() string { return Outcome{Backup: &e.Backup}.Reason() }

// Is makes errors.Is(err, errBackupFailed) work.
func (e *backupFailedError) Is(target error) bool { return target == errBackupFailed }

// waitError: waiting for a queued backup stopped before it ended: the
// context was cancelled (an interrupt) or its deadline passed (a timeout),
// or polling failed. The backup goes on in the service.
type waitError struct {
	// Backup as last read; for a timeout, read once more after it.
	Backup client.Backup
	Waited time.Duration
	Err    error
}

func (e *waitError) Error() string {
	return fmt.Sprintf("backup %s of account %s was still %s after waiting %s: %v",
		e.Backup.ID, e.Backup.AccountID, e.Backup.Status, e.Waited.Round(time.Second), e.Err)
}

func (e *waitError) Unwrap() error { return e.Err }

// conflictWaitError: waiting for another backup, already in progress, to
// end stopped; no backup was queued.
type conflictWaitError struct {
	// Running is the backup in progress, when the listing showed one.
	Running *client.Backup
	Waited  time.Duration
	Err     error
}

func (e *conflictWaitError) Error() string {
	what := "a backup already in progress"
	if e.Running != nil {
		what = fmt.Sprintf("backup %s, already in progress (%s),", e.Running.ID, e.Running.Status)
	}
	return fmt.Sprintf("waiting %s for %s to finish: %v", e.Waited.Round(time.Second), what, e.Err)
}

func (e *conflictWaitError) Unwrap() error { return e.Err }

// run queues one backup of the account and, with WaitForCompletion,
// waits for it to end. It is the one place where the trigger, the wait for
// a backup already in progress and the polling meet, for the resources and
// the action alike.
//
// It returns the backup as last read. Errors: those of trigger (one POST
// never queues two backups), *conflictWaitError, *waitError (the backup
// goes on in the service: callers must not queue another for the same
// change), and *backupFailedError. Run gives them as an Outcome.
func (w *Runner) run(ctx context.Context, accountID string, opts RunOptions) (*client.Backup, error) {
	start := w.clock.Now()
	emit := func(kind EventKind, b client.Backup, prev string) {
		if opts.Progress != nil {
			opts.Progress(Event{Kind: kind, Backup: b, Previous: prev, Elapsed: w.clock.Now().Sub(start)})
		}
	}
	var b *client.Backup
	for b == nil {
		tr, err := w.trigger(ctx, accountID, opts)
		switch {
		case err == nil:
			if tr.Recovered {
				w.log.Warn(ctx, "the trigger's outcome was unknown; found the backup it queued instead of queueing another",
					map[string]any{"account_id": accountID, "backup_id": tr.Backup.ID})
			}
			b = &tr.Backup
		case opts.WaitOnConflict && errors.Is(err, client.ErrConflict):
			if werr := w.waitOutConflict(ctx, accountID, start, emit); werr != nil {
				return nil, werr
			}
		default:
			return nil, err
		}
	}
	emit(EventQueued, *b, "")
	if !opts.WaitForCompletion {
		return b, nil
	}
	return w.waitFrom(ctx, accountID, b, start, emit, w.ownRule(accountID, opts, b.ID))
}

// ownRule is the Rule for a backup this change queued, known by id.
func (w *Runner) ownRule(accountID string, opts RunOptions, id string) Rule {
	opts.own = id
	return w.rule(accountID, opts, w.clock.Now())
}

// waitOutConflict waits for the account's backup in progress to end.
func (w *Runner) waitOutConflict(ctx context.Context, accountID string, start time.Time, emit func(EventKind, client.Backup, string)) error {
	running, err := w.runningBackup(ctx, accountID)
	if err != nil {
		return &conflictWaitError{Waited: w.clock.Now().Sub(start), Err: err}
	}
	if running == nil {
		// Ended between the 409 and the look (or a listing that does not
		// show it): try again after a poll interval, which grows with the
		// wait as a backup's polls do, never in a tight loop.
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(start))); err != nil {
			return &conflictWaitError{Waited: w.clock.Now().Sub(start), Err: err}
		}
		return nil
	}
	emit(EventConflict, *running, "")
	w.log.Info(ctx, "a backup is already in progress; waiting for it before queueing a new one",
		map[string]any{"account_id": accountID, "running_backup_id": running.ID, "status": running.Status})
	if _, err := w.poll(ctx, accountID, running, func(client.Backup, string) {}); err != nil {
		return &conflictWaitError{Running: running, Waited: w.clock.Now().Sub(start), Err: err}
	}
	return nil
}

// runningBackup returns the account's newest backup if it is in progress.
func (w *Runner) runningBackup(ctx context.Context, accountID string) (*client.Backup, error) {
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, err
		}
		if client.InProgress(b.Status) {
			return &b, nil
		}
	}
	return nil, nil
}

// waitFrom waits for b, as just read, to end; it counts only if rule
// accepts it then.
func (w *Runner) waitFrom(ctx context.Context, accountID string, b *client.Backup, start time.Time, emit func(EventKind, client.Backup, string),
	rule Rule,
) (*client.Backup, error) {
	final, err := w.poll(ctx, accountID, b, func(now client.Backup, prev string) {
		emit(EventStatus, now, prev)
		// DEBUG: the caller's progress handler tells users (at INFO in the
		// provider); this line is for the client's own trace.
		w.log.Debug(ctx, "backup status changed", map[string]any{
			"account_id": accountID, "backup_id": now.ID, "status": now.Status, "previous_status": prev,
			"elapsed": w.clock.Now().Sub(start).Round(time.Second).String(),
		})
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// The status may have moved since the last poll: read it once
			// more, briefly, so the message tells the truth.
			rctx, cancel := detached(ctx)
			if now, rerr := w.c.FindBackup(rctx, accountID, final.ID); rerr == nil {
				final = now
			}
			cancel()
		}
		return final, &waitError{Backup: *final, Waited: w.clock.Now().Sub(start), Err: err}
	}
	emit(EventDone, *final, "")
	if final.Status != client.StatusSuccess {
		return final, &backupFailedError{Backup: *final}
	}
	if err := rule.Check(*final, Final); err != nil {
		return final, &backupFailedError{Backup: *final, NotCounted: err}
	}
	return final, nil
}

// poll reads the backup until it is no longer in progress. b is its state
// as just read, so the first poll comes one interval later. On error it
// returns the last state it saw. changed is told of each status change.
// It reads accountID's listing: the caller's id, not the record's.
func (w *Runner) poll(ctx context.Context, accountID string, b *client.Backup, changed func(now client.Backup, prev string)) (*client.Backup, error) {
	began := w.clock.Now()
	last := b
	for client.InProgress(last.Status) {
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(began))); err != nil {
			return last, err
		}
		now, err := w.c.FindBackup(ctx, accountID, last.ID)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		if now.Status != last.Status {
			changed(*now, last.Status)
		}
		last = now
	}
	return last, nil
}
