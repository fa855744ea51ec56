package client

import (
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/fleet"
)

// LatestSuccessesInFlight bounds the accounts LatestSuccesses reads at
// once: enough that latency does not slow the limiter's pace.
const LatestSuccessesInFlight = 16

// SuccessOutcome is one account's outcome of LatestSuccesses.
type SuccessOutcome struct {
	Latest *Backup // nil: no successful backup (or Err)
	Err    error
}

// LatestSuccess returns the account's newest successful backup, or nil.
func (c *Client) LatestSuccess(ctx context.Context, accountID string) (*Backup, error) {
	for b, err := range c.Backups(ctx, accountID, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		if b.Status == StatusSuccess {
			return &b, nil
		}
	}
	return nil, nil
}

// SuccessTime is when a successful backup ended: completed_at, or
// created_at when the service left completed_at out.
func SuccessTime(b *Backup) time.Time {
	if b.CompletedAt != nil {
		return *b.CompletedAt
	}
	return b.CreatedAt
}

// LatestSuccesses runs LatestSuccess for every account, several at once,
// in the order of accountIDs. done, when set, is called (never at once) as
// each read ends; accounts not read because ctx ended carry its error.
func (c *Client) LatestSuccesses(ctx context.Context, accountIDs []string, done func(finished int)) []SuccessOutcome {
	outcomes := make([]SuccessOutcome, len(accountIDs))
	read := make([]bool, len(accountIDs))
	fleet.Each(ctx, len(accountIDs), LatestSuccessesInFlight, func(ctx context.Context, i int) {
		b, err := c.LatestSuccess(ctx, accountIDs[i])
		outcomes[i], read[i] = SuccessOutcome{Latest: b, Err: err}, true
	}, func(_, finished int) {
		if done != nil {
			done(finished)
		}
	})
	for i := range outcomes {
		if !read[i] {
			outcomes[i].Err = context.Cause(ctx)
		}
	}
	return outcomes
}
