package mockservice

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

type result struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func call(t *testing.T, s *Server, method, target, key string) result {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:8080" // httptest's example.com is no loopback name
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	res := result{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &res.body)
	return res
}

// checkProblem asserts an RFC 7807 body as the document shows it.
func checkProblem(t *testing.T, r result, status int, title string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if got := r.header.Get("Content-Type"); got != "application/problem+json" {
		t.Errorf("content type %q", got)
	}
	if r.body["title"] != title || r.body["status"] != float64(status) {
		t.Errorf("problem %v, want title %q status %d", r.body, title, status)
	}
	if id, _ := r.body["request_id"].(string); !uuidV4.MatchString(id) {
		t.Errorf("request_id %q is not a UUID v4", id)
	}
}

func newTest(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.RateLimit == 0 {
		opts.RateLimit = 1000
	}
	return New(opts)
}

func TestTokenAndAuthentication(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Seed: 1, Clock: clock})

	r := call(t, s, "GET", "/api/v1/token", s.DemoKey())
	if r.status != 200 || r.body["name"] != DemoKeyName {
		t.Fatalf("token: %d %s", r.status, r.raw)
	}
	if org := r.body["organization"].(map[string]any); org["id"] != s.OrganizationID() || org["name"] != "Example Org" {
		t.Errorf("organization %v", org)
	}
	if exp, err := time.Parse(time.RFC3339, r.body["expires_at"].(string)); err != nil || !exp.Equal(clock.Now().Add(90*24*time.Hour)) {
		t.Errorf("expires_at %v (%v)", r.body["expires_at"], err)
	}
	if !uuidV4.MatchString(r.header.Get("X-Request-ID")) {
		t.Errorf("X-Request-ID %q", r.header.Get("X-Request-ID"))
	}

	expired := s.AddKey(KeySpec{Name: "old", ExpiresAt: clock.Now().Add(time.Hour)})
	revoked := s.AddKey(KeySpec{OwnerRevoked: true})
	foreign := s.AddKey(KeySpec{OtherOrganization: true})
	clock.Advance(2 * time.Hour)
	for name, key := range map[string]string{"missing": "", "invalid": "nope", "expired": expired, "revoked owner": revoked, "other organization": foreign} {
		r := call(t, s, "GET", "/api/v1/token", key)
		checkProblem(t, r, 401, "Unauthenticated")
		if _, has := r.body["detail"]; has {
			t.Errorf("%s: 401 carries a detail: %s", name, r.raw)
		}
		if r.header.Get("X-RateLimit-Limit") != "" {
			t.Errorf("%s: 401 carries rate-limit headers", name)
		}
	}
	if got := s.Stats().AuthFailures; got != 5 {
		t.Errorf("auth failures %d", got)
	}
}

func TestAccountsPaginationOrderAndClamping(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 2, Accounts: 137})
	key := s.DemoKey()
	for _, order := range []string{"asc", "desc", ""} {
		var got []string
		cursor := ""
		pages := 0
		for {
			target := "/api/v1/accounts?limit=50"
			if order != "" {
				target += "&order=" + order
			}
			if cursor != "" {
				target += "&cursor=" + cursor
			}
			r := call(t, s, "GET", target, key)
			if r.status != 200 {
				t.Fatalf("%s: %s", target, r.raw)
			}
			pages++
			for _, a := range r.body["data"].([]any) {
				got = append(got, a.(map[string]any)["id"].(string))
			}
			p := r.body["pagination"].(map[string]any)
			if p["limit"] != float64(50) {
				t.Fatalf("limit %v", p["limit"])
			}
			next, _ := p["next_cursor"].(string)
			if next == "" {
				if _, present := p["next_cursor"]; !present {
					t.Fatal("next_cursor absent on the last page; the document shows null")
				}
				break
			}
			cursor = next
		}
		if pages != 3 || len(got) != 137 {
			t.Fatalf("order %q: %d pages, %d accounts", order, pages, len(got))
		}
		want := s.AccountIDs()
		for i := range want {
			w := want[i]
			if order != "asc" {
				w = want[len(want)-1-i]
			}
			if got[i] != w {
				t.Fatalf("order %q: item %d is %s, want %s", order, i, got[i], w)
			}
		}
	}

	for in, want := range map[string]float64{"0": 1, "-3": 1, "51": 50, "1000": 50, "7": 7} {
		r := call(t, s, "GET", "/api/v1/accounts?limit="+in, key)
		if got := r.body["pagination"].(map[string]any)["limit"]; got != want {
			t.Errorf("limit=%s echoed %v, want %v", in, got, want)
		}
		if n := len(r.body["data"].([]any)); float64(n) != want {
			t.Errorf("limit=%s gave %d items", in, n)
		}
	}
	if r := call(t, s, "GET", "/api/v1/accounts", key); len(r.body["data"].([]any)) != 25 {
		t.Errorf("default page size %d, want 25", len(r.body["data"].([]any)))
	}
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts?limit=ten", key), 400, "Bad Request")
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts?order=ASC", key), 422, "Unprocessable Entity")
}

func TestCursorsAreTamperEvidentAndScoped(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 3, Accounts: 60, AuditLogs: 60})
	key := s.DemoKey()
	next := call(t, s, "GET", "/api/v1/accounts?limit=10", key).body["pagination"].(map[string]any)["next_cursor"].(string)

	// With a cursor, order is ignored: the cursor carries its own.
	r := call(t, s, "GET", "/api/v1/accounts?limit=10&order=asc&cursor="+next, key)
	if r.status != 200 {
		t.Fatal(r.raw)
	}
	first := r.body["data"].([]any)[0].(map[string]any)["id"]
	if ids := s.AccountIDs(); first != ids[len(ids)-11] {
		t.Errorf("cursor did not keep desc order: got %v", first)
	}

	tampered := []string{
		"garbage", next + "x", "x" + next, strings.Replace(next, ".", "", 1), "",
	}
	body, mac, _ := strings.Cut(next, ".")
	tampered = append(tampered, body[:len(body)-2]+"AA."+mac)
	for _, c := range tampered {
		if c == "" {
			continue
		}
		r := call(t, s, "GET", "/api/v1/accounts?cursor="+c, key)
		checkProblem(t, r, 400, "Bad Request")
		if r.body["detail"] != "invalid cursor" {
			t.Errorf("detail %v", r.body["detail"])
		}
	}
	// A cursor of one listing is refused by another.
	checkProblem(t, call(t, s, "GET", "/api/v1/audit-logs?cursor="+next, key), 400, "Bad Request")
	// Rotation invalidates cursors handed out before.
	s.RotateCursorKey()
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts?cursor="+next, key), 400, "Bad Request")
}

func TestAccountErrors(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 4})
	id := s.AccountIDs()[0]
	restricted := s.AddKey(KeySpec{Restricted: []string{id}})

	r := call(t, s, "GET", "/api/v1/accounts/"+id, s.DemoKey())
	if r.status != 200 || r.body["id"] != id || r.body["backup_status"] != "success" || r.body["service_type"] != "backup" {
		t.Fatalf("get account: %s", r.raw)
	}
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts/acc_short", s.DemoKey()), 422, "Unprocessable Entity")
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts/acc_0000000000000000", s.DemoKey()), 404, "Resource not found.")
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts/"+s.ForeignAccountID(), s.DemoKey()), 403, "You are not authorized to perform this action.")
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts/"+id, restricted), 403, "You are not authorized to perform this action.")
	checkProblem(t, call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", restricted), 403, "You are not authorized to perform this action.")
	r = call(t, s, "GET", "/api/v1/nothing", s.DemoKey())
	checkProblem(t, r, 404, "Resource not found.")
	if r.body["instance"] != "/api/v1/nothing" {
		t.Errorf("instance %v", r.body["instance"])
	}
	checkProblem(t, call(t, s, "DELETE", "/api/v1/accounts/"+id, s.DemoKey()), 404, "Resource not found.")
	s.DeleteAccount(id)
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts/"+id+"/backups", s.DemoKey()), 404, "Resource not found.")
}

