package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Bodies are read up to these sizes, far above any answer the contract
// describes, so that a faulty service cannot exhaust memory.
const (
	maxErrorBody   = 64 << 10
	maxSuccessBody = 8 << 20
)

var errBodyTooLarge = errors.New("the response body exceeded the size limit")

// call describes one logical API call.
type call struct {
	method     string
	path       string // below the base URL, already escaped, starting with /api/v1
	query      url.Values
	idempotent bool            // retried after server and transport errors too
	sendBy     time.Time       // zero: any time; else no attempt starts after it (ErrNotSentInTime)
	attempted  func(err error) // if set, told of each attempt's outcome
}

// ErrNotSentInTime: a request bounded by a time to start by (Trigger.SendBy) was not sent, since the rate limit's waits or
// its retries would start it later; any attempt before was refused unprocessed.
var ErrNotSentInTime = errors.New("the request was not sent: the rate limit's waits and retries would start it later than it was bounded to")

// late says whether an attempt of cl starting at t would start after its bound.
func (cl call) late(t time.Time) bool { return !cl.sendBy.IsZero() && t.After(cl.sendBy) }

// announceWaitsOver: longer waits are logged at WARN, so that "Still creating..." never hides why.
const announceWaitsOver = 5 * time.Second

// do performs cl with retries and decodes a 2xx body into out (when non-nil).
// max_retries does not count 429s: they are waited out to the deadline. Once
// ctx has ended, its error is the one returned, whatever attempt said.
func (c *Client) do(ctx context.Context, cl call, out record) error {
	var waited time.Duration
	failures := 0 // retries that max_retries bounds
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, cl, out)
		if cl.attempted != nil {
			cl.attempted(err)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		delay, retriable := c.retryDelay(cl, attempt, err)
		if !retriable {
			return err
		}
		limited := errors.Is(err, errRateLimited)
		if err := c.mayRetry(ctx, attempt, failures, limited, delay, waited, err); err != nil {
			return err // others are not paused for a wait not taken
		}
		if limited {
			c.limiter.pause(delay) // every caller backs off
		} else {
			failures++
		}
		if cl.late(c.opts.Clock.Now().Add(delay)) {
			if delay >= announceWaitsOver { // the caller's next request waits it out: say why nothing shows meanwhile
				c.opts.Logger.Warn(ctx, "not retrying a Backup Service request: the wait it was answered with would start it past its bound; "+
					"no request starts before that wait is over", map[string]any{
					"method": cl.method, "path": c.base.EscapedPath() + cl.path, "delay": delay.Round(time.Second).String(), "error": err.Error(),
				})
			}
			return fmt.Errorf("%w (after %d attempt(s), the last: %w)", ErrNotSentInTime, attempt+1, err)
		}
		if err := c.retryAfter(ctx, cl, attempt, delay, &waited, err); err != nil {
			return err
		}
	}
}

// mayRetry returns a *RetryError when waiting delay would outlive the
// deadline, or pass max_retries or the budget (a 429's, only without one).
func (c *Client) mayRetry(ctx context.Context, attempt, failures int, limited bool, delay, waited time.Duration, last error) error {
	fail := func(cause RetryCause, reason string) error {
		return &RetryError{Attempts: attempt + 1, Cause: cause, Reason: reason, Err: last}
	}
	deadline, hasDeadline := clock.Deadline(ctx)
	// A wait that ends at the deadline leaves no time for the attempt.
	if hasDeadline && !c.opts.Clock.Now().Add(delay).Before(deadline) {
		return fail(RetryPastDeadline, fmt.Sprintf("waiting %s would outlive the operation's deadline", delay.Round(time.Millisecond)))
	}
	if !limited && failures >= c.opts.MaxRetries {
		return fail(retriesExhausted, "retries exhausted")
	}
	if (!limited || !hasDeadline) && waited+delay > c.opts.RetryBudget {
		return fail(RetryBudgetSpent, fmt.Sprintf("waiting %s more would exceed the retry budget of %s",
			delay.Round(time.Millisecond), c.opts.RetryBudget))
	}
	return nil
}

// retryAfter logs and sleeps delay before retry attempt+1, adding it to waited.
func (c *Client) retryAfter(ctx context.Context, cl call, attempt int, delay time.Duration, waited *time.Duration, last error) error {
	if delay >= announceWaitsOver {
		c.opts.Logger.Warn(ctx, "waiting before retrying a Backup Service request", map[string]any{
			"method": cl.method, "path": c.base.EscapedPath() + cl.path, "delay": delay.Round(time.Second).String(), "error": last.Error(),
		})
	}
	c.opts.Logger.Debug(ctx, "retrying Backup Service request", map[string]any{
		"method": cl.method, "path": c.base.EscapedPath() + cl.path, "attempt": attempt + 1, "delay": delay.String(), "error": last.Error(),
	})
	*waited += delay
	return clock.Sleep(ctx, c.opts.Clock, delay)
}

