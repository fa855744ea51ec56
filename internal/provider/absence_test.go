package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Absence is not evidence: these tests play the answers that look like "it
// is gone" without proving it (a wrong base_url prefix, a proxy's HTML
// 404, a problem 404 from a base URL whose token endpoint fails, an empty
// listing), and the one that proves it (the mock's 404 for a deleted
// account), against the guard, the trigger's refresh and the freshness
// data source. They assert what stays in the state and the mock's request
// counts, not only the output.

// front stands in front of a test's mock as a proxy, a load balancer or a
// lagging replica does: it answers the requests its rule takes, and passes
// the others to the mock. The rule can change between commands.
type front struct {
	inner http.Handler
	mu    sync.Mutex
	rule  func(r *http.Request) (answer, bool)
	date  string // the Date header of its own answers, as is; "": net/http's own
	age   string // the Age header of its own answers (a cache's store); "": none
}

// answer is what front sends instead of the mock.
type answer struct {
	status      int
	contentType string
	body        string
}

func (f *front) set(rule func(r *http.Request) (answer, bool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rule = rule
}

// dated gives the front's own answers this Date header (a stale cache's,
// one centuries off, one that does not parse).
func (f *front) dated(date string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.date = date
}

// stored gives the front's own answers this Age header, as a cache's.
func (f *front) stored(age string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.age = age
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	rule, date, age := f.rule, f.date, f.age
	f.mu.Unlock()
	if rule != nil {
		if a, ok := rule(r); ok {
			if a.contentType != "" {
				w.Header().Set("Content-Type", a.contentType)
			}
			if date != "" {
				w.Header()["Date"] = []string{date}
			}
			if age != "" {
				w.Header().Set("Age", age)
			}
			w.WriteHeader(a.status)
			_, _ = w.Write([]byte(a.body))
			return
		}
	}
	f.inner.ServeHTTP(w, r)
}

// newFrontEnv is a test environment whose provider talks to the mock
// through a front.
func newFrontEnv(t *testing.T, opts mockservice.Options) (*testEnv, *front) {
	t.Helper()
	e := newTestEnv(t, opts)
	f := &front{inner: e.srv}
	e.behind(f)
	return e, f
}

// Answers that look like absence without proving it.
var (
	htmlNotFound     = answer{http.StatusNotFound, "text/html", "<html><body><h1>404 Not Found</h1>nginx</body></html>"}
	problemNotFound  = answer{http.StatusNotFound, "application/problem+json", `{"title":"Resource not found.","status":404,"request_id":"5b0c3c52-8f0e-4c1e-9a57-0f2b8f1f6a11"}`}
	tokenUnavailable = answer{http.StatusServiceUnavailable, "text/html", "<html>maintenance</html>"}
	emptyListing     = answer{http.StatusOK, "application/json", `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`}
)

// accountGET takes the GET of an account (not its backups).
func accountGET(id string, a answer) func(*http.Request) (answer, bool) {
	return func(r *http.Request) (answer, bool) {
		return a, r.Method == http.MethodGet && r.URL.Path == "/api/v1/accounts/"+id
	}
}

// Each look-alike answer at the destroy of a guard: the destroy fails, the
// guard and the guarded resource stay, and no backup is queued. Before
// this rule, each removed the guard from the state and let the database go.
func TestAccOnDestroyLookAlikeAbsenceKeepsTheGuard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// set changes the configuration or the front before the destroy.
		set  func(e *testEnv, f *front, c *cli, id string)
		want []string
	}{
		{"a wrong base_url prefix", func(e *testEnv, _ *front, c *cli, id string) {
			c.write(withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n}\n%s", e.url+"/v2", e.key, guardedDatabase(id, ""))))
		}, []string{"HTTP 404", "/v2/api/v1/accounts/", "did not prove itself"}},
		{"a proxy's HTML 404", func(_ *testEnv, f *front, _ *cli, id string) {
			f.set(accountGET(id, htmlNotFound))
		}, []string{"HTTP 404", "not a problem document"}},
		{"a problem 404 while the token endpoint fails", func(_ *testEnv, f *front, _ *cli, id string) {
			f.set(func(r *http.Request) (answer, bool) {
				if r.URL.Path == "/api/v1/token" {
					return tokenUnavailable, true
				}
				return accountGET(id, problemNotFound)(r)
			})
		}, []string{"HTTP 404", "did not prove itself"}},
		{"a 410", func(_ *testEnv, f *front, _ *cli, id string) {
			f.set(accountGET(id, answer{http.StatusGone, "application/problem+json",
				`{"title":"Gone","status":410,"request_id":"5b0c3c52-8f0e-4c1e-9a57-0f2b8f1f6a11"}`}))
		}, []string{"HTTP 410"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, f := newFrontEnv(t, mockservice.Options{Seed: 4001, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
			id := e.srv.AccountIDs()[0]
			c := newCLI(t, e, e.config(guardedDatabase(id, "")))
			c.run("apply", "-auto-approve", "-no-color")
			tc.set(e, f, c, id)
			out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
			flat := strings.Join(strings.Fields(out), " ")
			if err == nil {
				t.Fatalf("the destroy succeeded:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(flat, w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
			f.set(nil)
			if c.state(guardAddr) == nil || c.state("terraform_data.db") == nil {
				t.Error("the guard or the guarded resource left the state")
			}
			if _, gone := c.destroyedAt(); gone {
				t.Error("the guarded resource was destroyed")
			}
			if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
				t.Errorf("%d backup triggers", n)
			}
		})
	}
}

// An empty accounts listing while every account answers: past the first
// guards, read directly, the refresh reads the listing, and confirms
// each id it misses with a direct read; every guard stays, and the destroy
// backs every account up.
func TestAccOnDestroyEmptyListingProvesNothing(t *testing.T) {
	t.Parallel()
	e, f := newFrontEnv(t, mockservice.Options{Seed: 4002, Accounts: 10, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	ids := e.srv.AccountIDs()
	c := newCLI(t, e, e.config(fmt.Sprintf("resource \"backup_on_destroy\" \"each\" {\n  count      = %d\n  account_id = %s[count.index]\n}\n", len(ids), hclList(ids))))
	c.run("apply", "-auto-approve", "-no-color")
	f.set(func(r *http.Request) (answer, bool) {
		return emptyListing, r.Method == http.MethodGet && r.URL.Path == "/api/v1/accounts"
	})
	e.srv.ResetStats()
	plan := c.run("plan", "-no-color")
	if !strings.Contains(plan, "No changes") {
		t.Errorf("the plan proposes changes:\n%s", plan)
	}
	if gets := e.srv.Requests(mockservice.RouteGetAccount); gets != len(ids) {
		t.Errorf("%d account GETs for %d guards (the first direct, the rest confirmed after the listing); want %d", gets, len(ids), len(ids))
	}
	c.run("destroy", "-auto-approve", "-no-color")
	for _, id := range ids {
		if n := e.srv.BackupsQueued(id); n != 1 {
			t.Errorf("account %s: %d backups queued by the destroy, want 1", id, n)
		}
	}
}

// An account the service proved gone (the mock's own 404, its token
// endpoint answering): a plan warns and keeps the guard; its destroy fails
// at plan, before anything is destroyed, with the way out; the provider's
// destroy_without_backup naming the account lets it through, with a
// warning that repeats the reason.
func TestAccOnDestroyProvenGoneAndTheWayOut(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4003})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.config(guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	e.srv.DeleteAccount(id)

	plan := c.run("plan", "-no-color")
	flat := strings.Join(strings.Fields(plan), " ")
	if !strings.Contains(flat, "does not exist for this API key") || !strings.Contains(flat, "No changes") {
		t.Errorf("the plan after the account's deletion:\n%s", plan)
	}
	out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
	flat = strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, "destroy_without_backup") ||
		!strings.Contains(flat, "Account "+id+" does not exist for this API key, so its backup_on_destroy cannot take a backup") {
		t.Fatalf("the destroy of a gone account's guard: %v\n%s", err, out)
	}
	if _, gone := c.destroyedAt(); gone || c.state(guardAddr) == nil {
		t.Fatal("the guarded resource was destroyed, or the guard left the state")
	}
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d triggers sent for a destroy that failed at plan", n)
	}

	c.write(e.configReleasing("OPS-1234: the CRM account was closed", []string{id}, guardedDatabase(id, "")))
	// -compact-warnings shows only summaries: the reason is in the summary.
	out = c.run("destroy", "-auto-approve", "-no-color", "-compact-warnings")
	flat = strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "The backup_on_destroy of account "+id+" will be destroyed without a backup: OPS-1234: the CRM account was closed") ||
		!strings.Contains(flat, "The backup_on_destroy of account "+id+" was destroyed without a backup: OPS-1234: the CRM account was closed") {
		t.Errorf("the destroy let through does not say so, with the reason, in its summary:\n%s", out)
	}
	if _, gone := c.destroyedAt(); !gone {
		t.Error("the guarded resource was not destroyed")
	}
}

