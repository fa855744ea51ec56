// Package clock is the project's time, in one place: the interface the
// client, the workflow and the mock service read it through, the wall
// clock (Wall), the one fake the tests run on (Virtual, which moves in one
// of three ways), and deadlines on either (WithTimeout).
package clock

import (
	"context"
	"time"
)

// Clock is a source of time that can also wait.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// TimerClock is a Clock that can also call a function once its time has
// moved on by d: a fake's timers, on which a context's timeout can then be
// bounded (see WithTimeout).
type TimerClock interface {
	Clock
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// Wall is the real time.
type Wall struct{}

// Now returns the current time.
func (Wall) Now() time.Time { return time.Now() }

// After waits for d of real time.
func (Wall) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Sleep waits for d on clk, or returns the context's error as soon as ctx
// is done.
func Sleep(ctx context.Context, clk Clock, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-clk.After(d):
		return nil
	}
}
