package workflow

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Triggered is what a trigger queued.
type Triggered struct {
	Account   *client.Account // as the answer gave it; nil when it could not be read
	Backup    client.Backup
	Recovered bool // the outcome was unknown, and the backup was found rather than queued again
}

// ErrNotListed: the listing never held the trigger's backup.
var ErrNotListed = errors.New("the account's backups listing shows no backup created since the trigger")

// trigger queues one backup, or says why not. The POST is not idempotent:
// after an unknown outcome the listing is looked at before any resend.
// mine recognises its own backup: without reuse_within, so that an unknown
// outcome never passes off a recent one.
func (w *Runner) trigger(ctx context.Context, accountID string, opts RunOptions) (*Triggered, Outcome) {
	mine := Rule{AccountID: accountID, After: opts.After, Began: w.clock.Now()}
	post := w.c.Trigger(accountID)
	uncertain := false
	for {
		acct, err := post.Post(ctx)
		var unsure *client.UnsureError
		switch {
		case err == nil:
			// Accepted; acct is nil when the answer could not be read.
			if acct != nil && acct.ID != accountID {
				// Answered for another account: keep nothing of it.
				w.log.Warn(ctx, "the answer to a backup trigger names another account; it is ignored",
					map[string]any{"account_id": accountID, "answered_for": acct.ID})
				acct = nil
			}
			return w.identify(ctx, acct, &mine, false)
		case ctx.Err() != nil:
			if !post.Sent() {
				return nil, refused(ctx.Err())
			}
			// A POST may have been on its way: look once, briefly, so that the caller records it.
			if found, _ := w.lookDetached(ctx, &mine); found != nil {
				return &Triggered{Backup: *found, Recovered: true}, Outcome{}
			}
			return nil, mine.unidentified(false, ctx.Err())
		case errors.Is(err, client.ErrConflict) && uncertain:
			return w.conflictAfterUncertain(ctx, &mine, err)
		case errors.As(err, &unsure):
			uncertain = true
			w.log.Warn(ctx, "the outcome of a backup trigger is unknown; looking for the backup before sending it again",
				map[string]any{"account_id": accountID, "error": err.Error()})
			// A listing may lag behind the POST, as after a 202; with no
			// answer, the request may still be on its way through the service.
			grace := w.set.IdentifyWithin
			if !unsure.Answered {
				grace = max(grace, w.set.UncertainGrace)
			}
			found, lerr := w.lookFor(ctx, &mine, grace)
			if found != nil {
				return &Triggered{Backup: *found, Recovered: true}, Outcome{}
			}
			if lerr != nil && !errors.Is(lerr, ErrNotListed) {
				// Nothing can be seen: sending again could queue a second
				// backup.
				return nil, mine.unidentified(false, errors.Join(err, lerr))
			}
			if cerr := w.measured(mine).clocksApart(); cerr != nil {
				// The backup may be listed and not recognised by its time:
				// sending again could queue a second one.
				return nil, mine.unidentified(false, errors.Join(err, cerr))
			}
			if werr := post.Wait(ctx, err); werr != nil {
				return nil, mine.unidentified(false, werr)
			}
		default:
			return nil, refused(err)
		}
	}
}

// unidentified: the trigger r looks for queued a backup (queued), or may
// have, and err says why it was not found; Misdated is for the next look.
func (r *Rule) unidentified(queued bool, err error) Outcome {
	return Outcome{Kind: NotIdentified, TriggeredAt: r.Began, TriggeredOnService: r.BeganOnService, Confirmed: queued, Err: err, Misdated: r.Misdated}
}

// conflictAfterUncertain reads a 409 after an unknown outcome: a backup in
// progress started since the trigger is its own; an older one, the 409 stands.
func (w *Runner) conflictAfterUncertain(ctx context.Context, mine *Rule, conflict error) (*Triggered, Outcome) {
	newest, err := w.newest(ctx, mine.AccountID)
	if err != nil {
		return nil, mine.unidentified(true, errors.Join(conflict, err))
	}
	if newest != nil && client.InProgress(newest.Status) {
		rule := w.measured(*mine)
		if err := rule.Check(*newest, Identified); err != nil {
			if !rule.mayBeOwn(*newest) {
				return nil, refused(conflict)
			}
			// Maybe its own, and refused: never waited out and queued again.
			return nil, mine.unidentified(true, errors.Join(conflict, err))
		}
	}
	// Ours, or not listed yet (a lagging listing): look for it.
	return w.identify(ctx, nil, mine, true)
}

// identify finds a backup the service accepted, for IdentifyWithin and,
// when the context ends first, once more, detached.
func (w *Runner) identify(ctx context.Context, acct *client.Account, mine *Rule, recovered bool) (*Triggered, Outcome) {
	found, err := w.lookFor(ctx, mine, w.set.IdentifyWithin)
	if found == nil && ctx.Err() != nil {
		found, err = w.lookDetached(ctx, mine)
	}
	if found == nil {
		return nil, mine.unidentified(true, err)
	}
	return &Triggered{Account: acct, Backup: *found, Recovered: recovered}, Outcome{}
}

// lookDetached looks once (a look of no length) for the trigger's backup after ctx ended, briefly.
func (w *Runner) lookDetached(ctx context.Context, mine *Rule) (*client.Backup, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	return w.lookFor(dctx, mine, 0)
}

// The pause between looks for a trigger's backup doubles up to the max.
const (
	identifyInterval    = time.Second
	identifyMaxInterval = 8 * time.Second
)

// lookFor looks for the trigger's backup until within has passed; else it
// returns the last error (ErrNotListed when the listing held none).
func (w *Runner) lookFor(ctx context.Context, mine *Rule, within time.Duration) (*client.Backup, error) {
	deadline := w.clock.Now().Add(within)
	for interval := identifyInterval; ; interval = min(2*interval, identifyMaxInterval) {
		found, err := w.findMine(ctx, mine)
		if found != nil {
			return found, nil
		}
		err = cmp.Or(err, ErrNotListed)
		if ctx.Err() != nil {
			return nil, err
		}
		left := deadline.Sub(w.clock.Now())
		if left <= 0 {
			return nil, err
		}
		if serr := clock.Sleep(ctx, w.clock, min(interval, left)); serr != nil {
			return nil, err
		}
	}
}

// FindTriggered looks once for the backup of an unidentified record; nil,
// nil when none is listed yet.
func (w *Runner) FindTriggered(ctx context.Context, accountID string, r Record) (*client.Backup, error) {
	return w.findMine(ctx, &Rule{AccountID: accountID, After: r.Since, Began: r.TriggeredAt, BeganOnService: r.TriggeredOnService, Misdated: r.Misdated})
}

// findMine returns the account's newest backup when mine recognises it as
// the trigger's, or why not when it may be its own all the same. A backup
// found misdated stays refused in mine's later looks.
func (w *Runner) findMine(ctx context.Context, mine *Rule) (*client.Backup, error) {
	b, err := w.newest(ctx, mine.AccountID)
	if b == nil {
		return nil, err
	}
	rule := w.measured(*mine) // the service's clock as this listing's answer dates it
	err = rule.Check(*b, Identified)
	switch {
	case err == nil:
		return b, nil
	case rule.mayBeOwn(*b):
		mine.Misdated = cmp.Or(misdatedIn(err), mine.Misdated)
		return nil, err
	}
	return nil, nil
}

// newest is the account's newest backup, as the service lists a new one;
// nil when it lists none.
func (w *Runner) newest(ctx context.Context, accountID string) (*client.Backup, error) {
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, err
		}
		return &b, nil
	}
	return nil, nil
}
