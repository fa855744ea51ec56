package client

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Decoding a problem body never fails or panics, and the result always
// names the status and says where the request id is.
func FuzzParseProblem(f *testing.F) {
	for _, seed := range []string{
		`{"title":"Conflict","status":409,"detail":"A backup for account acc_x is already in progress.","request_id":"r"}`,
		`{"title":"Unauthenticated","status":401,"request_id":"r"}`,
		`<html><h1>502</h1></html>`, ``, `null`, `[]`, `{"title":1}`, "\x00\xff", `{"status":"x"}`,
	} {
		f.Add(seed, 409)
	}
	f.Fuzz(func(t *testing.T, body string, status int) {
		if status < 400 || status > 599 {
			status = 500
		}
		e := parseProblem("GET", "/api/v1/x", status, http.Header{}, []byte(body), time.Now())
		msg := e.Error()
		if e.StatusCode != status || !strings.Contains(msg, "HTTP") || len(msg) > 2000+len(e.Title)+len(e.Detail) {
			t.Fatalf("%q", msg)
		}
		if e.NotProblem && len([]rune(e.Detail)) > snippetLen+200 {
			t.Fatalf("unbounded detail: %d", len(e.Detail))
		}
	})
}

// Decoding a page never panics; a page either decodes or returns an error.
func FuzzDecodePage(f *testing.F) {
	for _, seed := range []string{
		`{"data":[{"id":"acc_0123456789abcdef","name":"n","backup_status":"success","platform":"slack","service_type":"backup","created_at":"2026-01-01T00:00:00Z"}],"pagination":{"limit":50,"next_cursor":null}}`,
		`{"data":[],"pagination":{"limit":50}}`,
		`{"data":[{"id":1}]}`, `{"data":null,"pagination":null}`, `{"pagination":{"next_cursor":"abc"}}`,
		`{"data":[{"id":"bkp_x","status":"weird","completed_at":null,"error":"boom"}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var a page[Account]
		_ = json.Unmarshal([]byte(body), &a)
		var b page[Backup]
		_ = json.Unmarshal([]byte(body), &b)
		var l page[AuditLog]
		_ = json.Unmarshal([]byte(body), &l)
	})
}

// Rate-limit headers of any content never panic.
func FuzzParseRateLimit(f *testing.F) {
	f.Add("20", "0", "1767225600", "3")
	f.Add("", "", "", "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add("-1", "x", "99999999999999999999", "-5")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, retry string) {
		h := http.Header{}
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", reset)
		h.Set("Retry-After", retry)
		if rl := parseRateLimit(h, time.Now()); rl != nil && (rl.Limit < 0 || rl.RetryAfter < 0) {
			t.Fatalf("%+v", rl)
		}
	})
}
