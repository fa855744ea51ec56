package workflow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Follow resumes a recorded backup the one way every resource does: it
// reads what it must and no more, follows what counts, renews only when
// asked, and never queues a backup for an identified one it could not read.
func TestFollow(t *testing.T) {
	t.Parallel()
	finished := func(f *runFixture, acct string, failed bool) client.Backup {
		spec := mockservice.BackupSpec{CreatedAt: f.mockClock.Now().Add(-time.Hour)}
		if failed {
			spec.Error = "disk full"
		}
		f.srv.AddHistory(acct, spec)
		var last client.Backup
		for b, err := range f.client(t).c.Backups(context.Background(), acct, client.ListOptions{Max: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			last = b
		}
		return last
	}
	never := func(client.Backup) bool { return false }
	for _, tc := range []struct {
		name string
		// known builds the record from a fixture and its account.
		known      func(f *runFixture, c *Runner, acct string) Known
		opts       FollowOptions
		wantStatus string // "" for no backup returned
		wantErr    func(error) bool
		wantQueued int // backups queued by Follow itself
	}{
		{
			name: "in progress, waited for: the wait's polls read it",
			known: func(f *runFixture, c *Runner, acct string) Known {
				b, err := c.run(context.Background(), acct, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return Known{BackupID: b.ID, Status: b.Status, TriggeredAt: b.CreatedAt}
			},
			opts:       FollowOptions{RunOptions: RunOptions{WaitForCompletion: true}},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "finished, counts: returned as read",
			known: func(f *runFixture, c *Runner, acct string) Known {
				b := finished(f, acct, false)
				return Known{BackupID: b.ID, Status: client.StatusRunning}
			},
			opts:       FollowOptions{RunOptions: RunOptions{WaitForCompletion: true}, Counts: func(client.Backup) bool { return true }, Renew: true},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "does not count, renewed: a new backup",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{BackupID: finished(f, acct, true).ID, Status: client.StatusFailed}
			},
			opts:       FollowOptions{Counts: never, Renew: true},
			wantStatus: client.StatusPending,
			wantQueued: 1,
		},
		{
			name: "does not count, not renewed: returned as read, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{BackupID: finished(f, acct, true).ID, Status: client.StatusRunning}
			},
			opts:       FollowOptions{Counts: never},
			wantStatus: client.StatusFailed,
		},
		{
			name: "failed, waited for: the failure",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{BackupID: finished(f, acct, true).ID, Status: client.StatusRunning}
			},
			opts:       FollowOptions{RunOptions: RunOptions{WaitForCompletion: true}},
			wantStatus: client.StatusFailed,
			wantErr:    func(err error) bool { return errors.Is(err, errBackupFailed) },
		},
		{
			name: "unreadable: nothing followed, nothing queued, even with Renew",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{BackupID: "bkp_0000000000000000", Status: client.StatusRunning}
			},
			opts: FollowOptions{RunOptions: RunOptions{WaitForCompletion: true}, Counts: never, Renew: true},
			wantErr: func(err error) bool {
				var ue *unreadableError
				return errors.As(err, &ue) && ue.BackupID == "bkp_0000000000000000" && errors.Is(err, client.ErrNotFound)
			},
		},
		{
			name: "unidentified, found: followed whatever it became",
			known: func(f *runFixture, c *Runner, acct string) Known {
				began := f.mockClock.Now().Add(-time.Second)
				if _, err := c.run(context.Background(), acct, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				return Known{TriggeredAt: began, Confirmed: true}
			},
			opts:       FollowOptions{RunOptions: RunOptions{WaitForCompletion: true}, Counts: never, Renew: true},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "unidentified, confirmed, never listed: unidentified again, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{TriggeredAt: f.mockClock.Now().Add(-time.Hour), Confirmed: true}
			},
			wantErr: func(err error) bool {
				var ue *unidentifiedError
				return errors.As(err, &ue) && ue.Queued && errors.Is(err, ErrNotListed)
			},
		},
		{
			name: "unidentified, unconfirmed, never listed past the grace: a new trigger",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{TriggeredAt: f.mockClock.Now().Add(-time.Hour)}
			},
			wantStatus: client.StatusPending,
			wantQueued: 1,
		},
		{
			name: "unidentified, unconfirmed, within the grace: unidentified, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Known {
				return Known{TriggeredAt: f.mockClock.Now()}
			},
			wantErr: func(err error) bool { return errors.Is(err, errUnidentified) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRunFixture(t)
			acct := f.srv.AccountIDs()[0]
			c := f.client(t)
			k := tc.known(f, c, acct)
			before := f.srv.Stats().BackupsQueued[acct]
			b, err := c.follow(context.Background(), acct, k, tc.opts)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Follow: %v", err)
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Fatalf("Follow error %v (%T), not the one expected", err, err)
			}
			if got := ""; b != nil {
				got = b.Status
				if got != tc.wantStatus {
					t.Errorf("Follow = %s (%s), want status %q", b.ID, got, tc.wantStatus)
				}
			} else if tc.wantStatus != "" {
				t.Errorf("Follow returned no backup, want one %s", tc.wantStatus)
			}
			if queued := f.srv.Stats().BackupsQueued[acct] - before; queued != tc.wantQueued {
				t.Errorf("Follow queued %d backups, want %d", queued, tc.wantQueued)
			}
		})
	}
}
