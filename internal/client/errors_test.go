package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestErrorsCarryEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, mockservice.Options{Seed: 2}, nil)
	id := f.srv.AccountIDs()[0]
	paused := f.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	restricted, _ := New(Options{BaseURL: f.url, APIKey: f.srv.AddKey(mockservice.KeySpec{Restricted: []string{id}}), Clock: f.clock})
	badKey, _ := New(Options{BaseURL: f.url, APIKey: "not-a-key", Clock: f.clock})
	if _, err := f.client.Trigger(id).Post(ctx); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name     string
		call     func() error
		sentinel error
		status   int
		title    string
		detail   string
	}{
		{"400 invalid limit", func() error {
			err := f.client.do(ctx, call{method: "GET", path: "/api/v1/accounts", query: map[string][]string{"limit": {"x"}}}, nil)
			return err
		}, errBadRequest, 400, "Bad Request", "limit must be an integer."},
		{"401", func() error { _, err := badKey.Token(ctx); return err }, errUnauthenticated, 401, "Unauthenticated", ""},
		{"403 restricted", func() error { _, err := restricted.Account(ctx, id); return err }, ErrForbidden, 403, "You are not authorized to perform this action.", "The key may not access account " + id + "."},
		{"403 foreign", func() error { _, err := f.client.Account(ctx, f.srv.ForeignAccountID()); return err }, ErrForbidden, 403, "You are not authorized to perform this action.", ""},
		{"404", func() error { _, err := f.client.Account(ctx, "acc_0000000000000000"); return err }, ErrNotFound, 404, "Resource not found.", "No account acc_0000000000000000."},
		{"409", func() error { _, err := f.client.Trigger(id).Post(ctx); return err }, ErrConflict, 409, "Conflict", "A backup for account " + id + " is already in progress."},
		{"422 malformed id", func() error { _, err := f.client.Account(ctx, "acc_nope"); return err }, ErrUnprocessable, 422, "Unprocessable Entity", ""},
		{"422 not backupable", func() error { _, err := f.client.Trigger(paused).Post(ctx); return err }, ErrUnprocessable, 422, "Unprocessable Entity", "Account " + paused + " is not in a backupable state: paused"},
		{"422 order", func() error { _, err := Collect(f.client.Accounts(ctx, ListOptions{Order: "ASC"})); return err }, ErrUnprocessable, 422, "Unprocessable Entity", "order must be asc or desc."},
	}
	for _, tc := range cases {
		err := tc.call()
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Errorf("%s: %T %v", tc.name, err, err)
			continue
		}
		if !errors.Is(err, tc.sentinel) || apiErr.StatusCode != tc.status || apiErr.Title != tc.title || (tc.detail != "" && apiErr.Detail != tc.detail) {
			t.Errorf("%s: %+v", tc.name, apiErr)
		}
		if len(apiErr.RequestID) != 36 || !strings.Contains(err.Error(), apiErr.RequestID) {
			t.Errorf("%s: request id %q missing from %q", tc.name, apiErr.RequestID, err)
		}
		if apiErr.Method == "" || apiErr.Path == "" || apiErr.Instance == "" {
			t.Errorf("%s: method/path/instance missing: %+v", tc.name, apiErr)
		}
		if tc.status == 401 && apiErr.Detail != "" {
			t.Errorf("401 with detail %q", apiErr.Detail)
		}
	}
}

func TestNonProblemErrorBody(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Request-ID", "11111111-2222-4333-8444-555555555555")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html><body>\n<h1>502 Bad Gateway</h1>\n" + strings.Repeat("x", 100000) + "</body></html>"))
	}))
	defer ts.Close()
	c, _ := New(Options{BaseURL: ts.URL, APIKey: "k", Clock: newFakeClock(), MaxRetries: 0})
	_, err := c.Token(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || !apiErr.NotProblem || apiErr.StatusCode != http.StatusBadGateway || !errors.Is(err, errServer) {
		t.Fatalf("%T %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "502 Bad Gateway") || !strings.Contains(msg, "text/html") || !strings.Contains(msg, "11111111-2222-4333-8444-555555555555") || len(msg) > 600 {
		t.Errorf("message (%d chars): %s", len(msg), msg)
	}
}

// An error's text says only what it has: no empty title, and "none" for a
// missing request id.
func TestErrorTextsSayWhatTheyHave(t *testing.T) {
	t.Parallel()
	untitled := (&APIError{Method: "GET", Path: "/api/v1/token", StatusCode: 502, RequestID: "r1"}).Error()
	if untitled != "GET /api/v1/token: HTTP 502 (request id r1)" {
		t.Errorf("untitled: %q", untitled)
	}
	for id, want := range map[string]string{"": "(request id none)", "r2": "(request id r2)"} {
		msg := (&decodeError{Method: "GET", Path: "/x", StatusCode: 200, RequestID: id, Err: errors.New("eof")}).Error()
		if !strings.Contains(msg, want) {
			t.Errorf("request id %q: %q, want %q", id, msg, want)
		}
	}
}
