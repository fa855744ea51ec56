// Package client is a small client for the Backup Service API. One Client is
// shared by every data source and resource of a configured provider: it is
// safe for concurrent use, paces requests to the key's rate limit, retries
// what is safe to retry, and returns typed errors.
package client

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxRetries     = 4 // waits of about 1, 2, 4 and 8 seconds
	DefaultRequestTimeout = 30 * time.Second
	DefaultBackoffBase    = time.Second
	DefaultMaxBackoff     = 30 * time.Second
	DefaultRetryAfterCap  = 60 * time.Second
	DefaultRetryBudget    = 2 * time.Minute
	// DefaultClockAllowance is how far the service's clock may run behind
	// this machine's for a backup to be recognised as a trigger's. Clocks
	// kept by NTP differ by well under a second; a wider allowance would let
	// a backup queued by someone else just before this trigger pass for its
	// own after an unknown outcome (see Recognizer).
	DefaultClockAllowance = 10 * time.Second
	// DefaultIdentifyWithin is how long a backup the service accepted is
	// looked for in a listing that lags behind its POST.
	DefaultIdentifyWithin = 30 * time.Second
	// DefaultUncertainGrace is how long a POST that got no answer is given
	// to show up as a backup before it is sent again.
	DefaultUncertainGrace = 60 * time.Second

	// PageSize is the largest page the service gives: listings ask for it so
	// that they need the fewest requests.
	PageSize = 50

	// announceWaitsOver: a wait this long or longer is logged at WARN, so
	// that "Still creating..." never hides why.
	announceWaitsOver = 5 * time.Second

	// Bodies are read up to these sizes. A page of 50 records of the
	// contract is some 25 KB; 8 MiB keeps the memory of a plan bounded
	// whatever a faulty service sends (see pageDecoder and MaxListBytes).
	maxErrorBody   = 64 << 10
	maxSuccessBody = 8 << 20
)

// Options configure a Client. Zero values take the defaults above.
type Options struct {
	// BaseURL is scheme + host (+ optional path prefix), without /api/v1.
	BaseURL string
	// APIKey is sent in X-API-Key and nowhere else.
	APIKey string
	// AllowInsecureHTTP permits plain http to hosts other than loopback.
	AllowInsecureHTTP bool
	// UserAgent names the caller, for example "terraform-provider-backup/1.2.0".
	UserAgent string

	// MaxRetries is the number of retries after the first attempt: 0 (the
	// zero value) means none, as it reads; DefaultMaxRetries is the
	// provider's default.
	MaxRetries     int
	RequestTimeout time.Duration // per attempt
	BackoffBase    time.Duration // first backoff; doubles each retry
	MaxBackoff     time.Duration // cap of one backoff
	RetryAfterCap  time.Duration // cap on a server's Retry-After
	RetryBudget    time.Duration // cap on the total time spent waiting to retry
	// ClockAllowance, IdentifyWithin and UncertainGrace shape how a
	// trigger recognises its backup (see Recognizer and TriggerBackup).
	ClockAllowance time.Duration
	IdentifyWithin time.Duration
	UncertainGrace time.Duration

	// Organization, when set, is the id of the organization the key must
	// belong to: before its first POST, the client reads the key's
	// organization (GET /token, once per Client) and refuses to change
	// anything in another (*OrganizationMismatchError).
	Organization string

	// RootCAs, when set, are the certificates the client trusts (see
	// CertPool); nil trusts the system's. Ignored with HTTPClient.
	RootCAs *x509.CertPool

	HTTPClient *http.Client
	Clock      Clock
	Logger     Logger
}

// Client talks to one Backup Service with one key.
type Client struct {
	base    *url.URL
	key     *secret
	ua      string
	opts    Options
	http    *http.Client
	clock   Clock
	log     Logger
	limiter *limiter
	jitter  func() float64
	guard   textGuard // cleans what the service sends before it is shown
	org     orgCheck
	noHTTP2 bool // see HTTP2DebugLogging
}

// secret holds the key behind a pointer, so that printing a Client (or
// anything holding one) shows an address, and printing the secret itself
// shows a placeholder. The key leaves it only for the X-API-Key header.
type secret struct{ value string }

func (*secret) String() string   { return "[REDACTED]" }
func (*secret) GoString() string { return "[REDACTED]" }

// String describes the client without its key.
func (c *Client) String() string { return "backup client for " + c.base.String() }

// GoString describes the client without its key.
func (c *Client) GoString() string { return "client.Client{base: " + c.base.String() + "}" }

