package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
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

	accs, err := Collect(f.client.Accounts(ctx, ListOptions{}))
	if err != nil || len(accs) != 3 {
		t.Fatalf("accounts: %d, %v", len(accs), err)
	}

	trigger := f.client.Trigger(id)
	acct, err := trigger.Post(ctx)
	sent := trigger.Sent()
	if err != nil {
		t.Fatal(err)
	}
	if acct == nil || acct.ID != id || acct.BackupStatus != StatusPending || !sent {
		t.Errorf("triggered %+v, sent %t", acct, sent)
	}

	bks, err := Collect(f.client.Backups(ctx, id, ListOptions{}))
	if err != nil || len(bks) != 1 || !strings.HasPrefix(bks[0].ID, "bkp_") || bks[0].Status != StatusPending || bks[0].AccountID != id {
		t.Fatalf("backups %v %v", bks, err)
	}
	b, err := f.client.FindBackup(ctx, id, bks[0].ID)
	if err != nil || b.ID != bks[0].ID {
		t.Fatalf("find %v %v", b, err)
	}
	if _, err := f.client.FindBackup(ctx, id, "bkp_0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("find missing: %v", err)
	}

	logs, err := Collect(f.client.AuditLogs(ctx, ListOptions{Order: OrderDesc}))
	if err != nil || len(logs) != 5 {
		t.Fatalf("audit logs %d %v", len(logs), err)
	}
	if l := logs[0]; l.Action != "backup.triggered" || l.ResourceID != id || l.Actor != "api_key:"+mockservice.DemoKeyName || l.ResourceType != "account" {
		t.Errorf("newest audit log %+v", l)
	}
}

// LatestSuccesses against services that answer oddly: a success without
// completed_at is no good backup (Backup.Good), so none is found; pages of
// failures that never end stop with a *ListingError instead of reading forever.
func TestLatestSuccessAgainstOddServices(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	t.Run("success without completed_at", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"data":[{"id":"bkp_0123456789abcdef","account_id":"acc_0123456789abcdef","status":"success","created_at":%q}],"pagination":{"next_cursor":null}}`,
				created.Format(time.RFC3339))
		}))
		t.Cleanup(srv.Close)
		c, err := New(Options{BaseURL: srv.URL, APIKey: "bks_test", Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		b, err := latestSuccess(context.Background(), c, "acc_0123456789abcdef")
		if err != nil || b != nil {
			t.Fatalf("%+v %v, want no good backup", b, err)
		}
	})
	t.Run("failures without end", func(t *testing.T) {
		t.Parallel()
		page := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			page++
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"data":[{"id":"bkp_%016d","account_id":"acc_0123456789abcdef","status":"failed","created_at":%q}],"pagination":{"next_cursor":"c"}}`,
				page, created.Format(time.RFC3339))
		}))
		t.Cleanup(srv.Close)
		c, err := New(Options{BaseURL: srv.URL, APIKey: "bks_test", Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = latestSuccess(context.Background(), c, "acc_0123456789abcdef")
		var le *ListingError
		if !errors.As(err, &le) || page > 3 {
			t.Fatalf("err = %v after %d pages, want a *ListingError within a few pages", err, page)
		}
	})
}

const (
	absentAccount = "acc_0123456789abcdef"
	aRequestID    = "0b7f4c2e-9d1a-4e8b-a3c5-6f2d1e0b9a87"
	serviceNotFnd = `{"title":"Resource not found.","status":404,"detail":"No account.","request_id":"` + aRequestID + `"}`
	tokenBody     = `{"name":"ci","expires_at":"2030-01-01T00:00:00Z","organization":{"id":"org_8Fq2LmT0aZ7cX1vB","name":"Org"}}`
)

// absenceService answers the account's paths with one answer and the
// token endpoint with another, and counts token reads.
type absenceService struct {
	status      int
	contentType string
	body        string
	tokenStatus int
	tokenReads  atomic.Int64
}

