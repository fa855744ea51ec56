package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Section 11's shape: runs at once, accounts each guards, and the limit
// of the mock's allowance (high: this section counts backups, not pacing).
const (
	reuseRuns      = 8
	reuseAccounts  = 25
	reuseAllowance = 200
)

// 11. Sharing a backup: reuseRuns runs (processes, each with its own
// client) guarding the same reuseAccounts accounts at once, each waiting
// for a good backup of every account (the engine of the action's
// account_ids and of every guard), with reuse_within unset and set.
func benchReuse(ctx context.Context, _ *harness, r *report, _ int) error {
	r.line("## 11. Sharing a backup (`reuse_within`)")
	r.line("")
	r.line("%d runs at once, each with its own client, guard the same %d accounts: each waits for a good backup of every account (`workflow.Runner.RunMany`, the engine of the action's `account_ids`; a guard's destroy runs the same), against the mock on loopback whose backups take %s, at an allowance of %d requests a second. The floor is one backup per account with `reuse_within`; without it, every run takes its own, one after another.",
		reuseRuns, reuseAccounts, fleetPending+fleetRunning, reuseAllowance)
	r.line("")
	r.line("| `reuse_within` | backups queued | POSTs (409s among them) | runs that failed | elapsed |")
	r.line("|---|---|---|---|---|")
	for _, within := range []time.Duration{0, 15 * time.Minute} {
		progress("11/12 %d runs over %d accounts, reuse_within %s", reuseRuns, reuseAccounts, within)
		m, err := startMock(ctx, mockservice.Options{Seed: 110, Accounts: reuseAccounts, RateLimit: reuseAllowance, PendingFor: fleetPending, RunningFor: fleetRunning})
		if err != nil {
			return err
		}
		ids := m.srv.AccountIDs()
		var failed atomic.Int64
		var firstErr error
		var mu sync.Mutex
		var wg sync.WaitGroup
		started := time.Now()
		for range reuseRuns {
			c, err := client.New(client.Options{BaseURL: m.url, APIKey: m.srv.DemoKey(), MaxRetries: client.DefaultMaxRetries})
			if err != nil {
				m.close()
				return err
			}
			wg.Go(func() {
				// As the action's account_ids and a guard's destroy: no record of an earlier change.
				opts := workflow.RunOptions{WaitForCompletion: true, WaitOnConflict: true, ReuseWithin: within, Unrecorded: true}
				for _, o := range workflow.New(c, nil, nil, workflow.Settings{}).RunMany(ctx, ids, opts, nil, nil) {
					if !o.Good(true) {
						failed.Add(1)
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("%s: %w", o.AccountID, o.Err)
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(started)
		st := m.srv.Stats()
		m.close()
		queued := 0
		for _, n := range st.BackupsQueued {
			queued += n
		}
		posts := st.Requests[mockservice.RouteTrigger]
		shown := "unset"
		if within > 0 {
			shown = fmt.Sprintf("`%s`", within)
		}
		r.line("| %s | %d | %d (%d) | %d | %s |", shown, queued, posts, posts-queued, failed.Load(), secs(elapsed))
		if firstErr != nil {
			r.line("")
			r.line("First failure: %v", firstErr)
		}
	}
	r.line("")
	return nil
}
