package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// The acceptance test harness: test environments (a mock service and the
// provider pointed at it), TestMain with its secrets scan, the CLI's
// preparation and version gates, and the helpers tests share.

// testEnv is one mock service (its own seed, its own state) and the provider
// pointed at it.
type testEnv struct {
	t   *testing.T
	srv *mockservice.Server
	url string
	key string
	// clientOptions may change the provider's client further.
	clientOptions func(*client.Options)
	// clock is the mock's and the provider's time (newTestEnv): a wait of
	// minutes takes milliseconds, and the test moves it between steps. Nil
	// on the wall clock (newWallClockEnv).
	clock *clocktest.Virtual
}

// listingsDuring counts the backups listing requests the service receives
// while f runs.
func (e *testEnv) listingsDuring(f func()) int {
	before := e.srv.Requests(mockservice.RouteListBackups)
	f()
	return e.srv.Requests(mockservice.RouteListBackups) - before
}

// newTestEnv starts a mock service for one test, on a virtual clock shared
// by the mock (its backups and rate windows) and the provider (its polls,
// retries, pacing and timeouts.*): a wait of minutes takes milliseconds,
// and a backup is as far along as the waits on it, or as the test moves
// the clock (e.clock.Advance). A test that needs a known time passes its own
// clocktest.Virtual in opts.Clock. Rate limits are high unless set, so that
// tests of other things are not paced.
func newTestEnv(t *testing.T, opts mockservice.Options) *testEnv {
	t.Helper()
	vc, ok := opts.Clock.(*clocktest.Virtual)
	if opts.Clock != nil && !ok {
		t.Fatalf("newTestEnv: opts.Clock is a %T; the provider must share the mock's time, so pass a *clocktest.Virtual (or use newWallClockEnv)", opts.Clock)
	}
	if vc == nil {
		vc = clocktest.NewVirtual(time.Now().Truncate(time.Second))
	}
	opts.Clock, opts.RateClock = vc, vc
	e := startEnv(t, opts)
	e.clock = vc
	return e
}

// newWallClockEnv is a test environment on real time, for the one kind of
// test whose subject is real time: Ctrl-C from another process must land
// while the provider waits, and a virtual wait leaves no time to land in.
// Its waits are short (fastRetries, 20 ms polls) but real. The mock may
// run on a clocktest.NewStepped, which follows the wall clock and jumps when told.
func newWallClockEnv(t *testing.T, opts mockservice.Options) *testEnv {
	t.Helper()
	if v, ok := opts.Clock.(*clocktest.Virtual); (opts.Clock != nil && (!ok || !v.FollowsWall())) || opts.RateClock != nil {
		t.Fatal("newWallClockEnv: the mock's clock must follow the provider's wall clock (nil or a *clocktest.Virtual)")
	}
	return startEnv(t, opts)
}

func startEnv(t *testing.T, opts mockservice.Options) *testEnv {
	t.Helper()
	if opts.RateLimit == 0 {
		opts.RateLimit = 10000
	}
	// Suite-wide: every error the mock sends quotes the key, and the TRACE
	// scan (runTests) proves no diagnostic or log line shows it.
	opts.EchoKeyInErrors = true
	srv := mockservice.New(opts)
	serversMu.Lock()
	servers = append(servers, srv)
	serversMu.Unlock()
	var h http.Handler = srv
	if vc, ok := opts.Clock.(*clocktest.Virtual); ok && !vc.FollowsWall() {
		h = holdWhileServing(vc, srv)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &testEnv{t: t, srv: srv, url: ts.URL, key: srv.DemoKey()}
}

// fastRetries keeps the client's waits short on the wall clock, so that
// retry paths cost milliseconds.
func fastRetries(o *client.Options) {
	o.BackoffBase = 5 * time.Millisecond
	o.MaxBackoff = 20 * time.Millisecond
	o.RetryAfterCap = 20 * time.Millisecond
}

// factories serves the provider as users get it, with the environment's
// clock: on virtual time its own poll intervals, backoff and Retry-After
// waits cost nothing; on the wall clock they are cut to milliseconds.
func (e *testEnv) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	adjust := func(o *client.Options, s *workflow.Settings) {
		if e.clock != nil {
			o.Clock = e.clock
		} else {
			s.Poll.Initial, s.Poll.Max = 20*time.Millisecond, 100*time.Millisecond
			fastRetries(o)
		}
		if e.clientOptions != nil { // read late: a test may set it after factories()
			e.clientOptions(o)
		}
	}
	return map[string]func() (tfprotov6.ProviderServer, error){"backup": serve(newTestProvider(adjust))}
}

