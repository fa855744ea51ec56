package provider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// The fault matrix: each case applies a configuration that uses every data
// source and several triggers against a mock with a fault switched on, and
// checks the apply's outcome, the state, and the backups the mock queued.

// everything reads every data source and triggers a backup of each account.
func everything(accountIDs []string, providerExtra string) string {
	return fmt.Sprintf(`
locals {
  ids = %s
}

data "backup_token" "this" {}
data "backup_accounts" "all" {}
data "backup_account" "first" { id = local.ids[0] }
data "backup_audit_logs" "all" {}
data "backup_account_backups" "first" { account_id = local.ids[0] }

resource "backup_trigger" "each" {
  count      = length(local.ids)
  account_id = local.ids[count.index]
}
%s`, hclList(accountIDs), providerExtra)
}

// faultEnv is a mock with n accounts (of a fixed creation time, so that the
// listing is stable) and the provider's fast test retries.
func faultEnv(t *testing.T, seed uint64, n int) (*testEnv, []string) {
	t.Helper()
	e := newTestEnv(t, mockservice.Options{Seed: seed, Accounts: n, AuditLogs: 10, PendingFor: time.Hour})
	return e, e.srv.AccountIDs()
}

// checkOneBackupEach asserts exactly one backup queued per account, and
// that the state's trigger ids are the backups the mock holds.
func (e *testEnv) checkOneBackupEach(ids []string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, id := range ids {
			if n := e.srv.BackupsQueued(id); n != 1 {
				return fmt.Errorf("account %s: %d backups queued, want exactly 1", id, n)
			}
		}
		for i := range ids {
			r := s.RootModule().Resources[fmt.Sprintf("backup_trigger.each.%d", i)]
			if r == nil {
				return fmt.Errorf("trigger %d missing from state", i)
			}
			if !strings.HasPrefix(r.Primary.ID, "bkp_") {
				return fmt.Errorf("trigger %d holds no backup id (%q): %v", i, r.Primary.ID, r.Primary.Attributes)
			}
		}
		return nil
	}
}

// applyEverything applies everything() with cfg's provider block and checks
// state and one backup per account.
func (e *testEnv) applyEverything(t *testing.T, ids []string, cfg string) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:            cfg,
			ConfigStateChecks: faultStateChecks(len(ids)),
			Check:             e.checkOneBackupEach(ids),
		}},
	})
}

func faultStateChecks(n int) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue("data.backup_accounts.all", tfjsonpath.New("ids"), knownvalue.ListSizeExact(n)),
		statecheck.ExpectKnownValue("data.backup_token.this", tfjsonpath.New("name"), knownvalue.StringExact(mockservice.DemoKeyName)),
		statecheck.ExpectKnownValue("backup_trigger.each[0]", tfjsonpath.New("backup_status"), knownvalue.StringExact("pending")),
	}
}

func TestAccFaultServerErrorOnFirstRequestOfEveryRoute(t *testing.T) {
	e, ids := faultEnv(t, 1001, 4)
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, PerRoute: true, Times: 1})
	e.applyEverything(t, ids, e.config(everything(ids, "")))
}

func TestAccFaultAggregateLoad429s(t *testing.T) {
	e, ids := faultEnv(t, 1002, 4)
	// Accounts with no backup yet: their triggers are sent within 30 s of
	// the empty read before them, or read again first (before, a trigger
	// whose 429 waits outlasted the 90 s that read proves absence for was
	// never identified: 1 run in 120). Ten retries make a run of eleven 429s
	// at 30% (about 2e-6 a request) the only way to fail.
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Probability: 0.3})
	cfg := strings.Replace(e.config(everything(ids, "")), "  api_key  =", "  max_retries = 10\n  api_key  =", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:            cfg,
			ConfigStateChecks: faultStateChecks(4),
			Check: resource.ComposeTestCheckFunc(e.checkOneBackupEach(ids), func(*terraform.State) error {
				if e.srv.Stats().Overloaded == 0 {
					return fmt.Errorf("no 429 was injected; the case tested nothing")
				}
				return nil
			}),
		}},
	})
}

func TestAccFaultRetryAfter(t *testing.T) {
	e, ids := faultEnv(t, 1003, 3)
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, PerRoute: true, Times: 2, RetryAfter: 2 * time.Second})
	e.applyEverything(t, ids, e.config(everything(ids, "")))
}

