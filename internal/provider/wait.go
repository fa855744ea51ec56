package provider

import (
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// pollSettings shape the wait for a backup: the first interval, growing by
// half each poll up to max. Tests shorten them.
type pollSettings struct {
	initial time.Duration
	max     time.Duration
}

var defaultPoll = pollSettings{initial: 2 * time.Second, max: 30 * time.Second}

func (p pollSettings) next(d time.Duration) time.Duration {
	return min(d+d/2, p.max)
}

// waitForBackup polls a backup until it is no longer in progress and
// returns it. known is the backup as just read: the first poll comes one
// interval after it, not at once. On error (the context's deadline
// included) it returns the last state it saw. progress is told of each
// state still in progress.
func waitForBackup(ctx context.Context, c *client.Client, poll pollSettings, known *client.Backup,
	progress func(b *client.Backup),
) (*client.Backup, error) {
	interval := poll.initial
	last := known
	for {
		if !client.InProgress(last.Status) {
			return last, nil
		}
		progress(last)
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return last, ctx.Err()
		case <-timer.C:
		}
		interval = poll.next(interval)
		b, err := c.FindBackup(ctx, last.AccountID, last.ID)
		if err != nil {
			if ctx.Err() != nil {
				return last, ctx.Err()
			}
			return last, err
		}
		last = b
	}
}
