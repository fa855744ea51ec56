package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Triggered is what a trigger queued.
type Triggered struct {
	// Account as the trigger returned it; nil when the response could not be
	// read (the backup was queued all the same).
	Account *client.Account
	// Backup is the record of the queued backup.
	Backup client.Backup
	// Recovered is set when the trigger's outcome was unknown (a server
	// error, a timeout, a connection lost after sending) and the backup it
	// queued was found in the account's backups instead of being queued again.
	Recovered bool
}

// errUnidentified matches an *unidentifiedError.
var errUnidentified = errors.New("the backup of this trigger could not be identified")

// unidentifiedError: a trigger was sent, the service queued a backup (or
// may have), and no record of it could be found. Callers record what is
// known (the account and when the trigger began) and look for the backup
// again before they send another trigger for the same change.
type unidentifiedError struct {
	AccountID string
	// TriggeredAt is when the trigger began, on the client's clock.
	TriggeredAt time.Time
	// Queued: the service said the backup was queued (a 2xx, or a 409 after
	// this trigger's own request with an unknown outcome). When false, the
	// outcome is unknown: the backup may never have been queued.
	Queued bool
	// Err is why no record was found: the last listing error, or
	// ErrNotListed.
	Err error
}

// ErrNotListed: the account's backups listing held no backup of this
// trigger, however long it was looked at.
var ErrNotListed = errors.New("the account's backups listing shows no backup created since the trigger")

func (e *unidentifiedError) Error() string {
	what := "a backup was queued"
	if !e.Queued {
		what = "the outcome of the trigger is unknown (a backup may have been queued)"
	}
	return fmt.Sprintf("triggering a backup of %s at %s: %s, but its record could not be found: %v",
		e.AccountID, e.TriggeredAt.UTC().Format(time.RFC3339), what, e.Err)
}

func (e *unidentifiedError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, errUnidentified) work.
func (e *unidentifiedError) Is(target error) bool { return target == errUnidentified }

// identifying is the rule that recognises the backup a trigger that began
// at began queued: Rule.Check without reuse_within, so that an unknown
// outcome never passes off a recent backup as this trigger's. A backup
// older than began less the clock allowance never is, even one listed in
// progress: a lagging listing can show a backup of the previous change as
// still running after it ended.
func (w *Runner) identifying(accountID string, opts RunOptions, began time.Time) Rule {
	opts.ReuseWithin = 0
	return w.rule(accountID, opts, began)
}

// trigger queues one backup of the account and returns its record.
//
// The POST is not idempotent and the API has no idempotency key, so it is
// never blindly resent. After a POST the service accepted, the backup is
// looked for (identifying) for IdentifyWithin on the runner's clock, since
// a listing may lag behind its POST; if it never shows, the error is an
// *unidentifiedError with Queued set, and no second POST is sent.
//
// When a POST's outcome is unknown, the account's backups are looked at
// before anything is sent again: after a server error once, after a POST
// that got no answer for UncertainGrace (the service may still process
// it). A 409 after such a POST is this trigger's own backup, never a
// reason to wait and trigger again. A backup is queued twice only when a
// POST that got no answer is processed more than UncertainGrace later.
func (w *Runner) trigger(ctx context.Context, accountID string, opts RunOptions) (*Triggered, error) {
	began := w.clock.Now()
	post := w.c.Trigger(accountID)
	uncertain := false
	for {
		acct, err := post.Post(ctx)
		var unsure *client.UnsureError
		switch {
		case err == nil && acct == nil:
			// Accepted, in an answer that could not be read.
			return w.identify(ctx, accountID, nil, opts, began, false)
		case err == nil && acct.ID != accountID:
			// Accepted, but the answer is for another account: keep
			// nothing of it, and identify the backup from accountID's own
			// listing, as after an unreadable answer.
			w.log.Warn(ctx, "the answer to a backup trigger names another account; it is ignored",
				map[string]any{"account_id": accountID, "answered_for": acct.ID})
			return w.identify(ctx, accountID, nil, opts, began, false)
		case err == nil:
			return w.identify(ctx, accountID, acct, opts, began, false)
		case ctx.Err() != nil:
			if !post.Sent() {
				return nil, ctx.Err()
			}
			// Interrupted (or out of time) while a POST may have been on
			// its way: look, once and briefly, for the backup it may have
			// queued, so that the caller records it rather than queueing
			// another next time.
			lctx, cancel := detached(ctx)
			defer cancel()
			found, lerr := w.findMine(lctx, accountID, opts, began)
			if lerr == nil && found != nil {
				return &Triggered{Backup: *found, Recovered: true}, nil
			}
			return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Err: ctx.Err()}
		case errors.Is(err, client.ErrConflict) && uncertain:
			return w.conflictAfterUncertain(ctx, accountID, opts, began, err)
		case errors.As(err, &unsure):
			uncertain = true
			w.log.Warn(ctx, "the outcome of a backup trigger is unknown; looking for the backup before sending it again",
				map[string]any{"account_id": accountID, "error": err.Error()})
			grace := time.Duration(0)
			if !unsure.Answered {
				// No answer: the request may still be on its way through
				// the service.
				grace = w.set.UncertainGrace
			}
			found, lerr := w.lookFor(ctx, accountID, opts, began, grace)
			if found != nil {
				return &Triggered{Backup: *found, Recovered: true}, nil
			}
			if lerr != nil && !errors.Is(lerr, ErrNotListed) {
				// Nothing can be seen: sending again could queue a second
				// backup.
				return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Err: errors.Join(err, lerr)}
			}
			if cerr := w.rule(accountID, opts, began).clocksApart(); cerr != nil {
				// The backup may be listed and not recognised by its time:
				// sending again could queue a second one.
				return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Err: errors.Join(err, cerr)}
			}
			if werr := post.Wait(ctx, err); werr != nil {
				return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Err: werr}
			}
		default:
			return nil, err
		}
	}
}

