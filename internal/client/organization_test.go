package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestOrganizationGuard(t *testing.T) {
	t.Parallel()
	const other = "org_0000000000000000"
	t.Run("match: one token read for many triggers", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, mockservice.Options{Seed: 41}, nil)
		c, err := New(withOrg(f, f.srv.OrganizationID()))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, id := range f.srv.AccountIDs()[:4] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Trigger(id).Post(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n := f.srv.Requests(mockservice.RouteToken); n != 1 {
			t.Errorf("%d token reads for 4 triggers, want 1", n)
		}
	})
	t.Run("mismatch: no POST, both organizations named", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, mockservice.Options{Seed: 42}, nil)
		c, err := New(withOrg(f, other))
		if err != nil {
			t.Fatal(err)
		}
		id := f.srv.AccountIDs()[0]
		for range 2 {
			_, err = c.Trigger(id).Post(context.Background())
			var mm *OrganizationMismatchError
			if !errors.As(err, &mm) || !errors.Is(err, ErrWrongOrganization) {
				t.Fatalf("err = %v, want *OrganizationMismatchError", err)
			}
			for _, want := range []string{other, f.srv.OrganizationID(), `"Example Org"`, "nothing was changed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q lacks %q", err, want)
				}
			}
		}
		if n := f.srv.Requests(mockservice.RouteTrigger); n != 0 {
			t.Errorf("%d POSTs sent to the wrong organization", n)
		}
		if n := f.srv.BackupsQueued(id); n != 0 {
			t.Errorf("%d backups queued", n)
		}
		if n := f.srv.Requests(mockservice.RouteToken); n != 1 {
			t.Errorf("%d token reads, want 1 (a mismatch is final)", n)
		}
	})
	t.Run("token read fails: no POST, asked again next time", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, mockservice.Options{Seed: 43}, nil)
		opts := withOrg(f, f.srv.OrganizationID())
		opts.MaxRetries = 0 // no backoff: the fixture's clock stays beside the mock's
		c, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteToken, Times: 1})
		id := f.srv.AccountIDs()[0]
		if _, err := c.Trigger(id).Post(context.Background()); !errors.Is(err, ErrServer) {
			t.Fatalf("err = %v, want ErrServer", err)
		}
		if n := f.srv.Requests(mockservice.RouteTrigger); n != 0 {
			t.Errorf("%d POSTs before the organization was known", n)
		}
		if _, err := c.Trigger(id).Post(context.Background()); err != nil {
			t.Fatalf("second trigger: %v", err)
		}
		if n := f.srv.BackupsQueued(id); n != 1 {
			t.Errorf("%d backups queued, want 1", n)
		}
	})
}

// withOrg is the fixture's client options with an expected organization.
func withOrg(f *fixture, org string) Options {
	return Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: f.clock, UserAgent: "test-agent/1",
		MaxRetries: DefaultMaxRetries, Organization: org}
}

// A token answer that names no organization (a proxy's {}-like answer, or a
// service that left the field out) is no mismatch to report with an empty
// name, and no match either: nothing is triggered, and it is asked again.
func TestOrganizationGuardWithoutOrganizationInTheAnswer(t *testing.T) {
	t.Parallel()
	var posts, tokens atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/token":
			tokens.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"name":"ci","expires_at":"2030-01-01T00:00:00Z"}`))
		case r.Method == http.MethodPost:
			posts.Add(1)
			http.Error(w, "no", http.StatusTeapot)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, APIKey: "bks_test", Organization: "org_8Fq2LmT0aZ7cX1vB", Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := c.Trigger("acc_0123456789abcdef").Post(context.Background())
		var de *DecodeError
		if !errors.As(err, &de) || errors.Is(err, ErrWrongOrganization) || !strings.Contains(err.Error(), "names no organization") {
			t.Fatalf("err = %v, want a decode error saying the answer names no organization", err)
		}
	}
	if posts.Load() != 0 || tokens.Load() != 2 {
		t.Errorf("%d POSTs and %d token reads; want none and 2 (not remembered)", posts.Load(), tokens.Load())
	}
}
