package mockservice

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
)

// controlsEnv is a mock on a clock the test moves, served over HTTP, with
// its demo key and the account the controls act on.
type controlsEnv struct {
	*mockHTTP
	clock *clocktest.Virtual
	id    string
}

var controlsEpoch = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func newControlsEnv(t *testing.T, seed uint64) *controlsEnv {
	t.Helper()
	clock := clocktest.NewVirtual(controlsEpoch)
	s := New(Options{Seed: seed, RateLimit: 1000, Clock: clock, PendingFor: time.Second, RunningFor: 2 * time.Second})
	return &controlsEnv{mockHTTP: serveHTTP(t, s), clock: clock, id: s.AccountIDs()[0]}
}

// admin sends an admin POST as the guide shows it.
func (e *controlsEnv) admin(path, body string) result {
	e.t.Helper()
	return e.do("POST", path, body, map[string]string{"Authorization": "Bearer " + e.s.AdminToken(), "Content-Type": "application/json"})
}

// control sends an account control and wants it to take.
func (e *controlsEnv) control(control, body string) {
	e.t.Helper()
	if r := e.admin("/_mock/accounts/"+e.id+"/"+control, body); r.status != http.StatusNoContent {
		e.t.Fatalf("POST %s %s: %d %s", control, body, r.status, r.raw)
	}
}

func (e *controlsEnv) reset() {
	e.t.Helper()
	if r := e.admin("/_mock/reset", ""); r.status != http.StatusNoContent {
		e.t.Fatalf("reset: %d %s", r.status, r.raw)
	}
}

func (e *controlsEnv) api(method, path string) result {
	e.t.Helper()
	return e.do(method, path, "", map[string]string{"X-API-Key": e.s.DemoKey()})
}

func (e *controlsEnv) trigger() result {
	e.t.Helper()
	return e.api("POST", "/api/v1/accounts/"+e.id+"/backup")
}

// newest is the account's newest backup as the listing shows it.
func (e *controlsEnv) newest() map[string]any {
	e.t.Helper()
	r := e.api("GET", "/api/v1/accounts/"+e.id+"/backups?limit=1")
	data, _ := r.body["data"].([]any)
	if r.status != 200 || len(data) == 0 {
		e.t.Fatalf("backups listing: %d %s", r.status, r.raw)
	}
	return data[0].(map[string]any)
}

// takeBackup triggers a backup, lets it end and returns its record.
func (e *controlsEnv) takeBackup() map[string]any {
	e.t.Helper()
	if r := e.trigger(); r.status != http.StatusAccepted {
		e.t.Fatalf("trigger: %d %s", r.status, r.raw)
	}
	e.clock.Advance(3 * time.Second)
	return e.newest()
}

