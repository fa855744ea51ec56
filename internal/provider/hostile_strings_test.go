package provider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

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
