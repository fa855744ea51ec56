package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Many goroutines share one client: the limiter keeps them within the key's
// allowance, so the service never answers 429.
func TestConcurrentCallersStayWithinAllowance(t *testing.T) {
	t.Parallel()
	const allowance = 40
	srv := mockservice.New(mockservice.Options{Seed: 1, RateLimit: allowance})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, err := New(Options{BaseURL: ts.URL, APIKey: srv.DemoKey()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				if _, err := c.Token(context.Background()); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := srv.Stats()
	if st.RateLimited != 0 {
		t.Errorf("%d requests were over the allowance", st.RateLimited)
	}
	if st.Requests[mockservice.RouteToken] != 60 {
		t.Errorf("%d requests", st.Requests[mockservice.RouteToken])
	}
}

func TestLimiterProbesAloneUntilAllowanceKnown(t *testing.T) {
	t.Parallel()
	l := newLimiter(clock.Wall{})
	if err := l.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := make(chan struct{})
	go func() {
		_ = l.wait(context.Background())
		close(second)
	}()
	select {
	case <-second:
		t.Fatal("a second request started before the first response told the allowance")
	case <-time.After(30 * time.Millisecond):
	}
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "11")
	h.Set("X-RateLimit-Remaining", "10")
	l.done(h, http.StatusOK)
	select {
	case <-second:
	case <-time.After(time.Second):
		t.Fatal("the allowance did not release the waiting request")
	}
	if l.interval != intervalFor(11) {
		t.Errorf("interval %s, want %s", l.interval, intervalFor(11))
	}
}

func TestLimiterPausesWhenNothingRemains(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	_ = l.wait(context.Background())
	h := http.Header{}
	reset := clock.Now().Add(700 * time.Millisecond).Truncate(time.Second).Add(time.Second)
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Reset", itoa(reset.Unix()))
	l.done(h, http.StatusOK)
	before := clock.Now()
	_ = l.wait(context.Background())
	if clock.Now().Before(reset) {
		t.Errorf("started at %s, before the reset at %s (waited %s)", clock.Now(), reset, clock.Now().Sub(before))
	}
}

// At every allowance from 1 to 100 requests a second, the pacing uses at
// least 90% of it and never all of it (network delay needs room).
func TestIntervalFor(t *testing.T) {
	t.Parallel()
	for limit := 1; limit <= 100; limit++ {
		rate := float64(time.Second) / float64(intervalFor(limit))
		if rate < 0.9*float64(limit) || rate >= float64(limit) {
			t.Errorf("intervalFor(%d) = %s: %.2f requests/s", limit, intervalFor(limit), rate)
		}
	}
}

// A fresh client (a new Terraform command) in a window another client of the
// key has nearly spent waits for the reset instead of overrunning it. The
// window's count shows the other client (48 of 50, one of them its own), so
// this one takes only its part of the 2 left, none: it cannot tell a command
// that has ended from one that runs beside it and would spend them.
func TestLimiterSpendsTheWindowsBudget(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	_ = l.wait(context.Background())
	reset := clock.Now().Truncate(time.Second).Add(time.Second)
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "50")
	h.Set("X-RateLimit-Remaining", "2")
	h.Set("X-RateLimit-Reset", itoa(reset.Unix()))
	l.done(h, http.StatusOK)
	if err := l.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if clock.Now().Before(reset) {
		t.Errorf("the next request started at %s, before the reset at %s: it spent another client's part of the window", clock.Now(), reset)
	}
}

