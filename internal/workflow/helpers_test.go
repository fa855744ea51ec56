package workflow

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// newFakeClock is an Instant clock (every wait answered at once, and
// recorded) started at the beginning of the current second, as the
// client's tests use it.
func newFakeClock() *clocktest.Virtual { return clocktest.NewInstant(time.Now().Truncate(time.Second)) }

// serverError reports whether err holds the service's 5xx answer, as
// errors.Is(err, the client's unexported errServer) would.
func serverError(err error) bool {
	var apiErr *client.APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode >= http.StatusInternalServerError
}

// fixture is a mock service behind httptest and a runner of it.
type fixture struct {
	srv    *mockservice.Server
	url    string
	client *Runner
	clock  *clocktest.Virtual
}

// newFixture starts a mock (high rate limit unless set) and a runner with
// a fake clock; mod may change the client's options and the runner's
// settings.
func newFixture(t *testing.T, mo mockservice.Options, mod func(*client.Options, *Settings)) *fixture {
	t.Helper()
	if mo.RateLimit == 0 {
		mo.RateLimit = 10000
	}
	clk := newFakeClock()
	if mo.Clock == nil {
		mo.Clock = clk // the service's clock agrees with this machine's
	}
	srv := mockservice.New(mo)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	opts := client.Options{BaseURL: ts.URL, APIKey: srv.DemoKey(), Clock: clk, UserAgent: "test-agent/1", MaxRetries: client.DefaultMaxRetries}
	var s Settings
	if mod != nil {
		mod(&opts, &s)
	}
	return &fixture{srv: srv, url: ts.URL, client: newRunner(t, opts, s), clock: clk}
}

// newRunner is a runner of a new client with opts, on the client's clock.
func newRunner(t *testing.T, opts client.Options, s Settings) *Runner {
	t.Helper()
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return New(c, opts.Clock, nil, s)
}
