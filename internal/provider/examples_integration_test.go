package provider

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// The integration-testing example's CI snippet, run verbatim on the binary
// under test: it builds the mock and the provider, starts the mock, runs
// terraform init (from a local mirror: offline) and terraform test (real
// applies against the mock), then the failure paths as the guide shows
// them, each switched on through the mock's admin API and expected to exit
// 1 with its message: an apply on a paused account, the failure-tests
// suite (a terraform test whose guard's backup fails, which must fail at
// its destroy and only there), and a destroy whose guard's backup fails,
// then its retry; and stops the mock. This test checks its exit status,
// those messages, and the mock's counters it prints.
func TestAccExampleIntegrationTests(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.7.0", "terraform test")
	for _, tool := range []string{"bash", "curl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("ci.sh needs %s", tool)
		}
	}
	script, err := filepath.Abs(filepath.Join(examplesDir, "integration-testing", "ci.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	// Terraform's TRACE log, and the provider's, go to a file of this test
	// (as the suite's do, see TestMain), scanned below for the mock's key.
	traceLog := filepath.Join(t.TempDir(), "ci-trace.log")
	cmd.Env = append(os.Environ(), "TF="+terraformBinary(t), "TMPDIR="+t.TempDir(), "TF_LOG=TRACE", "TF_LOG_PATH="+traceLog)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("bash ci.sh: %v\n%s", err, out)
	}
	t.Logf("ci.sh passed in %s", time.Since(start).Round(100*time.Millisecond))
	checkExampleTraceLog(t, traceLog)

	// Terraform wraps long messages: compare with whitespace collapsed.
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"Success! 3 passed, 0 failed.",
		// An apply on the paused account: refused, and ci.sh saw exit 1.
		"is not in a backupable state: paused",
		"ok: exit 1, the pause named",
		// The failure-tests suite: its destroy run fails, the others pass.
		`run "destroy_stops_when_the_backup_fails"... fail`,
		"Failure! 2 passed, 1 failed.",
		`ended with status "failed": quota exceeded at the platform`,
		"ok: exit 1 at the destroy, the backup's error shown, the teardown clean",
		// A destroy whose backup fails: stopped, the tenant kept.
		`ended with status "failed": the platform refused the export`,
		"The destroy stopped and this resource is kept",
		"ok: exit 1, the backup's error shown, terraform_data.tenant and its guard still in the state",
		"ok: the second destroy took a new backup and went through",
		"==> stopped the mock",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("ci.sh's output lacks %q:\n%s", want, out)
		}
	}

	// ci.sh prints GET /_mock/stats after terraform test (then resets the
	// counters) and after the failure paths.
	var stats []mockservice.Stats
	for _, m := range regexp.MustCompile(`(?m)^stats: (\{.*\})$`).FindAllStringSubmatch(out, -1) {
		var st mockservice.Stats
		if err := json.Unmarshal([]byte(m[1]), &st); err != nil {
			t.Fatalf("stats %s: %v", m[1], err)
		}
		stats = append(stats, st)
	}
	if len(stats) != 2 {
		t.Fatalf("ci.sh printed %d stats lines, want 2:\n%s", len(stats), out)
	}
	test, failures := stats[0], stats[1]
	t.Logf("terraform test: %d requests %v, backups queued %v; failure paths: %d requests %v, backups queued %v",
		test.TotalRequests(), test.Requests, test.BackupsQueued, failures.TotalRequests(), failures.Requests, failures.BackupsQueued)
	if got := test.BackupsQueued[exampleAccountID]; got != 3 || len(test.BackupsQueued) != 1 {
		t.Errorf("terraform test queued %v, want 3 backups of %s (two releases, the guard's at teardown)", test.BackupsQueued, exampleAccountID)
	}
	// The counters were reset in between. The paused account's trigger was
	// refused (nothing queued); failure-tests queued three backups (its
	// release, the guard's that failed, the teardown's); the destroy three
	// (the apply's release, the backup that failed, the retry's).
	if got := failures.BackupsQueued[exampleAccountID]; got != 6 || len(failures.BackupsQueued) != 1 {
		t.Errorf("the failure paths queued %v, want 6 backups of %s", failures.BackupsQueued, exampleAccountID)
	}
	for i, st := range stats {
		if st.AuthFailures != 0 || st.RateLimited != 0 || st.Overloaded != 0 {
			t.Errorf("stats %d: %d auth failures, %d rate-limited, %d overloaded; want none", i, st.AuthFailures, st.RateLimited, st.Overloaded)
		}
	}
}

// apiKeyPattern matches a key the mock issues: the script's mock is another
// process, whose keys this one does not know.
var apiKeyPattern = regexp.MustCompile(`bks_[0-9A-Za-z]{32}`)

// checkExampleTraceLog fails if a key appears in the example's TRACE log
// (the script hands the key to Terraform only through BACKUP_API_KEY), then
// appends the log to the suite's, whose scan (TestMain) then has it too.
func checkExampleTraceLog(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		t.Error("ci.sh wrote no TRACE log")
	}
	if k := apiKeyPattern.Find(b); k != nil {
		t.Errorf("a key (%s…) is in the example's TRACE log %s", k[:8], path)
	}
	if suite := os.Getenv("TF_ACC_LOG_PATH"); suite != "" {
		f, err := os.OpenFile(suite, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
}
