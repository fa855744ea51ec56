package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// FollowOptions shape a follow.
type FollowOptions struct {
	RunOptions
	// Counts says whether the recorded backup, as read by its id, still
	// stands for the change; nil counts every backup.
	Counts func(client.Backup) bool
	// Renew queues a new backup when the recorded one no longer counts;
	// without it Follow returns what it read.
	Renew bool
	// RenewAfter, when set, is the Rule.After of that new backup.
	RenewAfter time.Time
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

// follow carries on with the backup of r, the one way a resource resumes
// one. A new trigger is sent only after an unconfirmed one's UncertainGrace.
func (w *Runner) follow(ctx context.Context, accountID string, r Record, opts FollowOptions) Outcome {
	start, emit := w.progress(opts.RunOptions)
	var b *client.Backup
	var err error
	switch {
	case r.BackupID == "":
		mine := Rule{AccountID: accountID, After: opts.After, Began: r.TriggeredAt, BeganOnService: r.TriggeredOnService, Misdated: r.Misdated}
		if b, err = w.lookFor(ctx, &mine, w.set.IdentifyWithin); b == nil {
			apart := w.measured(mine).clocksApart()
			if errors.Is(err, ErrNotListed) {
				err = errors.Join(err, apart) // its backup may be listed, not recognised by its time
			}
			if !r.Confirmed && apart == nil && errors.Is(err, ErrNotListed) && w.clock.Now().Sub(r.TriggeredAt) >= w.set.UncertainGrace {
				if err = w.hiddenBelow(ctx, mine); err == nil {
					w.log.Warn(ctx, "no backup of the earlier trigger, whose outcome was unknown, was ever listed; queueing one now",
						map[string]any{"account_id": accountID, "triggered_at": r.TriggeredAt.UTC().Format(time.RFC3339)})
					return w.run(ctx, accountID, opts.RunOptions)
				}
			}
			return mine.unidentified(r.Confirmed, err) // Misdated: the record's, or one a look found misdated
		}
	case client.InProgress(r.Status) && opts.WaitForCompletion && opts.Counts == nil:
		// The wait's first poll reads it.
		b = &client.Backup{ID: r.BackupID, AccountID: accountID, Status: r.Status, CreatedAt: r.TriggeredAt}
		return w.waitFrom(ctx, accountID, b, start, emit, Rule{AccountID: accountID, Own: r.BackupID})
	default:
		if b, err = w.c.FindBackup(ctx, accountID, r.BackupID); err != nil {
			return Outcome{Kind: Unreadable, BackupID: r.BackupID, Err: err}
		}
	}
	// A backup found by when its trigger began is that trigger's own: it
	// is followed whatever it became.
	if opts.Counts != nil && r.BackupID != "" && !opts.Counts(*b) {
		if opts.Renew {
			if opts.RenewAfter.After(opts.After) {
				opts.After = opts.RenewAfter
			}
			return w.run(ctx, accountID, opts.RunOptions)
		}
		if opts.WaitForCompletion {
			return failed(*b, &notCountedError{Backup: *b, Why: "it no longer stands for this change"})
		}
		return notWaited(b)
	}
	return w.waitOwn(ctx, accountID, b, opts.WaitForCompletion, start, emit)
}

// hiddenBelow says why an unconfirmed trigger's backup, not recognised in
// the newest, may still be listed: that newest is dated since the trigger,
// and its own may be below it; nil when the newest predates the trigger.
func (w *Runner) hiddenBelow(ctx context.Context, mine Rule) error {
	b, err := w.newest(ctx, mine.AccountID)
	if err != nil || b == nil || w.measured(mine).predates(*b) {
		return err
	}
	return errors.Join(ErrNotListed, fmt.Errorf("backup %s, listed since the trigger, may be newer than its own: it is not sent again", b.ID))
}