// A per-key allowance of 5 requests a second under Terraform's default
// parallelism of 10: the provider paces itself, and the service refuses
// none of its requests for the allowance but a client's first. Terraform
// starts a provider process per command and walk (the test framework
// configures its one server anew), and a process knows nothing of the
// window its predecessor filled until its first answer (BENCHMARKS.md,
// section 7, leaves those out too); on virtual time, frozen between
// commands, that predecessor's last second is always the current one.
func TestAccFaultSmallAllowanceUnderParallelism(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1004, Accounts: 4, RateLimit: 5, PendingFor: time.Hour})
	ids := e.srv.AccountIDs()
	var refusals firstRequestRefusals
	e.clientOptions = refusals.watch
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
data "backup_token" "this" {}
resource "backup_trigger" "each" {
  count      = %d
  account_id = [%q, %q, %q, %q][count.index]
}
`, len(ids), ids[0], ids[1], ids[2], ids[3])),
			Check: func(s *terraform.State) error {
				if err := refusals.paced(); err != nil {
					return err
				}
				return e.checkOneBackupEach(ids)(s)
			},
		}},
	})
	if err := refusals.paced(); err != nil {
		t.Error(err)
	}
	if st := e.srv.Stats(); st.RateLimited > refusals.clients() {
		t.Errorf("%d requests over the key's allowance from %d clients; at most one each, its first", st.RateLimited, refusals.clients())
	}
}

// firstRequestRefusals tells, per provider client, the allowance refusals
// of requests it sent after its first: those its limiter paced.
type firstRequestRefusals struct {
	mu      sync.Mutex
	made    int
	refused []string
}

// watch gives a client a transport that counts its requests and notes a
// 429 to any but its first.
func (f *firstRequestRefusals) watch(o *client.Options) {
	f.mu.Lock()
	f.made++
	n, sent := f.made, 0
	f.mu.Unlock()
	o.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		f.mu.Lock()
		sent++
		first := sent == 1
		f.mu.Unlock()
		res, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && res.StatusCode == http.StatusTooManyRequests && !first {
			f.mu.Lock()
			f.refused = append(f.refused, fmt.Sprintf("client %d: %s %s", n, r.Method, r.URL.Path))
			f.mu.Unlock()
		}
		return res, err
	})}
}

func (f *firstRequestRefusals) clients() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.made
}

func (f *firstRequestRefusals) paced() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.refused) > 0 {
		return fmt.Errorf("%d paced requests over the key's allowance: %s", len(f.refused), strings.Join(f.refused, "; "))
	}
	return nil
}

// "Accepted but answered 500" on every trigger: one backup each, no error.
func TestAccFaultAcceptedButAnswered500(t *testing.T) {
	e, ids := faultEnv(t, 1005, 4)
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger})
	e.applyEverything(t, ids, e.config(everything(ids, "")))
}

// Latency beyond the request timeout: reads are retried, and a trigger whose
// answer never came (but which the service processed) is recognised.
func TestAccFaultLatencyBeyondRequestTimeout(t *testing.T) {
	e, ids := faultEnv(t, 1006, 3)
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultLatency, PerRoute: true, Times: 1, Latency: 400 * time.Millisecond})
	e.applyEverything(t, ids, strings.Replace(e.config(everything(ids, "")), "  api_key  =", "  request_timeout = \"150ms\"\n  api_key  =", 1))
}

func TestAccFaultMalformedAndTruncatedBodies(t *testing.T) {
	e, ids := faultEnv(t, 1007, 2)
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultMalformedJSON, Route: mockservice.RouteToken})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultTruncatedBody, Route: mockservice.RouteGetAccount})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "backup_token" "this" {}`),
				ExpectError: expectError("Unable to read backup_token", "GET /api/v1/token: HTTP 200 with a body that is not the expected JSON (request id", ")"),
			},
			{
				Config:      e.config(fmt.Sprintf(`data "backup_account" "this" { id = %q }`, ids[0])),
				ExpectError: expectError(`Unable to read backup_account "`+ids[0]+`"`, "unexpected EOF", "The request failed on every attempt"),
			},
		},
	})
}

