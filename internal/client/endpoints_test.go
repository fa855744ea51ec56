package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestEveryEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, mockservice.Options{Seed: 1, Accounts: 3, AuditLogs: 4}, nil)
	id := f.srv.AccountIDs()[0]

	tok, err := f.client.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name != mockservice.DemoKeyName || tok.Organization.ID != f.srv.OrganizationID() || tok.Organization.Name != "Example Org" ||
		time.Until(tok.ExpiresAt) < 89*24*time.Hour {
		t.Errorf("token %+v", tok)
	}

	acc, err := f.client.Account(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if acc.ID != id || acc.BackupStatus != "success" || acc.Platform == "" || acc.ServiceType != "backup" || acc.Name == "" || acc.CreatedAt.IsZero() {
		t.Errorf("account %+v", acc)
	}

	accs, err := f.client.ListAccounts(ctx, ListOptions{})
	if err != nil || len(accs) != 3 {
		t.Fatalf("accounts: %d, %v", len(accs), err)
	}

	tr, err := f.client.TriggerBackup(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Account == nil || tr.Account.BackupStatus != StatusPending || tr.Recovered || !strings.HasPrefix(tr.Backup.ID, "bkp_") ||
		tr.Backup.Status != StatusPending || tr.Backup.AccountID != id {
		t.Errorf("triggered %+v", tr)
	}

	bks, err := f.client.ListBackups(ctx, id, ListOptions{})
	if err != nil || len(bks) != 1 || bks[0].ID != tr.Backup.ID {
		t.Fatalf("backups %v %v", bks, err)
	}
	b, err := f.client.FindBackup(ctx, id, tr.Backup.ID)
	if err != nil || b.ID != tr.Backup.ID {
		t.Fatalf("find %v %v", b, err)
	}
	if _, err := f.client.FindBackup(ctx, id, "bkp_0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("find missing: %v", err)
	}

	logs, err := f.client.ListAuditLogs(ctx, ListOptions{Order: OrderDesc})
	if err != nil || len(logs) != 5 {
		t.Fatalf("audit logs %d %v", len(logs), err)
	}
	if l := logs[0]; l.Action != "backup.triggered" || l.ResourceID != id || l.Actor != "api_key:"+mockservice.DemoKeyName || l.ResourceType != "account" {
		t.Errorf("newest audit log %+v", l)
	}
}

func TestErrorsCarryEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, mockservice.Options{Seed: 2}, nil)
	id := f.srv.AccountIDs()[0]
	paused := f.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	restricted, _ := New(Options{BaseURL: f.url, APIKey: f.srv.AddKey(mockservice.KeySpec{Restricted: []string{id}}), Clock: f.clock})
	badKey, _ := New(Options{BaseURL: f.url, APIKey: "not-a-key", Clock: f.clock})
	if _, err := f.client.TriggerBackup(ctx, id); err != nil {
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
		}, ErrBadRequest, 400, "Bad Request", "limit must be an integer."},
		{"401", func() error { _, err := badKey.Token(ctx); return err }, ErrUnauthenticated, 401, "Unauthenticated", ""},
		{"403 restricted", func() error { _, err := restricted.Account(ctx, id); return err }, ErrForbidden, 403, "You are not authorized to perform this action.", "The key may not access account " + id + "."},
		{"403 foreign", func() error { _, err := f.client.Account(ctx, f.srv.ForeignAccountID()); return err }, ErrForbidden, 403, "You are not authorized to perform this action.", ""},
		{"404", func() error { _, err := f.client.Account(ctx, "acc_0000000000000000"); return err }, ErrNotFound, 404, "Resource not found.", "No account acc_0000000000000000."},
		{"409", func() error { _, err := f.client.TriggerBackup(ctx, id); return err }, ErrConflict, 409, "Conflict", "A backup for account " + id + " is already in progress."},
		{"422 malformed id", func() error { _, err := f.client.Account(ctx, "acc_nope"); return err }, ErrUnprocessable, 422, "Unprocessable Entity", ""},
		{"422 not backupable", func() error { _, err := f.client.TriggerBackup(ctx, paused); return err }, ErrUnprocessable, 422, "Unprocessable Entity", "Account " + paused + " is not in a backupable state: paused"},
		{"422 order", func() error { _, err := f.client.ListAccounts(ctx, ListOptions{Order: "ASC"}); return err }, ErrUnprocessable, 422, "Unprocessable Entity", "order must be asc or desc."},
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
	if !errors.As(err, &apiErr) || !apiErr.NotProblem || apiErr.StatusCode != http.StatusBadGateway || !errors.Is(err, ErrServer) {
		t.Fatalf("%T %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "502 Bad Gateway") || !strings.Contains(msg, "text/html") || !strings.Contains(msg, "11111111-2222-4333-8444-555555555555") || len(msg) > 600 {
		t.Errorf("message (%d chars): %s", len(msg), msg)
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
	if path != "/prefix/api/v1/token" || got.Get("X-API-Key") != "secret-key" || got.Get("User-Agent") != "terraform-provider-backup/1.2.3" {
		t.Errorf("path %s headers %v", path, got)
	}
	if got.Get("Authorization") != "" {
		t.Error("the key travelled in Authorization too")
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	const key = "very-secret-key-123"
	c, err := New(Options{BaseURL: "https://backup.example.com", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		sprint("%v", c), sprint("%+v", c), sprint("%#v", c), sprint("%s", c.key), sprint("%#v", c.opts),
	} {
		if strings.Contains(s, key) {
			t.Fatalf("key printed: %s", s)
		}
	}
}