// The command's accounts list the backup their status stands for: each
// account of the organization without one, whose backup_status reads
// success, gets a successful backup an hour after it was connected; an
// account with a history, another status or another organization is left
// as it is.
func TestConnectionBackupsMatchTheStatus(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 6, Accounts: 2})
	s.AddExamples()
	failed := s.AddAccount(AccountSpec{Name: "failed before", BackupStatus: "failed"})
	s.AddConnectionBackups()
	key := s.DemoKey()
	for _, id := range s.AccountIDs() {
		acc := call(t, s, "GET", "/api/v1/accounts/"+id, key).body
		data, _ := call(t, s, "GET", "/api/v1/accounts/"+id+"/backups", key).body["data"].([]any)
		switch {
		case id == failed:
			if len(data) != 0 || acc["backup_status"] != "failed" {
				t.Errorf("%s: %v, status %v; want no backup made up for a failed status", id, data, acc["backup_status"])
			}
		case len(data) != 1:
			t.Errorf("%s: %d backups, want one", id, len(data))
		case id == ExampleAccountID:
			if b := data[0].(map[string]any); b["id"] != ExampleBackupID {
				t.Errorf("the examples' account lists %v, want its own backup only", b)
			}
		default:
			b := data[0].(map[string]any)
			created, _ := time.Parse(time.RFC3339, acc["created_at"].(string))
			if b["status"] != "success" || acc["backup_status"] != "success" || b["created_at"] != created.Add(time.Hour).Format(time.RFC3339) {
				t.Errorf("%s, connected %v: %v; want a success an hour after", id, acc["created_at"], b)
			}
		}
	}
	if r := call(t, s, "GET", "/api/v1/accounts/"+s.ForeignAccountID()+"/backups", key); r.status != 403 {
		t.Errorf("another organization's account: %d", r.status)
	}
	if n := len(s.accounts[s.ForeignAccountID()].backups); n != 0 {
		t.Errorf("another organization's account got %d backups", n)
	}
}

func TestBackupStateMachine(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Seed: 5, Clock: clock, PendingFor: 10 * time.Second, RunningFor: 20 * time.Second})
	key := s.DemoKey()
	id := s.AccountIDs()[0]

	r := call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", key)
	if r.status != 202 || r.body["backup_status"] != "pending" || r.body["id"] != id {
		t.Fatalf("trigger: %d %s", r.status, r.raw)
	}
	r = call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", key)
	checkProblem(t, r, 409, "Conflict")
	if r.body["detail"] != "A backup for account "+id+" is already in progress." {
		t.Errorf("409 detail %v", r.body["detail"])
	}

	backups := func() []any { return call(t, s, "GET", "/api/v1/accounts/"+id+"/backups", key).body["data"].([]any) }
	b := backups()[0].(map[string]any)
	if b["status"] != "pending" || b["completed_at"] != nil || b["error"] != nil || b["account_id"] != id {
		t.Fatalf("new backup %v", b)
	}
	clock.Advance(10 * time.Second)
	if st := backups()[0].(map[string]any)["status"]; st != "running" || s.BackupStatus(id) != "running" {
		t.Fatalf("after pending: %v", st)
	}
	clock.Advance(20 * time.Second)
	b = backups()[0].(map[string]any)
	if b["status"] != "success" || b["completed_at"] != "2026-11-21T10:00:30Z" || b["error"] != nil {
		t.Fatalf("after running: %v", b)
	}

	s.SetAccountFailure(id, "quota exceeded at the platform")
	if r := call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", key); r.status != 202 {
		t.Fatal(r.raw)
	}
	clock.Advance(time.Minute)
	list := backups()
	if b := list[0].(map[string]any); b["status"] != "failed" || b["error"] != "quota exceeded at the platform" {
		t.Fatalf("failed backup %v", b)
	}
	if len(list) != 2 || s.BackupsQueued(id) != 2 {
		t.Fatalf("%d backups, %d queued", len(list), s.BackupsQueued(id))
	}
	if r := call(t, s, "GET", "/api/v1/accounts/"+id, key); r.body["backup_status"] != "failed" {
		t.Errorf("account status %v", r.body["backup_status"])
	}

	logs := call(t, s, "GET", "/api/v1/audit-logs?order=asc", key).body["data"].([]any)
	if len(logs) != 2 {
		t.Fatalf("%d audit logs", len(logs))
	}
	l := logs[0].(map[string]any)
	if l["action"] != "backup.triggered" || l["actor"] != "api_key:"+DemoKeyName || l["resource_type"] != "account" || l["resource_id"] != id {
		t.Errorf("audit log %v", l)
	}
}

