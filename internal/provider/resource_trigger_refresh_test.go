package provider

// Refresh at scale: what a plan costs in requests, whatever the number of
// triggers and the age of their backups.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// manyTriggers is one trigger per account.
func manyTriggers(accounts []string) string {
	return fmt.Sprintf("resource \"backup_trigger\" \"each\" {\n  count      = %d\n  account_id = %s[count.index]\n}\n", len(accounts), hclList(accounts))
}

func TestAccTriggerRefreshCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		triggers   int
		history    int // newer backups added to every account after the apply
		inProgress int // triggers whose backup is still running at the plan
		deleted    int // accounts deleted out of band
		// want: requests the plan may send, at most, by route.
		maxAccountGets, maxAccountPages, maxBackupPages int
	}{
		// 8 direct reads, then one listing of the 60 accounts (2 pages);
		// never the backups listing, however old the backups.
		{name: "aged finished triggers", triggers: 60, history: 120, maxAccountGets: 8, maxAccountPages: 2, maxBackupPages: 0},
		{name: "one trigger alone", triggers: 1, history: 120, maxAccountGets: 1},
		// In progress: one page each (the backup in progress is the newest).
		{name: "a mix with in-progress ones", triggers: 30, inProgress: 5, history: 0, maxAccountGets: 8, maxAccountPages: 1, maxBackupPages: 5},
		// The listing's miss proves nothing: one direct read (and one token
		// read, for the whole command) proves the account gone.
		{name: "a deleted account", triggers: 30, deleted: 1, history: 60, maxAccountGets: 8 + 1, maxAccountPages: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 1301, Accounts: tc.triggers - tc.inProgress,
				PendingFor: time.Minute, RunningFor: time.Minute})
			finished := e.srv.AccountIDs()
			c := newCLI(t, e, e.config(manyTriggers(finished)))
			c.run("apply", "-auto-approve", "-no-color")
			e.clock.Advance(time.Hour) // every backup finished
			// Refreshed once since: the state holds every final status, as
			// it does for triggers that have lived a while.
			c.run("apply", "-auto-approve", "-no-color", "-refresh-only")
			accounts := finished
			for i := range tc.inProgress {
				accounts = append(accounts, e.srv.AddAccount(mockservice.AccountSpec{Name: fmt.Sprint("busy ", i)}))
			}
			if tc.inProgress > 0 {
				if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(e.config(manyTriggers(accounts))), 0o600); err != nil {
					t.Fatal(err)
				}
				c.run("apply", "-auto-approve", "-no-color") // the new ones stay pending: the mock's clock stands still
			}
			for _, a := range finished {
				e.srv.AddRecentBackups(a, tc.history)
			}
			for _, a := range finished[:tc.deleted] {
				e.srv.DeleteAccount(a)
			}
			e.srv.ResetStats()
			plan := c.run("plan", "-no-color")
			st := e.srv.Stats().Requests
			t.Logf("%d triggers, %d newer backups each: GET account %d, accounts pages %d, backups pages %d",
				len(accounts), tc.history, st[mockservice.RouteGetAccount], st[mockservice.RouteListAccounts], st[mockservice.RouteListBackups])
			if st[mockservice.RouteGetAccount] > tc.maxAccountGets || st[mockservice.RouteListAccounts] > tc.maxAccountPages ||
				st[mockservice.RouteListBackups] > tc.maxBackupPages {
				t.Errorf("the refresh sent %v, want at most %d account reads, %d accounts pages, %d backups pages",
					st, tc.maxAccountGets, tc.maxAccountPages, tc.maxBackupPages)
			}
			wantCreate := fmt.Sprintf("Plan: %d to add", tc.deleted)
			if tc.deleted == 0 {
				wantCreate = "No changes"
			}
			if !strings.Contains(plan, wantCreate) {
				t.Errorf("the plan should show %q:\n%s", wantCreate, plan)
			}
		})
	}
}

// TestAccTriggerRefreshListingFails: when the shared accounts listing
// fails, the plan fails with one error, not one per trigger.
func TestAccTriggerRefreshListingFails(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 1302, Accounts: 30, PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	e.clientOptions = func(o *client.Options) { o.MaxRetries = 0 }
	c := newCLI(t, e, e.config(manyTriggers(e.srv.AccountIDs())))
	c.run("apply", "-auto-approve", "-no-color")
	c.run("apply", "-auto-approve", "-no-color", "-refresh-only") // every status is now final
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListAccounts})
	out, err := c.exec(nil, "plan", "-no-color")
	if err == nil {
		t.Fatalf("the plan succeeded although the accounts listing fails:\n%s", out)
	}
	if n := strings.Count(out, "Unable to check that account"); n != 1 {
		t.Errorf("the failed listing was reported %d times, want once:\n%s", n, out)
	}
	if !expectError("HTTP 500 (Internal Server Error) to GET /api/v1/accounts").MatchString(out) {
		t.Errorf("the error does not say what failed:\n%s", out)
	}
}