// Clients of one key running side by side see each other in the window's
// count and each pace at their part of the allowance; a client alone again
// takes its whole allowance back.
func TestLimiterYieldsItsShareToOtherClients(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	header := func(remaining int, reset time.Time) http.Header { return rateHeader(21, remaining, reset, false) }
	reset := clock.Now().Add(time.Second)
	_ = l.wait(context.Background())
	l.done(header(20, reset), http.StatusOK) // alone: only its own request counted
	if l.spacing() != intervalFor(21) {
		t.Fatalf("alone, spacing %s, want %s (its whole allowance of 21/s)", l.spacing(), intervalFor(21))
	}
	// Three more of its own requests answered, while the window's count
	// grew by eight: another client sends as much as this one, or more.
	for remaining := 16; remaining >= 4; remaining -= 4 {
		_ = l.wait(context.Background())
		l.done(header(remaining, reset), http.StatusOK)
	}
	if l.spacing() < 80*time.Millisecond {
		t.Errorf("beside another client, spacing %s, want at least 80ms (about half the allowance)", l.spacing())
	}
	// Windows of its own (two of its requests each, the evidence it wants):
	// the allowance comes back.
	for w := 1; w <= 6; w++ {
		next := reset.Add(time.Duration(w) * time.Second)
		if d := next.Add(-time.Second).Sub(clock.Now()); d > 0 {
			<-clock.After(d) // into that window
		}
		for used := 1; used <= 2; used++ {
			_ = l.wait(context.Background())
			l.done(header(21-used, next), http.StatusOK)
		}
	}
	if l.spacing() != intervalFor(21) {
		t.Errorf("alone again, spacing %s, want %s", l.spacing(), intervalFor(21))
	}
}

// Requests of its own still in flight are in the window's count too: three
// sent together, all counted before the first answer, are not another
// client's, and the pacing keeps the whole allowance.
func TestLimiterCountsItsRequestsInFlightAsItsOwn(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	reset := clock.Now().Add(time.Second)
	_ = l.wait(context.Background())
	l.done(rateHeader(21, 20, reset, false), http.StatusOK)
	for range 3 {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		l.done(rateHeader(21, 17, reset, false), http.StatusOK) // 4 counted: the probe and the 3 in flight
	}
	if l.othersSeen || l.spacing() != intervalFor(21) {
		t.Errorf("others seen %v, spacing %s: want none, and the whole allowance (%s)", l.othersSeen, l.spacing(), intervalFor(21))
	}
}

// The part of a window left to a client beside others is spent by its own
// requests: once it has sent that many, the next waits for the reset.
func TestLimiterSpendsItsPartOfTheWindowThenWaits(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	reset := clock.Now().Add(time.Second)
	_ = l.wait(context.Background())
	l.done(rateHeader(40, 36, reset, false), http.StatusOK) // 4 counted, 1 its own: its part of the 36 left is 9
	if l.budget != 9 {
		t.Fatalf("budget %d, want 9", l.budget)
	}
	for i := range 10 {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if early := clock.Now().Before(reset); early != (i < 9) {
			t.Fatalf("request %d of the window started at %s, reset at %s: want the first 9 before it, the 10th after", i+1, clock.Now(), reset)
		}
	}
}

