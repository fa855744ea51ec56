// Command backup-mock serves the mock Backup Service on a loopback port, for
// the demo and for pipelines that want to try the provider offline.
//
//	go run ./internal/cmd/backup-mock -seed 1 -accounts 8
//
// It prints the base URL and a working key, then serves until interrupted.
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
	)
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
	srv.AddAccount(mockservice.AccountSpec{ID: mockservice.ExampleAccountID, Name: "Example CRM (docs)", Platform: "salesforce"})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", *listen)
	if err != nil {
		return err
	}
	baseURL := "http://" + ln.Addr().String()
	fmt.Printf("BACKUP_BASE_URL=%s\nBACKUP_API_KEY=%s\n", baseURL, srv.DemoKey())
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