// Pausing an account makes its trigger answer the contract's 422, and the
// other refusal states their own reason; "active" restores it, and so does
// a reset, to the state the account had before the admin API changed it.
func TestControlStatePausesAndRestores(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 60)
	for state, reason := range map[string]string{
		"paused": "paused", "subscription_lapsed": "subscription lapsed", "needs_reauthorization": "connection needs re-authorization",
	} {
		e.control("state", `{"state": "`+state+`"}`)
		r := e.trigger()
		checkProblem(t, r, http.StatusUnprocessableEntity, "Unprocessable Entity")
		if want := "Account " + e.id + " is not in a backupable state: " + reason; r.body["detail"] != want {
			t.Errorf("%s: detail %v, want %q", state, r.body["detail"], want)
		}
	}
	e.control("state", `{"state": "active"}`)
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatalf("restored: %d %s", r.status, r.raw)
	}
	if got := e.s.BackupsQueued(e.id); got != 1 {
		t.Errorf("%d backups queued, want the one after the restore", got)
	}

	e.control("state", `{"state": "paused"}`)
	e.reset()
	e.clock.Advance(time.Minute)
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatalf("after a reset: %d %s, want the account active again", r.status, r.raw)
	}

	// An account paused from the start (-roles) is paused again after a
	// reset that undoes its restore.
	paused := e.s.AddAccount(AccountSpec{State: StatePaused})
	if r := e.admin("/_mock/accounts/"+paused+"/state", `{"state":"active"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	if r := e.api("POST", "/api/v1/accounts/"+paused+"/backup"); r.status != http.StatusAccepted {
		t.Fatalf("restored paused account: %d %s", r.status, r.raw)
	}
	e.reset()
	if _, st := e.s.AccountTruth(paused); st != StatePaused {
		t.Errorf("after a reset the seeded paused account is %s", st)
	}
}

// fail-backups makes the next count backups end failed with the error text
// (every one until a reset when count is left out; none with count 0); an
// account seeded to fail keeps failing after a reset.
func TestControlFailBackups(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 61)
	e.control("fail-backups", `{"count": 2, "error": "quota exceeded"}`)
	for i := range 2 {
		if b := e.takeBackup(); b["status"] != "failed" || b["error"] != "quota exceeded" || b["completed_at"] == nil {
			t.Fatalf("backup %d: %v, want failed with the given error", i+1, b)
		}
	}
	if b := e.takeBackup(); b["status"] != "success" || b["error"] != nil {
		t.Fatalf("third backup: %v, want success once two failed", b)
	}
	if r := e.api("GET", "/api/v1/accounts/"+e.id); r.body["backup_status"] != "success" {
		t.Errorf("account %v", r.body)
	}

	e.control("fail-backups", `{}`)
	for range 3 {
		if b := e.takeBackup(); b["status"] != "failed" || b["error"] != defaultFailure {
			t.Fatalf("%v, want failed with the default error until a reset", b)
		}
	}
	e.control("fail-backups", `{"count": 0}`)
	if b := e.takeBackup(); b["status"] != "success" {
		t.Fatalf("after count 0: %v", b)
	}
	e.control("fail-backups", `{"error": "disk full"}`)
	e.reset()
	if b := e.takeBackup(); b["status"] != "success" {
		t.Fatalf("after a reset: %v", b)
	}

	seeded := e.s.AddAccount(AccountSpec{FailWith: "the platform refused the export"})
	e.reset()
	e.id = seeded
	if b := e.takeBackup(); b["status"] != "failed" {
		t.Errorf("the seeded failing account after a reset: %v", b)
	}
}

// hold with no backup in progress makes the next one run for the
// duration, so that triggers meanwhile answer 409; with one in progress,
// it runs on until now plus the duration, never less than it would have.
func TestControlHold(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 62)
	e.control("hold", `{"duration": "90s"}`)
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	e.clock.Advance(80 * time.Second) // far past its normal 3s
	r := e.trigger()
	checkProblem(t, r, http.StatusConflict, "Conflict")
	if want := "A backup for account " + e.id + " is already in progress."; r.body["detail"] != want {
		t.Errorf("409 detail %v", r.body["detail"])
	}
	if b := e.newest(); b["status"] != "running" {
		t.Fatalf("held backup: %v", b)
	}
	e.clock.Advance(11 * time.Second) // pending 1s + running 90s
	if b := e.newest(); b["status"] != "success" || b["completed_at"] != "2026-11-21T10:01:31Z" {
		t.Fatalf("held backup after its hold: %v", b)
	}
	if b := e.takeBackup(); b["status"] != "success" {
		t.Fatalf("the hold held a second backup: %v", b)
	}

	// The backup in progress (pending still) is held 60s from now.
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	start := e.clock.Now()
	e.control("hold", `{"duration": "1m"}`)
	e.clock.Advance(59 * time.Second)
	if b := e.newest(); b["status"] != "running" {
		t.Fatalf("the backup in progress was not held: %v", b)
	}
	e.clock.Advance(time.Second)
	if b := e.newest(); b["status"] != "success" || b["completed_at"] != rfc3339(start.Add(time.Minute)) {
		t.Fatalf("held backup in progress: %v", b)
	}

	// A hold shorter than the backup's own run leaves it as it was.
	e.s.mu.Lock()
	e.s.runningFor = time.Hour
	e.s.mu.Unlock()
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	e.control("hold", `{"duration": "1s"}`)
	e.clock.Advance(30 * time.Minute)
	if b := e.newest(); b["status"] != "running" {
		t.Errorf("a 1s hold shortened an hour-long backup: %v", b)
	}
}

// A reset releases a held backup: it ends at once, with a completed_at no
// earlier than the reset (it was seen running until then), and a hold
// waiting for the next backup is dropped.
func TestResetReleasesHeldBackups(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 63)
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	e.control("hold", `{"duration": "10m"}`)
	e.clock.Advance(time.Minute)
	if b := e.newest(); b["status"] != "running" {
		t.Fatalf("held: %v", b)
	}
	e.reset()
	if b := e.newest(); b["status"] != "success" || b["completed_at"] != rfc3339(e.clock.Now()) {
		t.Fatalf("after a reset: %v, want success completed at %s", b, rfc3339(e.clock.Now()))
	}

	e.control("hold", `{"duration": "10m"}`)
	e.reset()
	if b := e.takeBackup(); b["status"] != "success" {
		t.Fatalf("a hold dropped by a reset still held the next backup: %v", b)
	}
}

// lose-trigger-answer: the trigger is processed (its backup queued,
// listed, counted, audited), then its answer is a 500 or no answer at all
// (the connection closes); the next trigger answers as usual.
func TestControlLoseTriggerAnswer(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 64)
	e.control("lose-trigger-answer", `{}`)
	r := e.trigger()
	checkProblem(t, r, http.StatusInternalServerError, "Internal Server Error")
	if e.s.BackupsQueued(e.id) != 1 || e.newest()["status"] != "pending" {
		t.Fatalf("the trigger whose answer was lost queued %d backups", e.s.BackupsQueued(e.id))
	}
	e.clock.Advance(3 * time.Second)
	if b := e.takeBackup(); b["status"] != "success" || e.s.BackupsQueued(e.id) != 2 {
		t.Fatalf("the next trigger: %v", b)
	}

	e.control("lose-trigger-answer", `{"how": "drop", "count": 2}`)
	for i := range 2 {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/v1/accounts/"+e.id+"/backup", nil)
		req.Header.Set("X-API-Key", e.s.DemoKey())
		res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err == nil {
			res.Body.Close()
			t.Fatalf("dropped answer %d: got %d, want no answer", i+1, res.StatusCode)
		}
		if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
			t.Errorf("dropped answer %d: %v", i+1, err)
		}
		e.clock.Advance(3 * time.Second)
	}
	if got := e.s.BackupsQueued(e.id); got != 4 {
		t.Errorf("%d backups queued, want 4: a dropped answer's trigger is processed", got)
	}
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Errorf("after two dropped answers: %d %s", r.status, r.raw)
	}

	// A reset drops a loss still waiting.
	e.clock.Advance(3 * time.Second)
	e.control("lose-trigger-answer", `{"count": 5}`)
	e.reset()
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Errorf("after a reset: %d %s", r.status, r.raw)
	}
}

// answers: the next count requests matching the route (and account) get
// a problem document of the status, with the document's title where it
// shows one, and are not processed.
func TestControlAnswers(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 65)
	if r := e.admin("/_mock/answers", `{"status": 503, "count": 2, "route": "trigger_backup", "retry_after": "3s"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	if r := e.api("GET", "/api/v1/token"); r.status != 200 {
		t.Fatalf("another route: %d", r.status)
	}
	for range 2 {
		r := e.trigger()
		checkProblem(t, r, http.StatusServiceUnavailable, "Service Unavailable")
		if r.header.Get("Retry-After") != "3" || r.header.Get("Date") == "" {
			t.Errorf("headers %v", r.header)
		}
	}
	if e.s.BackupsQueued(e.id) != 0 {
		t.Fatal("an injected answer's trigger was processed")
	}
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatalf("third trigger: %d %s", r.status, r.raw)
	}
	if got := e.s.Requests(RouteTrigger); got != 3 {
		t.Errorf("%d triggers counted, want 3", got)
	}

	// Any route, one account; the document's titles and 500 detail.
	other := e.s.AccountIDs()[1]
	for _, c := range []struct {
		body, title, detail string
		status              int
	}{
		{`{"status": 404, "account_id": "` + other + `"}`, "Resource not found.", "backup-mock answered 404 in the service's place (POST /_mock/answers).", 404},
		{`{"status": 500}`, "Internal Server Error", "An unexpected error occurred.", 500},
		{`{"status": 401}`, "Unauthenticated", "", 401},
		{`{"status": 429, "detail": "slow down"}`, "Too Many Requests", "slow down", 429},
		{`{"status": 418}`, "I'm a teapot", "backup-mock answered 418 in the service's place (POST /_mock/answers).", 418},
	} {
		if r := e.admin("/_mock/answers", c.body); r.status != 204 {
			t.Fatal(r.raw)
		}
		if c.status == 404 {
			if r := e.api("GET", "/api/v1/accounts/"+e.id); r.status != 200 {
				t.Errorf("%s hit another account: %d", c.body, r.status)
			}
		}
		r := e.api("GET", "/api/v1/accounts/"+other)
		checkProblem(t, r, c.status, c.title)
		if d, _ := r.body["detail"].(string); d != c.detail {
			t.Errorf("%s: detail %q, want %q", c.body, d, c.detail)
		}
		if r := e.api("GET", "/api/v1/accounts/"+other); r.status != 200 {
			t.Errorf("%s answered twice", c.body)
		}
	}

	// At most maxAnswerControls wait; a reset drops them.
	for i := range maxAnswerControls {
		if r := e.admin("/_mock/answers", `{"status": 502, "route": "audit_logs"}`); r.status != 204 {
			t.Fatalf("answer %d: %d %s", i+1, r.status, r.raw)
		}
	}
	checkProblem(t, e.admin("/_mock/answers", `{"status": 502}`), http.StatusConflict, "Conflict")
	e.reset()
	if r := e.api("GET", "/api/v1/audit-logs"); r.status != 200 {
		t.Errorf("after a reset: %d", r.status)
	}
}

