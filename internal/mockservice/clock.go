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
