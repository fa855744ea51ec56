package workflow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Every account's events are its own, and cancelling while backups are
// in progress ends every wait with the backup it followed: one per
// account, none queued after.
func TestRunBackupsInterrupted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 44, Accounts: 5, PendingFor: time.Hour, RunningFor: time.Hour}, func(o *client.Options, s *Settings) {
		o.Clock = clock.Wall{}
		s.Poll = pollSettings{Initial: time.Millisecond, Max: 5 * time.Millisecond}
	})
	ids := f.srv.AccountIDs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	queued := map[string]string{}
	var mixed []string
	go func() {
		for {
			mu.Lock()
			n := len(queued)
			mu.Unlock()
			if n == len(ids) {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	outcomes := f.client.RunMany(ctx, ids, RunOptions{WaitForCompletion: true},
		func(accountID string, ev Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Backup.AccountID != accountID {
				mixed = append(mixed, accountID+" got "+ev.Backup.ID+" of "+ev.Backup.AccountID)
			}
			if ev.Kind == EventQueued {
				if prev, ok := queued[accountID]; ok {
					mixed = append(mixed, accountID+" queued twice: "+prev+", "+ev.Backup.ID)
				}
				queued[accountID] = ev.Backup.ID
			}
		}, nil)
	if len(mixed) > 0 {
		t.Errorf("events: %v", mixed)
	}
	for _, o := range outcomes {
		if o.Kind != Unsettled || !errors.Is(o.Err, context.Canceled) || o.Backup == nil || o.Backup.ID != queued[o.AccountID] {
			t.Errorf("%s: %+v %v, want the wait for %s interrupted", o.AccountID, o.Backup, o.Err, queued[o.AccountID])
		}
		if n := f.srv.BackupsQueued(o.AccountID); n != 1 {
			t.Errorf("%s: %d backups queued", o.AccountID, n)
		}
	}
}
