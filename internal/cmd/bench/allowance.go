package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// 8. Allowance used: one client, ten concurrent callers (Terraform's
// parallelism), against the mock on loopback counting arrivals in its
// one-second windows, at allowances from 1 to 100 requests a second.
func benchAllowance(ctx context.Context, _ *harness, r *report, _ int) error {
	r.line("## 8. Allowance used")
	r.line("")
	r.line("One client shared by 10 concurrent callers (as Terraform's parallelism), each reading `GET /api/v1/token` in a loop for about 10 s, against the mock on loopback at the allowance shown. Used = (requests − 1) / (elapsed × allowance): the first request opens the first interval. It can pass 100% at 1/s, where the first and last requests may fall at opposite ends of their one-second windows.")
	r.line("")
	r.line("| allowance (requests/s) | requests | elapsed | used | 429s from the allowance |")
	r.line("|---|---|---|---|---|")
	allMet, limited := true, 0
	for _, allowance := range []int{1, 2, 5, 20, 100} {
		progress("8/12 allowance used at %d requests/s", allowance)
		m, err := startMock(ctx, mockservice.Options{Seed: 80, Accounts: 1, RateLimit: allowance})
		if err != nil {
			return err
		}
		c, err := client.New(client.Options{BaseURL: m.url, APIKey: m.srv.DemoKey()})
		if err != nil {
			m.close()
			return err
		}
		total := 10 * allowance
		if allowance < 10 {
			total = 10*allowance + 1
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			left = total
			errs []error
		)
		started := time.Now()
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					if left == 0 {
						mu.Unlock()
						return
					}
					left--
					mu.Unlock()
					if _, err := c.Token(ctx); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(started)
		st := m.srv.Stats()
		m.close()
		if len(errs) > 0 {
			return fmt.Errorf("allowance %d: %w", allowance, errs[0])
		}
		// The first request's window is already running when it is sent,
		// so n requests need n-1 intervals.
		used := float64(st.TotalRequests()-1) / elapsed.Seconds() / float64(allowance)
		allMet = allMet && used >= 0.9
		limited += st.RateLimited
		r.line("| %d | %d | %s | %.0f%% | %d |", allowance, st.TotalRequests(), secs(elapsed), 100*used, st.RateLimited)
	}
	r.line("")
	r.line("Goal: at least 90%% of the allowance at every limit (%s) and zero 429s (%s).", verdict(allMet), verdict(limited == 0))
	r.line("")
	return nil
}
