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
// now is the client's clock, for a Retry-After given as an HTTP date.
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

// limiter paces every request of one client so that the key's per-second
// allowance is never exceeded, whatever the number of concurrent callers.
//
// Until a response has told the allowance (X-RateLimit-Limit), requests go
// one at a time (see maxHeaderlessProbes). Then request starts are spaced
// 1/(allowanceUse·limit) s apart (intervalFor): the service counts arrivals
// in fixed one-second windows, and the part of the allowance left unused
// absorbs a request sent just before a window ends that arrives just after.
// X-RateLimit-Remaining is a budget for the window that ends at
// X-RateLimit-Reset: requests this client starts spend it, later responses
// can only lower it, and when it is spent everyone waits for the reset.
// That covers requests of other clients of the same key (a previous
// Terraform command, say) counted in the same window. A 429 pauses everyone
// for the delay its caller will wait.
//
// Other clients of the key running at the same time (pipelines side by
// side, each its own process) show in the headers: the window's count
// (limit - remaining) grows faster than this client's own requests. The
// difference is theirs; this client then paces itself, and spends the
// window's budget, in proportion to its own part; each window with two or
// more of its own answers and none of theirs doubles its share again, up
// to the whole allowance. The count stops at the allowance, so a refusal
// is the one sign of more clients than it shows: each cuts the share.
//
// Refusals come late in a window, once the others have filled it. So a
// client keeps fillAt, how far into a window it still starts requests: a
// refusal moves it before the moment it came, room seen near it moves it
// later, a window alone restores it. And requests held to a window's end
// (its budget spent, or past fillAt) start at a moment drawn once per
// window within its first part, rather than all at the reset, where the
// clients held alike would meet.
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

// allowanceUse is the part of the allowance the limiter paces to. The
// service counts arrivals in fixed one-second windows; the part left
// unused is room for differences in network delay, so that a request sent
// just before a window ends and counted in the next one does not make that
// window overflow. It is the same part at every limit, and keeps at least
// 90% of the allowance in use (TestIntervalFor). What it uses, measured,
// and what the 1/(limit−1) spacing it replaced used: BENCHMARKS.md,
// section 8.
const allowanceUse = 0.92

// intervalFor is the spacing of request starts for an allowance of limit
// requests per second.
func intervalFor(limit int) time.Duration {
	return time.Duration(float64(time.Second) / (allowanceUse * float64(max(limit, 1))))
}

// maxHeaderlessProbes: answers without rate-limit headers after which the
// limiter stops probing one request at a time. A service with only an
// aggregate limit, or a proxy that strips the headers, never tells an
// allowance; probing forever would hold every request behind a slow one.
// 429s then pace the client (see Client.do).
const maxHeaderlessProbes = 3

// wait blocks until the caller may send a request, or ctx is done. Each
// successful wait must be followed by exactly one call to done.
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
			// Space from the slot this request was due, not from now: a
			// waiter that woke a little late does not slow everyone after
			// it. After idleness, start afresh.
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

// entry is when a request held to the window that starts at start may go.
// A client that has met no other keeps the reset: it has no one to meet.
func (l *limiter) entry(start time.Time) time.Time {
	if l.share >= 1 && l.fillAt >= time.Second {
		return start
	}
	if !l.entryFor.Equal(start) {
		l.entryFor, l.entryAfter = start, time.Duration(l.draw()*float64(min(l.fillAt, time.Second))/4)
	}
	return start.Add(l.entryAfter)
}