// destroy_without_backup lets a guard through only when its account cannot
// be backed up: a paused account (the service's 422) and a backup that
// fails go ahead with a warning; a busy account with on_conflict = "fail"
// does not, nor a proxy's 422, nor an account it does not name.
func TestAccOnDestroyWithoutBackupOnlyWhenTheAccountCannotBeBackedUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		account mockservice.AccountSpec
		extra   string
		named   bool
		// front answers in the service's place from the destroy on (nil: never).
		front       func(*http.Request) (answer, bool)
		wantThrough bool
	}{
		{"paused", mockservice.AccountSpec{State: mockservice.StatePaused}, "", true, nil, true},
		{"failing backup", mockservice.AccountSpec{FailWith: "the connection needs re-authorization"}, "", true, nil, true},
		{"busy, on_conflict fail", mockservice.AccountSpec{}, "  on_conflict = \"fail\"\n", true, nil, false},
		{"paused, not named", mockservice.AccountSpec{State: mockservice.StatePaused}, "", false, nil, false},
		// A proxy, not the service, refuses the trigger with an HTML 422: it proves nothing about the account.
		{"a proxy's 422", mockservice.AccountSpec{}, "", true, func(r *http.Request) (answer, bool) {
			return answer{http.StatusUnprocessableEntity, "text/html", "<html>422 blocked by policy</html>"}, r.Method == http.MethodPost
		}, false},
		// The service's own 422, to the read of the backups before the trigger: only the trigger's refusal shows
		// that the account cannot be backed up (before, any 422 on the way let the destroy through).
		{"the service's 422 to a read", mockservice.AccountSpec{}, "", true, func(r *http.Request) (answer, bool) {
			return answer{http.StatusUnprocessableEntity, "application/problem+json", `{"title":"Unprocessable Entity","status":422,` +
				`"detail":"not in a backupable state","request_id":"5b0c3c52-8f0e-4c1e-9a57-0f2b8f1f6a11"}`}, strings.HasSuffix(r.URL.Path, "/backups")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, f := newFrontEnv(t, mockservice.Options{Seed: 4004, PendingFor: time.Minute, RunningFor: time.Minute})
			id := e.srv.AddAccount(tc.account)
			named := id
			if !tc.named {
				named = e.srv.AccountIDs()[0]
			}
			cfg := e.configReleasing("decommissioned", []string{named}, guardedDatabase(id, tc.extra))
			c := newCLI(t, e, cfg)
			c.run("apply", "-auto-approve", "-no-color")
			if tc.extra != "" {
				e.outsideBackup(t, id)
			}
			if tc.front != nil {
				f.set(tc.front)
			}
			// Before the prompt, a named guard warns whatever its account's state, which the API does not show:
			// a paused account as a deleted one.
			plan, err := c.exec(nil, "plan", "-destroy", "-no-color")
			if warned := strings.Contains(strings.Join(strings.Fields(plan), " "), "The backup_on_destroy of account "+id+" may be destroyed without a backup: decommissioned"); warned != (tc.named && tc.extra == "") || (err != nil) != (tc.extra != "") {
				t.Errorf("the plan: exit %v, warned %t:\n%s", err, warned, plan)
			}
			out, err := c.exec(nil, "destroy", "-auto-approve", "-no-color")
			_, gone := c.destroyedAt()
			if (err == nil) != tc.wantThrough || gone != tc.wantThrough {
				t.Fatalf("let through: exit %v, destroyed %t; want %t:\n%s", err, gone, tc.wantThrough, out)
			}
			if tc.wantThrough && !strings.Contains(strings.Join(strings.Fields(out), " "), "The backup_on_destroy of account "+id+" was destroyed without a backup: decommissioned") {
				t.Errorf("no warning for the guard let through:\n%s", out)
			}
		})
	}
}