// conflictAfterUncertain reads a 409 that follows a POST whose outcome was
// unknown. The backup in progress is this trigger's own when it was
// created since the trigger began: it is then returned, and never waited
// for as another's (that would queue a second backup). When the backup in
// progress is older, it was already running when the first POST arrived,
// so that POST queued nothing: the 409 stands. One started since, and
// refused all the same (Rule.mayBeOwn), stops the trigger.
func (w *Runner) conflictAfterUncertain(ctx context.Context, accountID string, opts RunOptions, began time.Time, conflict error) (*Triggered, error) {
	var newest *client.Backup
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Queued: true, Err: errors.Join(conflict, err)}
		}
		newest = &b
	}
	if newest != nil && client.InProgress(newest.Status) {
		rule := w.identifying(accountID, opts, began)
		if err := rule.Check(*newest, Identified); err != nil {
			if !rule.mayBeOwn(*newest) {
				return nil, conflict
			}
			// Started since the trigger, so maybe its own, and refused: never
			// waited out as another's and queued again.
			return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Queued: true, Err: errors.Join(conflict, err)}
		}
	}
	// Ours, or not listed yet (a lagging listing): look for it.
	return w.identify(ctx, accountID, nil, opts, began, true)
}

// identify finds the record of a backup the service has accepted (so an
// unidentified one is Queued), looking for IdentifyWithin. When the
// caller's context ends first, it looks once more, detached and briefly:
// the backup is queued, and the next run must know it rather than queue
// another.
func (w *Runner) identify(ctx context.Context, accountID string, acct *client.Account, opts RunOptions, began time.Time, recovered bool) (*Triggered, error) {
	found, err := w.lookFor(ctx, accountID, opts, began, w.set.IdentifyWithin)
	if found == nil && ctx.Err() != nil {
		dctx, cancel := detached(ctx)
		defer cancel()
		found, err = w.findMine(dctx, accountID, opts, began)
		if found == nil && err == nil {
			err = ErrNotListed
		}
	}
	if found == nil {
		return nil, &unidentifiedError{AccountID: accountID, TriggeredAt: began, Queued: true, Err: err}
	}
	return &Triggered{Account: acct, Backup: *found, Recovered: recovered}, nil
}

// identifyInterval is the first pause between looks for a trigger's
// backup; it doubles up to identifyMaxInterval.
const (
	identifyInterval    = time.Second
	identifyMaxInterval = 8 * time.Second
)

// lookFor looks for the trigger's backup at once and then, while none is
// listed, again until within has passed on the client's clock. It returns
// the backup, or nil and the last error (ErrNotListed when the listing
// answered but held none).
func (w *Runner) lookFor(ctx context.Context, accountID string, opts RunOptions, began time.Time, within time.Duration) (*client.Backup, error) {
	deadline := w.clock.Now().Add(within)
	interval := identifyInterval
	for {
		found, err := w.findMine(ctx, accountID, opts, began)
		if found != nil {
			return found, nil
		}
		if err == nil {
			err = ErrNotListed
		}
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
		interval = min(2*interval, identifyMaxInterval)
	}
}

// FindTriggered looks once for the backup of a trigger that began at
// began, for a caller that recorded the trigger without its backup id;
// after is the Rule's After of its change. It returns nil, nil when none is
// listed yet.
func (w *Runner) FindTriggered(ctx context.Context, accountID string, began, after time.Time) (*client.Backup, error) {
	return w.findMine(ctx, accountID, RunOptions{After: after}, began)
}

// findMine returns the newest of the account's backups when it is the
// trigger's (identifying), or nil; or why it does not count when it
// started since the trigger all the same. The service creates a trigger's backup
// as the newest at once (a listing that lags shows an older one first:
// then this trigger's is not listed yet), and a backup queued by another
// client after this one ended was queued after this trigger began too.
func (w *Runner) findMine(ctx context.Context, accountID string, opts RunOptions, began time.Time) (*client.Backup, error) {
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, err
		}
		rule := w.identifying(accountID, opts, began)
		err := rule.Check(b, Identified)
		switch {
		case err == nil:
			return &b, nil
		case rule.mayBeOwn(b):
			// Refused, and maybe its own all the same: sending again could
			// queue a second backup.
			return nil, err
		}
	}
	return nil, nil
}
