package client

import (
	"context"
	"time"
)

// Now is the time on the client's clock (the one its waits use), for
// callers that compare the service's timestamps with the present.
func (c *Client) Now() time.Time { return c.clock.Now() }

// LatestSuccess returns the account's newest successful backup, or nil
// when it has none. It reads the backups newest first and stops at the
// first success: one request when it is among the newest 50, and further
// pages only for an account whose recent backups all failed or are in
// progress.
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