// endOfWindow is the end of the service window that t falls in, from the
// last one told, when one was.
func (l *limiter) endOfWindow(t time.Time) (time.Time, bool) {
	if l.windowEnd.IsZero() {
		return time.Time{}, false
	}
	d := t.Sub(l.windowEnd)
	switch {
	case d < -time.Second:
		return time.Time{}, false // before the window told: unknown
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

// cutDeep tells a client whose share refusals have cut so far that it
// can no longer answer twice in a window: one answer with no other
// client's counted must then do for a window alone, or it would keep that
// share once the others have gone. Above it, one answer is not enough: at
// 2/s shared by two, each process answers once a window, and the one
// answered first would take it as a window to itself.
func (l *limiter) cutDeep() bool {
	return l.share <= deepShare || l.spacing() >= deepSpacing
}

const (
	deepShare   = 0.1             // at most a tenth of the allowance
	deepSpacing = 2 * time.Second // or a request every two windows
)

// maxResetAhead is the furthest ahead a window's reset is believed. The
// API's window is one second; a reset further away (in milliseconds where
// seconds are meant, a year 3000, an hour) would stop every request until
// then, so it is read as the end of a one-second window instead.
const maxResetAhead = 2 * time.Second

// done reports the outcome of a request allowed by wait: the response's
// headers and status, or nil and 0 when no response came. It returns the
// reset the service announced when that reset was implausibly far away and
// this is the first such one the limiter has seen, so that the caller
// reports it once.
func (l *limiter) done(h http.Header, status int) (implausibleReset time.Time) {
	rl := (*RateLimit)(nil)
	now := l.clock.Now()
	if h != nil {
		rl = parseRateLimit(h, now)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	l.inflight = max(l.inflight-1, 0)
	// A window placed where the service said: its count and the moment of
	// a refusal in it mean something. One moved here from an implausible
	// reset (a clock far off, say) is only a budget.
	placed := rl != nil && !rl.Reset.IsZero() && !rl.Reset.After(now.Add(maxResetAhead))
	if rl != nil && !rl.Reset.IsZero() && !placed {
		if !l.warnedReset {
			l.warnedReset = true
			implausibleReset = rl.Reset
		}
		// The current window, when one is open; else a new one-second one.
		if l.windowEnd.After(now) && !l.windowEnd.After(now.Add(maxResetAhead)) {
			rl.Reset = l.windowEnd
		} else {
			rl.Reset = now.Add(time.Second)
		}
	}
	if !l.known && h != nil && (rl == nil || !rl.HasLimit) {
		l.headerless++
		if l.headerless >= maxHeaderlessProbes {
			// No allowance will be told: stop probing, pace nothing.
			l.known, l.interval = true, 0
		}
	}
	if rl != nil && rl.HasLimit {
		iv := intervalFor(rl.Limit)
		if !l.known || iv != l.interval {
			l.known = true
			// Re-space the schedule from the new interval.
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
				// The window's count stops at the allowance: a refusal is
				// the only sign of more processes than it shows.
				l.share = max(minShare, l.share*refusedShare)
			case rl.Remaining > 0 && at+2*fillAtStep >= l.fillAt:
				l.fillAt = min(time.Second, l.fillAt+fillAtStep)
			}
		}
		switch {
		case rl.Reset.IsZero():
		case rl.Reset.After(l.windowEnd):
			if !l.othersSeen && (l.mine > 1 || l.mine == 1 && l.cutDeep()) {
				// A window of this client alone: take the allowance back.
				l.share = min(1, l.share*2)
				l.fillAt = min(time.Second, 2*l.fillAt)
			}
			l.windowEnd, l.budget, l.mine, l.othersSeen = rl.Reset, rl.Remaining, 0, false
			l.mine++
			if placed {
				l.shareWindow(rl)
			}
		case rl.Reset.Equal(l.windowEnd):
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

// shareWindow compares the window's count with this client's own requests
// (those answered in it, and those in flight, which it may have counted):
// the rest are other clients'. Their presence sets this client's share to
// its own part of the count, and its budget to that part of what is left.
func (l *limiter) shareWindow(rl *RateLimit) {
	counted := rl.Limit - rl.Remaining
	own := l.mine + l.inflight
	others := counted - own
	if others <= 0 {
		return
	}
	l.othersSeen = true
	part := float64(own) / float64(own+others)
	// Pacing follows a smoothed share (one window's part is noisy); the
	// window's budget follows this window's part at once, since spending
	// more of it than that is what earns 429s.
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