// clock runs the service's Date header and new records' stamps ahead or
// behind; a reset sets it back.
func TestControlClock(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 66)
	date := func() string { return e.api("GET", "/api/v1/token").header.Get("Date") }
	if r := e.admin("/_mock/clock", `{"offset": "-90s"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	if got, want := date(), controlsEpoch.Add(-90*time.Second).Format(http.TimeFormat); got != want {
		t.Errorf("Date %s, want %s", got, want)
	}
	if b := e.takeBackup(); b["created_at"] != rfc3339(controlsEpoch.Add(-90*time.Second)) {
		t.Errorf("backup stamped %v, want 90s behind", b["created_at"])
	}
	if r := e.admin("/_mock/clock", `{"offset": "2h"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	now := e.clock.Now()
	if got, want := date(), now.Add(2*time.Hour).UTC().Format(http.TimeFormat); got != want {
		t.Errorf("Date %s, want %s", got, want)
	}
	e.reset()
	if got, want := date(), e.clock.Now().UTC().Format(http.TimeFormat); got != want {
		t.Errorf("after a reset: Date %s, want %s", got, want)
	}
}

// record-quirk makes the account's next backups' records contradict
// themselves once they succeed; "none" and a reset end it.
func TestControlRecordQuirk(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 69)
	e.control("record-quirk", `{"quirk": "no_completed_at"}`)
	if b := e.takeBackup(); b["status"] != "success" || b["completed_at"] != nil {
		t.Errorf("no_completed_at: %v", b)
	}
	e.control("record-quirk", `{"quirk": "error_set"}`)
	if b := e.takeBackup(); b["status"] != "success" || b["error"] == nil {
		t.Errorf("error_set: %v", b)
	}
	e.control("record-quirk", `{"quirk": "future_dated"}`)
	start := e.clock.Now()
	if b := e.takeBackup(); b["created_at"] != rfc3339(start.Add(30*24*time.Hour)) {
		t.Errorf("future_dated: %v", b)
	}
	e.control("record-quirk", `{"quirk": "none"}`)
	if b := e.takeBackup(); b["completed_at"] == nil || b["error"] != nil || b["created_at"] != rfc3339(e.clock.Now().Add(-3*time.Second)) {
		t.Errorf("none: %v", b)
	}
	// other_account: listed under this account, the record names another, at every status.
	e.control("record-quirk", `{"quirk": "other_account"}`)
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatalf("trigger: %d %s", r.status, r.raw)
	}
	if b := e.newest(); b["account_id"] == e.id || !accountIDFormat.MatchString(fmt.Sprint(b["account_id"])) || b["status"] != "pending" {
		t.Errorf("other_account, in progress: %v, want a well-formed account_id other than %s", b, e.id)
	}
	e.clock.Advance(time.Hour)
	if b := e.newest(); b["account_id"] == e.id || b["status"] != "success" {
		t.Errorf("other_account, once it succeeded: %v", b)
	}
	e.control("record-quirk", `{"quirk": "completed_before_created"}`)
	e.reset()
	if b := e.takeBackup(); b["completed_at"] != rfc3339(e.clock.Now()) {
		t.Errorf("after a reset: %v", b)
	}
}