func TestAccFaultInvalidCursorMidListing(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1008, Accounts: 137})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultInvalidCursor, Route: mockservice.RouteListAccounts, Times: 1})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`data "backup_accounts" "all" {}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_accounts.all", tfjsonpath.New("ids"), knownvalue.ListSizeExact(137)),
			},
		}},
	})
}

// A Retry-After of an hour is capped, and when the retry budget cannot hold
// it the read fails at once, saying why.
func TestAccFaultHugeRetryAfter(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1009})
	e.clientOptions = func(o *client.Options) {
		o.RetryAfterCap = 10 * time.Minute
		o.RetryBudget = time.Minute
	}
	start := e.clock.Now()
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteToken, RetryAfter: time.Hour})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`data "backup_token" "this" {}`),
			ExpectError: expectError("Unable to read backup_token", "HTTP 429 (Too Many Requests)",
				"The provider gave up after 1 attempt: waiting 10m0s more would exceed the retry budget of 1m0s."),
		}},
	})
	// On the test's clock, which moves only as the client waits: a wait
	// of 10 minutes (or a retry) would show.
	if waited := e.clock.Now().Sub(start); waited != 0 {
		t.Errorf("the client waited %s; it should give up at once", waited)
	}
}

// Rate-limit refusals (429) are not counted by max_retries: a backup_trigger
// waits out more of them than max_retries allows, within timeouts.create,
// and takes its one backup; a data source, which has no timeouts, waits
// them out within retry_budget, and fails naming it past that.
func TestAccFaultRateLimitedWaitsBoundedByTime(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1010, PendingFor: time.Second, RunningFor: time.Second})
	id := e.srv.AccountIDs()[0]
	provider := func(budget string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url     = %q\n  api_key      = %q\n  max_retries  = 1\n  retry_budget = %q\n}\n\n",
			e.url, e.key, budget))
	}
	overload := func(route mockservice.Route) func() {
		return func() {
			e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: route, Times: 6, RetryAfter: 5 * time.Second})
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: overload(mockservice.RouteTrigger),
				Config:    provider("10s") + triggerConfig(id, "  wait_for_completion = true\n"),
				Check:     e.expectQueued(id, 1),
			},
			{
				PreConfig: overload(mockservice.RouteToken),
				Config:    provider("1m") + "data \"backup_token\" \"t\" {}\n",
			},
			{
				PreConfig:   overload(mockservice.RouteToken),
				Config:      provider("20s") + "data \"backup_token\" \"t\" {}\n",
				ExpectError: expectError("HTTP 429", "longer than the provider's retry_budget", "Raise retry_budget"),
			},
		},
	})
	if n := e.srv.Requests(mockservice.RouteTrigger); n < 7 {
		t.Errorf("%d trigger requests: the 429s were not waited out", n)
	}
}

// hostileService answers every endpoint with well-formed JSON whose text
// fields carry terminal escape sequences and the key the client presented,
// whose backups listing holds a record naming another account (with a
// path in its id), and whose trigger answer is for another account. It
// records every path asked for.
type hostileService struct {
	key, account string
	mu           sync.Mutex
	paths        []string
	triggered    time.Time
}

func (h *hostileService) text() string {
	return "ci\x1b]0;TITLE-PWNED\x07\x1b[31m" + h.key + "\u202e\x1b[0m"
}

func (h *hostileService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.paths = append(h.paths, r.Method+" "+r.URL.Path)
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-ID", "0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d")
	page := func(items ...any) map[string]any {
		return map[string]any{"data": items, "pagination": map[string]any{"limit": 50, "next_cursor": nil}}
	}
	account := func(id string) map[string]any {
		return map[string]any{"id": id, "name": h.text(), "backup_status": "success\x1b[2J", "platform": "slack" + h.text(),
			"service_type": h.text(), "created_at": "2026-01-01T00:00:00Z"}
	}
	var out any
	switch r.Method + " " + r.URL.Path {
	case "GET /api/v1/token":
		out = map[string]any{"name": h.text(), "expires_at": "2030-01-01T00:00:00Z",
			"organization": map[string]any{"id": "org_0123456789abcdef", "name": h.text()}}
	case "GET /api/v1/accounts":
		out = page(account(h.account))
	case "GET /api/v1/accounts/" + h.account:
		out = account(h.account)
	case "POST /api/v1/accounts/" + h.account + "/backup":
		h.mu.Lock()
		h.triggered = time.Now().UTC()
		h.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		out = account("acc_OTHER00000000000") // the answer names another account
	case "GET /api/v1/accounts/" + h.account + "/backups":
		h.mu.Lock()
		created := h.triggered
		h.mu.Unlock()
		beforeTrigger := created.IsZero() // this trigger's backup is listed once it queued it
		if beforeTrigger {
			created = time.Now().UTC().Add(-time.Hour)
		}
		items := []any{
			// Another account's backup, newer, with a path for an account:
			// left out, never polled.
			map[string]any{"id": "bkp_OTHER00000000000", "account_id": "acc_0123456789abcdef/../../token?x=1", "status": "running",
				"created_at": created.Add(time.Second).Format(time.RFC3339)},
			// Another account's good backup, newest: never this trigger's.
			map[string]any{"id": "bkp_OTHERGOOD0000000", "account_id": "acc_OTHER00000000000", "status": "success",
				"created_at": created.Add(2 * time.Second).Format(time.RFC3339), "completed_at": created.Add(2 * time.Second).Format(time.RFC3339)},
		}
		if !beforeTrigger {
			items = append(items, map[string]any{"id": "bkp_MINE000000000000", "account_id": h.account, "status": "success",
				"created_at": created.Format(time.RFC3339), "completed_at": created.Format(time.RFC3339)})
		}
		// A success with an error contradicts itself (it would not count):
		// the hostile error text is an older failure's.
		out = page(append(items, map[string]any{"id": "bkp_FAILED0000000000", "account_id": h.account, "status": "failed",
			"created_at": created.Add(-time.Hour).Format(time.RFC3339), "completed_at": created.Add(-time.Hour).Format(time.RFC3339), "error": h.text()})...)
	case "GET /api/v1/audit-logs":
		out = page(map[string]any{"id": "log_0123456789abcdef", "created_at": "2026-11-21T10:00:00Z", "action": h.text(),
			"actor": "api_key:" + h.text(), "resource_type": h.text(), "resource_id": "acc_0123456789abcdef/../../token?x=1" + h.text()})
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// Against a service that answers well-formed JSON with hostile field
// values: no escape sequence and no key reaches the terminal (plan and
// apply output, -no-color or not) or the state file; the backup of another
// account in the listing is never taken for this trigger's, and no request
// goes to a path the service chose.
func TestAccHostileStringsStayOut(t *testing.T) {
	t.Parallel()
	const key = "bks_hostileTestKey0123456789abcdef"
	h := &hostileService{key: key, account: "acc_HOSTILE000000000"}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	e := &testEnv{t: t, url: ts.URL, key: key}
	c := newCLI(t, e, e.config(`