// New checks the options and returns a Client. It makes no request.
func New(opts Options) (*Client, error) {
	if err := CheckAPIKey(opts.APIKey); err != nil {
		return nil, err
	}
	key := &secret{value: opts.APIKey}
	base, err := parseBaseURL(opts.BaseURL, opts.AllowInsecureHTTP, textGuard{key: key})
	if err != nil {
		return nil, err
	}
	noHTTP2 := false
	if opts.HTTPClient == nil {
		ts := settingsFor(base, opts)
		noHTTP2 = ts.noHTTP2
		opts.HTTPClient = &http.Client{Transport: newTransport(ts)}
	}
	setDefaults(&opts)
	// A copy, so that the caller's client is left as it was: this one
	// follows no redirect (see RedirectError).
	hc := *opts.HTTPClient
	hc.CheckRedirect = refuseRedirects
	opts.HTTPClient = &hc
	c := &Client{
		base:   base,
		key:    key,
		ua:     opts.UserAgent,
		http:   opts.HTTPClient,
		clock:  opts.Clock,
		log:    opts.Logger,
		jitter: rand.Float64,
		guard:  textGuard{key: key},
		// Set only for the client's own transport: a caller's is theirs.
		noHTTP2: noHTTP2,
	}
	opts.APIKey = "" // keep one copy only, in a type that never prints
	c.opts = opts
	c.limiter = newLimiter(c.clock)
	return c, nil
}

func setDefaults(o *Options) {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	o.MaxRetries = max(o.MaxRetries, 0)
	def(&o.RequestTimeout, DefaultRequestTimeout)
	def(&o.BackoffBase, DefaultBackoffBase)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.RetryAfterCap, DefaultRetryAfterCap)
	def(&o.RetryBudget, DefaultRetryBudget)
	def(&o.ClockAllowance, DefaultClockAllowance)
	def(&o.IdentifyWithin, DefaultIdentifyWithin)
	def(&o.UncertainGrace, DefaultUncertainGrace)
	if o.UserAgent == "" {
		o.UserAgent = "terraform-provider-backup"
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Logger == nil {
		o.Logger = nopLogger{}
	}
}

// CheckAPIKey refuses a key that no request could carry: an HTTP header
// cannot hold control characters, and white space around a key (a newline
// at the end of a file, most often) is never part of it. Retrying such a
// key only delays the error.
func CheckAPIKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return fmt.Errorf("%w: it is empty", ErrInvalidAPIKey)
	case strings.TrimSpace(key) != key:
		return fmt.Errorf("%w: it begins or ends with white space (a newline at the end of a file, often); "+
			"remove it, for example with trimspace(file(...))", ErrInvalidAPIKey)
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: it holds control characters, which an HTTP header cannot carry", ErrInvalidAPIKey)
	}
	return nil
}

// call describes one logical API call.
type call struct {
	method string
	path   string // below the base URL, already escaped, starting with /api/v1
	query  url.Values
	// idempotent calls are retried after server errors and transport errors;
	// others only when the service certainly did not process them.
	idempotent bool
}

// do performs c with retries and decodes a 2xx body into out (when non-nil).
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var waited time.Duration
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
		if err := c.mayRetry(ctx, attempt, delay, waited, err); err != nil {
			// Giving up: other callers are not paused for a wait this
			// call will not take; their own answers pace them.
			return err
		}
		if errors.Is(err, ErrRateLimited) {
			// The key's allowance, or the service as a whole, is saturated:
			// every caller of this client backs off, not just this one.
			c.limiter.pause(delay)
		}
		if err := c.waitToRetry(ctx, cl, attempt, delay, &waited, err); err != nil {
			return err
		}
	}
}

// mayRetry returns a *RetryError wrapping last when waiting delay before
// retry number attempt+1 would exceed the retry count, the retry budget or
// the context's deadline.
func (c *Client) mayRetry(ctx context.Context, attempt int, delay, waited time.Duration, last error) error {
	fail := func(cause RetryCause, reason string) error {
		return &RetryError{Attempts: attempt + 1, Cause: cause, Reason: reason, Err: last}
	}
	if attempt >= c.opts.MaxRetries {
		return fail(RetriesExhausted, "retries exhausted")
	}
	if waited+delay > c.opts.RetryBudget {
		return fail(RetryBudgetSpent, fmt.Sprintf("waiting %s more would exceed the retry budget of %s",
			delay.Round(time.Millisecond), c.opts.RetryBudget))
	}
	if dl, ok := ctx.Deadline(); ok && c.clock.Now().Add(delay).After(dl) {
		return fail(RetryPastDeadline, fmt.Sprintf("waiting %s would outlive the operation's deadline", delay.Round(time.Millisecond)))
	}
	return nil
}