func (s *absenceService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/v1/token" {
		s.tokenReads.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.tokenStatus)
		if s.tokenStatus == http.StatusOK {
			_, _ = w.Write([]byte(tokenBody))
		} else {
			_, _ = w.Write([]byte(`{"title":"Resource not found.","status":404,"request_id":"` + aRequestID + `"}`))
		}
		return
	}
	if s.contentType != "" {
		w.Header().Set("Content-Type", s.contentType)
	}
	w.WriteHeader(s.status)
	_, _ = w.Write([]byte(s.body))
}

// Only the service's own problem 404, from a base URL whose token endpoint
// answers 200 for the key, proves an account gone; every look-alike is an
// *UnprovenAbsenceError naming the status and the path, for the account
// read and for the backups listing alike.
func TestAbsenceNeedsTheServicesOwnAnswerAndAProvenBaseURL(t *testing.T) {
	t.Parallel()
	problem := func(status int, title, id string) string {
		b, _ := json.Marshal(map[string]any{"title": title, "status": status, "request_id": id})
		return string(b)
	}
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		tokenStatus int
		wantGone    bool
		wantWhy     string
	}{
		{"the service's 404, token 200", 404, "application/problem+json", serviceNotFnd, 200, true, ""},
		{"the service's 404, token 404 (a wrong prefix)", 404, "application/problem+json", serviceNotFnd, 404, false, "did not prove itself"},
		{"the service's 404, token 500", 404, "application/problem+json", serviceNotFnd, 500, false, "did not prove itself"},
		{"the service's 404, token 401", 404, "application/problem+json", serviceNotFnd, 401, false, "did not prove itself"},
		{"a proxy's HTML 404", 404, "text/html", "<html><body>404 Not Found</body></html>", 200, false, "not a problem document"},
		{"an empty 404", 404, "", "", 200, false, "not a problem document"},
		{"a {} 404", 404, "application/json", "{}", 200, false, "not a problem document"},
		{"a problem without a request id", 404, "application/problem+json", problem(404, "Resource not found.", ""), 200, false, "request id"},
		{"a problem with a request id not of the service's form", 404, "application/problem+json", problem(404, "Resource not found.", "abc"), 200, false, "request id"},
		{"a problem whose status is not 404", 404, "application/problem+json", problem(500, "Oops", aRequestID), 200, false, "status is 500"},
		{"a problem without a title", 404, "application/problem+json", problem(404, "", aRequestID), 200, false, "no title"},
		{"a 410", 410, "application/problem+json", problem(410, "Gone", aRequestID), 200, false, "HTTP 410"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc := &absenceService{status: tc.status, contentType: tc.contentType, body: tc.body, tokenStatus: tc.tokenStatus}
			c, _ := hostileClient(t, svc.ServeHTTP, func(o *Options) { o.MaxRetries = 0 })
			_, accountErr := c.Account(t.Context(), absentAccount)
			_, listErr := latestSuccess(t.Context(), c, absentAccount)
			_, triggerErr := c.Trigger(absentAccount).Post(t.Context())
			for what, err := range map[string]error{"account read": accountErr, "backups listing": listErr, "trigger": triggerErr} {
				var gone *goneError
				var unproven *UnprovenAbsenceError
				switch {
				case tc.wantGone && !errors.As(err, &gone):
					t.Errorf("%s: %v; want a *goneError", what, err)
				case tc.wantGone:
				case errors.Is(err, ErrGone):
					t.Errorf("%s: %v proves absence; it must not", what, err)
				case !errors.As(err, &unproven) || !strings.Contains(unproven.Why, tc.wantWhy):
					t.Errorf("%s: %v; want an *UnprovenAbsenceError saying %q", what, err, tc.wantWhy)
				case !strings.Contains(err.Error(), "/api/v1/accounts/"+absentAccount) || !strings.Contains(err.Error(), "HTTP "):
					t.Errorf("%s: %q does not name the status and the path", what, err)
				}
			}
			if n := svc.tokenReads.Load(); n > 1 {
				t.Errorf("%d token reads for three 404s; want at most 1 per client", n)
			}
		})
	}
}

