package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
)

// Tests against services that misbehave: listings that never end, bodies
// too large, text meant to leak the key or rewrite a terminal, connections
// no retry can fix. Each plays one faulty service with httptest.

func accountJSON(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"n","backup_status":"success","platform":"slack","service_type":"backup","created_at":"2026-01-01T00:00:00Z"}`, id)
}

// hostileListings are the accounts listings of faulty services that once
// grew a plan's memory without bound, by request number (1, 2, ...): the
// tests check each stops, BenchmarkHostileListingPeakHeap measures the
// memory it takes to stop.
var hostileListings = map[string]func(n int64) string{
	// New cursors without end, 50 new records a page.
	"endless-cursors": func(n int64) string {
		items := make([]string, pageSize)
		for i := range items {
			items[i] = accountJSON(fmt.Sprintf("acc_%016d", n*pageSize+int64(i)))
		}
		return fmt.Sprintf(`{"data":[%s],"pagination":{"limit":50,"next_cursor":"c%d"}}`, strings.Join(items, ","), n)
	},
	// One page of 20,000 records.
	"page-of-20000": func(int64) string {
		items := make([]string, 20000)
		for i := range items {
			items[i] = accountJSON(fmt.Sprintf("acc_%016d", i))
		}
		return fmt.Sprintf(`{"data":[%s],"pagination":{"limit":50,"next_cursor":null}}`, strings.Join(items, ","))
	},
	// Pages of 50 records of 14 KB each, without end.
	"huge-records": func(n int64) string {
		name := strings.Repeat("x", 14000)
		items := make([]string, pageSize)
		for i := range items {
			items[i] = fmt.Sprintf(`{"id":"acc_%016d","name":%q,"created_at":"2026-01-01T00:00:00Z"}`, n*pageSize+int64(i), name)
		}
		return fmt.Sprintf(`{"data":[%s],"pagination":{"limit":50,"next_cursor":"c%d"}}`, strings.Join(items, ","), n)
	},
}

func hostileListing(t *testing.T, name string) (*Client, *atomic.Int64) {
	t.Helper()
	requests := &atomic.Int64{}
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(hostileListings[name](requests.Add(1))))
	}, nil)
	return c, requests
}

func TestListingEndlessNewCursorsStopsAtTheBound(t *testing.T) {
	t.Parallel()
	c, requests := hostileListing(t, "endless-cursors")
	accs, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	var le *ListingError
	if !errors.Is(err, errListingTooLong) || !errors.As(err, &le) {
		t.Fatalf("want errListingTooLong, got %v", err)
	}
	if requests.Load() != maxListPages || le.Pages != maxListPages || len(accs) != maxListPages*pageSize {
		t.Errorf("%d requests, %d pages, %d accounts", requests.Load(), le.Pages, len(accs))
	}
	if !strings.Contains(err.Error(), "/api/v1/accounts") || !strings.Contains(err.Error(), "2000 pages") {
		t.Errorf("the error does not name the listing and the bound: %v", err)
	}
}

// Empty pages that keep a cursor, whether or not max_results is set (it
// counts records, so it never stopped such a listing).
func TestListingBarrenPagesStop(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 5} {
		var requests atomic.Int64
		c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
			n := requests.Add(1)
			_, _ = fmt.Fprintf(w, `{"data":[],"pagination":{"limit":50,"next_cursor":"c%d"}}`, n)
		}, nil)
		_, err := Collect(c.Backups(context.Background(), "acc_0123456789abcdef", ListOptions{Max: limit}))
		if !errors.Is(err, errBarrenPages) {
			t.Fatalf("limit %d: want errBarrenPages, got %v", limit, err)
		}
		if requests.Load() != maxBarrenPages {
			t.Errorf("limit %d: %d requests, want %d", limit, requests.Load(), maxBarrenPages)
		}
	}
}

// Pages that repeat records already seen, with new cursors, are barren too.
func TestListingPagesOfRepeatsStop(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		n := requests.Add(1)
		_, _ = fmt.Fprintf(w, `{"data":[%s],"pagination":{"limit":50,"next_cursor":"c%d"}}`, accountJSON("acc_0123456789abcdef"), n)
	}, nil)
	accs, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	if !errors.Is(err, errBarrenPages) || len(accs) != 1 || requests.Load() != 1+maxBarrenPages {
		t.Fatalf("%d accounts, %d requests: %v", len(accs), requests.Load(), err)
	}
}

func TestListingPageOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	c, _ := hostileListing(t, "page-of-20000")
	accs, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	if !errors.Is(err, errOversizedPage) || len(accs) != 0 {
		t.Fatalf("%d accounts: %v", len(accs), err)
	}
}

// Pages within the record count whose records are huge: the listing stops
// at maxListBytes, not at the memory of the machine.
func TestListingBytesAreBounded(t *testing.T) {
	t.Parallel()
	c, requests := hostileListing(t, "huge-records")
	_, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	if !errors.Is(err, errListingTooLong) || !strings.Contains(err.Error(), "32 MiB") {
		t.Fatalf("want the byte bound, got %v", err)
	}
	if n := requests.Load(); n > maxListBytes/(pageSize*14000)+2 {
		t.Errorf("%d requests", n)
	}
}

// countingBody is an endless body that counts the bytes read from it.
type countingBody struct{ read atomic.Int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	b.read.Add(int64(len(p)))
	return len(p), nil
}

func (*countingBody) Close() error { return nil }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A redirect's or an error's body is read no further than the error limit, from 300 on.
func TestNonSuccessBodyIsReadOnlyToTheErrorLimit(t *testing.T) {
	t.Parallel()
	for _, status := range []int{300, 399, 404, 500} {
		body := &countingBody{}
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: body, Request: r}, nil
		})}
		c, err := New(Options{BaseURL: "http://127.0.0.1:1", APIKey: "bks_secretsecretsecret", HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Token(context.Background()); err == nil {
			t.Fatalf("HTTP %d: no error", status)
		}
		if n := body.read.Load(); n > 2*maxErrorBody {
			t.Errorf("HTTP %d: read %d bytes of the body, want at most about %d", status, n, maxErrorBody)
		}
	}
}

func TestSuccessBodyOverTheLimitSaysSo(t *testing.T) {
	t.Parallel()
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, `{"name":"ci","expires_at":"2030-01-01T00:00:00Z","pad":"%s"}`, strings.Repeat("x", maxSuccessBody))
	}, nil)
	_, err := c.Token(context.Background())
	if !errors.Is(err, errBodyTooLarge) || !strings.Contains(err.Error(), "8 MiB") {
		t.Fatalf("want errBodyTooLarge naming the limit, got %v", err)
	}
}

// Records whose id is malformed are left out of listings, and counted once.
func TestListingSkipsMalformedIDs(t *testing.T) {
	t.Parallel()
	bad := []string{"acc_short", "../../api/v1/token", "acc_" + strings.Repeat("A", 5000), "acc_0123456789abcde\n"}
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		items := []string{accountJSON("acc_0123456789abcdef")}
		for _, id := range bad {
			items = append(items, accountJSON(id))
		}
		items = append(items, accountJSON("acc_fedcba9876543210"))
		_, _ = fmt.Fprintf(w, `{"data":[%s],"pagination":{"limit":50,"next_cursor":null}}`, strings.Join(items, ","))
	}, nil)
	calls, count, example := 0, 0, ""
	accs, err := Collect(c.Accounts(context.Background(), ListOptions{Skipped: func(n int, ex string) { calls, count, example = calls+1, n, ex }}))
	if err != nil || len(accs) != 2 {
		t.Fatalf("%d accounts: %v", len(accs), err)
	}
	if calls != 1 || count != len(bad) || example != `"acc_short"` {
		t.Errorf("skipped reported %d time(s): %d, example %s", calls, count, example)
	}
}

// A backups listing of one account yields only that account's backups:
// one naming another account is left out, so that no caller can take it
// for the account's own (the workflow's rule relies on it).
func TestBackupsListingLeavesOutOtherAccounts(t *testing.T) {
	t.Parallel()
	backup := func(id, account string) string {
		return fmt.Sprintf(`{"id":%q,"account_id":%q,"status":"success","created_at":"2026-11-28T10:00:00Z","completed_at":"2026-11-28T10:01:00Z","error":null}`, id, account)
	}
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, `{"data":[%s,%s],"pagination":{"limit":50,"next_cursor":null}}`,
			backup("bkp_0123456789abcdef", "acc_fedcba9876543210"), backup("bkp_fedcba9876543210", "acc_0123456789abcdef"))
	}, nil)
	p, err := c.FirstBackupsPage(context.Background(), "acc_0123456789abcdef")
	if err != nil || len(p.Backups) != 1 || p.Backups[0].ID != "bkp_fedcba9876543210" {
		t.Fatalf("listed %+v (%v); want the account's own backup only", p.Backups, err)
	}
}

// Text from the service reaches errors cleaned: the key masked wherever it
// is echoed, control characters (escape sequences) gone, length bounded, a
// request id that is not a UUID quoted and cut.
func TestServerTextIsGuarded(t *testing.T) {
	t.Parallel()
	esc := "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\Plan: 0 to add\x1b]8;;\x1b\\"
	cases := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   string
	}{
		{"key in detail", 401, nil, `{"title":"Unauthenticated","status":401,"detail":"The API key ` + hostileKey + ` is not valid","request_id":"0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d"}`, redacted},
		{"key in an html page", 502, map[string]string{"Content-Type": "text/html"}, `<html><body>bad gateway for key ` + hostileKey + `</body></html>`, redacted},
		{"key in an undecodable field", 200, nil, `{"name":"ci","expires_at":"bad-` + hostileKey + `"}`, "bad-" + redacted},
		{"key broken up by control characters", 400, nil, `{"title":"Bad","status":400,"detail":"` + strings.Join(strings.Split(hostileKey, "_"), "\\u0000_") + `"}`, redacted},
		{"escape sequences", 400, nil, `{"title":"` + jsonEscape(esc) + `","status":400,"detail":"` + jsonEscape(esc) + `","request_id":"` + jsonEscape(esc) + `"}`, "Plan: 0 to add"},
		{"bidi override in X-Request-ID", 500, map[string]string{"X-Request-ID": "abc\u202edef"}, `{}`, `"abcdef"`},
		{"a 2 MiB request id", 404, map[string]string{"X-Request-ID": strings.Repeat("r", 2<<20)}, ``, "cut"},
		{"a 60 KB detail", 400, nil, `{"title":"Bad","status":400,"detail":"` + strings.Repeat("d", 60000) + `"}`, "cut: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}, func(o *Options) { o.MaxRetries = 0 })
			_, err := c.Token(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, hostileKey) {
				t.Errorf("the key is shown: %q", msg)
			}
			if i := strings.IndexFunc(msg, unicode.IsControl); i >= 0 {
				t.Errorf("control character %q in %q", msg[i], msg)
			}
			if len(msg) > 3000 {
				t.Errorf("%d bytes of error", len(msg))
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%q does not contain %q", msg, tc.want)
			}
		})
	}
}

func jsonEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// A failed backup's error text is shown cleaned too.
func TestBackupErrorTextIsGuarded(t *testing.T) {
	t.Parallel()
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintf(w, `{"data":[{"id":"bkp_0123456789abcdef","account_id":"acc_0123456789abcdef","status":"failed\u001b[2J",`+
			`"created_at":"2026-01-01T00:00:00Z","error":"disk full \u001b]0;x\u0007 %s"}],"pagination":{"limit":50,"next_cursor":null}}`, hostileKey)
	}, nil)
	bks, err := Collect(c.Backups(context.Background(), "acc_0123456789abcdef", ListOptions{}))
	if err != nil || len(bks) != 1 {
		t.Fatal(err)
	}
	msg := bks[0].Status + " " + *bks[0].Error
	if strings.Contains(msg, hostileKey) || strings.ContainsFunc(msg, unicode.IsControl) || !strings.Contains(msg, "disk full") {
		t.Errorf("%q", msg)
	}
}

func TestRedirectLocationHidesQueryValues(t *testing.T) {
	t.Parallel()
	c, _ := hostileClient(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://login.example.com/sso?token=abc123&next=%2Fhome#frag", http.StatusFound)
	}, nil)
	_, err := c.Token(context.Background())
	var re *redirectError
	if !errors.As(err, &re) {
		t.Fatalf("%T %v", err, err)
	}
	if strings.Contains(err.Error(), "abc123") || strings.Contains(err.Error(), "frag") || !strings.Contains(err.Error(), "login.example.com") {
		t.Errorf("%q", err.Error())
	}
}

// A service that never sends rate-limit headers (an aggregate limit only,
// or a proxy that strips them) ends the one-at-a-time probe: a request
// that hangs no longer holds every other one.
func TestProbeEndsWithoutRateLimitHeaders(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/accounts/acc_0000000000000hang") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = w.Write([]byte(`{"id":"acc_0123456789abcdef","name":"ci","expires_at":"2030-01-01T00:00:00Z"}`))
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	c, err := New(Options{BaseURL: ts.URL, APIKey: hostileKey})
	if err != nil {
		t.Fatal(err)
	}
	for range maxHeaderlessProbes {
		if _, err := c.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = c.Account(context.Background(), "acc_0000000000000hang") }()
	time.Sleep(20 * time.Millisecond) // let the hanging request start: ordering only, no assertion on time
	done := make(chan error, 1)
	go func() { _, err := c.Token(context.Background()); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a request waited behind one that hangs")
	}
}

// Failures no retry can fix fail at once, with a reason to act on.
func TestPermanentConnectionFailuresAreNotRetried(t *testing.T) {
	t.Parallel()
	tlsServer := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(plain.Close)
	noDNS := &http.Client{Transport: &http.Transport{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}}
	cases := []struct {
		name, url string
		hc        *http.Client
		want      error
	}{
		{"untrusted certificate", tlsServer.URL, nil, ErrUntrustedCertificate},
		{"https to a plain http server", strings.Replace(plain.URL, "http://", "https://", 1), nil, ErrNotTLS},
		{"host that does not resolve", "https://backup.example.com", noDNS, ErrHostNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			c, err := New(Options{BaseURL: tc.url, APIKey: hostileKey, Clock: clock, HTTPClient: tc.hc})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Token(context.Background())
			var ce *ConnectionError
			var re *RetryError
			if !errors.Is(err, tc.want) || !errors.As(err, &ce) || errors.As(err, &re) {
				t.Fatalf("want a ConnectionError for %v without retries, got %T %v", tc.want, err, err)
			}
			if len(clock.Waits()) != 0 {
				t.Errorf("waited %v before failing", clock.Waits())
			}
		})
	}
}

func TestAttemptTimeoutNamesRequestTimeout(t *testing.T) {
	t.Parallel()
	c, _ := hostileClient(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		func(o *Options) { o.RequestTimeout, o.MaxRetries = 50*time.Millisecond, -1 })
	_, err := c.Token(context.Background())
	var te *TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "no response within request_timeout (50ms)") ||
		strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("%T %v", err, err)
	}
}