// listing-lag hides each backup from the backups listing for the lag after
// it was queued; a reset ends it.
func TestControlListingLag(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 70)
	first := e.takeBackup()
	if r := e.admin("/_mock/listing-lag", `{"lag": "5s"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	e.clock.Advance(4 * time.Second)
	if b := e.newest(); b["id"] != first["id"] {
		t.Errorf("a backup queued 4s ago is listed through a 5s lag: %v", b)
	}
	e.clock.Advance(time.Second)
	if b := e.newest(); b["id"] == first["id"] {
		t.Error("the backup is hidden past the lag")
	}
	e.clock.Advance(time.Second)
	if r := e.admin("/_mock/listing-lag", `{"lag": "1h"}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	if r := e.trigger(); r.status != http.StatusAccepted {
		t.Fatal(r.raw)
	}
	e.reset()
	if b := e.newest(); b["status"] != "pending" {
		t.Errorf("after a reset the newest backup is hidden: %v", b)
	}
}

// A relaying front with an Age passes the service's backups listing as a
// cache's stored answer, once; the next listing is the service's own.
func TestControlFrontAge(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 71)
	if r := e.admin("/_mock/faults", `{"Kind": 12, "Route": "list_backups", "Times": 1, "Front": {"Relay": true, "Age": 600000000000}}`); r.status != 204 {
		t.Fatal(r.raw)
	}
	path := "/api/v1/accounts/" + e.id + "/backups"
	if r := e.api("GET", path); r.status != 200 || r.header.Get("Age") != "600" {
		t.Errorf("through the front: %d, Age %q; want 200, 600", r.status, r.header.Get("Age"))
	}
	if r := e.api("GET", path); r.status != 200 || r.header.Values("Age") != nil {
		t.Errorf("after the front's one hit: %d, Age %q", r.status, r.header.Values("Age"))
	}
}