// Resets implausibly far away (the year 3000, milliseconds where seconds
// are meant, an hour away) with nothing remaining, or with what remains
// taken by other clients, never hold requests longer than the API's
// one-second window; the first is reported once.
func TestLimiterImplausibleResetIsCapped(t *testing.T) {
	t.Parallel()
	for name, hdr := range map[string]func(now time.Time) (remaining, limit string, reset int64){
		"year 3000":        func(time.Time) (string, string, int64) { return "0", "10", 32503680000 },
		"milliseconds":     func(now time.Time) (string, string, int64) { return "0", "10", now.Add(time.Second).UnixMilli() },
		"an hour away":     func(now time.Time) (string, string, int64) { return "0", "10", now.Add(time.Hour).Unix() },
		"others took them": func(now time.Time) (string, string, int64) { return "1", "10", now.Add(time.Hour).Unix() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			l := newLimiter(clock)
			reported := 0
			for range 20 {
				start := clock.Now()
				if err := l.wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				if waited := clock.Now().Sub(start); waited > maxResetAhead {
					t.Fatalf("a request waited %s", waited)
				}
				remaining, limit, reset := hdr(clock.Now())
				h := http.Header{}
				h.Set("X-RateLimit-Limit", limit)
				h.Set("X-RateLimit-Remaining", remaining)
				h.Set("X-RateLimit-Reset", itoa(reset))
				if !l.done(h, http.StatusOK).IsZero() {
					reported++
				}
			}
			if reported != 1 {
				t.Errorf("reported %d times, want once", reported)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{"0": 0, "7": 7 * time.Second, " 2 ": 2 * time.Second, "Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second}
	for in, want := range cases {
		if got, ok := parseRetryAfter(in, now); !ok || got != want {
			t.Errorf("%q: %s %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-1", "soon"} {
		if _, ok := parseRetryAfter(in, now); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// windowClient is a client, on a fake clock it gives svc too, of svc.
func windowClient(t *testing.T, svc *windowService) *Client {
	t.Helper()
	svc.clock = newFakeClock()
	ts := httptest.NewServer(svc)
	t.Cleanup(ts.Close)
	c, err := New(Options{BaseURL: ts.URL, APIKey: hostileKey, Clock: svc.clock})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// windowService counts arrivals in one-second windows of the client's own
// (fake) clock, as the API does, and answers 429 past the allowance.
type windowService struct {
	clock  *clocktest.Virtual
	limit  int
	skew   time.Duration // the service's clock minus the client's
	odd    bool          // Retry-After on every answer, not only on 429s
	mu     sync.Mutex
	window time.Time
	count  int
	over   int
	first  time.Time
	last   time.Time
	served int
}

func (s *windowService) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now().Add(s.skew)
	if s.odd {
		w.Header().Set("Retry-After", "1")
	}
	if win := now.Truncate(time.Second); !win.Equal(s.window) {
		s.window, s.count = win, 0
	}
	s.count++
	w.Header().Set("X-RateLimit-Limit", fmt.Sprint(s.limit))
	w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(max(s.limit-s.count, 0)))
	w.Header().Set("X-RateLimit-Reset", fmt.Sprint(s.window.Add(time.Second).Unix()))
	if s.count > s.limit {
		s.over++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"title":"Too Many Requests","status":429}`))
		return
	}
	if s.served == 0 {
		s.first = now
	}
	s.last = now
	s.served++
	_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2030-01-01T00:00:00Z"}`))
}

// At any allowance from 1 to 100 requests a second, a client alone uses at
// least 90% of it and is never refused (the measurements, and those of the
// spacing this replaced: BENCHMARKS.md, section 8).
func TestLimiterUsesMostOfTheAllowance(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 3, 5, 10, 20, 50, 100} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			svc := &windowService{limit: limit}
			c := windowClient(t, svc)
			n := max(10*limit, 30)
			for range n {
				if _, err := c.Token(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			used := float64(svc.served-1) / svc.last.Sub(svc.first).Seconds() / float64(limit)
			if svc.over != 0 || used < 0.9 {
				t.Errorf("allowance %d/s: %d refused, %.0f%% used", limit, svc.over, 100*used)
			}
		})
	}
}

// rateHeader is the headers of an answer counted in the window that ends at
// reset, with remaining left; a refusal adds Retry-After.
func rateHeader(limit, remaining int, reset time.Time, refused bool) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", itoa(int64(limit)))
	h.Set("X-RateLimit-Remaining", itoa(int64(remaining)))
	h.Set("X-RateLimit-Reset", itoa(reset.Unix()))
	if refused {
		h.Set("Retry-After", "1")
	}
	return h
}

// A refusal 600 ms into a window is the sign of clients the count cannot
// show (it stops at the allowance): the share is cut, and no request starts
// that late in a window again; one held past that point starts early in the
// next window. Windows of its own give both back.
func TestLimiterRefusalMovesStartsBeforeIt(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	l := newLimiter(clock)
	l.draw = func() float64 { return 0.5 }
	reset := clock.Now().Add(time.Second)
	_ = l.wait(context.Background())
	l.done(rateHeader(10, 9, reset, false), http.StatusOK)
	<-clock.After(600 * time.Millisecond)
	_ = l.wait(context.Background())
	l.done(rateHeader(10, 0, reset, true), http.StatusTooManyRequests)
	if l.share >= 1 || l.fillAt > 600*time.Millisecond-fillAtStep {
		t.Fatalf("after a refusal 600ms into the window: share %.2f, fillAt %s", l.share, l.fillAt)
	}
	// 700 ms into the next window: too late to start.
	<-clock.After(reset.Add(700 * time.Millisecond).Sub(clock.Now()))
	_ = l.wait(context.Background())
	started := clock.Now().Sub(reset.Add(time.Second)) // into the window after
	if started < 0 || started > l.fillAt/4 {
		t.Errorf("a request held past fillAt (%s) started %s into the next window, want within %s", l.fillAt, started, l.fillAt/4)
	}
	// Windows of its own (two answers each, none of others): the
	// allowance and the whole window come back.
	for w := 2; w <= 4; w++ {
		end := reset.Add(time.Duration(w) * time.Second)
		if d := end.Add(-time.Second).Sub(clock.Now()); d > 0 {
			<-clock.After(d)
		}
		if w > 2 {
			_ = l.wait(context.Background())
		}
		l.done(rateHeader(10, 9, end, false), http.StatusOK)
		_ = l.wait(context.Background())
		l.done(rateHeader(10, 8, end, false), http.StatusOK)
	}
	if l.fillAt != time.Second || l.share < 1 {
		t.Errorf("after windows of its own: share %.2f, fillAt %s; want the whole allowance back", l.share, l.fillAt)
	}
}

// Clients held to the same reset (the window spent) start at moments each
// draws, within the first part of the window, not all at the reset; a
// client that has met no other keeps the reset.
func TestLimiterSpreadsHeldStarts(t *testing.T) {
	t.Parallel()
	start := func(draw float64, others bool) time.Duration {
		clock := newFakeClock()
		l := newLimiter(clock)
		l.draw = func() float64 { return draw }
		reset := clock.Now().Add(time.Second)
		_ = l.wait(context.Background())
		remaining := 9
		if others {
			remaining = 5 // four counted, one of them its own
		}
		l.done(rateHeader(10, remaining, reset, false), http.StatusOK)
		l.budget = 0
		_ = l.wait(context.Background())
		return clock.Now().Sub(reset)
	}
	a, b := start(0.1, true), start(0.9, true)
	if a < 0 || b < 0 || b-a < 100*time.Millisecond || b > 250*time.Millisecond {
		t.Errorf("two clients held to one reset started %s and %s after it; want apart, within its first 250ms", a, b)
	}
	if alone := start(0.9, false); alone != 0 {
		t.Errorf("a client alone started %s after the reset, want at it", alone)
	}
}

// A service that misreports (Retry-After on every answer) or whose clock
// is off from the client's does not cut a lone client's pace: only a 429
// is a refusal, and windows located on a skewed clock still let the
// client use most of the allowance.
func TestLimiterOddServicesKeepTheAllowance(t *testing.T) {
	t.Parallel()
	for name, svc := range map[string]*windowService{
		"Retry-After on every answer": {odd: true},
		"service clock 3s ahead":      {skew: 3 * time.Second},
		"service clock 400ms behind":  {skew: -400 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc.limit = 10
			c := windowClient(t, svc)
			for range 60 {
				if _, err := c.Token(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			svc.mu.Lock()
			defer svc.mu.Unlock()
			used := float64(svc.served-1) / svc.last.Sub(svc.first).Seconds() / float64(svc.limit)
			if svc.over > 1 || used < 0.85 || c.limiter.share < 1 {
				t.Errorf("%d refused, %.0f%% of the allowance used, share %.2f", svc.over, 100*used, c.limiter.share)
			}
		})
	}
}

// A process that a crowd's refusals cut to the least share, and that the
// crowd then leaves alone, takes the allowance back: at 10/s and 20/s,
// within 40 requests it paces at the whole allowance again. (Before, a
// window alone needed two of its answers, which a share that small never
// gives: it kept 4% of the allowance.) At 2/s one answer a window cannot
// tell it alone from first (cutDeep); it gets back at least a quarter.
func TestLimiterAloneAfterACrowdTakesTheAllowanceBack(t *testing.T) {
	t.Parallel()
	for limit, want := range map[int]float64{2: 0.25, 10: 1, 20: 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			svc := &windowService{limit: limit}
			c := windowClient(t, svc)
			if _, err := c.Token(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.limiter.mu.Lock()
			c.limiter.share, c.limiter.fillAt = minShare, minFillAt // as a crowd's refusals leave it
			c.limiter.mu.Unlock()
			for range 40 {
				if _, err := c.Token(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			c.limiter.mu.Lock()
			defer c.limiter.mu.Unlock()
			if c.limiter.share < want || svc.over > 0 {
				t.Errorf("alone after 40 requests: share %.2f (want at least %.2f), fillAt %s, %d refused", c.limiter.share, want, c.limiter.fillAt, svc.over)
			}
		})
	}
}

// A limit must be positive to count; a remaining count of zero counts (it
// is the one that says "wait"); a reset must be a positive time.
func TestParseRateLimitBounds(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	if rl := parseRateLimit(header("X-RateLimit-Limit", "0"), now); rl != nil {
		t.Errorf("a limit of 0 read as %+v", rl)
	}
	if rl := parseRateLimit(header("X-RateLimit-Limit", "1"), now); rl == nil || !rl.HasLimit || rl.Limit != 1 {
		t.Errorf("a limit of 1 read as %+v", rl)
	}
	if rl := parseRateLimit(header("X-RateLimit-Remaining", "0"), now); rl == nil || rl.Remaining != 0 || rl.HasLimit {
		t.Errorf("nothing remaining read as %+v", rl)
	}
	if rl := parseRateLimit(header("X-RateLimit-Remaining", "-1"), now); rl != nil {
		t.Errorf("a negative remaining count read as %+v", rl)
	}
	if rl := parseRateLimit(header("X-RateLimit-Reset", "0"), now); rl != nil {
		t.Errorf("a reset at 0 read as %+v", rl)
	}
	if rl := parseRateLimit(header("X-RateLimit-Reset", "1"), now); rl == nil || rl.Reset.Unix() != 1 {
		t.Errorf("a reset at 1 read as %+v", rl)
	}
}

// The window a time falls in: the one told when the time is in it, but at
// its very start, the ones after it by whole seconds, none before it.
func TestEndOfWindow(t *testing.T) {
	t.Parallel()
	w := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	l := &limiter{windowEnd: w}
	for _, tc := range []struct {
		at   time.Duration // from the end told
		want time.Duration // end, from the end told
		ok   bool
	}{
		{-time.Second - time.Nanosecond, 0, false},
		{-time.Second, -time.Second, true}, // held as the previous window's end
		{-time.Nanosecond, 0, true},
		{0, time.Second, true},
		{999 * time.Millisecond, time.Second, true},
		{time.Second, 2 * time.Second, true},
	} {
		end, ok := l.endOfWindow(w.Add(tc.at))
		if ok != tc.ok || (ok && !end.Equal(w.Add(tc.want))) {
			t.Errorf("at %s: %s %t, want %s %t", tc.at, end.Sub(w), ok, tc.want, tc.ok)
		}
	}
	if _, ok := (&limiter{}).endOfWindow(w); ok {
		t.Error("a window before any was told")
	}
}
