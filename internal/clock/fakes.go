package clock

import (
	"sync"
	"time"
)

// Manual moves only when told, for tests that step a mock's backup through
// its states. It only tells the time (nothing waits on it).
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a Manual reading t.
func NewManual(t time.Time) *Manual { return &Manual{now: t} }

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Stepped follows the wall clock, as a service whose clock agrees with its
// clients', and moves forward further when told: tests step a backup
// through states that last minutes without a service clock that falls
// behind the client's while Terraform runs (the client recognises a
// trigger's backup by its creation time). It only tells the time.
type Stepped struct {
	mu     sync.Mutex
	offset time.Duration
}

// NewStepped returns a Stepped reading the wall clock.
func NewStepped() *Stepped { return &Stepped{} }

// Now returns the wall clock plus every advance so far.
func (c *Stepped) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d.
func (c *Stepped) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Instant answers every wait at once and moves its time forward by the
// wait, recording each: a client's backoffs and pacing cost nothing, and a
// test reads what they would have been (Waits).
type Instant struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// NewInstant returns an Instant reading t. Tests of rate-limit windows,
// which are whole seconds, start it at a whole second, so that every run
// gets the same window.
func NewInstant(t time.Time) *Instant { return &Instant{now: t} }

// Now returns the clock's time.
func (c *Instant) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After moves the clock on by d, records the wait, and answers at once.
func (c *Instant) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// Waits returns every wait asked of the clock so far, in order.
func (c *Instant) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
