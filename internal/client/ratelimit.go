package client

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// parseRateLimit reads the rate-limit headers; nil when none is present.
func parseRateLimit(h http.Header, now time.Time) *RateLimit {
	rl := &RateLimit{}
	present := false
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Limit"))); err == nil && n > 0 {
		rl.Limit, rl.HasLimit, present = n, true, true
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h.Get("X-RateLimit-Remaining"))); err == nil && n >= 0 {
		rl.Remaining, present = n, true
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && n > 0 {
		rl.Reset, present = time.Unix(n, 0), true
	}
	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		rl.RetryAfter, present = d, true
	}
	if !present {
		return nil
	}
	return rl
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		n = min(n, int64(24*time.Hour/time.Second)) // avoid overflow; capped later anyway
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// limiter paces one client's requests to the key's per-second allowance,
// its share of it when other processes use the key (BENCHMARKS.md, 7 and 8).
type limiter struct {
	clock clock.Clock

	mu          sync.Mutex
	known       bool          // an allowance has been learnt
	probing     bool          // while !known: a request is in flight
	interval    time.Duration // spacing between request starts
	next        time.Time     // earliest start of the next request
	pausedUntil time.Time     // nobody starts before this
	windowEnd   time.Time     // end of the service's current window, as last told
	budget      int           // requests left before windowEnd
	changed     chan struct{} // closed (and replaced) when the schedule changes

	inflight   int     // requests started and not yet done
	mine       int     // responses of this window (same reset) to this client
	othersSeen bool    // other clients counted in this window
	share      float64 // part of the allowance this client takes: 1 alone

	fillAt     time.Duration  // how far into a window requests still start
	draw       func() float64 // uniform in [0, 1)
	entryFor   time.Time      // the window start entryAfter was drawn for
	entryAfter time.Duration  // when held requests start after it

	warnedReset bool // an implausible reset was reported
	headerless  int  // answers without an allowance, while !known
}

func newLimiter(clk clock.Clock) *limiter {
	return &limiter{clock: clk, changed: make(chan struct{}), share: 1, fillAt: time.Second, draw: rand.Float64}
}

// spacing is the interval between request starts for this client's share.
func (l *limiter) spacing() time.Duration {
	return time.Duration(float64(l.interval) / l.share)
}

// allowanceUse is the part of the allowance the limiter paces to: the rest
// absorbs network delay at a window's edge (BENCHMARKS.md, section 8).
const allowanceUse = 0.92

// intervalFor is the spacing of request starts for an allowance of limit
// requests per second.
func intervalFor(limit int) time.Duration {
	return time.Duration(float64(time.Second) / (allowanceUse * float64(max(limit, 1))))
}

// maxHeaderlessProbes: answers without rate-limit headers after which the
// limiter stops probing one request at a time (a proxy may strip them).
const maxHeaderlessProbes = 3

// wait blocks until the caller may send a request, or ctx is done. Each
// successful wait is followed by one call to done.
func (l *limiter) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := l.clock.Now()
		start := now
		if l.next.After(start) {
			start = l.next
		}
		if l.pausedUntil.After(start) {
			start = l.pausedUntil
		}
		if l.budget <= 0 && start.Before(l.windowEnd) {
			start = l.entry(l.windowEnd)
		}
		// (With fillAt at a whole second, no start is past it.)
		if end, ok := l.endOfWindow(start); ok && start.After(end.Add(-time.Second+l.fillAt)) {
			start = l.entry(end)
		}
		ch := l.changed
		var delay time.Duration
		probe := false // wait for the probe's answer, on no timer
		switch {
		case !l.known && l.probing:
			probe = true
		case !start.After(now):
			if !l.known {
				l.probing = true
			}
			// Space from the slot this request was due, not from now; after
			// idleness, start afresh.
			iv := l.spacing()
			if now.Sub(l.next) > iv {
				l.next = now
			}
			l.next = l.next.Add(iv)
			if now.Before(l.windowEnd) {
				l.budget--
			}
			l.inflight++
			l.mu.Unlock()
			return nil
		default:
			delay = start.Sub(now)
		}
		l.mu.Unlock()

		var timer <-chan time.Time
		if !probe {
			timer = l.clock.After(delay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-timer:
		}
	}
}

// entry is when a request held to the window that starts at start may go:
// drawn once per window, so that clients held alike do not meet at the reset.
func (l *limiter) entry(start time.Time) time.Time {
	if l.share >= 1 && l.fillAt >= time.Second {
		return start
	}
	if !l.entryFor.Equal(start) {
		l.entryFor, l.entryAfter = start, time.Duration(l.draw()*float64(min(l.fillAt, time.Second))/4)
	}
	return start.Add(l.entryAfter)
}

