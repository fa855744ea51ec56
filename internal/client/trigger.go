package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Triggered is the outcome of TriggerBackup.
type Triggered struct {
	// Account as the trigger returned it; nil when the response could not be
	// read (the backup was queued all the same).
	Account *Account
	// Backup is the record of the queued backup.
	Backup Backup
	// Recovered is set when the trigger's outcome was unknown (a server
	// error, a timeout, a connection lost after sending) and the backup it
	// queued was found in the account's backups instead of being queued again.
	Recovered bool
}

// TriggerError wraps the failure of a trigger whose outcome stayed unknown.
type TriggerError struct {
	AccountID string
	Err       error
}

func (e *TriggerError) Error() string {
	return fmt.Sprintf("triggering a backup of %s: the outcome is unknown and no backup of this trigger could be found: %v", e.AccountID, e.Err)
}

func (e *TriggerError) Unwrap() error { return e.Err }

// TriggerBackup queues one backup of the account and returns its record.
//
// The POST is not idempotent, so it is never blindly retried. When its
// outcome is unknown, the account's backups are looked at first: a backup
// created since the first attempt is the one this call queued, and is
// returned. Only when there is none is the POST sent again; a 409 after an
// unknown outcome is recognised the same way. So one call never queues two
// backups.
func (c *Client) TriggerBackup(ctx context.Context, accountID string) (*Triggered, error) {
	cl := call{method: "POST", path: accountPath(accountID) + "/backup"}
	// Backups are stamped by the service's clock, to the second.
	since := c.clock.Now().Add(-c.opts.TriggerClockSkew).Truncate(time.Second)
	uncertain := false
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		var acct Account
		err := c.do(ctx, cl, &acct)
		var decErr *DecodeError
		switch {
		case err == nil:
			return c.identify(ctx, accountID, &acct)
		case errors.As(err, &decErr):
			// A 2xx whose body was unreadable: the backup was queued.
			return c.identify(ctx, accountID, nil)
		case ctx.Err() != nil:
			// Interrupted (or out of time) while the POST may have been on
			// its way: look, once and briefly, for the backup it may have
			// queued, so that the caller records it rather than queueing
			// another next time.
			lctx, cancel := detached(ctx)
			found, lerr := c.backupSince(lctx, accountID, since)
			cancel()
			if lerr == nil && found != nil {
				return &Triggered{Backup: *found, Recovered: true}, nil
			}
			return nil, ctx.Err()
		case errors.Is(err, ErrConflict) && uncertain:
			found, lerr := c.backupSince(ctx, accountID, since)
			if lerr != nil {
				return nil, &TriggerError{AccountID: accountID, Err: errors.Join(err, lerr)}
			}
			if found != nil {
				return &Triggered{Backup: *found, Recovered: true}, nil
			}
			return nil, err // a backup queued by someone else is running
		case outcomeUnknown(err):
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			uncertain = true
			c.log.Warn(ctx, "the outcome of a backup trigger is unknown; looking for the backup before sending it again",
				map[string]any{"account_id": accountID, "error": err.Error()})
			found, lerr := c.backupSince(ctx, accountID, since)
			if lerr != nil {
				return nil, &TriggerError{AccountID: accountID, Err: errors.Join(err, lerr)}
			}
			if found != nil {
				return &Triggered{Backup: *found, Recovered: true}, nil
			}
			if werr := c.waitToRetry(ctx, cl, attempt, c.backoff(attempt), &waited, err); werr != nil {
				return nil, werr
			}
		default:
			return nil, err
		}
	}
}

// outcomeUnknown reports whether a failed POST may have been processed.
func outcomeUnknown(err error) bool {
	var tErr *TransportError
	if errors.As(err, &tErr) {
		return tErr.Sent
	}
	return errors.Is(err, ErrServer)
}

// identify finds the record of a backup the service has just accepted: the
// newest of the account's backups, since the service creates it with the
// trigger and refuses another while it is in progress.
func (c *Client) identify(ctx context.Context, accountID string, acct *Account) (*Triggered, error) {
	t, err := c.newestBackup(ctx, accountID, acct)
	if err != nil && ctx.Err() != nil {
		// The backup is queued: learn its id even though the caller is
		// being interrupted, or the next run would not know it and queue
		// another.
		dctx, cancel := detached(ctx)
		defer cancel()
		return c.newestBackup(dctx, accountID, acct)
	}
	return t, err
}

func (c *Client) newestBackup(ctx context.Context, accountID string, acct *Account) (*Triggered, error) {
	for b, err := range c.Backups(ctx, accountID, ListOptions{Max: 1}) {
		if err != nil {
			return nil, fmt.Errorf("the backup of %s was queued, but its record could not be read: %w", accountID, err)
		}
		return &Triggered{Account: acct, Backup: b}, nil
	}
	return nil, fmt.Errorf("the backup of %s was queued, but the account's backups listing is empty", accountID)
}

// backupSince returns the earliest backup on the first page of the account's
// backups that was created at or after since, or nil.
func (c *Client) backupSince(ctx context.Context, accountID string, since time.Time) (*Backup, error) {
	var found *Backup
	for b, err := range c.Backups(ctx, accountID, ListOptions{Max: PageSize}) {
		if err != nil {
			return nil, err
		}
		if b.CreatedAt.Before(since) {
			break // newest first: the rest are older still
		}
		found = &b
	}
	return found, nil
}

// detachedTimeout bounds a request that must complete after its caller's
// context ends: recording what the service already did.
const detachedTimeout = 15 * time.Second

// detached keeps ctx's values but not its cancellation or deadline.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
}