// holdWhileServing keeps the virtual clock still while the mock serves a
// request: on a loaded machine an answer may take longer than the clock's
// idle spell, and other callers' sleeps must not pass meanwhile, or a test's
// virtual durations would depend on the machine's load.
func holdWhileServing(vc *clocktest.Virtual, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer vc.Hold()()
		h.ServeHTTP(w, r)
	})
}

// testProvider is the provider as users get it, configured with the
// test's adjustments (clock, poll intervals, backoffs): the production
// provider holds no test knob.
type testProvider struct {
	*backupProvider
	adjust adjustment
}

// adjustment changes the client's options and the runner's settings between
// reading the configuration and connecting (nil: none).
type adjustment func(*client.Options, *workflow.Settings)

func newTestProvider(adjust adjustment) testProvider {
	return testProvider{backupProvider: &backupProvider{version: "test"}, adjust: adjust}
}

func (p testProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	conf, ok := p.readConfiguration(ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	if p.adjust != nil {
		p.adjust(&conf.client, &conf.runner)
	}
	p.connect(ctx, conf, resp)
}

// TestMain makes the test framework serve the provider at the address users
// write in required_providers, registry.terraform.io/backup-service/backup.
// With TF_ACC set, it also runs the whole suite with TF_LOG=TRACE into one
// log and fails if any key a mock service issued appears in it.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	_ = os.Setenv(resource.EnvTfAccProviderNamespace, "backup-service")
	logPath := ""
	if os.Getenv(resource.EnvTfAcc) != "" {
		dir, err := os.MkdirTemp("", "backup-acc-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := prepareCLI(dir); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: preparing the Terraform CLI:", err)
			return 1
		}
		if os.Getenv("TF_ACC_LOG_PATH") == "" {
			logPath = filepath.Join(dir, "trace.log")
			_ = os.Setenv("TF_LOG", "TRACE")
			_ = os.Setenv("TF_ACC_LOG_PATH", logPath)
		}
	}
	code := m.Run()
	if line := gatesSummary(); line != "" {
		fmt.Fprintln(os.Stderr, line)
		// go test shows a passing package's output only with -v: make test
		// prints the line from this file instead.
		if f := os.Getenv("BACKUP_GATES_FILE"); f != "" {
			_ = os.WriteFile(f, []byte(line+"\n"), 0o600)
		}
	}
	if _, err := os.Stat(logPath); logPath != "" && code == 0 && !errors.Is(err, fs.ErrNotExist) { // none: no resource.Test ran (-run)
		if err := scanLogForKeys(logPath, issuedKeys()); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: secrets in the acceptance suite's TRACE log:", err)
			code = 1
		}
	}
	return code
}

var (
	serversMu sync.Mutex
	servers   []*mockservice.Server
)

// issuedKeys lists every key of every mock service the suite started.
func issuedKeys() []string {
	serversMu.Lock()
	defer serversMu.Unlock()
	var keys []string
	for _, s := range servers {
		keys = append(keys, s.KeySecrets()...)
	}
	return keys
}

// maskedKey is what the client shows where the service echoed the key. A
// whole run that finds it nowhere fails, so a changed mark cannot pass unseen.
const maskedKey = "[REDACTED]"