// Malformed controls are refused with a 400 problem naming the field and
// why, and change nothing; unknown endpoints and accounts answer 404.
func TestControlRefusals(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 67)
	acc := "/_mock/accounts/" + e.id
	for _, c := range []struct{ path, body, field, reason string }{
		{acc + "/state", `{}`, "state", "must be one of active, paused"},
		{acc + "/state", `{"state": "sleeping"}`, "state", `not "sleeping"`},
		{acc + "/state", `{"state": 1}`, "state", "must be a JSON string, not a JSON number"},
		{acc + "/state", `{"status": "paused"}`, "status", "is not a field of this control; its fields: state"},
		{acc + "/state", `{"state": "paused"`, "body", "must be complete JSON"},
		{acc + "/state", `{"state": "paused"} {}`, "body", "nothing after it"},
		{acc + "/state", `{"state": "active", "state": "paused"}`, "state", "is given more than once"},
		{acc + "/fail-backups", `{"count": 1, "error": {"a": 1, "a": 2}, "count": 2}`, "count", "is given more than once"},
		{acc + "/state", `["paused"]`, "body", "must be a JSON object, not a JSON array"},
		{acc + "/state", `paused`, "body", "must be JSON"},
		{acc + "/fail-backups", `{"count": -1}`, "count", "must be 0 or more"},
		{acc + "/fail-backups", `{"count": 1.5}`, "count", "must be a JSON number (an integer), not a JSON number 1.5"},
		{acc + "/fail-backups", `{"count": "2"}`, "count", "not a JSON string"},
		{acc + "/fail-backups", `{"error": ""}`, "error", "must be 1 to 1024 bytes"},
		{acc + "/fail-backups", `{"error": "` + strings.Repeat("x", 1025) + `"}`, "error", "must be 1 to 1024 bytes"},
		{acc + "/fail-backups", `{"times": 2}`, "times", "its fields: count, error"},
		{acc + "/hold", `{}`, "duration", "is required"},
		{acc + "/hold", `{"duration": 30}`, "duration", "must be a JSON string"},
		{acc + "/hold", `{"duration": "30"}`, "duration", `must be a duration such as "30s"`},
		{acc + "/hold", `{"duration": "0s"}`, "duration", "must be more than 0s"},
		{acc + "/hold", `{"duration": "25h"}`, "duration", "at most 24h0m0s"},
		{acc + "/lose-trigger-answer", `{"how": "timeout"}`, "how", `not "timeout"`},
		{acc + "/lose-trigger-answer", `{"count": 0}`, "count", "must be 1 or more"},
		{"/_mock/answers", `{}`, "status", "must be an HTTP error status, 400 to 599"},
		{"/_mock/answers", `{"status": 200}`, "status", "not 200"},
		{"/_mock/answers", `{"status": 600}`, "status", "not 600"},
		{"/_mock/answers", `{"status": 503, "count": 0}`, "count", "must be 1 or more"},
		{"/_mock/answers", `{"status": 503, "route": "trigger"}`, "route", "must be one of token, list_accounts"},
		{"/_mock/answers", `{"status": 503, "account_id": "acc_1"}`, "account_id", "acc_ followed by 16"},
		{"/_mock/answers", `{"status": 503, "retry_after": "1500ms"}`, "retry_after", "whole seconds"},
		{"/_mock/answers", `{"status": 503, "retry_after": "-1s"}`, "retry_after", "whole seconds"},
		{"/_mock/answers", `{"status": 503, "detail": "` + strings.Repeat("x", 1025) + `"}`, "detail", "at most 1024 bytes"},
		{"/_mock/clock", `{}`, "offset", "is required"},
		{"/_mock/clock", `{"offset": "1y"}`, "offset", "must be a duration"},
		{"/_mock/clock", `{"offset": "-9000h"}`, "offset", "at most 8784h0m0s either way"},
		{"/_mock/clock", `{"offset": "1s", "offset2": "1s"}`, "offset2", "its fields: offset"},
		{acc + "/record-quirk", `{}`, "quirk", "must be one of none, no_completed_at"},
		{acc + "/record-quirk", `{"quirk": "late"}`, "quirk", `not "late"`},
		{"/_mock/listing-lag", `{}`, "lag", "is required"},
		{"/_mock/listing-lag", `{"lag": "-1s"}`, "lag", "must be from 0s to 1h0m0s"},
		{"/_mock/listing-lag", `{"lag": "2h"}`, "lag", "not 2h0m0s"},
		{"/_mock/faults", `{}`, "Kind", "must be a fault kind from 1 to 15"},
		{"/_mock/faults", `{"Kind": 12, "Front": {"Status": 200}}`, "Front.Status", "must be 400 to 599"},
		{"/_mock/faults", `{"Kind": 12, "Front": {"Date": 6}}`, "Front.Date", "must be 0 to 5"},
		{"/_mock/faults", `{"Kind": 12, "Front": {"Date": "skewed"}}`, "Front.Date", "must be a JSON number (an integer)"},
		{"/_mock/faults", `{"Kind": 12, "Front": {"Stale": true}}`, "Stale", "Front (Status, JSON, Date, Skew, Processed, Relay, Age)"},
		{"/_mock/faults", `{"Kind": 12, "Front": {"Age": -1}}`, "Front.Age", "must be 0 (none) to"},
		{"/_mock/faults", `{"Kind": 10, "Front": {"Date": 1}}`, "Front", "is a front's (Kind 12) only"},
		{"/_mock/faults", `{"Kind": 12, "Route": "list_backup"}`, "Route", "must be one of token, list_accounts"},
		{"/_mock/faults", `{"Kind": 14, "Probability": 1.5}`, "Probability", "must be 0 to 1"},
		{"/_mock/faults", `{"Kind": 14, "Times": -1}`, "Times", "must be 0 (every request) or more"},
		{"/_mock/faults", `{"Kind": 12, "AccountID": "not-an-id"}`, "AccountID", "is no account of this mock"},
		{"/_mock/faults", `{"Kind": 99}`, "Kind", "not 99"},
		{"/_mock/faults", `{"Kind": 4, "Latency": 3600000000000}`, "Latency", "must be 0 to at most 30s, not 1h0m0s"},
		{"/_mock/faults", `{"Kind": 3, "Count": 2}`, "Count", "its fields: Kind, Route"},
		{"/_mock/faults", `{"Kind": "overload"}`, "Kind", "not a JSON string"},
		{"/_mock/rate-limit?n=0", ``, "n", `must be a positive integer, not "0"`},
		{"/_mock/rate-limit", ``, "n", `not ""`},
	} {
		r := e.admin(c.path, c.body)
		if r.status != http.StatusBadRequest {
			t.Errorf("POST %s %.60s: %d, want 400: %s", c.path, c.body, r.status, r.raw)
			continue
		}
		checkProblem(t, r, http.StatusBadRequest, "Bad Request")
		detail, _ := r.body["detail"].(string)
		params, _ := r.body["invalid-params"].([]any)
		if len(params) != 1 {
			t.Errorf("POST %s %.60s: invalid-params %v", c.path, c.body, r.body["invalid-params"])
			continue
		}
		p := params[0].(map[string]any)
		if p["name"] != c.field || !strings.Contains(p["reason"].(string), c.reason) ||
			!strings.HasPrefix(detail, `Field "`+c.field+`" `) || !strings.Contains(detail, c.reason) {
			t.Errorf("POST %s %.60s: %s, want field %q and %q", c.path, c.body, r.raw, c.field, c.reason)
		}
	}
	// Served in memory: over HTTP, the server lingers half a second after
	// refusing a body past its limit.
	r := adminCall(t, e.s, "POST", "/_mock/clock", `{"offset": "`+strings.Repeat("1", 70000)+`s"}`)
	checkProblem(t, r, http.StatusBadRequest, "Bad Request")
	if !strings.Contains(r.raw, `Field \"body\" must be at most 65536 bytes.`) {
		t.Errorf("a body past the limit: %s", r.raw)
	}
	for _, c := range []struct{ path, want string }{
		{acc + "/pause", "Account controls: state, fail-backups, hold, lose-trigger-answer, record-quirk."},
		{acc, "No such admin endpoint"},
		{"/_mock/accounts/acc_0000000000000000/state", "No account acc_0000000000000000."},
		{"/_mock/answer", "No such admin endpoint"},
		{"/_mock/answers", "No account acc_0000000000000000."}, // an answer aimed at no account
	} {
		body := `{"state": "paused"}`
		if c.path == "/_mock/answers" {
			body = `{"status": 503, "account_id": "acc_0000000000000000"}`
		}
		r := e.admin(c.path, body)
		checkProblem(t, r, http.StatusNotFound, "Resource not found.")
		if !strings.Contains(r.raw, c.want) {
			t.Errorf("POST %s: %s, want %q", c.path, r.raw, c.want)
		}
	}
	gone := e.s.AccountIDs()[1]
	e.s.DeleteAccount(gone)
	checkProblem(t, e.admin("/_mock/accounts/"+gone+"/hold", `{"duration": "1m"}`), http.StatusNotFound, "Resource not found.")

	// Nothing took: the account backs up, on time, and answers as usual.
	if b := e.takeBackup(); b["status"] != "success" || b["created_at"] != rfc3339(controlsEpoch) {
		t.Errorf("after the refusals: %v", b)
	}
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	if c := e.s.ctl; c.states != nil || c.failures != nil || c.holds != nil || c.lost != nil || c.answers != nil || c.offsetSet ||
		c.quirks != nil || c.lagSet {
		t.Errorf("a refused control took: %+v", c)
	}
}

