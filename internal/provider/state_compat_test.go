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

// State written before the timestamps became timetypes.RFC3339 (a string
// in Terraform, RFC 3339 in UTC, as before) still reads: a plan of it
// proposes no change, a refresh changes nothing, and `show -json` gives
// back every value as written. The state is written by hand, in the form
// the previous release wrote (taken from a state file it wrote): schema
// version 0, timestamps such as "2026-11-21T09:00:00Z", and the
// triggers' identities on binaries that keep them (1.12+).
func TestAccStateFromBeforeTimetypesReads(t *testing.T) {
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
  "timeouts": null,
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
  "timeouts": null,
  "triggered_at": "` + running.Format(time.RFC3339) + `",
  "triggers": null,
  "wait_for_completion": false
}`,
		"backup_on_destroy.guard": `{
  "account_id": "acc_statecompat00001",
  "id": "acc_statecompat00001",
  "on_conflict": "wait",
  "resume_within": "10m",
  "pending_destroy_backup": null,
  "timeouts": {
    "delete": "5m"
  }
}`,
	}
	identities := cliVersion(t, c).GreaterThanOrEqual(version.Must(version.NewVersion("1.12.0")))
	writeOldState(t, c, host, instances, nil, identities)
	expectNoChange(t, c, "plan", "-detailed-exitcode", "-no-color", "-input=false")
	// A plan's exit code ignores a refresh that rewrites a computed value
	// (a timestamp in another form, say); a refresh-only plan's does not.
	expectNoChange(t, c, "plan", "-refresh-only", "-detailed-exitcode", "-no-color", "-input=false")
	c.run("apply", "-refresh-only", "-auto-approve", "-no-color", "-input=false")
	expectValues(t, c, instances)

	// A guard whose destroy timed out, as that release recorded it: the
	// nested timestamps read back, a refresh keeps them, and a plan clears
	// the record as it did then (any apply that is not a destroy does).
	instances["backup_on_destroy.pending"] = `{
  "account_id": "acc_statecompat00002",
  "id": "acc_statecompat00002",
  "on_conflict": "wait",
  "resume_within": "10m",
  "pending_destroy_backup": {
    "backup_id": "bkp_statecompat00003",
    "counts_until": "2026-11-21T10:17:00Z",
    "triggered_at": "2026-11-21T10:05:00Z"
  },
  "timeouts": {
    "delete": "10m"
  }
}`
	record := `{"backup_id":"bkp_statecompat00003","triggered_at":"2026-11-21T10:05:00Z","confirmed":true,"counts_until":"2026-11-21T10:17:00.123456789Z"}`
	private := map[string]string{"backup_on_destroy.pending": base64.StdEncoding.EncodeToString(
		fmt.Appendf(nil, `{"destroy_backup":%q}`, base64.StdEncoding.EncodeToString([]byte(record))))}
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
// attributes as JSON) and private data (address: base64), as the previous
// release left them; with identities, as binaries that keep identities
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

// Private data written before the lifecycle record (the keys imported,
// unconfirmed and destroy_backup) still decides what the next apply does,
// and the first write replaces it with the record's one key:
//   - an imported trigger not yet applied adopts the configuration's
//     triggers in place, with no new backup;
//   - a trigger recorded without its backup id, whose trigger's outcome was
//     unknown (unconfirmed) and of which no backup was ever listed, sends a
//     new trigger once the grace has passed, and waits for it;
//   - a stopped destroy's record is followed by the next destroy (its
//     backup succeeded since): no new backup.
func TestAccStateFromBeforeRecordsMigrates(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 3002})
	imported := e.srv.AddAccount(mockservice.AccountSpec{ID: "acc_statecompat00011"})
	lost := e.srv.AddAccount(mockservice.AccountSpec{ID: "acc_statecompat00012"})
	guarded := e.srv.AddAccount(mockservice.AccountSpec{ID: "acc_statecompat00013"})
	past := e.clock.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
	e.srv.AddHistory(imported, mockservice.BackupSpec{ID: "bkp_statecompat00011", CreatedAt: past})
	e.srv.AddHistory(guarded, mockservice.BackupSpec{ID: "bkp_statecompat00013", CreatedAt: past})

	const body = `
resource "backup_trigger" "imported" {
  account_id = "acc_statecompat00011"
  triggers   = { release = "r1" }
}

resource "backup_trigger" "lost" {
  account_id          = "acc_statecompat00012"
  wait_for_completion = true
}

