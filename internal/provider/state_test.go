package provider

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// State as this release writes it reads in every later one: the promise
// to the first release's users. The state is written by hand, in the form
// taken from a state file this release wrote: schema version 0, timestamps
// such as "2026-11-21T09:00:00Z", the records of the triggers and of a
// stopped guard under the private key "lifecycle" (version 1), and the
// triggers' identities on binaries that keep them (1.12+). A plan of it proposes no change, a refresh changes
// nothing, and `show -json` gives back every value as written. A change
// to the schema or the record that breaks this needs a state upgrader (or
// a reader of the older record), not a new fixture.
func TestAccStateOfThisReleaseReads(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 3001})
	done := e.srv.AddAccount(mockservice.AccountSpec{ID: "acc_statecompat00001"})
	busy := e.srv.AddAccount(mockservice.AccountSpec{ID: "acc_statecompat00002"})
	// A backup takes 11 minutes (AddHistory): this one ended long ago
	// (the test's clock starts at the wall clock's now); the other is
	// running at the test's now, so its triggered_at is written from it.
	e.srv.AddHistory(done, mockservice.BackupSpec{ID: "bkp_statecompat00001", CreatedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)})
	running := e.clock.Now().Add(-5 * time.Minute).UTC().Truncate(time.Second)
	e.srv.AddHistory(busy, mockservice.BackupSpec{ID: "bkp_statecompat00002", CreatedAt: running})
	e.srv.AddHistory(busy, mockservice.BackupSpec{ID: "bkp_statecompat00003", CreatedAt: time.Date(2026, 11, 21, 10, 5, 0, 0, time.UTC)})

	const body = `
resource "backup_trigger" "waited" {
  account_id          = "acc_statecompat00001"
  wait_for_completion = true
}

resource "backup_trigger" "queued" {
  account_id = "acc_statecompat00002"
}

resource "backup_on_destroy" "guard" {
  account_id = "acc_statecompat00001"
  timeouts {
    delete = "5m"
  }
}
`
	const pendingGuard = `
resource "backup_on_destroy" "pending" {
  account_id = "acc_statecompat00002"
  timeouts {
    delete = "10m"
  }
}
`
	c := newCLI(t, e, e.config(body))
	host := "registry.terraform.io"
	if usingOpenTofu {
		host = openTofuRegistry
	}
	instances := map[string]string{
		"backup_trigger.waited": `{
  "account_id": "acc_statecompat00001",
  "backup_status": "success",
  "completed_at": "2026-11-21T09:11:00Z",
  "id": "bkp_statecompat00001",
  "on_conflict": "wait",
  "prior_backup_ids": "bkp_statecompat00001",
  "reuse_within": null,
  "reused": false,
  "timeouts": null,
  "trigger_accepted": null,
  "triggered_at": "2026-11-21T09:00:00Z",
  "triggers": null,
  "wait_for_completion": true
}`,
		// Read compares these with what the service says, as strings.
		"backup_trigger.queued": `{
  "account_id": "acc_statecompat00002",
  "backup_status": "running",
  "completed_at": null,
  "id": "bkp_statecompat00002",
  "on_conflict": "wait",
  "prior_backup_ids": "bkp_statecompat00002,bkp_statecompat00003",
  "reuse_within": null,
  "reused": false,
  "timeouts": null,
  "trigger_accepted": null,
  "triggered_at": "` + running.Format(time.RFC3339) + `",
  "triggers": null,
  "wait_for_completion": false
}`,
		"backup_on_destroy.guard": `{
  "account_id": "acc_statecompat00001",
  "id": "acc_statecompat00001",
  "on_conflict": "wait",
  "resume_within": "10m",
  "reuse_within": null,
  "pending_destroy_backup": null,
  "timeouts": {
    "delete": "5m"
  }
}`,
	}
	identities := cliVersion(t, c).GreaterThanOrEqual(version.Must(version.NewVersion("1.12.0")))
	// Each trigger's record; its change went ahead, as its prior_backup_ids
	// (the listing then, its own backup among them) show: without its backup
	// among them, the next plan updates the trigger in place to record them.
	lifecycle := func(record string) string {
		return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, `{"lifecycle":%q}`, base64.StdEncoding.EncodeToString([]byte(record))))
	}
	triggerRecords := map[string]string{
		"backup_trigger.waited": lifecycle(`{"v":1,"phase":"identified","backup_id":"bkp_statecompat00001","status":"success",` +
			`"triggered_at":"2026-11-21T09:00:00Z","completed_at":"2026-11-21T09:11:00Z","prior":{"ids":["bkp_statecompat00001"]},"ahead":true}`),
		"backup_trigger.queued": lifecycle(`{"v":1,"phase":"identified","backup_id":"bkp_statecompat00002","status":"running",` +
			`"triggered_at":"` + running.Format(time.RFC3339) + `","prior":{"ids":["bkp_statecompat00002","bkp_statecompat00003"]},"ahead":true}`),
	}
	writeOldState(t, c, host, instances, triggerRecords, identities)
	expectNoChange(t, c, "plan", "-detailed-exitcode", "-no-color", "-input=false")
	// A plan's exit code ignores a refresh that rewrites a computed value
	// (a timestamp in another form, say); a refresh-only plan's does not.
	expectNoChange(t, c, "plan", "-refresh-only", "-detailed-exitcode", "-no-color", "-input=false")
	c.run("apply", "-refresh-only", "-auto-approve", "-no-color", "-input=false")
	expectValues(t, c, instances)

	// A guard whose destroy timed out, as this release records it: the
	// nested timestamps read back, a refresh keeps them, and a plan clears
	// the record (any apply that is not a destroy does).
	instances["backup_on_destroy.pending"] = `{
  "account_id": "acc_statecompat00002",
  "id": "acc_statecompat00002",
  "on_conflict": "wait",
  "resume_within": "10m",
  "reuse_within": null,
  "pending_destroy_backup": {
    "backup_id": "bkp_statecompat00003",
    "counts_until": "2026-11-21T10:17:00Z",
    "triggered_at": "2026-11-21T10:05:00Z"
  },
  "timeouts": {
    "delete": "10m"
  }
}`
	record := `{"v":1,"phase":"identified","backup_id":"bkp_statecompat00003","status":"running",` +
		`"triggered_at":"2026-11-21T10:05:00Z","counts_until":"2026-11-21T10:17:00.123456789Z"}`
	private := maps.Clone(triggerRecords)
	private["backup_on_destroy.pending"] = lifecycle(record)
	c.write(e.config(body + pendingGuard))
	writeOldState(t, c, host, instances, private, identities)
	expectNoChange(t, c, "plan", "-refresh-only", "-detailed-exitcode", "-no-color", "-input=false")
	c.run("apply", "-refresh-only", "-auto-approve", "-no-color", "-input=false")
	expectValues(t, c, instances)
	plan := c.run("plan", "-no-color", "-input=false")
	if !strings.Contains(plan, "backup_on_destroy.pending will be updated in-place") || !strings.Contains(plan, "pending_destroy_backup") ||
		!strings.Contains(plan, "Plan: 0 to add, 1 to change, 0 to destroy.") {
		t.Errorf("the plan does not only clear the pending destroy backup:\n%s", plan)
	}
}

