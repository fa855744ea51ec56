package provider

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

const examplesDir = "../../examples"

// exampleAccountID is the account id the examples use; the mock command
// serves it too.
const exampleAccountID = mockservice.ExampleAccountID

// exampleDirs lists every folder of examples/ that holds configuration,
// but for the modules a terraform test suite's runs apply (the folders
// below one of .tftest.hcl files): their suite applies them.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(examplesDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if suites, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.tftest.hcl")); d.IsDir() && len(suites) > 0 {
			return filepath.SkipDir
		}
		if !d.IsDir() && isExampleConfig(path) && !slices.Contains(dirs, filepath.Dir(path)) {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil || len(dirs) < 10 {
		t.Fatalf("examples: %d folders, %v", len(dirs), err)
	}
	return dirs
}

// Every example applies against the mock, then plans nothing more: an
// example cannot rot. They share process-wide environment variables (the
// examples configure the provider from BACKUP_BASE_URL and BACKUP_API_KEY),
// so they run one after another.
func TestAccExamples(t *testing.T) {
	for _, dir := range exampleDirs(t) {
		name, _ := filepath.Rel(examplesDir, dir)
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t, mockservice.Options{Seed: 901, Accounts: 12, AuditLogs: 30,
				PendingFor: 20 * time.Millisecond, RunningFor: 40 * time.Millisecond})
			e.srv.AddAccount(mockservice.AccountSpec{ID: exampleAccountID, Name: "Example CRM", Platform: "salesforce"})
			e.setenv(t)
			dir := copyExample(t, dir)
			step := resource.TestStep{
				// On the step, not the case: some examples have a provider block.
				ProtoV6ProviderFactories: e.factories(),
				ConfigDirectory:          config.StaticDirectory(dir),
				ConfigVariables:          config.Variables{"backup_api_key": config.StringVariable(e.key)},
			}
			if usesForEach(t, dir) {
				// The test framework cannot read back the state of for_each
				// instances (string keys), so these examples are planned,
				// not applied.
				step.PlanOnly, step.ExpectNonEmptyPlan = true, true
			}
			checks := needsChecks
			if declares(t, dir, "action \"") {
				checks = needsActions
			}
			resource.Test(t, resource.TestCase{TerraformVersionChecks: checks, Steps: []resource.TestStep{step}})
		})
	}
}

// declaresProvider matches the required_providers entry every example
// holds: the registry source and a version constraint.
var declaresProvider = regexp.MustCompile(`backup\s*=\s*\{\s*source\s*=\s*"backup-service/backup"\s*version\s*=\s*"[^"]+"`)

// copyExample copies an example's configuration to a temporary folder. It
// fails when the example does not declare required_providers: copied alone
// into a user's folder, it would look for hashicorp/backup.
func copyExample(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	declared := false
	for _, f := range files {
		if !isExampleConfig(f) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		declared = declared || declaresProvider.Match(b)
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !declared {
		t.Fatalf("%s does not declare required_providers { backup = { source = \"backup-service/backup\", version = ... } }", dir)
	}
	return out
}

// isExampleConfig: a configuration to apply. Import examples
// (import-by-*.tf) name backups that exist only in the reader's account;
// TestAccExampleImports applies them with a backup the mock holds.
func isExampleConfig(path string) bool {
	return strings.HasSuffix(path, ".tf") && !strings.HasPrefix(filepath.Base(path), "import-by-")
}

func usesForEach(t *testing.T, dir string) bool { return declares(t, dir, "for_each") }

// declares says whether any configuration file of dir holds text.
func declares(t *testing.T, dir, text string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}

func TestExamplesAreFormatted(t *testing.T) {
	t.Parallel()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform is not on PATH")
	}
	out, err := exec.Command(tf, "fmt", "-recursive", "-check", "-diff", examplesDir).CombinedOutput()
	if err != nil {
		t.Fatalf("terraform fmt -check: %v\n%s", err, out)
	}
}

// TestAccExampleImports applies the docs' import examples verbatim against
// the examples' account and backup as make mock serves them, beside the
// resource example (which has triggers): each imports and adopts the
// triggers in place, without a new backup.
func TestAccExampleImports(t *testing.T) {
	for _, tc := range []struct {
		file   string
		checks []tfversion.TerraformVersionCheck
	}{
		{"import-by-string-id.tf", needsChecks},
		{"import-by-identity.tf", needsIdentity},
	} {
		t.Run(tc.file, func(t *testing.T) {
			e := newTestEnv(t, mockservice.Options{Seed: 902, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
			e.srv.AddExamples()
			e.setenv(t)
			dir := copyExample(t, filepath.Join(examplesDir, "resources", "backup_trigger"))
			imp, err := os.ReadFile(filepath.Join(examplesDir, "resources", "backup_trigger", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), imp, 0o600); err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{TerraformVersionChecks: tc.checks, Steps: []resource.TestStep{{
				ProtoV6ProviderFactories: e.factories(),
				ConfigDirectory:          config.StaticDirectory(dir),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("backup_trigger.before_migration", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{str("backup_trigger.before_migration", "id", mockservice.ExampleBackupID)},
				Check:             e.expectQueued(exampleAccountID, 0),
			}}})
		})
	}
}

// The list-resource example, copied verbatim with its versions.tf, runs
// with terraform query against an account with failed backups. Not
// parallel: the provider reads BACKUP_BASE_URL from this process.
func TestAccExampleListQuery(t *testing.T) {
	skipBelow(t, "1.14.0", "terraform query")
	e := newTestEnv(t, mockservice.Options{Seed: 902})
	e.srv.AddAccount(mockservice.AccountSpec{ID: exampleAccountID, Name: "Example CRM", Platform: "salesforce"})
	e.srv.AddBackups(exampleAccountID, 9, 3, "quota exceeded")
	dir := filepath.Join(examplesDir, "list-resources", "backup_trigger")
	versions, err := os.ReadFile(filepath.Join(dir, "versions.tf"))
	if err != nil {
		t.Fatal(err)
	}
	query, err := os.ReadFile(filepath.Join(dir, "list-resource.tfquery.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	// The provider is served from this process: the variables are set here.
	e.setenv(t)
	c := newCLI(t, e, string(versions))
	if err := os.WriteFile(filepath.Join(c.dir, "backups.tfquery.hcl"), query, 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.run("query", "-no-color")
	if n := strings.Count(out, "list.backup_trigger.failed"); n != 3 {
		t.Errorf("the query listed %d backups, want the 3 failed ones:\n%s", n, out)
	}
}

// The module-testing example's terraform test suite, copied verbatim, passes
// with mock_provider: its mock_data defaults satisfy the module's checks,
// and the overrides make them fail as the runs expect. Nothing reaches the
// service.
func TestAccExampleModuleTests(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.7.0", "terraform test with mock_provider")
	e := newTestEnv(t, mockservice.Options{Seed: 903})
	dir := filepath.Join(examplesDir, "module-testing")
	module, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	suite, err := os.ReadFile(filepath.Join(dir, "tests", "backup.tftest.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, e, string(module))
	if err := os.Mkdir(filepath.Join(c.dir, "tests"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "tests", "backup.tftest.hcl"), suite, 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.run("test", "-no-color")
	if !regexp.MustCompile(`Success! 4 passed, 0 failed`).MatchString(out) {
		t.Errorf("terraform test:\n%s", out)
	}
	if n := e.srv.Stats().TotalRequests(); n != 0 {
		t.Errorf("%d requests reached the service; mock_provider should answer them all", n)
	}
}

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
