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

func TestMalformedAndTruncatedBodies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 9}, func(o *Options) { o.MaxRetries = 1 })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultMalformedJSON, Route: mockservice.RouteToken, Times: 1})
	_, err := f.client.Token(context.Background())
	var de *DecodeError
	if !errors.As(err, &de) || de.RequestID == "" || !strings.Contains(err.Error(), "not the expected JSON") {
		t.Fatalf("malformed: %v", err)
	}
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultTruncatedBody, Route: mockservice.RouteGetAccount})
	_, err = f.client.Account(context.Background(), f.srv.AccountIDs()[0])
	var te *TransportError
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
	if path != "/prefix/api/v1/token" || got.Get("X-API-Key") != "secret-key" || got.Get("User-Agent") != "terraform-provider-backup/1.2.3" {
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
		var re *RedirectError
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
		if tooLarge := errors.Is(err, ErrBodyTooLarge); tooLarge != (extra == 1) || (extra == 0 && err != nil) {
			t.Errorf("a body of the limit plus %d: %v", extra, err)
		}
	}
}