func TestTriggerRefusals(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 6})
	readOnly := s.AddKey(KeySpec{ReadOnly: true})
	for state, reason := range map[AccountState]string{
		StatePaused: "paused", StateSubscriptionLapsed: "subscription lapsed", StateNeedsReauthorization: "connection needs re-authorization",
	} {
		id := s.AddAccount(AccountSpec{State: state})
		r := call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", s.DemoKey())
		checkProblem(t, r, 422, "Unprocessable Entity")
		if want := "Account " + id + " is not in a backupable state: " + reason; r.body["detail"] != want {
			t.Errorf("detail %v, want %q", r.body["detail"], want)
		}
	}
	id := s.AccountIDs()[0]
	checkProblem(t, call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", readOnly), 403, "You are not authorized to perform this action.")
	checkProblem(t, call(t, s, "POST", "/api/v1/accounts/acc_bad/backup", s.DemoKey()), 422, "Unprocessable Entity")
	if s.Stats().BackupsQueued[id] != 0 {
		t.Error("a refused trigger queued a backup")
	}
}

// Requests of one window spend its allowance, the next is refused with
// the documented headers, and the next window starts afresh. The windows
// run on a clock the test moves, so no window turns during the test.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	clock := clocktest.NewVirtual(time.Date(2026, 11, 23, 10, 0, 0, 400_000_000, time.UTC))
	s := New(Options{Seed: 7, RateLimit: 3, RateClock: clock})
	reset := strconv.FormatInt(clock.Now().Truncate(time.Second).Add(time.Second).Unix(), 10)
	for i := range 3 {
		r := call(t, s, "GET", "/api/v1/token", s.DemoKey())
		if r.status != 200 || r.header.Get("X-RateLimit-Limit") != "3" || r.header.Get("X-RateLimit-Remaining") != strconv.Itoa(2-i) ||
			r.header.Get("X-RateLimit-Reset") != reset {
			t.Fatalf("request %d: %d %v", i+1, r.status, r.header)
		}
	}
	last := call(t, s, "GET", "/api/v1/token", s.DemoKey())
	checkProblem(t, last, 429, "Too Many Requests")
	if last.header.Get("Retry-After") != "1" || last.header.Get("X-RateLimit-Limit") != "3" || last.header.Get("X-RateLimit-Remaining") != "0" ||
		last.header.Get("X-RateLimit-Reset") != reset {
		t.Errorf("headers %v", last.header)
	}
	if s.Stats().RateLimited != 1 {
		t.Errorf("rate limited %d", s.Stats().RateLimited)
	}
	clock.Advance(600 * time.Millisecond) // into the next window
	if r := call(t, s, "GET", "/api/v1/token", s.DemoKey()); r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("next window: %d %v", r.status, r.header)
	}
}

func TestSeedIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := New(Options{Seed: 42, Accounts: 20}), New(Options{Seed: 42, Accounts: 20})
	if a.DemoKey() != b.DemoKey() || a.OrganizationID() != b.OrganizationID() {
		t.Fatal("keys or organizations differ")
	}
	ia, ib := a.AccountIDs(), b.AccountIDs()
	for i := range ia {
		if ia[i] != ib[i] {
			t.Fatalf("account %d: %s vs %s", i, ia[i], ib[i])
		}
	}
	if c := New(Options{Seed: 43}); c.DemoKey() == a.DemoKey() {
		t.Error("another seed gave the same key")
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 8})
	key := s.DemoKey()
	id := s.AccountIDs()[0]

	s.AddFault(Fault{Kind: FaultServerError, PerRoute: true, Times: 1})
	checkProblem(t, call(t, s, "GET", "/api/v1/token", key), 500, "Internal Server Error")
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts", key), 500, "Internal Server Error")
	if r := call(t, s, "GET", "/api/v1/token", key); r.status != 200 {
		t.Fatalf("second token request: %d", r.status)
	}
	s.ClearFaults()

	s.AddFault(Fault{Kind: FaultOverload, Times: 1, RetryAfter: 3 * time.Second})
	r := call(t, s, "GET", "/api/v1/token", key)
	checkProblem(t, r, 429, "Too Many Requests")
	if r.header.Get("Retry-After") != "3" || r.header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("overload headers %v", r.header)
	}

	s.AddFault(Fault{Kind: FaultAcceptThenError, Route: RouteTrigger, Times: 1})
	checkProblem(t, call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", key), 500, "Internal Server Error")
	if s.BackupsQueued(id) != 1 {
		t.Fatal("accepted-then-500 did not queue the backup")
	}

	s.AddFault(Fault{Kind: FaultMalformedJSON, Route: RouteToken, Times: 1})
	if r := call(t, s, "GET", "/api/v1/token", key); r.status != 200 || json.Valid([]byte(r.raw)) {
		t.Errorf("malformed: %d %q", r.status, r.raw)
	}

	s.AddFault(Fault{Kind: FaultLatency, Route: RouteToken, Times: 1, Latency: 30 * time.Millisecond})
	start := time.Now()
	call(t, s, "GET", "/api/v1/token", key)
	if time.Since(start) < 30*time.Millisecond {
		t.Error("latency fault did not delay")
	}

	st := s.Stats()
	if st.Requests[RouteToken] != 5 || st.Requests[RouteTrigger] != 1 || st.Overloaded != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A fault held back until a backup is queued hits nothing before it, and
// every matching request after.
func TestFaultOnceQueued(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 8})
	key := s.DemoKey()
	id := s.AccountIDs()[0]
	s.AddFault(Fault{Kind: FaultServerError, Route: RouteListBackups, AccountID: id, OnceQueued: true})
	list := "/api/v1/accounts/" + id + "/backups"
	if r := call(t, s, "GET", list, key); r.status != 200 {
		t.Fatalf("listing before any backup was queued: %d", r.status)
	}
	if r := call(t, s, "POST", "/api/v1/accounts/"+id+"/backup", key); r.status != 202 {
		t.Fatalf("trigger: %d", r.status)
	}
	checkProblem(t, call(t, s, "GET", list, key), 500, "Internal Server Error")
	checkProblem(t, call(t, s, "GET", list, key), 500, "Internal Server Error")

	// Without an account, any account's backup arms it.
	s.ClearFaults()
	s.AddFault(Fault{Kind: FaultServerError, Route: RouteToken, OnceQueued: true})
	if r := call(t, s, "GET", "/api/v1/token", key); r.status != 200 {
		t.Fatalf("token before another backup was queued: %d", r.status)
	}
	other := s.AccountIDs()[1]
	if r := call(t, s, "POST", "/api/v1/accounts/"+other+"/backup", key); r.status != 202 {
		t.Fatalf("trigger of another account: %d", r.status)
	}
	checkProblem(t, call(t, s, "GET", "/api/v1/token", key), 500, "Internal Server Error")
}