// retryDelay says whether err may be retried, and after how long.
func (c *Client) retryDelay(cl call, attempt int, err error) (time.Duration, bool) {
	var apiErr *APIError
	var tErr *transportError
	switch {
	case errors.As(err, new(*ConnectionError)):
		return 0, false // no retry can fix it
	case errors.As(err, &apiErr):
		// A 429 was refused before processing: safe to retry even a POST.
		if apiErr.StatusCode != http.StatusTooManyRequests && (apiErr.StatusCode < 500 || !cl.idempotent) {
			return 0, false
		}
		if apiErr.RateLimit != nil && apiErr.RateLimit.RetryAfter > 0 {
			return min(apiErr.RateLimit.RetryAfter, c.opts.RetryAfterCap), true
		}
		return c.backoff(attempt), true
	case errors.As(err, &tErr):
		if cl.idempotent || !tErr.Sent {
			return c.backoff(attempt), true
		}
	}
	return 0, false
}

// backoff is BackoffBase * 2^attempt, capped, plus up to 20% of jitter.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BackoffBase
	for i := 0; i < attempt && d < c.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.opts.MaxBackoff)
	return d + time.Duration(c.opts.Jitter()*0.2*float64(d))
}

// attempt sends one request, after the rate limiter allows it.
func (c *Client) attempt(ctx context.Context, cl call, out record) error {
	if err := c.limiter.wait(ctx); err != nil {
		return err
	}
	header, status := http.Header(nil), 0
	defer func() {
		if reset := c.limiter.done(header, status); !reset.IsZero() {
			c.opts.Logger.Warn(ctx, "the Backup Service announced a rate-limit window ending implausibly far away; "+
				"treating it as the API's one-second window", map[string]any{"announced_reset": reset.UTC().Format(time.RFC3339)})
		}
	}()
	if cl.late(c.opts.Clock.Now()) { // the rate limit's wait ran past the bound
		return ErrNotSentInTime
	}

	actx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()

	sent := false
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent = true }}
	target := c.base.String() + cl.path
	shown := c.base.EscapedPath() + cl.path // as sent, base_url's prefix included
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), cl.method, target, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cl.method, shown, err)
	}
	req.Header.Set("X-API-Key", c.key.value)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Cache-Control", "no-cache") // a cache on the way revalidates: its stale empty listing would read as absence

	started := c.opts.Clock.Now()
	res, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return c.transportFailure(cl.method, shown, sent, actx, err)
	}
	defer func() { _ = res.Body.Close() }()
	header, status = res.Header, res.StatusCode
	received := c.opts.Clock.Now()

	limit := int64(maxSuccessBody)
	if res.StatusCode >= 300 {
		limit = maxErrorBody
	}
	// One byte more tells a body that exceeds the limit from one that fills it.
	body, readErr := io.ReadAll(io.LimitReader(res.Body, limit+1))
	tooLarge := int64(len(body)) > limit
	if tooLarge {
		body = body[:limit]
	}
	requestID := c.guard.requestID(res.Header.Get("X-Request-ID"))
	c.opts.Logger.Debug(ctx, "Backup Service response", map[string]any{
		"method": cl.method, "path": shown, "status": res.StatusCode,
		"request_id": requestID, "duration_ms": c.opts.Clock.Now().Sub(started).Milliseconds(),
	})

	if res.StatusCode >= 300 && res.StatusCode <= 399 {
		return &redirectError{Method: cl.method, Path: shown, StatusCode: res.StatusCode,
			Location: c.guard.text(safeLocation(res.Header.Get("Location"))), Origin: c.base.Scheme + "://" + c.base.Host, RequestID: requestID}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return parseProblem(c.guard, cl.method, shown, res.StatusCode, res.Header, body, c.opts.Clock.Now())
	}
	if tooLarge {
		return &decodeError{Method: cl.method, Path: shown, StatusCode: res.StatusCode, RequestID: requestID,
			Err: fmt.Errorf("%w (%d MiB)", errBodyTooLarge, limit>>20)}
	}
	if readErr != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) {
			readErr = &TimeoutError{After: c.opts.RequestTimeout}
		}
		return &transportError{Method: cl.method, Path: shown, Sent: true,
			Err: fmt.Errorf("reading the HTTP %d response (request id %s): %w", res.StatusCode, requestID, c.guard.wrap(readErr))}
	}
	if out != nil {
		if err := decodeStrict(body, out, c.guard); err != nil {
			return &decodeError{Method: cl.method, Path: shown, StatusCode: res.StatusCode, RequestID: requestID, Err: c.guard.wrap(err)}
		}
		if d, ok := out.(dated); ok {
			d.answeredAt(answerTime(res.Header, received))
		}
	}
	return nil
}

