package provider

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

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
	// clock is the mock's and the provider's time (newTestEnv): a wait of
	// minutes takes milliseconds, and the test moves it between steps. Nil
	// on the wall clock (newWallClockEnv).
	clock *mockservice.VirtualClock
}

// newTestEnv starts a mock service for one test, on a virtual clock shared
// by the mock (its backups and rate windows) and the provider (its polls,
// retries, pacing and timeouts.*): a wait of minutes takes milliseconds,
// and a backup is as far along as the waits on it, or as the test moves
// the clock (e.clock.Advance). A test that needs a known time passes its own
// VirtualClock in opts.Clock. Rate limits are high unless set, so that
// tests of other things are not paced.
func newTestEnv(t *testing.T, opts mockservice.Options) *testEnv {
	t.Helper()
	vc, ok := opts.Clock.(*mockservice.VirtualClock)
	if opts.Clock != nil && !ok {
		t.Fatalf("newTestEnv: opts.Clock is a %T; the provider must share the mock's time, so pass a *mockservice.VirtualClock (or use newWallClockEnv)", opts.Clock)
	}
	if vc == nil {
		vc = mockservice.NewVirtualClock(time.Now().Truncate(time.Second))
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
// run on a SteppedClock, which follows the wall clock and jumps when told.
func newWallClockEnv(t *testing.T, opts mockservice.Options) *testEnv {
	t.Helper()
	if _, stepped := opts.Clock.(*mockservice.SteppedClock); (opts.Clock != nil && !stepped) || opts.RateClock != nil {
		t.Fatal("newWallClockEnv: the mock's clock must follow the provider's wall clock (nil or a *mockservice.SteppedClock)")
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
	ts := httptest.NewServer(srv)
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
	tuning := testTuning{}
	if e.clock != nil {
		tuning.clock = e.clock
	} else {
		tuning.poll = client.PollSettings{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	}
	tuning.clientOptions = func(o *client.Options) {
		if e.clock == nil {
			fastRetries(o)
		}
		if e.clientOptions != nil { // read late: a test may set it after factories()
			e.clientOptions(o)
		}
	}
	return map[string]func() (tfprotov6.ProviderServer, error){"backup": serve(newTestProvider(tuning))}
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
