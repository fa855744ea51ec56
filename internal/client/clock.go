package client

import (
	"context"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// sleep waits for d on clk, or returns the context's error as soon as ctx
// is done.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}