// refuseRedirects makes an http.Client hand every 3xx back to the caller.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// safeLocation returns a Location header fit to show ("" stays ""): credentials
// in it are replaced, and one that does not parse is described, not repeated.
func safeLocation(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable Location)"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = "***", ""
	}
	return u.Redacted()
}

// AnswerTime is when an answer of the service came: on this client's clock, and as its Date said.
type AnswerTime struct {
	Received time.Time // this client's clock
	// Service is the answer's Date, centred on its second (half a second added); zero when
	// the answer had none that parses, or one more than a year from Received.
	Service time.Time
	// Stored is how long a cache on the way had held the answer (its Age header, RFC 9111 section 5.1): zero when it
	// has none, maxStored when it does not parse.
	Stored time.Duration
}

// maxDateSkew: a Date further off the client's clock is no clock that runs off but a header that lies.
const maxDateSkew = 366 * 24 * time.Hour

// maxStored bounds a cache's Age as a Date is bounded: an unparsable one reads as stored this long.
const maxStored = maxDateSkew

// answerTime is the time of an answer received at received, from its Date and Age headers.
func answerTime(h http.Header, received time.Time) AnswerTime {
	at := AnswerTime{Received: received, Stored: stored(h)}
	t, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return at
	}
	// Sub saturates: a Date centuries off reads as beyond the bound, never wraps.
	if d := t.Sub(received); d <= maxDateSkew && d >= -maxDateSkew {
		at.Service = t.Add(500 * time.Millisecond)
	}
	return at
}

// stored is how long h's Age says a cache held its answer, bounded.
func stored(h http.Header) time.Duration {
	age, ok := h["Age"]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(strings.Join(age, ",")), 10, 64)
	if err != nil || n < 0 || n > int64(maxStored/time.Second) {
		return maxStored
	}
	return time.Duration(n) * time.Second
}

// dated is a record that keeps when its answer came: only an answer the client decoded
// as the service's own is dated, never an error page (a proxy's, whose Date may be stale).
type dated interface{ answeredAt(AnswerTime) }

// Pacing: the rate-limit headers, and the limiter every attempt waits on.

// parseRateLimit reads the rate-limit headers; nil when none is present.
func parseRateLimit(h http.Header, now time.Time) *rateLimit {
	rl := &rateLimit{}
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
func (l *limiter) spacing() time.Duration { return time.Duration(float64(l.interval) / l.share) }

// allowanceUse is the part of the allowance the limiter paces to: the rest
// absorbs network delay at a window's edge (BENCHMARKS.md, section 8).
const allowanceUse = 0.92

// intervalFor is the spacing of request starts for an allowance of limit requests per second.
func intervalFor(limit int) time.Duration {
	return time.Duration(float64(time.Second) / (allowanceUse * float64(max(limit, 1))))
}

// maxHeaderlessProbes: answers without rate-limit headers after which the
// limiter stops probing one request at a time (a proxy may strip them).
const maxHeaderlessProbes = 3

// wait blocks until a request may be sent, or ctx is done; a nil return is followed by one done.
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
			// Space from the slot this request was due, not from now; after idleness, start afresh.
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

// How the share and fillAt move; tuned with TestSharedKeySimulation (BENCHMARKS.md, section 7).
const (
	minShare     = 0.02                   // the least part of the allowance a client keeps
	refusedShare = 0.6                    // the part of its share a refusal leaves
	minFillAt    = 100 * time.Millisecond // the earliest point of a window a refusal moves fillAt to
	fillAtStep   = 20 * time.Millisecond  // fillAt's margin before a refusal, and its step on room
	deepShare    = 0.1                    // cutDeep: at most a tenth of the allowance
	deepSpacing  = 2 * time.Second        // or a request every two windows
)

// cutDeep: the share is cut so far that it cannot answer twice in a window; one must do for a window.
func (l *limiter) cutDeep() bool { return l.share <= deepShare || l.spacing() >= deepSpacing }

// maxResetAhead: a window's reset further ahead is read as the end of a one-second window.
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
			l.warnedReset, implausibleReset = true, rl.Reset
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
			l.known, l.interval = true, iv
			if l.next.After(l.clock.Now().Add(iv)) {
				l.next = l.clock.Now().Add(iv)
			}
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
				l.share, l.fillAt = min(1, l.share*2), min(time.Second, 2*l.fillAt)
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
func (l *limiter) shareWindow(rl *rateLimit) {
	own := l.mine + l.inflight
	others := rl.Limit - rl.Remaining - own // the window's count beyond own
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