// Other errors pass through unchanged, and the mock's 404 for a deleted
// account is proof.
func TestAbsenceAgainstTheMock(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4040, Accounts: 3}, nil)
	ids := f.srv.AccountIDs()
	f.srv.DeleteAccount(ids[0])
	_, err := f.client.Account(t.Context(), ids[0])
	if !errors.Is(err, ErrGone) {
		t.Fatalf("a deleted account: %v; want ErrGone", err)
	}
	if _, err := f.client.FindBackup(t.Context(), ids[0], "bkp_0000000000000000"); !errors.Is(err, ErrGone) {
		t.Errorf("a deleted account's backup: %v; want ErrGone", err)
	}
	var missing *BackupNotFoundError
	if _, err := f.client.FindBackup(t.Context(), ids[1], "bkp_0000000000000000"); !errors.As(err, &missing) || errors.Is(err, ErrGone) {
		t.Errorf("a backup missing from a live account's listing: %v; want a *BackupNotFoundError, not ErrGone", err)
	}
	if n := f.srv.Requests(mockservice.RouteToken); n != 1 {
		t.Errorf("%d token reads; want 1 for the client's life", n)
	}
	f2 := newFixture(t, mockservice.Options{Seed: 4041, Accounts: 1}, func(o *Options) { o.MaxRetries = 0 })
	f2.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteGetAccount})
	if _, err := f2.client.Account(t.Context(), f2.srv.AccountIDs()[0]); !errors.Is(err, errServer) || errors.Is(err, ErrGone) {
		t.Errorf("a 500: %v; want it as it is", err)
	}
}

// A process that checked its organization has read the token already:
// proving a 404 costs no second read.
func TestAbsenceReusesTheOrganizationCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4042, Accounts: 2}, nil)
	c, err := New(Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: f.clock, Organization: f.srv.OrganizationID()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckOrganization(t.Context()); err != nil {
		t.Fatal(err)
	}
	gone := f.srv.AccountIDs()[0]
	f.srv.DeleteAccount(gone)
	if _, err := c.Account(t.Context(), gone); !errors.Is(err, ErrGone) {
		t.Fatalf("a deleted account: %v; want ErrGone", err)
	}
	if n := f.srv.Requests(mockservice.RouteToken); n != 1 {
		t.Errorf("%d token reads; want 1, the organization check's", n)
	}
}

// A caller that gives up while the base URL is being proved learns
// nothing, and the next caller proves it afresh.
func TestAbsenceProofIsNotSpentByACancelledCaller(t *testing.T) {
	t.Parallel()
	svc := &absenceService{status: 404, contentType: "application/problem+json", body: serviceNotFnd, tokenStatus: 200}
	c, _ := hostileClient(t, svc.ServeHTTP, nil)
	notFound := &APIError{StatusCode: 404, Title: "Resource not found.", problemStatus: 404, problemRequestID: aRequestID}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.judgeAbsence(cancelled, absentAccount, notFound); errors.Is(err, ErrGone) {
		t.Fatalf("a cancelled caller proved absence: %v", err)
	}
	if err := c.judgeAbsence(t.Context(), absentAccount, notFound); !errors.Is(err, ErrGone) {
		t.Fatalf("the next caller: %v; want ErrGone", err)
	}
}