// writeOldState writes terraform.tfstate with the given instances (address:
// attributes as JSON) and private data (address: base64), as a release
// left them; with identities, as binaries that keep identities
// (1.12+) left them.
func writeOldState(t *testing.T, c *cli, host string, instances, private map[string]string, identities bool) {
	t.Helper()
	var resources []string
	for _, addr := range slices.Sorted(maps.Keys(instances)) {
		typ, name, _ := strings.Cut(addr, ".")
		priv := ""
		if identities {
			priv += ",\n          \"identity_schema_version\": 0"
			if typ == "backup_trigger" {
				var attrs struct {
					AccountID string `json:"account_id"`
					ID        string `json:"id"`
				}
				if err := json.Unmarshal([]byte(instances[addr]), &attrs); err != nil {
					t.Fatal(err)
				}
				priv += fmt.Sprintf(",\n          \"identity\": {\"account_id\": %q, \"id\": %q}", attrs.AccountID, attrs.ID)
			}
		}
		if p, ok := private[addr]; ok {
			priv += fmt.Sprintf(",\n          \"private\": %q", p)
		}
		resources = append(resources, fmt.Sprintf(`    {
      "mode": "managed",
      "type": %q,
      "name": %q,
      "provider": "provider[\"%s/backup-service/backup\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": %s,
          "sensitive_attributes": []%s
        }
      ]
    }`, typ, name, host, instances[addr], priv))
	}
	state := fmt.Sprintf(`{
  "version": 4,
  "terraform_version": "1.5.7",
  "serial": 3,
  "lineage": "6f1c2a4e-3b7d-4c55-9e0a-1d2b3c4d5e6f",
  "outputs": {},
  "resources": [
%s
  ],
  "check_results": null
}
`, strings.Join(resources, ",\n"))
	if err := os.WriteFile(filepath.Join(c.dir, "terraform.tfstate"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
}

// expectNoChange runs a plan that must exit 0 with -detailed-exitcode.
func expectNoChange(t *testing.T, c *cli, args ...string) {
	t.Helper()
	out, err := c.exec(nil, args...)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		t.Errorf("%s proposes changes to state written before timetypes:\n%s", strings.Join(args, " "), out)
	case err != nil:
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// expectValues checks that show -json gives every attribute back as written.
func expectValues(t *testing.T, c *cli, instances map[string]string) {
	t.Helper()
	for _, addr := range slices.Sorted(maps.Keys(instances)) {
		var want map[string]any
		if err := json.Unmarshal([]byte(instances[addr]), &want); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		got := c.state(addr)
		if got == nil {
			t.Errorf("%s is not in the state", addr)
			continue
		}
		delete(got, "tainted")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s reads back as\n%v\nwant\n%v", addr, got, want)
		}
	}
}

// cliVersion is the version of the binary c runs.
func cliVersion(t *testing.T, c *cli) *version.Version {
	t.Helper()
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal([]byte(c.run("version", "-json")), &v); err != nil {
		t.Fatal(err)
	}
	return version.Must(version.NewVersion(v.Version))
}
