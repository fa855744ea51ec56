package client

import (
	"context"
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Clock is the client's source of time (internal/clock): the wall clock,
// or a test's fake, on which backoff and rate-limit waits take no real
// time.
type Clock = clock.Clock

// sleep waits for d on clock, or returns the context's error as soon as ctx
// is done.
func sleep(ctx context.Context, clk Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}

// WithTimeout is context.WithTimeout on the client's clock: with a
// clock.TimerClock (a test's virtual clock), the context ends (with context.DeadlineExceeded) when that
// clock has moved on by d.
func (c *Client) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return withTimeout(ctx, c.clock, d)
}

func withTimeout(ctx context.Context, clk Clock, d time.Duration) (context.Context, context.CancelFunc) {
	tc, ok := clk.(clock.TimerClock)
	if !ok {
		return context.WithTimeout(ctx, d)
	}
	dc := &clockDeadline{Context: ctx, done: make(chan struct{})}
	stopTimer := tc.AfterFunc(d, func() { dc.end(context.DeadlineExceeded) })
	stopWatch := context.AfterFunc(ctx, func() { dc.end(ctx.Err()) })
	at := clk.Now().Add(d)
	if outer, ok := deadlineOf(ctx); ok && outer.Before(at) {
		at = outer // an inner timeout never extends an outer one
	}
	return context.WithValue(dc, clockDeadlineKey{}, at), func() {
		stopTimer()
		stopWatch()
		dc.end(context.Canceled)
	}
}

// clockDeadlineKey holds, in a context from withTimeout on a TimerClock,
// its deadline in that clock's time (which Deadline cannot report).
type clockDeadlineKey struct{}

// deadlineOf is when ctx ends, in the client's clock's time: the deadline
// withTimeout set on a TimerClock, or else ctx's own (wall-clock) one.
func deadlineOf(ctx context.Context) (time.Time, bool) {
	if at, ok := ctx.Value(clockDeadlineKey{}).(time.Time); ok {
		return at, true
	}
	return ctx.Deadline()
}

// clockDeadline is a context that ends on a clock.TimerClock's time, or with
// its parent. It reports no Deadline: the clock's time is not the wall
// clock's, which net/http would read it as.
type clockDeadline struct {
	context.Context
	mu   sync.Mutex
	done chan struct{}
	err  error
}

func (c *clockDeadline) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

func (c *clockDeadline) Done() <-chan struct{} { return c.done }

func (c *clockDeadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *clockDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }
