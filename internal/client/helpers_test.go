package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// newFakeClock is an Instant clock (every wait answered at once, and
// recorded) started at the beginning of the current second. Rate-limit
// windows are whole seconds: a clock started at time.Now() put the
// window's reset anywhere from 0 to 1 s away, and a limiter test failed
// whenever it began near a second's end (found by make stress). Tests now
// get the same window every time.
func newFakeClock() *clocktest.Virtual { return clocktest.NewInstant(time.Now().Truncate(time.Second)) }

// fixture is a mock service behind httptest and a client of it.
type fixture struct {
	srv    *mockservice.Server
	url    string
	client *Client
	clock  *clocktest.Virtual
}

// newFixture starts a mock (high rate limit unless set) and a client with a
// fake clock; mod may change the client's options.
func newFixture(t *testing.T, mo mockservice.Options, mod func(*Options)) *fixture {
	t.Helper()
	if mo.RateLimit == 0 {
		mo.RateLimit = 10000
	}
	srv := mockservice.New(mo)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	clock := newFakeClock()
	opts := Options{BaseURL: ts.URL, APIKey: srv.DemoKey(), Clock: clock, UserAgent: "test-agent/1", MaxRetries: DefaultMaxRetries}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, url: ts.URL, client: c, clock: clock}
}

func sprint(format string, v any) string { return fmt.Sprintf(format, v) }

func itoa(n int64) string { return fmt.Sprint(n) }

// hostileKey is the key of clients built by hostileClient (and other
// tests): services that misbehave echo it, and tests check it never shows.
const hostileKey = "bks_hostileKEY000000000001"

// hostileClient is a client, on a fake clock, of the service h plays with
// httptest; mod may change its options.
func hostileClient(t *testing.T, h http.HandlerFunc, mod func(*Options)) (*Client, *clocktest.Virtual) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	clock := newFakeClock()
	opts := Options{BaseURL: ts.URL, APIKey: hostileKey, Clock: clock}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, clock
}

// latestSuccess is one account's outcome of LatestSuccesses.
func latestSuccess(ctx context.Context, c *Client, accountID string) (*Backup, error) {
	o := c.LatestSuccesses(ctx, []string{accountID}, nil)[0]
	return o.Latest, o.Err
}
