// Command backup-mock serves the mock Backup Service on a loopback port, for
// the demo and for pipelines that want to try the provider offline.
//
//	go run ./internal/cmd/backup-mock -seed 1 -accounts 8
//
// It prints the base URL and a working key, then serves until interrupted.
// -roles adds an account or a key for every refusal the service can give,
// and -fault switches faults on, so that failure paths can be rehearsed
// without writing Go:
//
//	go run ./internal/cmd/backup-mock -roles -fault overload,route=trigger_backup,times=2,retry-after=3s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "backup-mock:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		listen    = flag.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0 picks a free port)")
		seed      = flag.Uint64("seed", 1, "seed of the generated ids and data")
		accounts  = flag.Int("accounts", mockservice.DefaultAccounts, "number of seeded accounts")
		auditLogs = flag.Int("audit-logs", 20, "number of seeded audit log records")
		rateLimit = flag.Int("rate-limit", mockservice.DefaultRateLimit, "per-key requests per second")
		pending   = flag.Duration("pending", mockservice.DefaultPendingFor, "how long a new backup stays pending")
		running   = flag.Duration("running", mockservice.DefaultRunningFor, "how long a backup then runs")
		envFile   = flag.String("env-file", "", "also write BACKUP_BASE_URL and BACKUP_API_KEY to this file")
		roles     = flag.Bool("roles", false, "add an account or key for each refusal (paused, lapsed, needs re-authorization, failing backups, "+
			"restricted, foreign; expired, read-only, owner revoked, other organization, restricted, expiring keys) and print them")
		faults faultFlags
	)
	flag.Var(&faults, "fault", "switch a fault on (repeatable): kind[,route=R][,times=N][,per-route][,p=F][,retry-after=D][,latency=D][,location=URL]\n"+
		"kinds: "+strings.Join(mockservice.FaultNames(), ", ")+"\n"+
		"routes: token, list_accounts, get_account, trigger_backup, list_backups, audit_logs")
	flag.Parse()

	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("-listen: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-listen %s: the mock serves loopback addresses only", *listen)
	}
	srv := mockservice.New(mockservice.Options{
		Seed: *seed, Accounts: *accounts, AuditLogs: *auditLogs, RateLimit: *rateLimit,
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
	for _, f := range faults {
		srv.AddFault(f)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	baseURL := "http://" + ln.Addr().String()
	fmt.Printf("BACKUP_BASE_URL=%s\nBACKUP_API_KEY=%s\n%s", baseURL, srv.DemoKey(), extra.String())
	if len(faults) > 0 {
		fmt.Fprintf(os.Stderr, "backup-mock: %d fault(s) on; POST %s/_mock/reset switches them off\n", len(faults), baseURL)
	}
	fmt.Fprintf(os.Stderr, "backup-mock: serving the Backup Service API at %s (inspection: %s/_mock/stats); Ctrl-C stops\n", baseURL, baseURL)
	if *envFile != "" {
		content := fmt.Sprintf("BACKUP_BASE_URL=%s\nBACKUP_API_KEY=%s\n", baseURL, srv.DemoKey())
		if err := os.WriteFile(*envFile, []byte(content), 0o600); err != nil {
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