resource "backup_on_destroy" "guard" {
  account_id = "acc_statecompat00013"
}
`
	c := newCLI(t, e, e.config(body))
	host := "registry.terraform.io"
	if usingOpenTofu {
		host = openTofuRegistry
	}
	completed := past.Add(11 * time.Minute).Format(time.RFC3339)
	instances := map[string]string{
		"backup_trigger.imported": `{
  "account_id": "acc_statecompat00011",
  "backup_status": "success",
  "completed_at": "` + completed + `",
  "id": "bkp_statecompat00011",
  "on_conflict": "wait",
  "timeouts": null,
  "triggered_at": "` + past.Format(time.RFC3339) + `",
  "triggers": null,
  "wait_for_completion": false
}`,
		"backup_trigger.lost": `{
  "account_id": "acc_statecompat00012",
  "backup_status": null,
  "completed_at": null,
  "id": null,
  "on_conflict": "wait",
  "timeouts": null,
  "triggered_at": "` + past.Format(time.RFC3339) + `",
  "triggers": null,
  "wait_for_completion": true
}`,
		"backup_on_destroy.guard": `{
  "account_id": "acc_statecompat00013",
  "id": "acc_statecompat00013",
  "on_conflict": "wait",
  "resume_within": "10m",
  "pending_destroy_backup": {
    "backup_id": "bkp_statecompat00013",
    "counts_until": "` + e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `",
    "triggered_at": "` + past.Format(time.RFC3339) + `"
  },
  "timeouts": null
}`,
	}
	legacyKey := func(key, value string) string {
		return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, `{%q:%q}`, key, base64.StdEncoding.EncodeToString([]byte(value))))
	}
	private := map[string]string{
		"backup_trigger.imported": legacyKey("imported", "true"),
		"backup_trigger.lost":     legacyKey("unconfirmed", "true"),
		"backup_on_destroy.guard": legacyKey("destroy_backup", fmt.Sprintf(`{"backup_id":"bkp_statecompat00013","triggered_at":%q,"confirmed":true,"counts_until":%q}`,
			past.Format(time.RFC3339), e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano))),
	}
	identities := cliVersion(t, c).GreaterThanOrEqual(version.Must(version.NewVersion("1.12.0")))
	writeOldState(t, c, host, instances, private, identities)

	// Apply only the triggers: the guard's record must survive until its
	// destroy (any other apply of it clears it).
	out := c.run("apply", "-auto-approve", "-no-color", "-input=false", "-target=backup_trigger.imported", "-target=backup_trigger.lost")
	if !strings.Contains(out, "0 added, 2 changed, 0 destroyed") {
		t.Errorf("the imported trigger is not adopted in place, or the lost one not resumed in place:\n%s", out)
	}
	if got := c.state("backup_trigger.imported"); got["id"] != "bkp_statecompat00011" || fmt.Sprint(got["triggers"]) != "map[release:r1]" {
		t.Errorf("the imported trigger took a new backup or not the configuration's triggers: %v", got)
	}
	lostNow := c.state("backup_trigger.lost")
	if lostNow["id"] == nil || lostNow["id"] == "" || lostNow["backup_status"] != "success" {
		t.Errorf("the unconfirmed trigger did not send a new trigger and wait for it: %v", lostNow)
	}
	if q := e.srv.Stats().BackupsQueued; q[imported] != 0 || q[lost] != 1 || q[guarded] != 0 {
		t.Errorf("backups queued %v: want one, for the unconfirmed trigger only", q)
	}
	for addr, want := range map[string][]string{
		"backup_trigger.imported": {"lifecycle"},
		"backup_trigger.lost":     {"lifecycle"},
		"backup_on_destroy.guard": {"destroy_backup"}, // not written yet
	} {
		if got := privateKeys(t, c, addr); !slices.Equal(got, want) {
			t.Errorf("%s keeps private keys %v, want %v", addr, got, want)
		}
	}

	out = c.run("destroy", "-auto-approve", "-no-color", "-input=false", "-target=backup_on_destroy.guard")
	if !strings.Contains(out, "1 destroyed") {
		t.Errorf("the guard's destroy did not go ahead on its recorded, succeeded backup:\n%s", out)
	}
	if q := e.srv.Stats().BackupsQueued[guarded]; q != 0 {
		t.Errorf("the guard's destroy queued %d backups: it should follow its recorded one", q)
	}
}

// privateKeys lists the private-data keys of a resource in the state file.
func privateKeys(t *testing.T, c *cli, addr string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Private string `json:"private"`
			}
		}
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Type+"."+r.Name != addr || len(r.Instances) != 1 {
			continue
		}
		if r.Instances[0].Private == "" {
			return nil
		}
		outer, err := base64.StdEncoding.DecodeString(r.Instances[0].Private)
		if err != nil {
			t.Fatal(err)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(outer, &keys); err != nil {
			t.Fatalf("%s private %s: %v", addr, outer, err)
		}
		return slices.Sorted(maps.Keys(keys))
	}
	t.Fatalf("%s is not in the state file", addr)
	return nil
}
