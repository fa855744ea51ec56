package provider

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// A history built to have known stale accounts: one fresh, one whose
// latest success is too old, one never backed up, one whose newest 60
// backups failed (its old success is on the second page), one the key may
// not read, one whose newest success contradicts itself (an error beside
// status success: no good backup, the rule's one test), one whose newest
// success is dated an hour ahead (a clock set ahead: its age cannot be
// read, so it vouches for nothing; a helper's user path). Each is found for
// the reason it is stale, at the cost of one accounts page, one backups
// page per account and one more for the account whose first page holds no success.
func TestAccStaleAccounts(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2301, Accounts: 8})
	acc := e.srv.AccountIDs()
	fresh, old, never, failing, hidden, freshAfterFailures, contradicted, ahead := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	e.srv.AddHistory(contradicted, mockservice.BackupSpec{CreatedAt: e.clock.Now().UTC().Add(-50 * time.Hour)})
	e.srv.SetRecordQuirk(contradicted, mockservice.QuirkErrorSet)
	e.outsideBackup(t, contradicted)
	e.srv.SetRecordQuirk(ahead, mockservice.QuirkFutureDated)
	e.outsideBackup(t, ahead)
	e.clock.Advance(15 * time.Minute) // they succeed, with an error, and dated 30 days late
	now := e.clock.Now().UTC()
	e.srv.AddHistory(fresh, mockservice.BackupSpec{CreatedAt: now.Add(-3 * time.Hour)})
	e.srv.AddHistory(old, mockservice.BackupSpec{CreatedAt: now.Add(-40 * time.Hour)}, mockservice.BackupSpec{CreatedAt: now.Add(-30 * time.Hour), Error: "quota"})
	var failures []mockservice.BackupSpec
	for i := range 60 {
		failures = append(failures, mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(120-i) * time.Minute), Error: "token expired"})
	}
	oldSuccess := now.Add(-100 * time.Hour)
	e.srv.AddHistory(failing, append(failures, mockservice.BackupSpec{CreatedAt: oldSuccess})...)
	e.srv.AddHistory(hidden, mockservice.BackupSpec{CreatedAt: now.Add(-1 * time.Hour)})
	e.srv.AddHistory(ahead, mockservice.BackupSpec{CreatedAt: now.Add(-2 * time.Hour)})
	shown, err := e.rawClient(t).FirstBackupsPage(t.Context(), ahead)
	if err != nil || len(shown.Backups) == 0 || shown.Backups[0].CompletedAt == nil {
		t.Fatalf("the future-dated backup: %+v, %v", shown.Backups, err)
	}
	e.srv.AddHistory(freshAfterFailures, append([]mockservice.BackupSpec{{CreatedAt: now.Add(-5 * time.Hour)}}, failures[:10]...)...)
	e.key = e.srv.AddKey(mockservice.KeySpec{Name: "auditor", ExpiresAt: now.Add(30 * 24 * time.Hour), Restricted: []string{hidden}})

	const ds = "data.backup_stale_accounts.daily"
	cfg := e.config(`data "backup_stale_accounts" "daily" {
  max_age = "24h"
}
`)
	var before int
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() { before = e.srv.Stats().TotalRequests() },
			Config:    cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				// The unreadable one is listed as stale but was not checked.
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("checked"), knownvalue.Int64Exact(7)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("ids"), knownvalue.SetExact([]knownvalue.Check{
					knownvalue.StringExact(old), knownvalue.StringExact(never), knownvalue.StringExact(failing), knownvalue.StringExact(hidden),
					knownvalue.StringExact(contradicted), knownvalue.StringExact(ahead),
				})),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				expectStale(ds, old, "old", now.Add(-40*time.Hour+11*time.Minute)),
				expectStale(ds, never, "never", time.Time{}),
				expectStale(ds, failing, "old", oldSuccess.Add(11*time.Minute)),
				expectStale(ds, hidden, "unreadable", time.Time{}),
				expectStale(ds, contradicted, "old", now.Add(-15*time.Minute-50*time.Hour+11*time.Minute)),
				expectStale(ds, ahead, "dated_ahead", *shown.Backups[0].CompletedAt),
				func(*terraform.State) error {
					// Read once, while planning: one accounts page, 8 backups
					// pages and 1 more for failing.
					if n := e.srv.Stats().TotalRequests() - before; n != 10 {
						return fmt.Errorf("%d requests, want 10", n)
					}
					return nil
				},
			),
		}},
	})
}

// expectStale checks one stale account's reason and last success (zero:
// null).
func expectStale(ds, id, reason string, lastSuccess time.Time) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		r := s.RootModule().Resources[ds]
		if r == nil {
			return fmt.Errorf("%s not in state", ds)
		}
		a := r.Primary.Attributes
		for i := range 10 {
			if a[fmt.Sprintf("accounts.%d.id", i)] != id {
				continue
			}
			got, at := a[fmt.Sprintf("accounts.%d.reason", i)], a[fmt.Sprintf("accounts.%d.last_success_at", i)]
			want := ""
			if !lastSuccess.IsZero() {
				want = lastSuccess.Truncate(time.Second).Format(time.RFC3339)
			}
			if got != reason || at != want {
				return fmt.Errorf("%s: reason %q, last_success_at %q; want %q, %q", id, got, at, reason, want)
			}
			return nil
		}
		return fmt.Errorf("%s is not listed as stale: %v", id, slices.Collect(func(yield func(string) bool) {
			for k, v := range a {
				if !yield(k + "=" + v) {
					return
				}
			}
		}))
	}
}