func TestTruncatedBodyClosesEarly(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 9})
	s.AddFault(Fault{Kind: FaultTruncatedBody, Route: RouteToken})
	ts := httptest.NewServer(s)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/v1/token", nil)
	req.Header.Set("X-API-Key", s.DemoKey())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err == nil {
		t.Fatal("a truncated body decoded")
	}
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 10})
	call(t, s, "GET", "/api/v1/token", s.DemoKey())
	r := adminCall(t, s, "GET", "/_mock/stats", "")
	if r.body["requests"].(map[string]any)["token"] != float64(1) {
		t.Fatalf("stats %s", r.raw)
	}
	if r := adminCall(t, s, "POST", "/_mock/faults", `{"Kind":1,"Route":"token","Times":1}`); r.status != 204 || call(t, s, "GET", "/api/v1/token", s.DemoKey()).status != 500 {
		t.Fatalf("fault via the admin API did not take: %d %s", r.status, r.raw)
	}
	if adminCall(t, s, "POST", "/_mock/rate-limit?n=2", "").status != 204 || adminCall(t, s, "POST", "/_mock/reset", "").status != 204 {
		t.Fatal("admin calls refused")
	}
	if s.Requests(RouteToken) != 0 {
		t.Error("reset did not zero the counters")
	}
}

func FuzzDecodeCursor(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	good := encodeCursor(key, cursorPos{Scope: "accounts", Desc: true, Time: 1, Seq: 2})
	for _, seed := range []string{good, "", ".", "a.b", good + "=", "eyJzIjoiYWNjb3VudHMifQ.AAAA"} {
		f.Add(seed)
	}
	// A cursor is accepted only as the service wrote it: what decodes
	// encodes back to the same text, in the scope asked for.
	f.Fuzz(func(t *testing.T, c string) {
		p, err := decodeCursor(key, "accounts", c)
		if err != nil {
			return
		}
		if p.Scope != "accounts" || encodeCursor(key, p) != c {
			t.Fatalf("accepted %q: %+v, which encodes to %q", c, p, encodeCursor(key, p))
		}
	})
}

func TestInvalidCursorFaultSparesFirstPages(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Seed: 11, Accounts: 30})
	s.AddFault(Fault{Kind: FaultInvalidCursor, Times: 1})
	r := call(t, s, "GET", "/api/v1/accounts?limit=10", s.DemoKey())
	if r.status != 200 {
		t.Fatalf("first page hit: %s", r.raw)
	}
	next := r.body["pagination"].(map[string]any)["next_cursor"].(string)
	checkProblem(t, call(t, s, "GET", "/api/v1/accounts?limit=10&cursor="+next, s.DemoKey()), 400, "Bad Request")
	if r := call(t, s, "GET", "/api/v1/accounts?limit=10&cursor="+next, s.DemoKey()); r.status != 200 {
		t.Fatalf("the fault hit twice: %s", r.raw)
	}
}

// The latency faults that match one request delay it by their sum, at most
// MaxLatency for the request however many match.
func TestLatencyIsCappedPerRequest(t *testing.T) {
	t.Parallel()
	s := New(Options{Seed: 77})
	s.AddFault(Fault{Kind: FaultLatency, Route: RouteToken, Latency: MaxLatency})
	s.AddFault(Fault{Kind: FaultLatency, Route: RouteToken, Latency: MaxLatency})
	s.AddFault(Fault{Kind: FaultLatency, Route: RouteGetAccount, Latency: time.Second})
	s.AddFault(Fault{Kind: FaultLatency, Route: RouteGetAccount, Latency: 2 * time.Second})
	s.mu.Lock()
	token, account := s.pickFaults(RouteToken, "", false), s.pickFaults(RouteGetAccount, "", false)
	s.mu.Unlock()
	if len(token) != 2 {
		t.Fatalf("%d faults matched the token read, want both", len(token))
	}
	if d := requestLatency(token); d != MaxLatency {
		t.Errorf("two faults at the cap delay a request by %s, want %s", d, MaxLatency)
	}
	if d := requestLatency(account); d != 3*time.Second {
		t.Errorf("1s and 2s faults delay a request by %s, want 3s", d)
	}
}
