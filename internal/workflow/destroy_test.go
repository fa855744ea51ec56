package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
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

// A destroy that stops because the listing does not hold the stopped one's
// backup is a stop too: the window runs from it on both clocks, so a destroy
// past the first stop's window, within this one's, follows that backup
// (deep-run seed 755886: the service's clock kept the first stop's, and the
// next destroy queued a second backup for the one change).
func TestDestroyStoppedOnAnUnlistedBackupRunsTheWindowFromItsStop(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = time.Minute
	b := fs.addOld(client.StatusRunning, 0)
	fs.hiddenFor[b.ID] = -1 // a listing behind its POST
	resume := 10 * time.Minute
	earlier := Record{Phase: phaseIdentified, BackupID: b.ID, Status: b.Status, TriggeredAt: b.CreatedAt,
		CountsUntil: fs.clock.Now().Add(resume), StoppedOnService: fs.now()}
	opts := RunOptions{WaitForCompletion: true, WaitOnConflict: true}

	fs.clock.Advance(3 * time.Minute)
	o, next, _ := w.Destroy(context.Background(), fs.account, earlier, opts, resume)
	if stopped := next.StoppedOnService.Sub(fs.now()); o.Kind != Refused || stopped < 0 || stopped >= time.Second || !next.CountsUntil.Equal(fs.clock.Now().Add(resume)) {
		t.Fatalf("%d %v; next %s stopped on the service at %s; want refused, its window from this stop (%s)",
			o.Kind, o.Err, next, next.StoppedOnService, fs.now())
	}

	fs.clock.Advance(8 * time.Minute) // past the first stop's window, within the second's
	fs.mu.Lock()
	fs.hiddenFor[b.ID] = 0
	fs.mu.Unlock()
	o, _, followed := w.Destroy(context.Background(), fs.account, next, opts, resume)
	if posts, _ := fs.counts(); !o.Good(true) || !followed || o.Backup.ID != b.ID || posts != 0 {
		t.Fatalf("%d %v, backup %+v, followed %t, %d POSTs; want %s followed, nothing queued", o.Kind, o.Err, o.Backup, followed, posts, b.ID)
	}
}
