package workflow

import (
	"context"
	"testing"
	"time"
)

// A guard's destroy follows the backup a stopped destroy began while its
// record stands on both clocks, and queues nothing; past its counts_until it
// takes a new backup, and leaves no record of the old one should it stop.
func TestDestroyFollowsAStandingRecordOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		countsFor    time.Duration // from now
		wantFollowed bool
	}{
		{"standing", time.Minute, true},
		{"expired", -time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRunFixture(t)
			acct := f.srv.AccountIDs()[0]
			c := f.client(t)
			b := queuedOnce(t, c, acct)
			earlier := Record{Phase: phaseIdentified, BackupID: b.ID, Status: b.Status, TriggeredAt: b.CreatedAt,
				CountsUntil: f.clock.Now().Add(tc.countsFor), StoppedOnService: f.mockClock.Now()}
			queued := f.srv.BackupsQueued(acct)
			o, next, followed := c.Destroy(context.Background(), acct, earlier, RunOptions{WaitForCompletion: true, WaitOnConflict: true}, 10*time.Minute)
			if !o.Good(true) || followed != tc.wantFollowed || (o.Backup.ID == b.ID) != tc.wantFollowed {
				t.Fatalf("%d %v, backup %+v, followed %t; want followed %t", o.Kind, o.Err, o.Backup, followed, tc.wantFollowed)
			}
			if n := f.srv.BackupsQueued(acct) - queued; (n == 0) != tc.wantFollowed {
				t.Errorf("%d backups queued; want one only when not followed", n)
			}
			if !tc.wantFollowed && !next.Empty() {
				t.Errorf("next %s: an expired record must not stand again", next)
			}
		})
	}
}