// endOfWindow is the end of the service window that t falls in, if known.
func (l *limiter) endOfWindow(t time.Time) (time.Time, bool) {
	if l.windowEnd.IsZero() {
		return time.Time{}, false
	}
	d := t.Sub(l.windowEnd)
	switch {
	case d < -time.Second:
		return time.Time{}, false // before the window told: unknown
	case d == -time.Second:
		// Its very start is held as the previous window's end, so that a
		// start there waits for this process's own entry, not the reset
		// (fewer refusals in BENCHMARKS.md, section 7).
		return t, true
	case d < 0:
		return l.windowEnd, true // in it
	}
	return l.windowEnd.Add(time.Duration(int64(d/time.Second)+1) * time.Second), true
}

// How the share and fillAt move; tuned with TestSharedKeySimulation
// (BENCHMARKS.md, section 7).
const (
	minShare     = 0.02                   // the least part of the allowance a client keeps
	refusedShare = 0.6                    // the part of its share a refusal leaves
	minFillAt    = 100 * time.Millisecond // the earliest point of a window a refusal moves fillAt to
	fillAtStep   = 20 * time.Millisecond  // fillAt's margin before a refusal, and its step on room
)

// cutDeep tells a share cut so far that it can no longer answer twice in a
// window: one answer must then do for a window alone.
func (l *limiter) cutDeep() bool {
	return l.share <= deepShare || l.spacing() >= deepSpacing
}

const (
	deepShare   = 0.1             // at most a tenth of the allowance
	deepSpacing = 2 * time.Second // or a request every two windows
)

// maxResetAhead is the furthest ahead a window's reset is believed; one
// further away is read as the end of a one-second window.
const maxResetAhead = 2 * time.Second

// done reports the outcome of a request allowed by wait (nil and 0 when
// no response came), and the first implausible reset, to report once.
func (l *limiter) done(h http.Header, status int) (implausibleReset time.Time) {
	now := l.clock.Now()
	rl := parseRateLimit(h, now) // nil without a response
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	l.inflight = max(l.inflight-1, 0)
	// placed: the window is where the service said, not moved from an
	// implausible reset, so its count and refusals mean something.
	placed := rl != nil && !rl.Reset.IsZero() && !rl.Reset.After(now.Add(maxResetAhead))
	if rl != nil && !rl.Reset.IsZero() && !placed {
		if !l.warnedReset {
			l.warnedReset = true
			implausibleReset = rl.Reset
		}
		if l.windowEnd.After(now) && !l.windowEnd.After(now.Add(maxResetAhead)) {
			rl.Reset = l.windowEnd
		} else {
			rl.Reset = now.Add(time.Second)
		}
	}
	if !l.known && h != nil && (rl == nil || !rl.HasLimit) {
		l.headerless++
		if l.headerless >= maxHeaderlessProbes {
			l.known, l.interval = true, 0
		}
	}
	if rl != nil && rl.HasLimit {
		iv := intervalFor(rl.Limit)
		if !l.known || iv != l.interval {
			l.known = true
			if l.next.After(l.clock.Now().Add(iv)) {
				l.next = l.clock.Now().Add(iv)
			}
			l.interval = iv
		}
		if placed && !rl.Reset.After(now.Add(time.Second)) && rl.Reset.After(now) {
			at := now.Sub(rl.Reset.Add(-time.Second)) // how far into its window it was answered
			switch {
			case status == http.StatusTooManyRequests:
				l.fillAt = max(minFillAt, min(l.fillAt, at)-fillAtStep)
				l.share = max(minShare, l.share*refusedShare)
			case rl.Remaining > 0 && at+2*fillAtStep >= l.fillAt:
				l.fillAt = min(time.Second, l.fillAt+fillAtStep)
			}
		}
		if rl.Reset.After(l.windowEnd) { // a new window
			if !l.othersSeen && (l.mine > 1 || l.mine == 1 && l.cutDeep()) { // the last one alone
				l.share = min(1, l.share*2)
				l.fillAt = min(time.Second, 2*l.fillAt)
			}
			l.windowEnd, l.budget, l.mine, l.othersSeen = rl.Reset, rl.Remaining, 0, false
		}
		if !rl.Reset.IsZero() && rl.Reset.Equal(l.windowEnd) {
			l.mine++
			l.budget = min(l.budget, rl.Remaining)
			if placed {
				l.shareWindow(rl)
			}
		}
	}
	l.broadcast()
	return implausibleReset
}

// shareWindow takes the window's count beyond this client's own requests
// as other clients', and cuts share and budget to this client's part.
func (l *limiter) shareWindow(rl *RateLimit) {
	counted := rl.Limit - rl.Remaining
	own := l.mine + l.inflight
	others := counted - own
	if others <= 0 {
		return
	}
	l.othersSeen = true
	part := float64(own) / float64(own+others)
	// Pacing follows a smoothed share; the budget follows this window's part.
	l.share = max(minShare, (l.share+part)/2)
	l.budget = min(l.budget, int(float64(rl.Remaining)*min(l.share, part)))
}

// pause stops every caller from starting a request for d.
func (l *limiter) pause(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := l.clock.Now().Add(d); until.After(l.pausedUntil) {
		l.pausedUntil = until
	}
	l.broadcast()
}

func (l *limiter) broadcast() {
	close(l.changed)
	l.changed = make(chan struct{})
}
