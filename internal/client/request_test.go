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
