package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

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
			var re *RedirectError
			if !errors.As(err, &re) || !errors.Is(err, ErrRedirect) {
				t.Fatalf("err = %v, want a *RedirectError", err)
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
	if !errors.Is(err, ErrRedirect) {
		t.Fatalf("trigger: err = %v, want ErrRedirect", err)
	}
	if _, err := f.client.Account(context.Background(), acct); !errors.Is(err, ErrRedirect) {
		t.Fatalf("account: err = %v, want ErrRedirect", err)
	}
	if n := f.srv.BackupsQueued(acct); n != 0 {
		t.Errorf("%d backups queued, want 0", n)
	}
	if n, keys := other.counts(); n != 0 || keys != 0 {
		t.Errorf("the other host got %d requests, %d carrying the key; want none", n, keys)
	}
}
