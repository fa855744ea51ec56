package client

import (
	"context"
	"time"
)

// Clock is the client's source of time. Tests inject a fake so that backoff
// and rate-limit waits take no real time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// sleep waits for d on clock, or returns the context's error as soon as ctx
// is done.
func sleep(ctx context.Context, clock Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clock.After(d):
		return nil
	}
}
