package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestMalformedAndTruncatedBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 9}, func(o *Options) { o.MaxRetries = 1 })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultMalformedJSON, Route: mockservice.RouteToken, Times: 1})
	_, err := f.client.Token(context.Background())
	var de *decodeError
	if !errors.As(err, &de) || de.RequestID == "" || !strings.Contains(err.Error(), "not the expected JSON") {
		t.Fatalf("malformed: %v", err)
	}
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultTruncatedBody, Route: mockservice.RouteGetAccount})
	_, err = f.client.Account(context.Background(), f.srv.AccountIDs()[0])
	var te *transportError
	if !errors.As(err, &te) || !te.Sent {
		t.Fatalf("truncated: %T %v", err, err)
	}
}

func TestBaseURLAndHeaders(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://backup.example.com", "http://10.0.0.1:8080"} {
		if _, err := New(Options{BaseURL: u, APIKey: "k"}); !errors.Is(err, ErrInsecureURL) {
			t.Errorf("%s: %v", u, err)
		}
		if _, err := New(Options{BaseURL: u, APIKey: "k", AllowInsecureHTTP: true}); err != nil {
			t.Errorf("%s with opt-in: %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:1", "http://localhost:2", "http://[::1]:3", "https://backup.example.com/prefix/"} {
		if _, err := New(Options{BaseURL: u, APIKey: "k"}); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"", "backup.example.com", "ftp://x", "https://user:pw@x", "https://x/?a=b"} {
		if _, err := New(Options{BaseURL: u, APIKey: "k"}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if _, err := New(Options{BaseURL: "https://x"}); err == nil {
		t.Error("missing key accepted")
	}

	var got http.Header
	var path string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, path = r.Header.Clone(), r.URL.Path
		_, _ = w.Write([]byte(`{"name":"n","expires_at":"2027-01-01T00:00:00Z","organization":{"id":"org_0123456789abcdef","name":"o"},"extra":{"a":1}}`))
	}))
	defer ts.Close()
	c, err := New(Options{BaseURL: ts.URL + "/prefix/", APIKey: "secret-key", UserAgent: "terraform-provider-backup/1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	if path != "/prefix/api/v1/token" || got.Get("X-API-Key") != "secret-key" || got.Get("User-Agent") != "terraform-provider-backup/1.2.3" ||
		got.Get("Cache-Control") != "no-cache" {
		t.Errorf("path %s headers %v", path, got)
	}
	if got.Get("Authorization") != "" {
		t.Error("the key travelled in Authorization too")
	}
}

// The edges of a response: the ends of the 2xx and 3xx ranges, a body of
// exactly the size limit, and a request without a query.
func TestResponseEdges(t *testing.T) {
	t.Parallel()
	tokenBody := `{"name":"ci","expires_at":"2027-01-01T00:00:00Z","organization":{"id":"org_0123456789abcdef","name":"acme"}}`
	for _, tc := range []struct {
		status   int
		body     string
		wantOK   bool
		redirect bool
	}{
		{299, tokenBody, true, false},
		{300, "", false, true},
		{399, "", false, true},
		{400, `{"title":"Bad Request","status":400}`, false, false},
	} {
		var uri string
		c, _ := hostileClient(t, func(w http.ResponseWriter, r *http.Request) {
			uri = r.RequestURI
			w.Header().Set("Location", "https://elsewhere.example.com/")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}, func(o *Options) { o.MaxRetries = 0 })
		_, err := c.Token(context.Background())
		var re *redirectError
		switch {
		case tc.wantOK && err != nil:
			t.Errorf("HTTP %d: %v, want the token", tc.status, err)
		case !tc.wantOK && err == nil:
			t.Errorf("HTTP %d: no error", tc.status)
		case tc.redirect != errors.As(err, &re):
			t.Errorf("HTTP %d: %v; redirect %t", tc.status, err, tc.redirect)
		}
		if uri != "/api/v1/token" {
			t.Errorf("request URI %q, want no query", uri)
		}
	}

	// A page of exactly the size limit is read; one byte more is refused.
	page := `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`
	for _, extra := range []int{0, 1} {
		body := page + strings.Repeat(" ", maxSuccessBody-len(page)+extra)
		c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }, nil)
		_, err := Collect(c.Accounts(context.Background(), ListOptions{}))
		if tooLarge := errors.Is(err, errBodyTooLarge); tooLarge != (extra == 1) || (extra == 0 && err != nil) {
			t.Errorf("a body of the limit plus %d: %v", extra, err)
		}
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 1}, nil)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, PerRoute: true, Times: 2})
	if _, err := f.client.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.srv.Requests(mockservice.RouteToken); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	w := f.clock.Waits()
	if len(w) != 2 || w[0] < time.Second || w[0] > 1200*time.Millisecond || w[1] < 2*time.Second || w[1] > 2400*time.Millisecond {
		t.Errorf("backoff waits %v, want about 1s then 2s", w)
	}
}