// The preflight: a guard planned for destroy reads its account once when
// the plan has not refreshed it (-refresh=false), and a plan that destroys
// nothing reads nothing for it; a refused key or a busy account with
// on_conflict = "fail" fails the plan, before anything is destroyed.
func TestAccOnDestroyPreflight(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4005, PendingFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	busy := e.srv.AddAccount(mockservice.AccountSpec{})
	cfg := guardedDatabase(id, "") + strings.ReplaceAll(strings.ReplaceAll(guardedDatabase(busy, "  on_conflict = \"fail\"\n"),
		`"db"`, `"busy"`), "db-destroyed-at", "busy-destroyed-at")
	c := newCLI(t, e, e.config(cfg))
	c.run("apply", "-auto-approve", "-no-color")

	// The guard of busy removed from the configuration: the plan's refresh
	// reads each account, and the preflight of the guard planned for
	// destroy shares that read.
	c.write(e.config(guardedDatabase(id, "")))
	e.srv.ResetStats()
	if out := c.run("plan", "-no-color"); !strings.Contains(out, "2 to destroy") {
		t.Errorf("the plan without busy's blocks:\n%s", out)
	}
	if n := e.srv.Requests(mockservice.RouteGetAccount); n != 2 {
		t.Errorf("a plan refreshing 2 guards and destroying 1 sent %d account GETs, want 2 (the preflight shares the refresh's)", n)
	}
	c.write(e.config(cfg))

	e.srv.ResetStats()
	c.run("plan", "-refresh=false", "-no-color")
	if n := e.srv.Stats().TotalRequests(); n != 0 {
		t.Errorf("a plan that destroys nothing sent %d requests, want 0", n)
	}
	e.srv.ResetStats()
	c.run("plan", "-destroy", "-refresh=false", "-no-color")
	if n := e.srv.Requests(mockservice.RouteGetAccount); n != 2 {
		t.Errorf("a destroy plan of 2 guards sent %d account GETs, want 2 (one per guard)", n)
	}

	e.outsideBackup(t, busy)
	out, err := c.exec(nil, "plan", "-destroy", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, "A backup of account "+busy+" is in progress") || !strings.Contains(flat, `on_conflict is "fail"`) {
		t.Errorf("a busy account with on_conflict = \"fail\": %v\n%s", err, out)
	}

	c.write(e.configWithKey("bks_revoked0000000000000000", cfg))
	out, err = c.exec(nil, "plan", "-destroy", "-refresh=false", "-no-color")
	flat = strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, "HTTP 401") || !strings.Contains(flat, "before destroying its backup_on_destroy") {
		t.Errorf("a refused key: %v\n%s", err, out)
	}
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued by plans", n)
	}
}