data "backup_token" "t" {}
data "backup_accounts" "all" {}
data "backup_account" "one" {
  id = "acc_HOSTILE000000000"
}
data "backup_account_backups" "b" {
  account_id = "acc_HOSTILE000000000"
}
data "backup_audit_logs" "l" {}

resource "backup_trigger" "this" {
  account_id          = "acc_HOSTILE000000000"
  wait_for_completion = true
}

output "names" {
  value = [data.backup_token.t.name, data.backup_token.t.organization_name, data.backup_account.one.name]
}
`))
	var outputs []string
	outputs = append(outputs, c.run("plan"), c.run("apply", "-auto-approve"), c.run("plan", "-no-color"), c.run("output", "-json"))
	state, err := os.ReadFile(filepath.Join(c.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	for i, out := range append(outputs, string(state)) {
		for _, bad := range []string{key, "TITLE-PWNED\a", "\x1b]", "\x1b[31m", "\x1b[2J", "\u202e", `\u001b`, `\u202e`} {
			if strings.Contains(out, bad) {
				t.Errorf("output %d (the last is the state file) holds %q:\n%s", i, bad, out)
			}
		}
	}
	if st := c.state("backup_trigger.this"); st == nil || st["id"] != "bkp_MINE000000000000" || st["backup_status"] != "success" {
		t.Errorf("the trigger recorded %v; want its own backup, not the other account's", st)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.paths {
		path := strings.SplitN(p, " ", 2)[1]
		switch path {
		case "/api/v1/token", "/api/v1/accounts", "/api/v1/audit-logs",
			"/api/v1/accounts/" + h.account, "/api/v1/accounts/" + h.account + "/backups", "/api/v1/accounts/" + h.account + "/backup":
		default:
			t.Errorf("a request went to a path the service chose: %s", p)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