func TestBackoffDoublesWithJitterAndCap(t *testing.T) {
	t.Parallel()
	c, _ := New(Options{BaseURL: "https://x", APIKey: "k", MaxBackoff: 5 * time.Second})
	c.opts.Jitter = func() float64 { return 0 }
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := c.backoff(i); got != w {
			t.Errorf("backoff(%d) = %s, want %s", i, got, w)
		}
	}
	c.opts.Jitter = func() float64 { return 0.999 }
	if got := c.backoff(0); got <= time.Second || got >= 1200*time.Millisecond {
		t.Errorf("jittered backoff %s", got)
	}
}

func TestRetriesExhausted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 2}, func(o *Options) { o.MaxRetries = 2 })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError})
	_, err := f.client.Token(context.Background())
	var re *RetryError
	if !errors.As(err, &re) || re.Attempts != 3 || !errors.Is(err, errServer) {
		t.Fatalf("%T %v", err, err)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.RequestID == "" || !strings.Contains(err.Error(), apiErr.RequestID) {
		t.Errorf("the last attempt's request id is lost: %v", err)
	}
	if n := f.srv.Requests(mockservice.RouteToken); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestRetryAfterHonouredAndCapped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 3}, func(o *Options) { o.RetryAfterCap = 10 * time.Second })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteToken, Times: 1, RetryAfter: 3 * time.Second})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteToken, Times: 1, RetryAfter: time.Hour})
	if _, err := f.client.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := f.clock.Waits()
	if len(w) < 2 || w[0] != 3*time.Second || w[1] != 10*time.Second {
		t.Errorf("waits %v, want 3s then the 10s cap", w)
	}
}

func TestHugeRetryAfterExhaustsBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4}, func(o *Options) {
		o.RetryAfterCap = time.Hour
		o.RetryBudget = 30 * time.Second
	})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, RetryAfter: 3600 * time.Second})
	_, err := f.client.Token(context.Background())
	var re *RetryError
	if !errors.As(err, &re) || !errors.Is(err, errRateLimited) || !strings.Contains(err.Error(), "retry budget") ||
		re.Cause != RetryBudgetSpent || re.Attempts != 1 {
		t.Fatalf("want a RetryError for the budget after one attempt, got %v", err)
	}
	// It gives up at once: no wait at all, neither its own nor a pause of
	// the limiter for a retry it does not make.
	if w := f.clock.Waits(); len(w) != 0 {
		t.Fatalf("waited %v", w)
	}
}

func TestRetryNeverOutlivesDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 5}, nil)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, RetryAfter: 50 * time.Second})
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(20*time.Second))
	defer cancel()
	_, err := f.client.Token(ctx)
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("%v", err)
	}
}

func TestOverloadPausesEveryCaller(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 6}, nil)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Times: 1})
	if _, err := f.client.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A 429 without headers set a client-wide pause, not just this caller's wait.
	f.client.limiter.mu.Lock()
	paused := f.client.limiter.pausedUntil
	f.client.limiter.mu.Unlock()
	if paused.IsZero() {
		t.Fatal("no client-wide pause after an aggregate-load 429")
	}
	// The pause holds a second caller back: with a real clock it waits.
	l := newLimiter(clock.Wall{})
	l.known, l.interval = true, time.Millisecond
	l.pause(80 * time.Millisecond)
	start := time.Now()
	if err := l.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.done(nil, 0)
	if time.Since(start) < 70*time.Millisecond {
		t.Errorf("a paused limiter let a caller through after %s", time.Since(start))
	}
}

