package main

import (
	"context"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// fleetBackup is how long each account's backup takes in section 9.
const (
	fleetPending   = time.Second
	fleetRunning   = 2 * time.Second
	fleetAllowance = 20
)

// 9. Many accounts at once: the action's account_ids engine
// (client.RunBackups) over N accounts whose backups take 3 s, at an
// allowance of 20 requests a second, against the mock on loopback.
func benchFleet(ctx context.Context, _ *harness, r *report, _ int) error {
	r.line("## 9. Many accounts at once (action `account_ids`)")
	r.line("")
	r.line("`client.RunBackups`, the engine of the action's `account_ids`: every account triggered and waited for at once, with the default polling, against the mock on loopback whose backups take %s, at an allowance of %d requests a second. The floor is one backup's time plus the requests over the allowance: bound = %s + requests / %d.",
		fleetPending+fleetRunning, fleetAllowance, fleetPending+fleetRunning, fleetAllowance)
	r.line("")
	r.line("| accounts | requests | elapsed | bound | elapsed / bound | one after another | 429s from the allowance |")
	r.line("|---|---|---|---|---|---|---|")
	for _, n := range []int{20, 200, 1000} {
		progress("9/9 %d accounts at once", n)
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
		outcomes := c.RunBackups(ctx, ids, client.RunOptions{WaitForCompletion: true, WaitOnConflict: true}, nil, nil)
		elapsed := time.Since(started)
		st := m.srv.Stats()
		m.close()
		for _, o := range outcomes {
			if o.Err != nil {
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
