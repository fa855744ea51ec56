package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
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

// unidentified: a trigger that began at began queued a backup (queued), or
// may have, and err says why it was not found.
func unidentified(began time.Time, queued bool, err error) Outcome {
	return Outcome{Kind: NotIdentified, TriggeredAt: began, Confirmed: queued, Err: err}
}

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
	var o Outcome
	if opts.ReuseWithin > 0 {
		o = w.reuse(ctx, accountID, opts)
	} else {
		o = w.run(ctx, accountID, opts)
	}
	o.AccountID = accountID
	return w.onService(o)
}

// onService notes when a trigger not identified began on the service's
// clock, and a backup dated ahead of it, for whichever machine looks next.
func (w *Runner) onService(o Outcome) Outcome {
	if o.Kind == NotIdentified {
		o.Misdated = misdatedIn(o.Err)
	}
	if off, ok := w.c.ClockOffset(); ok && o.Kind == NotIdentified && o.TriggeredOnService.IsZero() {
		o.TriggeredOnService = o.TriggeredAt.Add(off)
	}
	return o
}

// Follow carries on with the backup of a record (see follow).
func (w *Runner) Follow(ctx context.Context, accountID string, r Record, opts FollowOptions) Outcome {
	o := w.follow(ctx, accountID, r, opts)
	o.AccountID = accountID
	if !o.TriggeredAt.Equal(r.TriggeredAt) {
		return w.onService(o) // a new trigger
	}
	return o
}

// errNoBackup: an account RunMany never started.
var errNoBackup = errors.New("no backup was queued")

// notStarted is the outcome of an account the context ended before.
func notStarted(ctx context.Context, accountID string) Outcome {
	o := refused(cmp.Or(context.Cause(ctx), errNoBackup))
	o.AccountID = accountID
	return o
}