func TestTransportErrorsRetriedOnGet(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Drop the connection without answering.
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
			return
		}
		_, _ = w.Write([]byte(`{"name":"n","expires_at":"2027-01-01T00:00:00Z","organization":{"id":"org_0123456789abcdef","name":"o"}}`))
	}))
	defer ts.Close()
	c, _ := New(Options{BaseURL: ts.URL, APIKey: "k", Clock: newFakeClock(), MaxRetries: 1})
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 {
		t.Errorf("%d requests", n.Load())
	}
}

func TestCancellationStopsWaits(t *testing.T) {
	t.Parallel()
	// Real clock: a 30 s Retry-After must not hold a cancelled caller.
	srv := mockservice.New(mockservice.Options{Seed: 7, RateLimit: 1000})
	srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, RetryAfter: 30 * time.Second})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, _ := New(Options{BaseURL: ts.URL, APIKey: srv.DemoKey(), MaxRetries: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Token(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	// The bound is far below the 30 s wait it proves was cut short, and far
	// above what a loaded machine needs: a test must not time the machine.
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s to stop", d)
	}

	// A caller waiting for the limiter stops too.
	l := newLimiter(clock.Wall{})
	l.pause(time.Minute)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if err := l.wait(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("limiter wait: %v", err)
	}
}

func TestRequestTimeoutIsPerAttempt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 8}, func(o *Options) { o.RequestTimeout = 50 * time.Millisecond })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultLatency, Route: mockservice.RouteToken, Times: 1, Latency: time.Second})
	if _, err := f.client.Token(context.Background()); err != nil {
		t.Fatalf("the retry after a timed-out attempt failed: %v", err)
	}
	if n := f.srv.Requests(mockservice.RouteToken); n != 2 {
		t.Errorf("%d requests", n)
	}
}

// A call that gives up after a 429 does not pause the client's other
// callers for the wait it will not take.
func TestGivingUpAfterA429PausesNobody(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	c, clock := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		if requests.Add(1) == 1 {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"title":"Too Many Requests","status":429}`))
			return
		}
		_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2030-01-01T00:00:00Z"}`))
	}, func(o *Options) { o.RetryBudget = 30 * time.Second }) // a 429's wait is bounded by the budget, not max_retries
	if _, err := c.Token(context.Background()); !errors.Is(err, errRateLimited) {
		t.Fatalf("want the 429, got %v", err)
	}
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, w := range clock.Waits() {
		if w >= time.Second {
			t.Errorf("the next call waited %s for a retry that was never made", w)
		}
	}
}

// A stream of 429s longer than max_retries allows is waited out while the
// operation's deadline has room: the request succeeds. One that lasts past
// the deadline fails saying so; without a deadline, the retry budget
// bounds it. On a virtual clock: the waits are minutes of its time.
func TestRateLimitedWaitsAreBoundedByTheDeadline(t *testing.T) {
	t.Parallel()
	const refusals = 20 // four times DefaultMaxRetries
	for _, tc := range []struct {
		name    string
		timeout time.Duration // 0: no deadline
		budget  time.Duration
		want    RetryCause // 0: success
	}{
		{"within the deadline", 10 * time.Minute, time.Second, 0},
		{"past the deadline", 30 * time.Second, time.Hour, RetryPastDeadline},
		{"no deadline, within the budget", 0, 10 * time.Minute, 0},
		{"no deadline, past the budget", 0, 30 * time.Second, RetryBudgetSpent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var requests atomic.Int64
			vc := clocktest.NewVirtual(time.Now().Truncate(time.Second))
			c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
				if requests.Add(1) <= refusals {
					w.Header().Set("Retry-After", "3")
					w.WriteHeader(http.StatusTooManyRequests)
					_, _ = w.Write([]byte(`{"title":"Too Many Requests","status":429,"request_id":"0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d"}`))
					return
				}
				_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2030-01-01T00:00:00Z"}`))
			}, func(o *Options) { o.Clock, o.RetryBudget, o.MaxRetries = vc, tc.budget, DefaultMaxRetries })
			ctx := t.Context()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = clock.WithTimeout(ctx, c.opts.Clock, tc.timeout)
				defer cancel()
			}
			_, err := c.Token(ctx)
			var re *RetryError
			switch {
			case tc.want == 0 && err != nil:
				t.Fatalf("%d 429s within the bound: %v", refusals, err)
			case tc.want == 0 && requests.Load() != refusals+1:
				t.Errorf("%d requests, want %d", requests.Load(), refusals+1)
			case tc.want != 0 && (!errors.As(err, &re) || re.Cause != tc.want || !errors.Is(err, errRateLimited)):
				t.Fatalf("got %v; want a 429 given up with cause %d", err, tc.want)
			case tc.want == RetryPastDeadline && !strings.Contains(err.Error(), "outlive the operation's deadline"):
				t.Errorf("the error does not say the deadline ended it: %v", err)
			}
		})
	}
}