// waitToRetry sleeps delay before retry number attempt+1, unless mayRetry
// refuses: then it returns that *RetryError.
func (c *Client) waitToRetry(ctx context.Context, cl call, attempt int, delay time.Duration, waited *time.Duration, last error) error {
	if err := c.mayRetry(ctx, attempt, delay, *waited, last); err != nil {
		return err
	}
	if delay >= announceWaitsOver {
		c.log.Warn(ctx, "waiting before retrying a Backup Service request", map[string]any{
			"method": cl.method, "path": c.base.EscapedPath() + cl.path, "delay": delay.Round(time.Second).String(), "error": last.Error(),
		})
	}
	c.log.Debug(ctx, "retrying Backup Service request", map[string]any{
		"method": cl.method, "path": c.base.EscapedPath() + cl.path, "attempt": attempt + 1, "delay": delay.String(), "error": last.Error(),
	})
	*waited += delay
	return sleep(ctx, c.clock, delay)
}

// retryDelay says whether err may be retried, and after how long.
func (c *Client) retryDelay(cl call, attempt int, err error) (time.Duration, bool) {
	var apiErr *APIError
	var tErr *TransportError
	var connErr *ConnectionError
	switch {
	case errors.As(err, &connErr):
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
	return d + time.Duration(c.jitter()*0.2*float64(d))
}

// attempt sends one request, after the rate limiter allows it.
func (c *Client) attempt(ctx context.Context, cl call, out any) error {
	if err := c.limiter.wait(ctx); err != nil {
		return err
	}
	var header http.Header
	defer func() {
		if reset := c.limiter.done(header); !reset.IsZero() {
			c.log.Warn(ctx, "the Backup Service announced a rate-limit window ending implausibly far away; "+
				"treating it as the API's one-second window", map[string]any{"announced_reset": reset.UTC().Format(time.RFC3339)})
		}
	}()

	actx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()

	sent := false
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent = true }}
	target := c.base.String() + cl.path
	// Errors and logs name the path as sent, base_url's prefix included.
	shown := c.base.EscapedPath() + cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(actx, trace), cl.method, target, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", cl.method, shown, err)
	}
	req.Header.Set("X-API-Key", c.key.value)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)

	started := c.clock.Now()
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.transportError(cl.method, shown, sent, actx, err)
	}
	defer func() { _ = res.Body.Close() }()
	header = res.Header

	limit := int64(maxSuccessBody)
	if res.StatusCode >= 300 {
		limit = maxErrorBody
	}
	// One byte more than the limit tells a body that exceeds it from one
	// that fills it exactly.
	body, readErr := io.ReadAll(io.LimitReader(res.Body, limit+1))
	tooLarge := int64(len(body)) > limit
	if tooLarge {
		body = body[:limit]
	}
	requestID := c.guard.requestID(res.Header.Get("X-Request-ID"))
	c.log.Debug(ctx, "Backup Service response", map[string]any{
		"method": cl.method, "path": shown, "status": res.StatusCode,
		"request_id": requestID, "duration_ms": c.clock.Now().Sub(started).Milliseconds(),
	})

	if res.StatusCode >= 300 && res.StatusCode <= 399 {
		return &RedirectError{Method: cl.method, Path: shown, StatusCode: res.StatusCode,
			Location: c.guard.text(safeLocation(res.Header.Get("Location"))), Origin: origin(c.base), RequestID: requestID}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// A cut-short error body still tells the status; describe what came.
		return parseProblem(c.guard, cl.method, shown, res.StatusCode, res.Header, body, c.clock.Now())
	}
	if tooLarge {
		return &DecodeError{Method: cl.method, Path: shown, StatusCode: res.StatusCode, RequestID: requestID,
			Err: fmt.Errorf("%w (%d MiB)", ErrBodyTooLarge, limit>>20)}
	}
	if readErr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
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

// decodeStrict decodes one JSON value and refuses anything after it. It
// then makes the answer's shown text safe (see guarded) and only then checks
// the fields the contract requires: a status made only of control
// characters is empty once cleaned, and must fail as missing, not pass as a
// backup with no status (the fuzz target found one).
func decodeStrict(body []byte, out any, g textGuard) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(out); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data follows the JSON value")
	}
	if x, ok := out.(guarded); ok {
		x.guard(g)
	}
	if c, ok := out.(checker); ok {
		return c.check()
	}
	return nil
}

// scrubURLError drops the URL from a transport error: it adds nothing the
// caller does not know and keeps error texts short.
func scrubURLError(err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		return uErr.Err
	}
	return err
}
