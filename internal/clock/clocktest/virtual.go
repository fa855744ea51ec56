// Package clocktest is the tests' clock.Clock, which the provider never links.
package clocktest

import (
	"slices"
	"sync"
	"time"
)

// Virtual is the tests' fake time, for a mock and a client at once.
// NewVirtual's stands still while anyone works or holds it (Hold) and, once
// unused for VirtualIdle, jumps to the end of the earliest sleep (After); AfterFunc's
// timers (deadlines) never move it, so a request in flight cannot time out.
// NewInstant's ends every sleep at once and records it (Waits); NewStepped's
// follows the wall clock. Advance moves any of them on.
type Virtual struct {
	mu       sync.Mutex
	now      time.Time
	timers   []*virtualTimer
	activity uint64 // uses so far: time moves only when it stays put
	holds    int    // open Holds: time stands still
	driving  bool
	undriven bool // tests of the clock step it by hand

	instant bool            // NewInstant: sleeps end at once
	sleeps  []time.Duration // NewInstant: every sleep asked, in order
	wall    bool            // NewStepped: the wall clock plus offset
	offset  time.Duration
}

// VirtualIdle is how long a Virtual must go unused before it jumps.
const VirtualIdle = 2 * time.Millisecond

type virtualTimer struct {
	at      time.Time
	f       func()
	sleep   bool // After's: the driver moves time to it
	stopped bool
}

// NewVirtual returns a Virtual reading t, moved on by its sleepers.
func NewVirtual(t time.Time) *Virtual { return &Virtual{now: t} }

// NewInstant returns a Virtual reading t on which every sleep ends at once.
func NewInstant(t time.Time) *Virtual { return &Virtual{now: t, instant: true} }

// NewStepped returns a Virtual that reads the wall clock plus every Advance.
func NewStepped() *Virtual { return &Virtual{wall: true} }

func (c *Virtual) Now() time.Time {
	c.mu.Lock()
	c.activity++
	c.mu.Unlock()
	return c.peek()
}

// After returns a channel that receives the clock's time once it has moved on by d.
func (c *Virtual) After(d time.Duration) <-chan time.Time {
	if c.wall {
		return time.After(d)
	}
	ch := make(chan time.Time, 1)
	if c.instant {
		c.mu.Lock()
		c.sleeps = append(c.sleeps, d)
		c.mu.Unlock()
		ch <- c.Advance(d)
	} else {
		c.add(d, true, func() { ch <- c.peek() })
	}
	return ch
}

// Hold keeps the clock still until release, however long the holder goes
// without reading it: a request in flight is work, even while the machine
// is too loaded to run its goroutines within VirtualIdle.
func (c *Virtual) Hold() (release func()) {
	c.mu.Lock()
	c.holds++
	c.activity++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.holds--
			c.activity++
			c.mu.Unlock()
		})
	}
}

// FollowsWall says whether the clock is NewStepped's.
func (c *Virtual) FollowsWall() bool { return c.wall }

// Waits returns every sleep asked of a NewInstant clock, in order.
func (c *Virtual) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// AfterFunc runs f once the clock has moved on by d; stop says whether it had not run.
func (c *Virtual) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	if c.wall {
		return time.AfterFunc(d, f).Stop
	}
	t := c.add(d, false, f)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (c *Virtual) add(d time.Duration, sleep bool, f func()) *virtualTimer {
	c.mu.Lock()
	t := &virtualTimer{at: c.now.Add(d), f: f, sleep: sleep}
	c.timers = append(c.timers, t)
	c.activity++
	if sleep && !c.driving && !c.undriven {
		c.driving = true
		go c.drive()
	}
	c.mu.Unlock()
	if d <= 0 {
		c.Advance(0)
	}
	return t
}

// peek reads the clock without counting a use.
func (c *Virtual) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.now
}

// drive steps the clock each time it goes unused for VirtualIdle, until no one sleeps.
func (c *Virtual) drive() {
	for {
		seen := c.used()
		time.Sleep(VirtualIdle)
		if !c.stepIfUnused(seen) {
			return
		}
	}
}

// used counts the clock's uses (reads, timers, advances).
func (c *Virtual) used() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.activity
}

// stepIfUnused moves the clock to the next sleep's end unless it was used
// since seen; false when no one sleeps.
func (c *Virtual) stepIfUnused(seen uint64) bool {
	c.mu.Lock()
	if c.activity != seen || c.holds > 0 {
		c.mu.Unlock()
		return true
	}
	next := c.earliest(func(t *virtualTimer) bool { return t.sleep })
	if next == nil {
		c.driving = false
		c.mu.Unlock()
		return false
	}
	c.mu.Unlock()
	c.advanceTo(next.at)
	return true
}

// Advance moves the clock on by d (at least 0), firing the timers it passes.
func (c *Virtual) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	if c.wall {
		c.offset += max(d, 0)
		c.mu.Unlock()
		return c.peek()
	}
	to := c.now.Add(max(d, 0))
	c.activity++
	c.mu.Unlock()
	return c.advanceTo(to)
}

// advanceTo moves the clock to t, firing each timer due on the way at its own time.
func (c *Virtual) advanceTo(to time.Time) time.Time {
	for {
		c.mu.Lock()
		due := c.earliest(func(t *virtualTimer) bool { return !t.at.After(to) })
		if due == nil {
			if to.After(c.now) {
				c.now = to
			}
			c.timers = slices.DeleteFunc(c.timers, func(t *virtualTimer) bool { return t.stopped })
			now := c.now
			c.mu.Unlock()
			return now
		}
		due.stopped = true
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// earliest is the earliest timer not stopped that ok accepts, or nil.
func (c *Virtual) earliest(ok func(*virtualTimer) bool) (next *virtualTimer) {
	for _, t := range c.timers {
		if !t.stopped && ok(t) && (next == nil || t.at.Before(next.at)) {
			next = t
		}
	}
	return next
}
