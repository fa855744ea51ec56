package clocktest

import (
	"sync"
	"testing"
	"time"
)

var start = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// A sleep of an hour passes without real time, and wakes at its own time.
func TestVirtualSleepTakesNoRealTime(t *testing.T) {
	c := NewVirtual(start)
	began := time.Now()
	got := <-c.After(time.Hour)
	if !got.Equal(start.Add(time.Hour)) || !c.Now().Equal(start.Add(time.Hour)) {
		t.Fatalf("woke at %s, clock %s; want %s", got, c.Now(), start.Add(time.Hour))
	}
	// A bound of minutes, not a timing: the point is that it is not an hour.
	if took := time.Since(began); took > time.Minute {
		t.Fatalf("an hour's sleep took %s of real time", took)
	}
}

// Twenty sleepers of two seconds at once move the clock on by two seconds,
// not forty; sleepers of different lengths wake in the order of their
// times, each at its own.
func TestVirtualConcurrentSleepersShareTime(t *testing.T) {
	c := NewVirtual(start)
	var wg sync.WaitGroup
	woke := make([]time.Time, 20)
	chans := make([]<-chan time.Time, 20)
	for i := range chans {
		chans[i] = c.After(2 * time.Second)
	}
	for i, ch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			woke[i] = <-ch
		}()
	}
	wg.Wait()
	for i, w := range woke {
		if !w.Equal(start.Add(2 * time.Second)) {
			t.Errorf("sleeper %d woke at %s", i, w)
		}
	}
	if now := c.Now(); !now.Equal(start.Add(2 * time.Second)) {
		t.Errorf("clock at %s after twenty 2 s sleeps at once, want %s", now, start.Add(2*time.Second))
	}

	long, short := c.After(time.Minute), c.After(time.Second)
	at := <-short
	select {
	case <-long:
		t.Fatal("the minute's sleeper woke with the second's")
	default:
	}
	if !at.Equal(start.Add(3 * time.Second)) {
		t.Errorf("short sleeper woke at %s", at)
	}
	if at := <-long; !at.Equal(start.Add(62 * time.Second)) {
		t.Errorf("long sleeper woke at %s", at)
	}
}

// A deadline set with AfterFunc fires at its own time when a longer sleep
// carries the clock past it; a stopped one never fires; and alone, with no
// one asleep, a deadline does not move the clock.
func TestVirtualAfterFuncOrderAndStop(t *testing.T) {
	c := NewVirtual(start)
	fired := make(chan time.Time, 1)
	c.AfterFunc(30*time.Minute, func() { fired <- c.Now() })
	stop := c.AfterFunc(time.Minute, func() { t.Error("a stopped timer fired") })
	if !stop() || stop() {
		t.Error("stop should report true once, then false")
	}
	if c.stepIfUnused(c.used()) {
		t.Error("no one sleeps: the driver must stop")
	}
	if now := c.Now(); !now.Equal(start) {
		t.Fatalf("a deadline alone moved the clock to %s", now)
	}
	woke := <-c.After(31 * time.Minute)
	if at := <-fired; !at.Equal(start.Add(30 * time.Minute)) {
		t.Errorf("deadline fired at %s, want its own time", at)
	}
	if !woke.Equal(start.Add(31 * time.Minute)) {
		t.Errorf("the sleeper woke at %s", woke)
	}
}

// While someone uses the clock, it stands still; once unused since, it
// moves to the next timer and no further. Stepped by hand (no driver), so
// that no timing decides the outcome.
func TestVirtualStepsOnlyWhenUnused(t *testing.T) {
	c := &Virtual{now: start, undriven: true}
	first, second := c.After(time.Second), c.After(time.Minute)
	seen := c.used()
	c.Now() // someone works
	c.stepIfUnused(seen)
	if now := c.Now(); !now.Equal(start) {
		t.Fatalf("the clock moved to %s while in use", now)
	}
	if !c.stepIfUnused(c.used()) {
		t.Fatal("timers are left; the driver must go on")
	}
	if at := <-first; !at.Equal(start.Add(time.Second)) {
		t.Errorf("first sleeper woke at %s", at)
	}
	select {
	case <-second:
		t.Fatal("one step woke the minute's sleeper too")
	default:
	}
	c.stepIfUnused(c.used())
	<-second
	if c.stepIfUnused(c.used()) {
		t.Error("no timer is left; the driver must stop")
	}
}

// A Hold keeps the clock still however long it is not read, and the
// step after its release waits for one more idle spell. Stepped by hand.
func TestVirtualStandsStillWhileHeld(t *testing.T) {
	c := &Virtual{now: start, undriven: true}
	sleep := c.After(time.Second)
	release := c.Hold()
	for range 3 {
		if !c.stepIfUnused(c.used()) {
			t.Fatal("a sleeper is left; the driver must go on")
		}
	}
	if now := c.peek(); !now.Equal(start) {
		t.Fatalf("the clock moved to %s while held", now)
	}
	seen := c.used()
	release()
	release() // a second release is a no-op
	c.stepIfUnused(seen)
	if now := c.peek(); !now.Equal(start) {
		t.Fatalf("the clock moved to %s in the release's own spell", now)
	}
	c.stepIfUnused(c.used())
	if at := <-sleep; !at.Equal(start.Add(time.Second)) {
		t.Errorf("the sleeper woke at %s", at)
	}
}

// Advance moves the clock at once, waking each sleeper it passes at the
// sleeper's own time; it never moves the clock back.
func TestVirtualAdvance(t *testing.T) {
	c := &Virtual{now: start, undriven: true}
	sleep := c.After(time.Second)
	if now := c.Advance(time.Hour); !now.Equal(start.Add(time.Hour)) {
		t.Errorf("Advance returned %s", now)
	}
	if at := <-sleep; !at.Equal(start.Add(time.Second)) {
		t.Errorf("the sleeper woke at %s, want its own time on the way", at)
	}
	if now := c.Now(); !now.Equal(start.Add(time.Hour)) {
		t.Errorf("clock at %s after the advance", now)
	}
	if c.Advance(-time.Hour).Before(start.Add(time.Hour)) {
		t.Error("a negative advance moved the clock back")
	}
}

// NewInstant's sleeps end at once, move the time on by their length (and
// fire the deadlines they pass), and are recorded in order.
func TestInstantSleepsEndAtOnce(t *testing.T) {
	c := NewInstant(start)
	fired := false
	c.AfterFunc(3*time.Second, func() { fired = true })
	for _, d := range []time.Duration{time.Second, 2 * time.Second} {
		select {
		case <-c.After(d):
		default:
			t.Fatalf("a sleep of %s did not end at once", d)
		}
	}
	if now := c.Now(); !now.Equal(start.Add(3*time.Second)) || !fired {
		t.Errorf("clock %s, deadline fired %t; want %s and fired", now, fired, start.Add(3*time.Second))
	}
	if w := c.Waits(); len(w) != 2 || w[0] != time.Second || w[1] != 2*time.Second {
		t.Errorf("waits %v", w)
	}
}

// NewStepped reads the wall clock plus its advances.
func TestSteppedFollowsTheWallClock(t *testing.T) {
	c := NewStepped()
	before := time.Now()
	c.Advance(time.Hour)
	got := c.Now()
	if got.Before(before.Add(time.Hour)) || got.After(time.Now().Add(time.Hour)) || !c.FollowsWall() {
		t.Errorf("stepped clock %s, want the wall clock plus an hour (%s)", got, before.Add(time.Hour))
	}
}
