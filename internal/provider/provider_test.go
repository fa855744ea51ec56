package provider

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// testEnv is one mock service (its own seed, its own state) and the provider
// pointed at it.
type testEnv struct {
	t   *testing.T
	srv *mockservice.Server
	url string
	key string
	// clientOptions may change the provider's client further.
	clientOptions func(*client.Options)
}

// newTestEnv starts a mock service for one test. Rate limits are high unless
// set, so that tests of other things are not paced.
func newTestEnv(t *testing.T, opts mockservice.Options) *testEnv {
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
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &testEnv{t: t, srv: srv, url: ts.URL, key: srv.DemoKey()}
}

// fastRetries keeps the client's waits short, so that retry paths cost
// milliseconds in tests.
func fastRetries(o *client.Options) {
	o.BackoffBase = 5 * time.Millisecond
	o.MaxBackoff = 20 * time.Millisecond
	o.RetryAfterCap = 20 * time.Millisecond
}

func (e *testEnv) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"backup": providerserver.NewProtocol6WithError(&backupProvider{
			version: "test",
			poll:    client.PollSettings{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond},
			clientOptions: func(o *client.Options) {
				fastRetries(o)
				if e.clientOptions != nil {
					e.clientOptions(o)
				}
			},
		}),
	}
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
	if logPath != "" && code == 0 {
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
		if strings.Contains(line, "the key presented was "+client.Redacted) {
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
func (e *testEnv) rawClient(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.Options{BaseURL: e.url, APIKey: e.key})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordingClock is the real clock, remembering the longest wait asked of
// it, so that tests assert waits without timing anything.
type recordingClock struct {
	mu  sync.Mutex
	max time.Duration
}

func (c *recordingClock) Now() time.Time { return time.Now() }

func (c *recordingClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.max = max(c.max, d)
	c.mu.Unlock()
	return time.After(d)
}

func (c *recordingClock) longest() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max
}