// Every control stays behind the admin token (401), wants a JSON content
// type (415) and a loopback Host (421), and none of them takes effect.
func TestControlsKeepTheAdminRules(t *testing.T) {
	t.Parallel()
	e := newControlsEnv(t, 68)
	acc := "/_mock/accounts/" + e.id
	calls := []struct{ path, body string }{
		{acc + "/state", `{"state": "paused"}`},
		{acc + "/fail-backups", `{}`},
		{acc + "/hold", `{"duration": "1h"}`},
		{acc + "/lose-trigger-answer", `{}`},
		{"/_mock/answers", `{"status": 503}`},
		{"/_mock/clock", `{"offset": "1h"}`},
		{acc + "/record-quirk", `{"quirk": "error_set"}`},
		{"/_mock/listing-lag", `{"lag": "1h"}`},
	}
	token := e.s.AdminToken()
	for _, c := range calls {
		for _, h := range []map[string]string{
			{"Content-Type": "application/json"},
			{"Content-Type": "application/json", "Authorization": "Bearer wrong"},
			{"Content-Type": "application/json", AdminTokenHeader: token + "x"},
		} {
			r := e.do("POST", c.path, c.body, h)
			checkProblem(t, r, http.StatusUnauthorized, "Unauthenticated")
		}
		for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded"} {
			r := e.do("POST", c.path, c.body, map[string]string{"Content-Type": ct, AdminTokenHeader: token})
			checkProblem(t, r, http.StatusUnsupportedMediaType, "Unsupported Media Type")
		}
		r := e.do("POST", c.path, c.body, map[string]string{"Content-Type": "application/json", AdminTokenHeader: token, "Host": "evil.example:" + e.port})
		checkProblem(t, r, http.StatusMisdirectedRequest, "Misdirected Request")
	}
	if b := e.takeBackup(); b["status"] != "success" || b["created_at"] != rfc3339(controlsEpoch) {
		t.Errorf("a refused control took: %v", b)
	}
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	if c := e.s.ctl; c.answers != nil || c.offsetSet || c.states != nil || c.failures != nil || c.holds != nil || c.lost != nil ||
		c.quirks != nil || c.lagSet {
		t.Errorf("a refused control took: %+v", e.s.ctl)
	}
}
