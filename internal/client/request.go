package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
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

// ErrBodyTooLarge: a response body exceeded the client's size limit.
var ErrBodyTooLarge = errors.New("the response body exceeded the size limit")

// call describes one logical API call.
type call struct {
	method     string
	path       string // below the base URL, already escaped, starting with /api/v1
	query      url.Values
	idempotent bool // retried after server and transport errors too
}

// announceWaitsOver: longer waits are logged at WARN, so that "Still
// creating..." never hides why.
const announceWaitsOver = 5 * time.Second

// do performs cl with retries and decodes a 2xx body into out (when non-nil).
// max_retries does not count 429s: they are waited out to the deadline. Once
// ctx has ended, its error is the one returned, whatever attempt said.
func (c *Client) do(ctx context.Context, cl call, out record) error {
	var waited time.Duration
	failures := 0 // retries that max_retries bounds
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, cl, out)
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
		limited := errors.Is(err, ErrRateLimited)
		if err := c.mayRetry(ctx, attempt, failures, limited, delay, waited, err); err != nil {
			return err // others are not paused for a wait not taken
		}
		if limited {
			c.limiter.pause(delay) // every caller backs off
		} else {
			failures++
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
		return fail(RetriesExhausted, "retries exhausted")
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
	var tErr *TransportError
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
	var header http.Header
	status := 0
	defer func() {
		if reset := c.limiter.done(header, status); !reset.IsZero() {
			c.opts.Logger.Warn(ctx, "the Backup Service announced a rate-limit window ending implausibly far away; "+
				"treating it as the API's one-second window", map[string]any{"announced_reset": reset.UTC().Format(time.RFC3339)})
		}
	}()

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

	started := c.opts.Clock.Now()
	res, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return c.transportError(cl.method, shown, sent, actx, err)
	}
	defer func() { _ = res.Body.Close() }()
	header, status = res.Header, res.StatusCode
	c.serviceClock.observe(res.Header.Get("Date"), c.opts.Clock.Now())

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
		return &RedirectError{Method: cl.method, Path: shown, StatusCode: res.StatusCode,
			Location: c.guard.text(safeLocation(res.Header.Get("Location"))), Origin: c.base.Scheme + "://" + c.base.Host, RequestID: requestID}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return parseProblem(c.guard, cl.method, shown, res.StatusCode, res.Header, body, c.opts.Clock.Now())
	}
	if tooLarge {
		return &DecodeError{Method: cl.method, Path: shown, StatusCode: res.StatusCode, RequestID: requestID,
			Err: fmt.Errorf("%w (%d MiB)", ErrBodyTooLarge, limit>>20)}
	}
	if readErr != nil {
		if errors.Is(actx.Err(), context.DeadlineExceeded) {
			readErr = &TimeoutError{After: c.opts.RequestTimeout}
		}
		return &TransportError{Method: cl.method, Path: shown, Sent: true,
			Err: fmt.Errorf("reading the HTTP %d response (request id %s): %w", res.StatusCode, requestID, c.guard.wrap(readErr))}
	}
	if out != nil {
		if err := decodeStrict(body, out, c.guard); err != nil {
			return &DecodeError{Method: cl.method, Path: shown, StatusCode: res.StatusCode, RequestID: requestID, Err: c.guard.wrap(err)}
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

// serviceClock is the service's clock as its answers' Date headers tell it.
type serviceClock struct {
	mu     sync.Mutex
	offset time.Duration
	known  bool
}

// observe notes the Date of an answer received at now; half a second
// centres Date's one-second resolution.
func (s *serviceClock) observe(date string, now time.Time) {
	t, err := http.ParseTime(date)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.offset, s.known = t.Add(500*time.Millisecond).Sub(now), true
	s.mu.Unlock()
}

// ClockOffset is how far the service's clock runs ahead of this client's,
// from the latest readable Date; false before any.
func (c *Client) ClockOffset() (time.Duration, bool) {
	c.serviceClock.mu.Lock()
	defer c.serviceClock.mu.Unlock()
	return c.serviceClock.offset, c.serviceClock.known
}