// Retry-After bounds: waits that add up to exactly the retry budget are
// taken, one more is not; a Retry-After of 0 waits the backoff, not
// nothing.
func TestRetryBudgetAndRetryAfterEdges(t *testing.T) {
	t.Parallel()
	failing := func(failures int, retryAfter string) (http.HandlerFunc, *int) {
		n := 0
		return func(w http.ResponseWriter, _ *http.Request) {
			n++
			if n <= failures {
				w.Header().Set("Retry-After", retryAfter)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2027-01-01T00:00:00Z","organization":{"id":"org_0123456789abcdef","name":"acme"}}`))
		}, &n
	}
	budget := func(o *Options) { o.MaxRetries, o.RetryBudget = 5, 2*time.Second }
	for failures, wantOK := range map[int]bool{2: true, 3: false} {
		h, _ := failing(failures, "1")
		c, _ := hostileClient(t, h, budget)
		if _, err := c.Token(context.Background()); (err == nil) != wantOK {
			t.Errorf("%d failures of Retry-After 1 within a budget of 2s: %v", failures, err)
		}
	}
	h, _ := failing(1, "0")
	c, clk := hostileClient(t, h, func(o *Options) { o.MaxRetries = 1 })
	c.opts.Jitter = func() float64 { return 0 }
	if _, err := c.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := clk.Waits(); len(w) != 1 || w[0] != c.opts.BackoffBase {
		t.Errorf("waits %v after a Retry-After of 0, want the backoff %s", w, c.opts.BackoffBase)
	}
}

// recordingLogger keeps what the client logs, for tests of what users
// see with TF_LOG.
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) add(level, msg string, fields map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%s %s %v", level, msg, fields))
}

func (l *recordingLogger) Debug(_ context.Context, msg string, f map[string]any) {
	l.add("DEBUG", msg, f)
}
func (l *recordingLogger) Info(_ context.Context, msg string, f map[string]any) {
	l.add("INFO", msg, f)
}
func (l *recordingLogger) Warn(_ context.Context, msg string, f map[string]any) {
	l.add("WARN", msg, f)
}

// A wait of 5 s or more before a retry is logged at WARN, a shorter one
// only at DEBUG; the retry's number counts from 1.
func TestLongRetryWaitsAreAnnounced(t *testing.T) {
	t.Parallel()
	for retryAfter, warned := range map[string]bool{"4": false, "5": true} {
		n := 0
		log := &recordingLogger{}
		c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
			if n++; n == 1 {
				w.Header().Set("Retry-After", retryAfter)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2027-01-01T00:00:00Z","organization":{"id":"org_0123456789abcdef","name":"acme"}}`))
		}, func(o *Options) { o.MaxRetries, o.Logger = 1, log })
		if _, err := c.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
		all := strings.Join(log.lines, "\n")
		if strings.Contains(all, "WARN waiting before retrying") != warned || !strings.Contains(all, "attempt:1 ") {
			t.Errorf("Retry-After %s:\n%s", retryAfter, all)
		}
	}
}

