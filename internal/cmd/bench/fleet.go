package main

import (
	"context"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// fleetBackup is how long each account's backup takes in section 9.
const (
	fleetPending   = time.Second
	fleetRunning   = 2 * time.Second
	fleetAllowance = 20
)

// 9. Many accounts at once: the action's account_ids engine
// (workflow.Runner.RunMany) over N accounts whose backups take 3 s, at an
// allowance of 20 requests a second, against the mock on loopback.
func benchFleet(ctx context.Context, _ *harness, r *report, _ int) error {
	r.line("## 9. Many accounts at once (action `account_ids`)")
	r.line("")
	r.line("`workflow.Runner.RunMany`, the engine of the action's `account_ids`: every account triggered and waited for at once, with the default polling, against the mock on loopback whose backups take %s, at an allowance of %d requests a second. The floor is one backup's time plus the requests over the allowance: bound = %s + requests / %d.",
		fleetPending+fleetRunning, fleetAllowance, fleetPending+fleetRunning, fleetAllowance)
	r.line("")
	r.line("| accounts | requests | elapsed | bound | elapsed / bound | one after another | 429s from the allowance |")
	r.line("|---|---|---|---|---|---|---|")
	for _, n := range []int{20, 200, 1000} {
		progress("9/12 %d accounts at once", n)
		m, err := startMock(ctx, mockservice.Options{Seed: 90, Accounts: n, RateLimit: fleetAllowance, PendingFor: fleetPending, RunningFor: fleetRunning})
		if err != nil {
			return err
		}
		c, err := client.New(client.Options{BaseURL: m.url, APIKey: m.srv.DemoKey(), MaxRetries: client.DefaultMaxRetries})
		if err != nil {
			m.close()
			return err
		}
		ids := m.srv.AccountIDs()
		started := time.Now()
		outcomes := workflow.New(c, nil, nil, workflow.Settings{}).RunMany(ctx, ids, workflow.RunOptions{WaitForCompletion: true, WaitOnConflict: true}, nil, nil)
		elapsed := time.Since(started)
		st := m.srv.Stats()
		m.close()
		for _, o := range outcomes {
			if !o.Good(true) {
				return fmt.Errorf("%d accounts: %s: %w", n, o.AccountID, o.Err)
			}
		}
		bound := fleetPending + fleetRunning + time.Duration(float64(st.TotalRequests())/fleetAllowance*float64(time.Second))
		serial := time.Duration(n) * (fleetPending + fleetRunning)
		r.line("| %d | %d | %s | %s | %.2f | %s | %d |", n, st.TotalRequests(), secs(elapsed), secs(bound),
			elapsed.Seconds()/bound.Seconds(), secs(serial), st.RateLimited)
	}
	r.line("")
	return nil
}

// 10. Backup freshness across accounts: the reads of backup_stale_accounts
// (one accounts listing, then client.LatestSuccesses) over N accounts, each
// with a successful backup on its first page except a few whose newest 60
// backups failed, at an allowance of 20 requests a second.
func benchFreshness(ctx context.Context, _ *harness, r *report, _ int) error {
	r.line("## 10. Backup freshness across accounts (`backup_stale_accounts`)")
	r.line("")
	r.line("The reads of `backup_stale_accounts`: one listing of the accounts, then the newest page of each account's backups (`client.LatestSuccesses`, %d at a time), against the mock on loopback at %d requests a second. Every account has a successful backup on its first page, except 1 in 100 whose newest 60 backups failed (a second page). The floor is ⌈N/50⌉ + N + N/100 requests, and the time at least requests / allowance.",
		client.LatestSuccessesInFlight, fleetAllowance)
	r.line("")
	r.line("| accounts | requests | floor | elapsed | requests / allowance | 429s from the allowance |")
	r.line("|---|---|---|---|---|---|")
	for _, n := range []int{100, 1000} {
		progress("10/12 freshness of %d accounts", n)
		m, err := startMock(ctx, mockservice.Options{Seed: 100, Accounts: n, RateLimit: fleetAllowance})
		if err != nil {
			return err
		}
		now := time.Now()
		ids := m.srv.AccountIDs()
		for i, id := range ids {
			history := []mockservice.BackupSpec{{CreatedAt: now.Add(-30 * time.Hour)}}
			if i%100 == 0 {
				for k := range 60 {
					history = append(history, mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(20*60-k) * time.Minute), Error: "quota"})
				}
			}
			m.srv.AddHistory(id, history...)
		}
		c, err := client.New(client.Options{BaseURL: m.url, APIKey: m.srv.DemoKey(), MaxRetries: client.DefaultMaxRetries})
		if err != nil {
			m.close()
			return err
		}
		started := time.Now()
		accounts, err := client.Collect(c.Accounts(ctx, client.ListOptions{}))
		if err != nil {
			m.close()
			return err
		}
		listed := make([]string, len(accounts))
		for i, a := range accounts {
			listed[i] = a.ID
		}
		outcomes := c.LatestSuccesses(ctx, listed, nil)
		elapsed := time.Since(started)
		st := m.srv.Stats()
		m.close()
		for i, o := range outcomes {
			if o.Err != nil || o.Latest == nil {
				return fmt.Errorf("%d accounts: %s: %+v", n, listed[i], o)
			}
		}
		floor := (n+49)/50 + n + n/100
		r.line("| %d | %d | %d | %s | %s | %d |", n, st.TotalRequests(), floor, secs(elapsed),
			secs(time.Duration(float64(st.TotalRequests())/fleetAllowance*float64(time.Second))), st.RateLimited)
	}
	r.line("")
	return nil
}
