package workflow

import (
	"context"
	"errors"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Kind is what became of a run, a follow-up or one account of many.
type Kind int

// The kinds. Only Succeeded, and NotWaited for a caller that does not
// wait, can let a guarded change go ahead (see Outcome.Good).
const (
	// Refused: no backup was queued: the service or a check before the
	// trigger refused it (a conflict with on_conflict = "fail", a 422, a
	// key of another organization, an account proven gone), or the
	// trigger could not be sent. Err says which.
	Refused Kind = iota + 1
	// ConflictNotOver: the wait for another backup, already in progress,
	// stopped (Err wraps the context's error on an interrupt or a
	// timeout); none was queued. Running is that backup, when seen.
	ConflictNotOver
	// NotIdentified: a backup was queued (Confirmed), or perhaps queued,
	// but its record was never found. TriggeredAt is when the trigger
	// began, on this machine's clock.
	NotIdentified
	// Unreadable: the recorded backup (BackupID) could not be read;
	// nothing was followed or queued.
	Unreadable
	// NotWaited: the backup is known, and nobody waited for it to end.
	NotWaited
	// Succeeded: the backup was waited for and succeeded.
	Succeeded
	// Failed: the backup was waited for and ended in another status.
	Failed
	// TimedOut, Interrupted: the wait for the backup ran out, or was
	// interrupted; the backup goes on in the service.
	TimedOut
	Interrupted
	// Unfollowed: polling the backup failed (Err); it goes on.
	Unfollowed
)

// Outcome is the one answer of a run: what became of the backup, and why.
type Outcome struct {
	Kind      Kind
	AccountID string
	// Backup as last read; nil when none is known (Refused,
	// ConflictNotOver, NotIdentified, Unreadable).
	Backup *client.Backup
	// Err is why the outcome is not a good one; nil for Succeeded and
	// NotWaited.
	Err error
	// Waited is how long the wait that stopped had lasted.
	Waited time.Duration
	// Running is the backup a ConflictNotOver waited for, when seen.
	Running *client.Backup
	// TriggeredAt and Confirmed describe a NotIdentified trigger.
	TriggeredAt time.Time
	Confirmed   bool
	// BackupID is the backup an Unreadable follow-up could not read.
	BackupID string
	// Reused: this run queued no backup; Backup is a recent one that
	// counts for it (RunOptions.ReuseWithin).
	Reused bool
	// ReuseRefused says why reuse_within could not be read (the service's
	// clock, beyond the allowance): a new backup was taken instead.
	ReuseRefused error
}

// Good says whether the outcome lets the change it guards go ahead: a
// backup seen to succeed or, for a caller that does not wait, one queued
// that has not failed.
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

// outcomeOf classifies what a run returned: the one place where its
// errors are told apart. waits says whether the run waited for the end.
func outcomeOf(accountID string, b *client.Backup, err error, waits bool) Outcome {
	o := Outcome{AccountID: accountID, Backup: b, Err: err}
	var (
		we *waitError
		fe *backupFailedError
		cw *conflictWaitError
		ue *unidentifiedError
		ur *unreadableError
	)
	switch {
	case err == nil && b == nil:
		o.Kind, o.Err = Refused, errors.New("no backup was queued")
	case err == nil && waits && client.InProgress(b.Status):
		// No wait ends so: fail closed all the same.
		o.Kind, o.Err = Unfollowed, errors.New("the wait ended with the backup still in progress")
	case err == nil && waits:
		o.Kind = Succeeded // waitFrom judged it: Rule.Check, the one place
	case err == nil:
		o.Kind = NotWaited
	case errors.As(err, &we):
		bb := we.Backup
		o.Backup, o.Waited, o.Err = &bb, we.Waited, we.Err
		switch {
		case errors.Is(err, context.Canceled):
			o.Kind = Interrupted
		case errors.Is(err, context.DeadlineExceeded):
			o.Kind = TimedOut
		default:
			o.Kind = Unfollowed
		}
	case errors.As(err, &fe):
		bb := fe.Backup
		o.Kind, o.Backup = Failed, &bb
	case errors.As(err, &cw):
		o.Kind, o.Backup, o.Running, o.Waited, o.Err = ConflictNotOver, nil, cw.Running, cw.Waited, cw.Err
	case errors.As(err, &ue):
		o.Kind, o.Backup, o.TriggeredAt, o.Confirmed, o.Err = NotIdentified, nil, ue.TriggeredAt, ue.Queued, ue.Err
	case errors.As(err, &ur):
		o.Kind, o.Backup, o.BackupID, o.Err = Unreadable, nil, ur.BackupID, ur.Err
	default:
		o.Kind, o.Backup = Refused, nil
	}
	return o
}

// Run queues one backup of the account and, with WaitForCompletion, waits
// for it to end (see run); with ReuseWithin, a recent backup may count
// instead (see reuse).
func (w *Runner) Run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	if opts.ReuseWithin > 0 {
		return w.recorded(w.reuse(ctx, accountID, opts))
	}
	b, err := w.run(ctx, accountID, opts)
	return w.recorded(outcomeOf(accountID, b, err, opts.WaitForCompletion))
}

// recorded is o as records keep it: an unidentified trigger's time on the
// service's clock, which another machine can read (see fromService).
func (w *Runner) recorded(o Outcome) Outcome {
	if !o.TriggeredAt.IsZero() {
		o.TriggeredAt = w.toService(o.TriggeredAt)
	}
	return o
}

// Follow carries on with a backup a caller recorded (see follow).
func (w *Runner) Follow(ctx context.Context, accountID string, k Known, opts FollowOptions) Outcome {
	if k.BackupID == "" {
		k.TriggeredAt = w.fromService(k.TriggeredAt)
	}
	b, err := w.follow(ctx, accountID, k, opts)
	return w.recorded(outcomeOf(accountID, b, err, opts.WaitForCompletion))
}