// FuzzAbsenceRule: whatever the status, body and token answer, only the
// service's own problem 404 with a proven base URL is absence.
func FuzzAbsenceRule(f *testing.F) {
	f.Add(404, serviceNotFnd, 200)
	f.Add(404, `<html>404</html>`, 200)
	f.Add(404, `{"title":"x","status":404,"request_id":"`+aRequestID+`"}`, 404)
	f.Add(410, serviceNotFnd, 200)
	f.Add(404, `{"title":"x","status":"404","request_id":"`+aRequestID+`"}`, 200)
	f.Add(404, `{"status":404,"request_id":"`+aRequestID+`"}{}`, 200)
	f.Fuzz(func(t *testing.T, status int, body string, tokenStatus int) {
		if status < 400 || status > 599 || (tokenStatus != 200 && (tokenStatus < 400 || tokenStatus > 599)) {
			t.Skip()
		}
		c, err := New(Options{BaseURL: "http://127.0.0.1:1", APIKey: hostileKey})
		if err != nil {
			t.Fatal(err)
		}
		if tokenStatus == 200 {
			c.proof.done = true
		} else {
			c.proof.done, c.proof.err = true, &APIError{StatusCode: tokenStatus}
		}
		answer := parseProblem(c.guard, "GET", "/api/v1/accounts/"+absentAccount, status, http.Header{}, []byte(body), c.opts.Clock.Now())
		got := c.judgeAbsence(t.Context(), absentAccount, answer)

		var p struct {
			Title     string `json:"title"`
			Status    int    `json:"status"`
			RequestID string `json:"request_id"`
		}
		decoded := json.Unmarshal([]byte(body), &p) == nil
		want := status == 404 && tokenStatus == 200 && decoded && p.Status == 404 &&
			c.guard.text(p.Title) != "" && uuidRE.MatchString(p.RequestID)
		if errors.Is(got, ErrGone) != want {
			t.Fatalf("status %d, body %q, token %d: gone = %t, want %t (%v)", status, body, tokenStatus, !want, want, got)
		}
		if !want && (status == 404 || status == 410) {
			var unproven *UnprovenAbsenceError
			if !errors.As(got, &unproven) {
				t.Fatalf("status %d, body %q: %v; want an *UnprovenAbsenceError", status, body, got)
			}
		}
	})
}

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
			var mm *organizationMismatchError
			if !errors.As(err, &mm) || !errors.Is(err, ErrWrongOrganization) {
				t.Fatalf("err = %v, want *organizationMismatchError", err)
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
		if _, err := c.Trigger(id).Post(context.Background()); !errors.Is(err, errServer) {
			t.Fatalf("err = %v, want errServer", err)
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
		var de *decodeError
		if !errors.As(err, &de) || errors.Is(err, ErrWrongOrganization) || !strings.Contains(err.Error(), "names no organization") {
			t.Fatalf("err = %v, want a decode error saying the answer names no organization", err)
		}
	}
	if posts.Load() != 0 || tokens.Load() != 2 {
		t.Errorf("%d POSTs and %d token reads; want none and 2 (not remembered)", posts.Load(), tokens.Load())
	}
}

// A trigger bounded by SendBy is not sent once the 429s' waits would start it
// later: the refused attempts were not processed, and no attempt follows;
// nor is one whose bound has passed before its first attempt.
func TestTriggerNotSentPastItsBound(t *testing.T) {
	t.Parallel()
	log := &recordingLogger{}
	f := newFixture(t, mockservice.Options{Seed: 44}, func(o *Options) { o.Logger = log })
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, RetryAfter: 10 * time.Second})
	post := f.client.Trigger(id)
	post.SendBy(f.clock.Now().Add(15 * time.Second))
	if _, err := post.Post(t.Context()); !errors.Is(err, ErrNotSentInTime) || !errors.Is(err, errRateLimited) {
		t.Fatalf("err = %v, want ErrNotSentInTime after the last 429", err)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 2 {
		t.Errorf("%d POSTs, want 2: at the start and 10 s on, not 20 s on", n)
	}
	// The wait the next request makes is told, as a retry's is.
	if all := strings.Join(log.lines, "\n"); !strings.Contains(all, "WARN not retrying") || !strings.Contains(all, "delay:10s") {
		t.Errorf("the log says nothing of the 10 s wait:\n%s", all)
	}
	f.srv.ClearFaults()
	late := f.client.Trigger(id)
	late.SendBy(f.clock.Now().Add(-time.Second))
	if _, err := late.Post(t.Context()); !errors.Is(err, ErrNotSentInTime) {
		t.Fatalf("err = %v, want ErrNotSentInTime", err)
	}
	if n, q := f.srv.Requests(mockservice.RouteTrigger), f.srv.BackupsQueued(id); n != 2 || q != 0 {
		t.Errorf("%d POSTs, %d backups queued; want 2 and none", n, q)
	}
}

// A trigger answered 429, interrupted while it waits to retry, was not
// sent in any way that could queue a backup: Sent says so, and the caller
// has nothing to look for.
func TestTriggerRefusedThenInterruptedWasNotSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 45}, func(o *Options) { o.Clock = clock.Wall{} })
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, Times: 1, RetryAfter: 10 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	post := f.client.Trigger(id)
	if _, err := post.Post(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the interruption", err)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 1 || post.Sent() {
		t.Errorf("%d POSTs, Sent() = %v; want the one refused, and not sent", n, post.Sent())
	}
}
