package workflow

import (
	"context"
	"errors"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Known is what a caller recorded of a backup it stands for: by id once
// identified, else by when its trigger began.
type Known struct {
	BackupID string
	// Status as last read; "" when never read (an import before its
	// first read).
	Status string
	// TriggeredAt is when the backup was created or, unidentified, when
	// its trigger began.
	TriggeredAt time.Time
	// Confirmed: the service accepted the trigger (unidentifiedError.Queued).
	Confirmed bool
}

// FollowOptions shape a follow.
type FollowOptions struct {
	RunOptions
	// Counts says whether the recorded backup, as just read by its id,
	// still stands for the caller's change; nil counts every backup.
	Counts func(client.Backup) bool
	// Renew queues a new backup (a run) when the recorded one no
	// longer counts; without it Follow returns what it read, and never
	// sends a trigger for an identified backup.
	Renew bool
	// RenewAfter, when set, is the Rule.After of that new backup: the
	// recorded one's change is then the previous change.
	RenewAfter time.Time
}

// unreadableError: the recorded backup could not be read; nothing was
// followed and nothing queued. Its text is the read's.
type unreadableError struct {
	BackupID string
	Err      error
}

func (e *unreadableError) Error() string { return e.Err.Error() }
func (e *unreadableError) Unwrap() error { return e.Err }

// follow carries on with a backup a caller recorded, and returns what is
// now known of it. It is the one way a resource resumes a backup: the
// update after an interrupted wait, the replacement of a trigger whose
// wait timed out, the destroy after one that stopped.
//
// An identified backup is read, unless it was last seen in progress and
// the caller waits for it with no question to ask (Counts nil): the wait's
// first poll reads it. An unidentified one is looked for by when its
// trigger began, for IdentifyWithin; when none is listed, a new trigger is
// sent only if the earlier one was not confirmed and UncertainGrace has
// passed since it began (that request was never processed), else the
// error is an *unidentifiedError again.
//
// A backup that counts is treated as run treats the one it queues:
// EventQueued, then, with WaitForCompletion, the wait (*waitError,
// *backupFailedError). One that does not count is returned as read, or,
// with Renew, replaced by a new one. A failed read is an
// *unreadableError: nothing is followed or queued.
func (w *Runner) follow(ctx context.Context, accountID string, k Known, opts FollowOptions) (*client.Backup, error) {
	start := w.clock.Now()
	emit := func(kind EventKind, b client.Backup, prev string) {
		if opts.Progress != nil {
			opts.Progress(Event{Kind: kind, Backup: b, Previous: prev, Elapsed: w.clock.Now().Sub(start)})
		}
	}
	var b *client.Backup
	switch {
	case k.BackupID == "":
		found, err := w.lookFor(ctx, accountID, opts.RunOptions, k.TriggeredAt, w.set.IdentifyWithin)
		if found == nil {
			apart := w.rule(accountID, opts.RunOptions, k.TriggeredAt).clocksApart()
			if apart != nil && errors.Is(err, ErrNotListed) {
				err = errors.Join(err, apart) // its backup may be listed, not recognised by its time
			}
			if !k.Confirmed && apart == nil && errors.Is(err, ErrNotListed) && w.clock.Now().Sub(k.TriggeredAt) >= w.set.UncertainGrace {
				w.log.Warn(ctx, "no backup of the earlier trigger, whose outcome was unknown, was ever listed; queueing one now",
					map[string]any{"account_id": accountID, "triggered_at": k.TriggeredAt.UTC().Format(time.RFC3339)})
				return w.run(ctx, accountID, opts.RunOptions)
			}
			return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: k.TriggeredAt, Queued: k.Confirmed, Err: err}
		}
		b = found
	case client.InProgress(k.Status) && opts.WaitForCompletion && opts.Counts == nil:
		b = &client.Backup{ID: k.BackupID, AccountID: accountID, Status: k.Status, CreatedAt: k.TriggeredAt}
		return w.waitFrom(ctx, accountID, b, start, emit, w.ownRule(accountID, opts.RunOptions, k.BackupID))
	default:
		read, err := w.c.FindBackup(ctx, accountID, k.BackupID)
		if err != nil {
			return nil, &unreadableError{BackupID: k.BackupID, Err: err}
		}
		b = read
	}
	// A backup found by when its trigger began is that trigger's own,
	// never seen by it: it is followed whatever it became.
	if opts.Counts != nil && k.BackupID != "" && !opts.Counts(*b) {
		if opts.Renew {
			renewed := opts.RunOptions
			if opts.RenewAfter.After(renewed.After) {
				renewed.After = opts.RenewAfter
			}
			return w.run(ctx, accountID, renewed)
		}
		if opts.WaitForCompletion {
			return b, &backupFailedError{Backup: *b, NotCounted: &notCountedError{Backup: *b, Why: "it no longer stands for this change"}}
		}
		return b, nil
	}
	emit(EventQueued, *b, "")
	if !opts.WaitForCompletion {
		return b, nil
	}
	return w.waitFrom(ctx, accountID, b, start, emit, w.ownRule(accountID, opts.RunOptions, b.ID))
}