// A finished trigger's refresh: a proxy's HTML 404 for its account is an
// error that keeps the trigger; the service's proven 404 removes it with a
// warning.
func TestAccTriggerRefreshNeedsProvenAbsence(t *testing.T) {
	t.Parallel()
	e, f := newFrontEnv(t, mockservice.Options{Seed: 4006, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.config(triggerConfig(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	// The account and its backups: whichever the refresh reads.
	f.set(func(r *http.Request) (answer, bool) {
		return htmlNotFound, strings.HasPrefix(r.URL.Path, "/api/v1/accounts/"+id)
	})
	out, err := c.exec(nil, "plan", "-no-color")
	if err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "not a problem document") {
		t.Errorf("a proxy's 404 at refresh: %v\n%s", err, out)
	}
	f.set(nil)
	if c.state(addr) == nil {
		t.Fatal("the trigger left the state on a proxy's 404")
	}
	e.srv.DeleteAccount(id)
	out = c.run("plan", "-no-color")
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "Backup trigger removed from state") || !strings.Contains(flat, "1 to add") {
		t.Errorf("a proven 404 at refresh:\n%s", out)
	}
}

// A cache's stored empty page of an account's backups (Age 600), answered
// to the read before a trigger: the apply fails naming the cache, and no
// backup is queued; with the cache gone, the next apply takes one.
func TestAccTriggerSendsNothingAfterACachedRead(t *testing.T) {
	t.Parallel()
	e, f := newFrontEnv(t, mockservice.Options{Seed: 4010, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	f.set(func(r *http.Request) (answer, bool) {
		return emptyListing, r.Method == http.MethodGet && r.URL.Path == "/api/v1/accounts/"+id+"/backups"
	})
	f.stored("600")
	c := newCLI(t, e, e.config(triggerConfig(id, "")))
	out, err := c.exec(nil, "apply", "-auto-approve", "-no-color")
	if flat := strings.Join(strings.Fields(out), " "); err == nil || !strings.Contains(flat, "a cache that had held it for 10m0s") {
		t.Errorf("an apply after a cache's stored read: %v\n%s", err, out)
	}
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued after a cache's stored read; want none", n)
	}
	f.set(nil)
	c.run("apply", "-auto-approve", "-no-color")
	if n := e.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d backups queued once the cache was gone; want one", n)
	}
}

// backup_stale_accounts never passes over an account it could not check:
// a look-alike 404 on an account's backups is an error; a proven one is a
// warning naming the account, which lands in gone_ids and not in checked.
func TestAccStaleAccountsAbsence(t *testing.T) {
	t.Parallel()
	e, f := newFrontEnv(t, mockservice.Options{Seed: 4007, Accounts: 3})
	ids := e.srv.AccountIDs()
	cfg := e.config(`data "backup_stale_accounts" "all" {
  max_age = "24h"
}
output "checked" { value = data.backup_stale_accounts.all.checked }
output "gone" { value = data.backup_stale_accounts.all.gone_ids }
`)
	c := newCLI(t, e, cfg)
	backupsOf := func(id string, a answer) func(*http.Request) (answer, bool) {
		return func(r *http.Request) (answer, bool) { return a, r.URL.Path == "/api/v1/accounts/"+id+"/backups" }
	}
	f.set(backupsOf(ids[1], htmlNotFound))
	out, err := c.exec(nil, "apply", "-auto-approve", "-no-color")
	if flat := strings.Join(strings.Fields(out), " "); err == nil || !strings.Contains(flat, "Unable to read the backups of account "+ids[1]) {
		t.Errorf("a proxy's 404 on an account's backups: %v\n%s", err, out)
	}
	f.set(backupsOf(ids[1], problemNotFound))
	out = c.run("apply", "-auto-approve", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "1 account gone since the listing, not checked") || !strings.Contains(flat, ids[1]) {
		t.Errorf("a proven 404 on an account's backups does not warn naming it:\n%s", out)
	}
	if !strings.Contains(flat, "checked = 2") || !strings.Contains(flat, fmt.Sprintf("%q", ids[1])) {
		t.Errorf("checked and gone_ids:\n%s", out)
	}
}

// The limit the docs state: Terraform 1.16's lifecycle { destroy = false }
// on a guard makes `terraform destroy` forget the guard instead of
// destroying it, so no backup is taken and the guarded resource goes.
// (Removing the block takes the setting with it: the guard is destroyed,
// with its backup.) Tested so that the docs learn of a change.
func TestAccOnDestroyLifecycleDestroyFalseForgetsTheGuard(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.16.0-rc1", "lifecycle { destroy = false } on a resource")
	e := newTestEnv(t, mockservice.Options{Seed: 4008, PendingFor: 50 * time.Millisecond, RunningFor: 50 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.config(guardedDatabase(id, "  lifecycle {\n    destroy = false\n  }\n")))
	c.run("apply", "-auto-approve", "-no-color")
	out := c.run("destroy", "-auto-approve", "-no-color")
	if c.state(guardAddr) != nil {
		t.Fatalf("the guard is still in the state:\n%s", out)
	}
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d backup triggers; Terraform 1.16 forgot the guard without one until now: update the docs' limit", n)
	}
	if _, gone := c.destroyedAt(); !gone {
		t.Errorf("the guarded resource was kept; the docs say it goes:\n%s", out)
	}
}

// The absence rule as Terraform meets it, over the protocol: for every
// answer a service, a proxy or a wrong base_url can give to the reads of a
// refresh, a resource leaves the state only on the service's own 404 from
// a base_url that proves itself, and a guard never does. No Terraform, no
// mock: an httptest server plays each answer.

const (
	ruleAccount = "acc_0123456789abcdef"
	ruleBackup  = "bkp_0123456789abcdef"
	ruleReqID   = "5b0c3c52-8f0e-4c1e-9a57-0f2b8f1f6a11"
)

// ruleAnswers are what the account's paths answer; proven marks the one
// that, with a token endpoint answering 200, proves the account gone.
var ruleAnswers = []struct {
	name        string
	status      int
	contentType string
	body        string
	proven      bool
}{
	{"the service's 404", 404, "application/problem+json", `{"title":"Resource not found.","status":404,"request_id":"` + ruleReqID + `"}`, true},
	{"HTML 404", 404, "text/html", "<html>Not Found</html>", false},
	{"empty 404", 404, "", "", false},
	{"{} 404", 404, "application/json", "{}", false},
	{"problem 404 without request id", 404, "application/problem+json", `{"title":"Resource not found.","status":404}`, false},
	{"problem 404 with status 200", 404, "application/problem+json", `{"title":"x","status":200,"request_id":"` + ruleReqID + `"}`, false},
	{"410", 410, "application/problem+json", `{"title":"Gone","status":410,"request_id":"` + ruleReqID + `"}`, false},
	{"403", 403, "application/problem+json", `{"title":"Forbidden","status":403,"request_id":"` + ruleReqID + `"}`, false},
	{"500", 500, "application/problem+json", `{"title":"Internal Server Error","status":500,"request_id":"` + ruleReqID + `"}`, false},
}

// ruleService answers the account's paths with one answer, an empty
// accounts listing, and the token endpoint with tokenStatus.
func ruleService(t *testing.T, status int, contentType, body string, tokenStatus int) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/token" && tokenStatus == 200:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"name":"ci","expires_at":"2030-01-01T00:00:00Z","organization":{"id":"org_8Fq2LmT0aZ7cX1vB","name":"Org"}}`)
		case r.URL.Path == "/api/v1/token":
			w.WriteHeader(tokenStatus)
		case r.URL.Path == "/api/v1/accounts":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`)
		default:
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			_, _ = fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// configured is a provider server configured for baseURL, with no retries
// so that 5xx answers cost one request.
func configured(t *testing.T, baseURL string) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	srv, sch := protocolServer(t)
	resp, err := srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
		TerraformVersion: "1.11.4",
		Config: object(t, sch.Provider, map[string]tftypes.Value{
			"base_url": tfStr(baseURL), "api_key": tfStr("bks_rulekey0000000000001"),
			"max_retries": tftypes.NewValue(tftypes.Number, 0),
		}),
	})
	if err != nil || diagText(resp.Diagnostics) != "" {
		t.Fatalf("configure: %v %s", err, diagText(resp.Diagnostics))
	}
	return srv, sch
}

func TestAbsenceRuleOverTheProtocol(t *testing.T) {
	t.Parallel()
	states := map[string]map[string]tftypes.Value{
		"backup_on_destroy": {
			"id": tfStr(ruleAccount), "account_id": tfStr(ruleAccount), "on_conflict": tfStr("wait"), "resume_within": tfStr("10m"),
		},
		"backup_trigger (finished)": {
			"id": tfStr(ruleBackup), "account_id": tfStr(ruleAccount), "backup_status": tfStr("success"),
			"triggered_at": tfStr("2026-11-21T10:00:00Z"), "completed_at": tfStr("2026-11-21T10:05:00Z"),
			"on_conflict": tfStr("wait"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, true),
		},
		"backup_trigger (in progress)": {
			"id": tfStr(ruleBackup), "account_id": tfStr(ruleAccount), "backup_status": tfStr("running"),
			"triggered_at": tfStr("2026-11-21T10:00:00Z"),
			"on_conflict":  tfStr("wait"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, false),
		},
	}
	for _, a := range ruleAnswers {
		for _, tokenStatus := range []int{200, 404, 503} {
			for what, attrs := range states {
				t.Run(fmt.Sprintf("%s/token %d/%s", a.name, tokenStatus, what), func(t *testing.T) {
					t.Parallel()
					srv, sch := configured(t, ruleService(t, a.status, a.contentType, a.body, tokenStatus))
					typeName, _, _ := strings.Cut(what, " ")
					schema := sch.ResourceSchemas[typeName]
					resp, err := srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
						TypeName: typeName, CurrentState: object(t, schema, attrs),
					})
					if err != nil {
						t.Fatal(err)
					}
					dropped := resp.NewState == nil
					if !dropped {
						v, err := resp.NewState.Unmarshal(schema.ValueType())
						if err != nil {
							t.Fatal(err)
						}
						dropped = v.IsNull()
					}
					wantDropped := a.proven && tokenStatus == 200 && typeName == "backup_trigger"
					if dropped != wantDropped {
						t.Fatalf("left the state: %t, want %t; diagnostics: %s", dropped, wantDropped, diagText(resp.Diagnostics))
					}
					// What stays is either an error (nothing proven) or, for
					// a guard of a proven-gone account, a warning.
					switch {
					case typeName == "backup_on_destroy" && a.proven && tokenStatus == 200:
						if w := diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning); !strings.Contains(w, "does not exist for this API key") {
							t.Errorf("no warning for the guard of a proven-gone account: %s", w)
						}
					case !wantDropped && diagText(resp.Diagnostics) == "":
						t.Errorf("no error for an answer that proves nothing: %s", diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning))
					}
				})
			}
		}
	}
}

// destroy_without_backup is refused at validate, before any request, with
// a message naming what is wrong: a reason without words, a malformed id.
func TestDestroyWithoutBackupValidation(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	release := func(reason string, ids ...string) tftypes.Value {
		typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"account_ids": tftypes.List{ElementType: tftypes.String}, "reason": tftypes.String}}
		return tftypes.NewValue(typ, map[string]tftypes.Value{"account_ids": strList(ids...), "reason": tfStr(reason)})
	}
	for _, tc := range []struct {
		name  string
		value tftypes.Value
		want  string
	}{
		{"a blank reason", release("  ", ruleAccount), "Missing reason for destroy_without_backup"},
		{"a reason of punctuation", release("--", ruleAccount), "Missing reason for destroy_without_backup"},
		{"a malformed id", release("OPS-1", "acc_short"), "must be an account id"},
		{"no ids", release("OPS-1"), "at least 1"},
		{"a good one", release("OPS-1: closed", ruleAccount), ""},
	} {
		resp, err := srv.ValidateProviderConfig(context.Background(), &tfprotov6.ValidateProviderConfigRequest{
			Config: object(t, sch.Provider, map[string]tftypes.Value{"destroy_without_backup": tc.value}),
		})
		if err != nil {
			t.Fatal(err)
		}
		got := diagText(resp.Diagnostics)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want an error saying %q", tc.name, got, tc.want)
		}
	}
}
