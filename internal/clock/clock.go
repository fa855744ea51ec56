// Package clock is the project's time: the wall clock (Wall), and deadlines on it or the tests' fake (clocktest.Virtual).
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is a source of time that can also wait.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Wall is the real time.
type Wall struct{}

func (Wall) Now() time.Time                         { return time.Now() }
func (Wall) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits for d on clk, or returns ctx's error as soon as it is done.
func Sleep(ctx context.Context, clk Clock, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}

// WithTimeout is context.WithTimeout on clk: on a clock with timers (clocktest.Virtual), it ends once that clock moved on by d.
func WithTimeout(ctx context.Context, clk Clock, d time.Duration) (context.Context, context.CancelFunc) {
	tc, ok := clk.(interface {
		AfterFunc(d time.Duration, f func()) (stop func() bool)
	})
	if !ok {
		return context.WithTimeout(ctx, d)
	}
	dc := &clockDeadline{Context: ctx, done: make(chan struct{})}
	stopTimer := tc.AfterFunc(d, func() { dc.end(context.DeadlineExceeded) })
	stopWatch := context.AfterFunc(ctx, func() { dc.end(ctx.Err()) })
	at := clk.Now().Add(d)
	if outer, ok := Deadline(ctx); ok && outer.Before(at) {
		at = outer // an inner timeout never extends an outer one
	}
	return context.WithValue(dc, clockDeadlineKey{}, at), func() {
		stopTimer()
		stopWatch()
		dc.end(context.Canceled)
	}
}

// clockDeadlineKey holds such a context's deadline in that clock's time.
type clockDeadlineKey struct{}

// Deadline is when ctx ends, in its clock's time.
func Deadline(ctx context.Context) (time.Time, bool) {
	if at, ok := ctx.Value(clockDeadlineKey{}).(time.Time); ok {
		return at, true
	}
	return ctx.Deadline()
}

// clockDeadline ends on its clock's time or with its parent. It reports no Deadline, which net/http would read as the wall clock's.
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
