package clock

import (
	"slices"
	"sync"
	"time"
)

// Virtual is the one fake time of the tests, for a mock and the
// provider's client at once. It moves in one of three ways, by its
// constructor:
//   - NewVirtual: it stands still while anyone works, and moves on only
//     for those who sleep (below); Advance moves it, so a test that never
//     sleeps on it steps it by hand;
//   - NewInstant: every sleep ends at once, moving the time on by its
//     length, and is recorded (Waits): a client's backoffs and pacing cost
//     nothing, and a test reads what they would have been;
//   - NewStepped: it follows the wall clock, and moves further when told
//     (Advance): a mock beside a provider on the wall clock, whose backups
//     last minutes, without falling behind the provider's clock.
//
// NewVirtual's time stands still while anyone works, and moves on only for
// those who sleep: once no one has used it for VirtualIdle of real time, it
// jumps to the end of the earliest sleep (After) and wakes that sleeper.
// Sleeps of minutes thus take no real time, sleepers wake in the order of
// their times, and twenty pollers sleeping two seconds at once move it on
// by two seconds, not forty. Timers set with AfterFunc (deadlines) never
// move it themselves: they fire when sleeps or Advance carry the time
// past them, so that a request in flight, with no one asleep, cannot time
// out. Tests move it between steps with Advance. It implements
// TimerClock, so that an operation's timeout passes on it too.
//
// Use is judged from the clock's own calls (every request to a mock on it
// reads it), so a goroutine the machine is slow to schedule may find the
// clock moved on by a sleeper's step: one step per VirtualIdle at most,
// as a slow network would delay it.
type Virtual struct {
	mu       sync.Mutex
	now      time.Time
	timers   []*virtualTimer
	activity uint64 // uses so far: the driver moves time only when it stays put
	driving  bool
	undriven bool // tests of the clock step it by hand

	instant bool            // NewInstant: sleeps end at once
	sleeps  []time.Duration // NewInstant: every sleep asked, in order
	wall    bool            // NewStepped: the wall clock plus offset
	offset  time.Duration
}

// VirtualIdle is how long a Virtual must go unused before it jumps to
// the end of its next sleep.
const VirtualIdle = 2 * time.Millisecond

type virtualTimer struct {
	at      time.Time
	f       func()
	sleep   bool // After's: the driver moves time to it
	stopped bool
}

// NewVirtual returns a Virtual reading t, moved on by its sleepers.
func NewVirtual(t time.Time) *Virtual { return &Virtual{now: t} }

// NewInstant returns a Virtual reading t on which every sleep ends at
// once. Tests of rate-limit windows, which are whole seconds, start it at
// a whole second, so that every run gets the same window.
func NewInstant(t time.Time) *Virtual { return &Virtual{now: t, instant: true} }

// NewStepped returns a Virtual that reads the wall clock plus every
// Advance so far. Its sleeps take real time.
func NewStepped() *Virtual { return &Virtual{wall: true} }

// Now returns the clock's time.
func (c *Virtual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.activity++
	return c.timeLocked()
}

func (c *Virtual) timeLocked() time.Time {
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.now
}

// After returns a channel that receives the clock's time once it has moved
// on by d: a sleep of d, which takes real time only while others work (at
// once on NewInstant's clock, in real time on NewStepped's).
func (c *Virtual) After(d time.Duration) <-chan time.Time {
	switch {
	case c.wall:
		return time.After(d)
	case c.instant:
		c.mu.Lock()
		c.sleeps = append(c.sleeps, d)
		c.mu.Unlock()
		ch := make(chan time.Time, 1)
		ch <- c.Advance(d)
		return ch
	}
	ch := make(chan time.Time, 1)
	c.add(d, true, func() { ch <- c.peek() })
	return ch
}

// FollowsWall says whether the clock is NewStepped's.
func (c *Virtual) FollowsWall() bool { return c.wall }

// Waits returns every sleep asked of a NewInstant clock so far, in order.
func (c *Virtual) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// AfterFunc runs f once the clock has moved on by d; stop cancels it and
// says whether it had not run.
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

func (c *Virtual) peek() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeLocked()
}

// drive moves the clock to the end of the next sleep each time it has gone
// unused for VirtualIdle, and ends when no one sleeps.
func (c *Virtual) drive() {
	for {
		seen := c.used()
		time.Sleep(VirtualIdle)
		if !c.stepIfUnused(seen) {
			return
		}
	}
}

// used is a count of the clock's uses (reads, timers, advances) so far.
func (c *Virtual) used() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.activity
}

// stepIfUnused moves the clock to the end of the next sleep, firing what
// it passes, unless the clock was used since the count seen; false when no
// one sleeps (and the driver stops).
func (c *Virtual) stepIfUnused(seen uint64) bool {
	c.mu.Lock()
	if c.activity != seen {
		c.mu.Unlock()
		return true
	}
	var next *virtualTimer
	for _, t := range c.timers {
		if t.sleep && !t.stopped && (next == nil || t.at.Before(next.at)) {
			next = t
		}
	}
	if next == nil {
		c.driving = false
		c.mu.Unlock()
		return false
	}
	c.mu.Unlock()
	c.advanceTo(next.at)
	return true
}

// Advance moves the clock on by d (at least 0), runs the functions of the
// timers it passes, and returns the new time.
func (c *Virtual) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	if c.wall {
		c.offset += max(d, 0)
		defer c.mu.Unlock()
		return c.timeLocked()
	}
	to := c.now.Add(max(d, 0))
	c.activity++
	c.mu.Unlock()
	return c.advanceTo(to)
}

// advanceTo moves the clock forward to t, stopping at each timer due on
// the way, earliest first, to fire it at its own time.
func (c *Virtual) advanceTo(to time.Time) time.Time {
	for {
		c.mu.Lock()
		var due *virtualTimer
		for _, t := range c.timers {
			if !t.stopped && !t.at.After(to) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
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
