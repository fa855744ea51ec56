package mockservice

import (
	"sync"
	"time"
)

// Clock drives the backup state machine (Options.Clock) or the rate-limit
// windows (Options.RateClock).
type Clock interface{ Now() time.Time }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told, for tests that step a
// backup through its states.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{now: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// SteppedClock follows the wall clock, as a service whose clock agrees
// with its clients', and moves forward further when told: tests step a
// backup through states that last minutes without a service clock that
// falls behind the client's while Terraform runs (the client recognises a
// trigger's backup by its creation time).
type SteppedClock struct {
	mu     sync.Mutex
	offset time.Duration
}

// NewSteppedClock returns a SteppedClock reading the wall clock.
func NewSteppedClock() *SteppedClock { return &SteppedClock{} }

// Now returns the wall clock plus every advance so far.
func (c *SteppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *SteppedClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// VirtualClock is a test's time for a mock and the provider's client at
// once: it stands still until a client sleeps on it (After), then moves on
// by that sleep at once, so that waits of minutes take no real time and a
// backup's states follow the waits, not the machine's speed. Tests move it
// between steps with Advance. It implements client.TimerClock, so that an
// operation's timeout passes on it too. Concurrent sleepers each move it
// on: time runs faster than any one of them sleeps, never slower.
type VirtualClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*virtualTimer
}

type virtualTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

// NewVirtualClock returns a VirtualClock reading t.
func NewVirtualClock(t time.Time) *VirtualClock { return &VirtualClock{now: t} }

// Now returns the clock's time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After moves the clock on by d and returns a channel that holds the new
// time: a sleep of d, taking no real time.
func (c *VirtualClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.Advance(d)
	return ch
}

// Advance moves the clock on by d (at least 0), runs the functions of the
// timers it passed, and returns the new time.
func (c *VirtualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	now := c.now
	var due []func()
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(now):
			t.stopped = true
			due = append(due, t.f)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
	return now
}

// AfterFunc runs f once the clock has moved on by d; stop cancels it and
// says whether it had not run.
func (c *VirtualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	t := &virtualTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	if d <= 0 {
		c.Advance(0)
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}