// scanLogForKeys fails if any key appears in the log, except inside the
// test framework's echo of each test's configuration (the test's own input:
// these tests write the key into their HCL, as a user's configuration
// would hold a variable).
func scanLogForKeys(path string, keys []string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	inEcho, lines, hits, echoes := false, 0, 0, 0
	var first string
	for sc.Scan() {
		line := sc.Text()
		lines++
		switch {
		case strings.Contains(line, "Setting Terraform configuration"):
			inEcho = true
			continue
		case inEcho && (strings.HasPrefix(line, "  |") || strings.HasPrefix(line, "  test_terraform_configuration=")):
			continue
		}
		inEcho = false
		if strings.Contains(line, "the key presented was "+maskedKey) {
			echoes++
		}
		for _, k := range keys {
			if strings.Contains(line, k) {
				hits++
				if first == "" {
					first = line
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if lines == 0 && len(keys) > 0 {
		return fmt.Errorf("%d keys were issued but the TRACE log is empty: the scan would prove nothing", len(keys))
	}
	if hits > 0 {
		return fmt.Errorf("%d line(s) hold an API key; the first: %.300s", hits, first)
	}
	if whole := flag.Lookup("test.run"); echoes == 0 && len(keys) > 0 && (whole == nil || whole.Value.String() == "") {
		// The whole suite takes error paths whose diagnostics quote the
		// mock's echo; a run of a few tests may not.
		return errors.New("no diagnostic in the TRACE log shows the mock's echo of the key, masked: the echo check would prove nothing")
	}
	fmt.Fprintf(os.Stderr, "secrets: %d keys, none in %d lines of the suite's TRACE log; %d lines show the echoed key masked\n",
		len(keys), lines, echoes)
	return nil
}

// Environment variables the harness reads or sets.
const (
	envTerraformPath = "TF_ACC_TERRAFORM_PATH"
	envCLIConfigFile = "TF_CLI_CONFIG_FILE"
	openTofuRegistry = "registry.opentofu.org"
)

// usingOpenTofu is set by TestMain when the acceptance tests run on
// OpenTofu. Tests use it only where OpenTofu differs from Terraform, and say
// why next to it.
var usingOpenTofu bool

// prepareCLI makes the acceptance suite run the same on any Terraform or
// OpenTofu binary on a fresh machine:
//   - A TF_CLI_CONFIG_FILE naming a file that does not exist makes OpenTofu
//     print a warning on stdout, which breaks the test framework's version
//     parsing. It is pointed at an empty configuration in dir instead.
//   - OpenTofu resolves "backup-service/backup" in registry.opentofu.org,
//     so the framework must serve the provider at that host.
func prepareCLI(dir string) error {
	if f := os.Getenv(envCLIConfigFile); f != "" {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			empty := filepath.Join(dir, "empty.tfrc")
			if err := os.WriteFile(empty, nil, 0o600); err != nil {
				return err
			}
			_ = os.Setenv(envCLIConfigFile, empty)
		}
	}
	bin := os.Getenv(envTerraformPath)
	if bin == "" {
		found, lookErr := exec.LookPath("terraform")
		if lookErr != nil {
			return nil //nolint:nilerr // the test framework reports the missing binary itself
		}
		bin = found
	}
	flavour, err := cliFlavour(bin)
	if err != nil {
		return err
	}
	cliBinary = bin
	if flavour == "OpenTofu" {
		usingOpenTofu = true
		if os.Getenv(resource.EnvTfAccProviderHost) == "" {
			_ = os.Setenv(resource.EnvTfAccProviderHost, openTofuRegistry)
		}
	}
	return nil
}

// cliBinary is the Terraform or OpenTofu binary the suite runs.
var cliBinary string

// versionGates are the features some tests need, and the version that
// has them; the tests skip below it (tfversion.SkipBelow or skipBelow).
var versionGates = []struct{ feature, since string }{
	{"terraform test with mock_provider", "1.7.0"},
	{"removed blocks", "1.7.0"},
	{"ephemeral input variables", "1.10.0"},
	{"resource identity and import by identity", "1.12.0"},
	{"actions, list resources and terraform query", "1.14.0"},
	{"before_destroy action events", "1.16.0-rc1"},
}

// gatesSummary says in one line which gated tests this binary skipped, so
// that a green make test on an older Terraform does not read as all.
func gatesSummary() string {
	if cliBinary == "" {
		return ""
	}
	out, err := exec.Command(cliBinary, "version", "-json").Output()
	if err != nil {
		return ""
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	have, err := version.NewVersion(v.Version)
	if err != nil {
		return ""
	}
	var skipped []string
	for _, g := range versionGates {
		if have.LessThan(version.Must(version.NewVersion(g.since))) {
			skipped = append(skipped, fmt.Sprintf("%s (%s+)", g.feature, strings.TrimSuffix(g.since, "-rc1")))
		}
	}
	if len(skipped) == 0 {
		return fmt.Sprintf("gates: %s %s runs every version-gated test", filepath.Base(cliBinary), v.Version)
	}
	return fmt.Sprintf("gates: %s %s skipped the tests of %s; make testmatrix runs them on newer binaries",
		filepath.Base(cliBinary), v.Version, strings.Join(skipped, ", "))
}

// cliFlavour runs "bin version" and returns "Terraform" or "OpenTofu", the
// first word of what it prints.
func cliFlavour(bin string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", bin, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return first, nil
}

// Helpers shared by the provider's tests: configurations, expectations on
// errors and state, and clients of a test's mock. Helpers of one test file
// stay in it; anything a second file uses lives here.

const addr = "backup_trigger.this"

var bkpID = knownvalue.StringRegexp(regexp.MustCompile(`^bkp_[A-Za-z0-9]{16}$`))

var rfc3339 = knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`))

func triggerConfig(accountID, extra string) string {
	return fmt.Sprintf("resource \"backup_trigger\" \"this\" {\n  account_id = %q\n%s}\n", accountID, extra)
}

func expectAction(a plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, a)}}
}

func (e *testEnv) expectQueued(accountID string, n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := e.srv.BackupsQueued(accountID); got != n {
			return fmt.Errorf("%d backups queued for %s, want %d", got, accountID, n)
		}
		return nil
	}
}

// expectPOSTs checks the number of trigger requests the mock received.
func (e *testEnv) expectPOSTs(n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := e.srv.Requests(mockservice.RouteTrigger); got != n {
			return fmt.Errorf("%d trigger POSTs, want %d", got, n)
		}
		return nil
	}
}

// hclList writes strings as an HCL list.
func hclList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Actions need Terraform 1.14. (Destroy events need 1.16, from its
// release candidates on, which semver orders before 1.16.0: the tests of
// them drive the binary and check with skipBelow.)
var needsActions = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)}

// needsChecks skips tests of check blocks and plantimestamp() on Terraform
// older than 1.5, which has neither.
var needsChecks = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_5_0)}

// requiredProviders is the terraform block every configuration needs.
const requiredProviders = `terraform {
  required_providers {
    backup = {
      source = "backup-service/backup"
    }
  }
}
`

// withProvider prefixes body with the terraform block.
func withProvider(body string) string { return requiredProviders + body }

// setenv points the provider's environment variables (BACKUP_BASE_URL,
// BACKUP_API_KEY) at this mock, for the test's duration.
func (e *testEnv) setenv(t *testing.T) {
	t.Helper()
	t.Setenv(EnvBaseURL, e.url)
	t.Setenv(EnvAPIKey, e.key)
}

// behind puts h between the provider and the mock, as a proxy, a load
// balancer or a lagging replica stands: the provider's base_url is h's.
func (e *testEnv) behind(h http.Handler) {
	e.t.Helper()
	ts := httptest.NewServer(h)
	e.t.Cleanup(ts.Close)
	e.url = ts.URL
}

// configReleasing is config with the provider's destroy_without_backup
// naming accountIDs, with reason.
func (e *testEnv) configReleasing(reason string, accountIDs []string, body string) string {
	return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n  destroy_without_backup = {\n"+
		"    account_ids = %s\n    reason      = %q\n  }\n}\n\n%s", e.url, e.key, hclList(accountIDs), reason, body))
}

// config is a provider block for this mock, followed by body.
func (e *testEnv) config(body string) string {
	return e.configWithKey(e.key, body)
}

func (e *testEnv) configWithKey(key, body string) string {
	return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n}\n\n%s", e.url, key, body))
}

// noRequests asserts that nothing reached the service (validation refused
// the configuration first).
func (e *testEnv) noRequests() {
	e.t.Helper()
	if n := e.srv.Stats().TotalRequests(); n != 0 {
		e.t.Errorf("%d requests reached the service; validation should have refused the configuration first", n)
	}
}

// words matches text literally, but with any white space between words:
// Terraform wraps diagnostics to the terminal's width.
func words(text string) string {
	parts := strings.Fields(text)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, `\s+`)
}

// expectError matches a diagnostic holding each text, in order.
func expectError(texts ...string) *regexp.Regexp {
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = words(t)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*`))
}

// requestIDPattern matches "Request ID: <uuid v4>".
const requestIDPattern = `Request\s+ID:\s+[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// errorWithRequestID matches a diagnostic that names what failed, the
// status and problem title, then each of details, and last the request id.
func errorWithRequestID(what string, status int, title string, details ...string) *regexp.Regexp {
	pattern := `(?s)` + words(what) + `.*` + words(fmt.Sprintf("HTTP %d (%s)", status, title))
	for _, d := range details {
		pattern += `.*` + words(d)
	}
	return regexp.MustCompile(pattern + `.*` + requestIDPattern)
}

func str(addr, attr string, v string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.StringExact(v))
}

// expectCheckBlock asserts the status of a check block in state.
type expectCheckBlock struct {
	name   string
	status string
}

func (c expectCheckBlock) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Checks {
		if string(r.Address.Kind) == "check" && r.Address.Name == c.name {
			if string(r.Status) != c.status {
				resp.Error = fmt.Errorf("check %q is %q, want %q", c.name, r.Status, c.status)
			}
			return
		}
	}
	resp.Error = fmt.Errorf("check %q not found in state", c.name)
}

// rawClient is a client of the test's mock, to act on it as another user
// of the service would.
func (e *testEnv) rawClient(t *testing.T, mods ...func(*client.Options)) *client.Client {
	t.Helper()
	opts := client.Options{BaseURL: e.url, APIKey: e.key}
	if e.clock != nil {
		// The mock's time: it recognises the backups it triggers, and its
		// waits move with the test's.
		opts.Clock = e.clock
	}
	for _, mod := range mods {
		mod(&opts)
	}
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// outsideBackup queues a backup of the account as another user of the
// service would, outside Terraform, and returns it.
func (e *testEnv) outsideBackup(t *testing.T, accountID string) client.Backup {
	t.Helper()
	o := workflow.New(e.rawClient(t), e.clockOrWall(), nil, workflow.Settings{}).RunMany(t.Context(), []string{accountID}, workflow.RunOptions{}, nil, nil)[0]
	if o.Kind != workflow.NotWaited {
		t.Fatalf("outside backup of %s: %d %v", accountID, o.Kind, o.Err)
	}
	return *o.Backup
}

// clockOrWall is the environment's clock, or the wall clock.
func (e *testEnv) clockOrWall() clock.Clock {
	if e.clock != nil {
		return e.clock
	}
	return clock.Wall{}
}

func nullAttr(addr, attr string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.Null())
}

func jsonDecode(b []byte, v any) error { return json.Unmarshal(bytes.TrimSpace(b), v) }

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// filterAccounts adds three accounts that the account filters tell apart:
// two slack ones (a successful backup service, a failed archive) and a
// github one whose backup failed.
func (e *testEnv) filterAccounts() (slackA, slackB, github string) {
	slackA = e.srv.AddAccount(mockservice.AccountSpec{Platform: "slack", ServiceType: "backup", BackupStatus: "success"})
	slackB = e.srv.AddAccount(mockservice.AccountSpec{Platform: "slack", ServiceType: "archive", BackupStatus: "failed"})
	github = e.srv.AddAccount(mockservice.AccountSpec{Platform: "github", ServiceType: "backup", BackupStatus: "failed"})
	return slackA, slackB, github
}

// stringList checks a list of exactly these strings, in order.
func stringList(v ...string) knownvalue.Check {
	checks := []knownvalue.Check{}
	for _, s := range v {
		checks = append(checks, knownvalue.StringExact(s))
	}
	return knownvalue.ListExact(checks)
}

// cli drives the Terraform (or OpenTofu) binary the acceptance tests use,
// directly, for what the test framework cannot do: interrupt an apply with
// SIGINT, read warnings, -invoke an action. The provider is served from
// this test process (as the framework does), so it talks to the test's
// mock with the test's short poll intervals.
type cli struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

// newCLI serves e's provider and prepares a working directory holding
// config as main.tf.
func newCLI(t *testing.T, e *testEnv, config string) *cli {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	bin := terraformBinary(t)
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	factory := e.factories()["backup"]
	server, err := factory()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := tf6server.Serve("registry.terraform.io/backup-service/backup", func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, reattach, closed), tf6server.WithGoPluginLogger(hclog.NewNullLogger()),
			tf6server.WithLoggingSink(t))
		if err != nil {
			t.Error(err)
		}
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	host := "registry.terraform.io"
	if usingOpenTofu {
		host = openTofuRegistry
	}
	attach, err := json.Marshal(map[string]any{host + "/backup-service/backup": map[string]any{
		"Protocol": string(cfg.Protocol), "ProtocolVersion": cfg.ProtocolVersion, "Pid": cfg.Pid, "Test": true,
		"Addr": map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyRC := filepath.Join(dir, ".terraformrc")
	if err := os.WriteFile(emptyRC, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, bin: bin, dir: dir, env: append(os.Environ(),
		"TF_REATTACH_PROVIDERS="+string(attach), "TF_CLI_CONFIG_FILE="+emptyRC, "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "TF_LOG=", "TF_LOG_PATH=")}
	c.run("init", "-input=false", "-no-color")
	return c
}

// newDevCLI prepares dir as a working directory for the provider build in
// pluginDir, which Terraform starts itself (dev_overrides), as users try a
// local build: one provider process per command, ended with it, so that a
// SIGKILL of the command's process group kills the provider too. No init:
// dev_overrides needs none.
func newDevCLI(t *testing.T, bin, pluginDir, dir string) *cli {
	t.Helper()
	rc := filepath.Join(dir, ".terraformrc")
	overrides := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"backup-service/backup\" = %q\n  }\n  direct {}\n}\n", pluginDir)
	if err := os.WriteFile(rc, []byte(overrides), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cli{t: t, bin: bin, dir: dir, env: append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc, "TF_REATTACH_PROVIDERS=", "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "TF_LOG=", "TF_LOG_PATH=")}
}

// write replaces the configuration (main.tf).
func (c *cli) write(config string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// run runs a command that must succeed and returns its output.
func (c *cli) run(args ...string) string {
	c.t.Helper()
	out, err := c.exec(nil, args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(c.bin), strings.Join(args, " "), err, out)
	}
	return out
}

// interrupt runs a command and sends it SIGINT, as Ctrl-C does, once when
// reports true; it returns the output and the command's error.
func (c *cli) interrupt(when func() bool, args ...string) (string, error) {
	c.t.Helper()
	return c.signal(syscall.SIGINT, when, args...)
}

// kill runs a command and kills it (SIGKILL, as a lost runner does) once
// when reports true. The provider is served from the test process, which
// the kill does not reach: the command's connection to it closes, which
// cancels what the provider was doing, as its own death would.
func (c *cli) kill(when func() bool, args ...string) (string, error) {
	c.t.Helper()
	return c.signal(syscall.SIGKILL, when, args...)
}

func (c *cli) exec(interruptWhen func() bool, args ...string) (string, error) {
	return c.signal(syscall.SIGINT, interruptWhen, args...)
}

func (c *cli) signal(sig syscall.Signal, when func() bool, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	p, err := c.start(ctx, &out, nil, args...)
	if err != nil {
		return "", err
	}
	if when != nil {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-p.done:
				return out.String(), p.err
			case <-tick.C:
				if when() {
					p.signal(sig)
					break wait
				}
			}
		}
	}
	err = p.wait()
	return out.String(), err
}

// cliProcess is one running command of a cli. It runs in its own process
// group, as a shell runs a job: a signal reaches Terraform and the
// providers it started (dev_overrides), as Ctrl-C in a terminal or a
// runner's death does.
type cliProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // once done is closed
}

// start starts a command with env added to the cli's, its output (stdout
// and stderr) written to out; ctx's end kills its process group.
func (c *cli) start(ctx context.Context, out io.Writer, env []string, args ...string) (*cliProcess, error) {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir, cmd.Env = c.dir, append(slices.Clip(c.env), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &cliProcess{cmd: cmd, done: make(chan struct{})}
	cmd.Cancel = func() error {
		p.signal(syscall.SIGKILL)
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// signal sends sig to the command's process group, unless it has ended.
func (p *cliProcess) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// wait waits for the command to end and returns its error.
func (p *cliProcess) wait() error {
	<-p.done
	return p.err
}

// state returns the attributes of one resource in the CLI's state.
func (c *cli) state(addr string) map[string]any {
	c.t.Helper()
	out := c.run("show", "-json", "-no-color")
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Tainted bool           `json:"tainted"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.NewDecoder(io.LimitReader(strings.NewReader(out), 16<<20)).Decode(&doc); err != nil {
		c.t.Fatalf("show -json: %v\n%s", err, out)
	}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Address == addr {
			r.Values["tainted"] = r.Tainted
			return r.Values
		}
	}
	return nil
}

// terraformBinary is the binary the acceptance tests run.
func terraformBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(envTerraformPath); bin != "" {
		return bin
	}
	found, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("no terraform binary")
	}
	return found
}

// skipBelow skips a CLI-driven test on a binary older than atLeast, before
// any configuration it could not parse is written; why says what needs it.
func skipBelow(t *testing.T, atLeast, why string) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	bin := terraformBinary(t)
	out, err := exec.CommandContext(t.Context(), bin, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", bin, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version -json: %v\n%s", err, out)
	}
	if version.Must(version.NewVersion(v.Version)).LessThan(version.Must(version.NewVersion(atLeast))) {
		t.Skipf("%s needs Terraform %s or newer; this is %s", why, atLeast, v.Version)
	}
}