// recorder is "another host": it counts the requests it receives and the
// API keys they carry.
type recorder struct {
	mu       sync.Mutex
	requests int
	keys     []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if k := req.Header.Get("X-API-Key"); k != "" {
		r.keys = append(r.keys, k)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"name":"stolen","expires_at":"2030-01-01T00:00:00Z","organization":{"id":"org_0000000000000000","name":"x"}}`))
}

func (r *recorder) counts() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, len(r.keys)
}

// TestRedirectsAreRefused: whatever redirect the service answers, the
// client follows none, retries none, and says where it was sent and what to
// fix; the key never reaches another host.
func TestRedirectsAreRefused(t *testing.T) {
	other := &recorder{}
	otherTS := httptest.NewServer(other)
	t.Cleanup(otherTS.Close)

	cases := []struct {
		name     string
		tls      bool
		location func(self string) string
		status   int
		// want are fragments of the error; never, what it must not hold.
		want  []string
		never string
	}{
		{name: "another host", status: http.StatusTemporaryRedirect,
			location: func(string) string { return otherTS.URL + "/api/v1/token" },
			want:     []string{"HTTP 307 redirect to " + otherTS.URL + "/api/v1/token", "Set base_url"}},
		{name: "https to http", tls: true, status: http.StatusMovedPermanently,
			location: func(self string) string { return "http://" + strings.TrimPrefix(self, "https://") + "/api/v1/token" },
			want:     []string{"HTTP 301 redirect to http://", "only to https://"}},
		{name: "loop", status: http.StatusFound,
			location: func(self string) string { return self + "/api/v1/token" },
			want:     []string{"HTTP 302 redirect to "}},
		{name: "no location", status: http.StatusTemporaryRedirect,
			location: func(string) string { return "" },
			want:     []string{"HTTP 307 redirect without a Location header"}},
		{name: "credentials in location", status: http.StatusPermanentRedirect,
			location: func(string) string {
				return strings.Replace(otherTS.URL, "http://", "http://admin:hunter2@", 1) + "/api/v1/token"
			},
			want:  []string{"HTTP 308 redirect to http://admin:xxxxx@"},
			never: "hunter2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			hits := 0
			var ts *httptest.Server
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				hits++
				mu.Unlock()
				if loc := tc.location(ts.URL); loc != "" {
					w.Header().Set("Location", loc)
				}
				w.Header().Set("X-Request-ID", "3f1c1a8e-7e2b-4c1d-9a0b-5d6e7f8a9b0c")
				w.WriteHeader(tc.status)
			})
			if tc.tls {
				ts = httptest.NewTLSServer(h)
			} else {
				ts = httptest.NewServer(h)
			}
			t.Cleanup(ts.Close)
			c, err := New(Options{BaseURL: ts.URL, APIKey: "bks_secretsecretsecret", HTTPClient: ts.Client(),
				Clock: newFakeClock(), MaxRetries: 5})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Token(context.Background())
			var re *redirectError
			if !errors.As(err, &re) || !errors.Is(err, errRedirect) {
				t.Fatalf("err = %v, want a *redirectError", err)
			}
			for _, w := range append(tc.want, "request id 3f1c1a8e-7e2b-4c1d-9a0b-5d6e7f8a9b0c", "GET /api/v1/token") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.never != "" && strings.Contains(err.Error(), tc.never) {
				t.Errorf("error %q shows %q", err, tc.never)
			}
			if strings.Contains(err.Error(), "bks_secret") {
				t.Errorf("error shows the key: %q", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if hits != 1 {
				t.Errorf("the service got %d requests, want 1: a redirect is not retried or followed", hits)
			}
		})
	}
	if n, keys := other.counts(); n != 0 || keys != 0 {
		t.Errorf("the other host got %d requests, %d carrying the key; want none", n, keys)
	}
}

// TestRedirectLeavesCallersClientAlone: the client sets its redirect
// policy on a copy of an injected http.Client, not on the caller's.
func TestRedirectLeavesCallersClientAlone(t *testing.T) {
	hc := &http.Client{}
	if _, err := New(Options{BaseURL: "http://127.0.0.1:1", APIKey: "k", HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	if hc.CheckRedirect != nil {
		t.Error("New changed the caller's http.Client")
	}
}

// TestRedirectFaultOfTheMock: the mock's redirect fault sends every
// request elsewhere; the trigger is refused without queueing a backup.
func TestRedirectFaultOfTheMock(t *testing.T) {
	other := &recorder{}
	otherTS := httptest.NewServer(other)
	t.Cleanup(otherTS.Close)
	f := newFixture(t, mockservice.Options{Seed: 7, Accounts: 3}, nil)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultRedirect, Location: otherTS.URL})
	acct := f.srv.AccountIDs()[0]

	_, err := f.client.Trigger(acct).Post(context.Background())
	if !errors.Is(err, errRedirect) {
		t.Fatalf("trigger: err = %v, want errRedirect", err)
	}
	if _, err := f.client.Account(context.Background(), acct); !errors.Is(err, errRedirect) {
		t.Fatalf("account: err = %v, want errRedirect", err)
	}
	if n := f.srv.BackupsQueued(acct); n != 0 {
		t.Errorf("%d backups queued, want 0", n)
	}
	if n, keys := other.counts(); n != 0 || keys != 0 {
		t.Errorf("the other host got %d requests, %d carrying the key; want none", n, keys)
	}
}

// A first backups page tells when its answer came: the service's clock is
// its Date centred on its second; a Date that does not parse, or lies
// beyond any clock that runs off (year 0001, year 9999), tells nothing.
func TestFirstBackupsPageDatesItsAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		date  func(now time.Time) string
		ahead time.Duration // of the service's clock read; -1: none
	}{
		{"ahead", func(now time.Time) string { return now.Add(10 * time.Second).UTC().Format(http.TimeFormat) }, 10*time.Second + 500*time.Millisecond},
		{"behind", func(now time.Time) string { return now.Add(-4 * time.Minute).UTC().Format(http.TimeFormat) }, -4*time.Minute + 500*time.Millisecond},
		{"unparsable", func(time.Time) string { return "yesterday" }, -1},
		{"absent", func(time.Time) string { return "" }, -1},
		{"year 0001", func(time.Time) string { return "Mon, 01 Jan 0001 00:00:00 GMT" }, -1},
		{"year 9999", func(time.Time) string { return "Fri, 31 Dec 9999 23:59:59 GMT" }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var date string
			c, clk := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header()["Date"] = []string{date} // set as is: net/http would add its own when absent
				_, _ = fmt.Fprint(w, `{"data":[{"id":"bkp_0123456789abcdef","account_id":"acc_0123456789abcdef","status":"running","created_at":"2026-11-21T10:00:00Z"}],"pagination":{"limit":50,"next_cursor":null}}`)
			}, nil)
			date = tc.date(clk.Now())
			p, err := c.FirstBackupsPage(context.Background(), "acc_0123456789abcdef")
			if err != nil || len(p.Backups) != 1 || p.More {
				t.Fatalf("FirstBackupsPage() = %+v, %v", p, err)
			}
			if !p.At.Received.Equal(clk.Now()) {
				t.Errorf("received at %v, want %v", p.At.Received, clk.Now())
			}
			if got := p.At.Service; tc.ahead == -1 && !got.IsZero() || tc.ahead != -1 && !got.Equal(clk.Now().Add(tc.ahead)) {
				t.Errorf("the service's clock read as %v from Date %q", got, date)
			}
		})
	}
}

// An answer's Date dates it when it is at most maxDateSkew from this
// machine's clock, either way; one further off is not the service's time.
func TestAnswerTimeBoundsTheDate(t *testing.T) {
	t.Parallel()
	received := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		off   time.Duration
		dated bool
	}{
		{"as received", 0, true},
		{"ahead by the bound", maxDateSkew, true},
		{"behind by the bound", -maxDateSkew, true},
		{"ahead beyond it", maxDateSkew + time.Second, false},
		{"behind beyond it", -maxDateSkew - time.Second, false},
	} {
		at := answerTime(http.Header{"Date": {received.Add(tc.off).Format(http.TimeFormat)}}, received)
		if dated := !at.Service.IsZero(); dated != tc.dated || !at.Received.Equal(received) {
			t.Errorf("%s: %+v, dated %t; want %t", tc.name, at, dated, tc.dated)
		}
	}
}

// A cache's Age says how long it held the answer; one that does not parse,
// is negative or repeats reads as held as long as the bound.
func TestAnswerTimeReadsACachesAge(t *testing.T) {
	t.Parallel()
	received := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		age  []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"0"}, 0},
		{[]string{" 600 "}, 10 * time.Minute},
		{[]string{"31622400"}, maxStored},
		{[]string{"31622401"}, maxStored},
		{[]string{"99999999999999999999"}, maxStored},
		{[]string{"-1"}, maxStored},
		{[]string{"soon"}, maxStored},
		{[]string{""}, maxStored},
		{[]string{"5", "6"}, maxStored},
	} {
		h := http.Header{}
		if tc.age != nil {
			h["Age"] = tc.age
		}
		if got := answerTime(h, received).Stored; got != tc.want {
			t.Errorf("Age %q: stored %v, want %v", tc.age, got, tc.want)
		}
	}
}
