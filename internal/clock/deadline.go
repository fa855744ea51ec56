package clock

import (
	"context"
	"sync"
	"time"
)

// WithTimeout is context.WithTimeout on clk: on the wall clock it is
// context.WithTimeout itself; on a TimerClock (a test's Virtual clock) the
// context ends (with context.DeadlineExceeded) once that clock has moved
// on by d, so that timeouts of minutes pass in a test without real time.
func WithTimeout(ctx context.Context, clk Clock, d time.Duration) (context.Context, context.CancelFunc) {
	tc, ok := clk.(TimerClock)
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

// clockDeadlineKey holds, in a context from WithTimeout on a TimerClock,
// its deadline in that clock's time (which Deadline cannot report).
type clockDeadlineKey struct{}

// Deadline is when ctx ends, in its clock's time: the deadline
// WithTimeout set on a TimerClock, or else ctx's own (wall-clock) one.
func Deadline(ctx context.Context) (time.Time, bool) {
	if at, ok := ctx.Value(clockDeadlineKey{}).(time.Time); ok {
		return at, true
	}
	return ctx.Deadline()
}

// clockDeadline is a context that ends on a TimerClock's time, or with
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
