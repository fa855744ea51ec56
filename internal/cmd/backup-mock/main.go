// Command backup-mock serves the mock Backup Service on a loopback port, for
// the demo and for pipelines that want to try the provider offline.
//
//	go run ./internal/cmd/backup-mock -seed 1 -accounts 8
//
// It prints the base URL, a working key and the admin token of the
// inspection API (/_mock/*), then serves until interrupted. The key and the
// ids differ on every run unless -seed is given; the admin token always does.
// -roles adds an account or a key for every refusal the service can give,
// -fault switches faults on, and the admin API's failure controls pause an
// account, fail its backups, hold one running, lose a trigger's answer,
// answer in the service's place or move its clock, so that failure paths
// can be rehearsed without writing Go:
//
//	go run ./internal/cmd/backup-mock -roles -fault overload,route=trigger_backup,times=2,retry-after=3s
package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// version is set at release (-X main.version); a build from source says
// "dev", or the module version go install recorded.
var version = "dev"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "backup-mock:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		showVer   = flag.Bool("version", false, "print the version and exit")
		listen    = flag.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free port)")
		seed      = flag.Uint64("seed", 0, "seed of the generated ids, key and data, for the same ones on every run (default: a random seed)")
		accounts  = flag.Int("accounts", mockservice.DefaultAccounts, "number of seeded accounts")
		auditLogs = flag.Int("audit-logs", 20, "number of seeded audit log records")
		rateLimit = flag.Int("rate-limit", mockservice.DefaultRateLimit, "per-key requests per second")
		pending   = flag.Duration("pending", mockservice.DefaultPendingFor, "how long a new backup stays pending")
		running   = flag.Duration("running", mockservice.DefaultRunningFor, "how long a backup then runs")
		envFile   = flag.String("env-file", "", "also write BACKUP_BASE_URL, BACKUP_API_KEY and BACKUP_MOCK_ADMIN_TOKEN to this file")
		roles     = flag.Bool("roles", false, "add an account or key for each refusal (paused, lapsed, needs re-authorization, failing backups, "+
			"restricted, foreign; expired, read-only, owner revoked, other organization, restricted, expiring keys) and print them")
		faults faultFlags
	)
	flag.Var(&faults, "fault", "switch a fault on (repeatable): kind[,route=R][,account=ID][,times=N][,per-route][,p=F][,retry-after=D][,latency=D]"+
		"[,location=URL]\n"+
		"kinds: "+strings.Join(mockservice.FaultNames(), ", ")+"; latency at most "+mockservice.MaxLatency.String()+"\n"+
		"routes: token, list_accounts, get_account, trigger_backup, list_backups, audit_logs\n"+
		"a front's settings: status=400..599, json, date=true|skewed|year-1|year-9999|unparsable|none, skew=D, processed, relay, age=D (an Age header, a cache's)\n"+
		"other-history's: paged (its pages go on, read on by its own cursors)")
	flag.Parse()
	if *showVer {
		fmt.Println("backup-mock", buildVersion())
		return nil
	}
	seedGiven := false
	flag.Visit(func(f *flag.Flag) { seedGiven = seedGiven || f.Name == "seed" })

	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-listen %s: the mock serves loopback addresses only", *listen)
	}
	runSeed := chooseSeed(seedGiven, *seed)
	srv := mockservice.New(mockservice.Options{
		Seed: runSeed, Accounts: *accounts, AuditLogs: *auditLogs, RateLimit: *rateLimit,
		PendingFor: *pending, RunningFor: *running,
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The account the documentation examples use, so they run as written.
	srv.AddExamples()
	var extra strings.Builder
	if *roles {
		for _, r := range srv.AddRoles() {
			fmt.Fprintf(&extra, "BACKUP_MOCK_%s=%s # %s\n", r.Name, r.Value, r.About)
		}
	}
	srv.AddConnectionBackups()
	for _, f := range faults {
		srv.AddFault(f)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	baseURL := "http://" + ln.Addr().String()
	settings := fmt.Sprintf("BACKUP_BASE_URL=%s\nBACKUP_API_KEY=%s\nBACKUP_MOCK_ADMIN_TOKEN=%s\n", baseURL, srv.DemoKey(), srv.AdminToken())
	fmt.Print(settings, extra.String())
	if !seedGiven {
		fmt.Fprintf(os.Stderr, "backup-mock: random seed %d (-seed %d serves the same ids and key again)\n", runSeed, runSeed)
	}
	if len(faults) > 0 {
		fmt.Fprintf(os.Stderr, "backup-mock: %d fault(s) on; POST %s/_mock/reset (admin token, Content-Type: application/json) switches them off\n", len(faults), baseURL)
	}
	fmt.Fprintf(os.Stderr, "backup-mock: serving the Backup Service API at %s (inspection: %s/_mock/stats, "+
		"failure controls: %s/_mock/accounts/{id}/{state,fail-backups,hold,lose-trigger-answer,record-quirk} and "+
		"%s/_mock/{answers,clock,listing-lag,faults,rate-limit,reset}, "+
		"with Authorization: Bearer $BACKUP_MOCK_ADMIN_TOKEN); Ctrl-C stops\n", baseURL, baseURL, baseURL, baseURL)
	if *envFile != "" {
		if err := writeEnvFile(*envFile, settings); err != nil {
			return err
		}
	}

	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// chooseSeed is the seed of the served data, and so of the key: -seed when
// given, for the same ids and key on every run (reproducible tests), else
// a random one, so that no two runs, on any machine, share a key.
func chooseSeed(given bool, seed uint64) uint64 {
	if given {
		return seed
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// faultFlags collects repeated -fault flags.
type faultFlags []mockservice.Fault

func (f *faultFlags) String() string { return fmt.Sprint(len(*f), " fault(s)") }

func (f *faultFlags) Set(spec string) error {
	fault, err := mockservice.ParseFault(spec)
	if err != nil {
		return err
	}
	*f = append(*f, fault)
	return nil
}

// buildVersion is the release's version, else the module version that
// go install …@version recorded in the binary.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// writeEnvFile writes the settings, the key and the admin token among them,
// to a file only its owner may read, whatever a file of that name was
// before: os.WriteFile keeps an existing file's mode (0644, say). The new
// file is written beside it with mode 0600 and renamed over it, so that a
// reader never sees it half written.
func writeEnvFile(path, settings string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".backup-mock-env-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // after a failure; gone once renamed
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.WriteString(settings); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
