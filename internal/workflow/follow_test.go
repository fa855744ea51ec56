package workflow

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// follow resumes a recorded backup the one way every resource does: it
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
		known      func(f *runFixture, c *Runner, acct string) Record
		opts       followOptions
		wantStatus string // "" for no backup returned
		wantErr    func(Outcome) bool
		wantQueued int // backups queued by follow itself
	}{
		{
			name: "in progress, waited for: the wait's polls read it",
			known: func(f *runFixture, c *Runner, acct string) Record {
				o := c.run(context.Background(), acct, RunOptions{})
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				b := o.Backup
				return Record{BackupID: b.ID, Status: b.Status, TriggeredAt: b.CreatedAt}
			},
			opts:       followOptions{RunOptions: RunOptions{WaitForCompletion: true}},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "finished, counts: returned as read",
			known: func(f *runFixture, c *Runner, acct string) Record {
				b := finished(f, acct, false)
				return Record{BackupID: b.ID, Status: client.StatusRunning}
			},
			opts:       followOptions{RunOptions: RunOptions{WaitForCompletion: true}, Counts: func(client.Backup) bool { return true }, Renew: true},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "does not count, renewed: a new backup",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{BackupID: finished(f, acct, true).ID, Status: client.StatusFailed}
			},
			opts:       followOptions{Counts: never, Renew: true},
			wantStatus: client.StatusPending,
			wantQueued: 1,
		},
		{
			name: "does not count, not renewed: returned as read, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{BackupID: finished(f, acct, true).ID, Status: client.StatusRunning}
			},
			opts:       followOptions{Counts: never},
			wantStatus: client.StatusFailed,
		},
		{
			name: "failed, waited for: the failure",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{BackupID: finished(f, acct, true).ID, Status: client.StatusRunning}
			},
			opts:       followOptions{RunOptions: RunOptions{WaitForCompletion: true}},
			wantStatus: client.StatusFailed,
			wantErr:    func(o Outcome) bool { return o.Kind == Failed },
		},
		{
			name: "unreadable: nothing followed, nothing queued, even with Renew",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{BackupID: "bkp_0000000000000000", Status: client.StatusRunning}
			},
			opts: followOptions{RunOptions: RunOptions{WaitForCompletion: true}, Counts: never, Renew: true},
			wantErr: func(o Outcome) bool {
				var unread *UnreadError
				return o.Kind == Refused && errors.As(o.Err, &unread) && unread.BackupID == "bkp_0000000000000000" && errors.Is(o.Err, client.ErrNotFound)
			},
		},
		{
			name: "unidentified, found: followed whatever it became",
			known: func(f *runFixture, c *Runner, acct string) Record {
				began := f.mockClock.Now().Add(-time.Second)
				l := look(t, c, acct)
				if o := c.run(context.Background(), acct, RunOptions{}); o.Err != nil {
					t.Fatal(o.Err)
				}
				return Record{TriggeredAt: began, Confirmed: true, Prior: l.mark}
			},
			opts:       followOptions{RunOptions: RunOptions{WaitForCompletion: true}},
			wantStatus: client.StatusSuccess,
		},
		{
			name: "unidentified, confirmed, never listed: unidentified again, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{TriggeredAt: f.mockClock.Now().Add(-time.Hour), Confirmed: true, Prior: look(t, c, acct).mark}
			},
			wantErr: func(o Outcome) bool {
				return o.Kind == NotIdentified && o.Confirmed && errors.Is(o.Err, errNotListed)
			},
		},
		{
			name: "unidentified, unconfirmed, never listed past the grace: a new trigger",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{TriggeredAt: f.mockClock.Now().Add(-time.Hour), Prior: look(t, c, acct).mark}
			},
			wantStatus: client.StatusPending,
			wantQueued: 1,
		},
		{
			name: "unidentified, unconfirmed, within the grace: its rest is waited out, then a new trigger",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{TriggeredAt: f.mockClock.Now(), Prior: look(t, c, acct).mark}
			},
			wantStatus: client.StatusPending,
			wantQueued: 1,
		},
		{
			name: "unidentified without the mark read before it: unidentified, nothing queued",
			known: func(f *runFixture, c *Runner, acct string) Record {
				return Record{TriggeredAt: f.mockClock.Now().Add(-time.Hour)}
			},
			wantErr: func(o Outcome) bool { return o.Kind == NotIdentified && errors.Is(o.Err, errNoPrior) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRunFixture(t)
			acct := f.srv.AccountIDs()[0]
			c := f.client(t)
			k := tc.known(f, c, acct)
			before := f.srv.Stats().BackupsQueued[acct]
			o := c.follow(context.Background(), acct, k, tc.opts)
			b := o.Backup
			switch {
			case tc.wantErr == nil && o.Err != nil:
				t.Fatalf("follow: %v", o.Err)
			case tc.wantErr != nil && !tc.wantErr(o):
				t.Fatalf("follow outcome %d, %v, not the one expected", o.Kind, o.Err)
			}
			if got := ""; b != nil {
				got = b.Status
				if got != tc.wantStatus {
					t.Errorf("follow = %s (%s), want status %q", b.ID, got, tc.wantStatus)
				}
			} else if tc.wantStatus != "" {
				t.Errorf("follow returned no backup, want one %s", tc.wantStatus)
			}
			if queued := f.srv.Stats().BackupsQueued[acct] - before; queued != tc.wantQueued {
				t.Errorf("follow queued %d backups, want %d", queued, tc.wantQueued)
			}
			if o.Renewed != (tc.wantQueued > 0) { // what a guard's destroy says it queued (seed 232669)
				t.Errorf("Renewed %t, with %d backups queued by follow", o.Renewed, tc.wantQueued)
			}
		})
	}
}

// look is the read before a trigger, for a record to look above.
func look(t *testing.T, c *Runner, acct string) looked {
	t.Helper()
	l, err := c.look(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A replacement that cannot tell which deleted trigger it replaces follows a
// recorded backup only when it is listed above the others' floors (above);
// else it queues nothing, since that backup may be its change's (seed 7087).
func TestFollowAboveOthersFloors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		readAfter bool // the others' floor was read after the backup was listed
	}{
		{"listed since the others went ahead: followed", false},
		{"listed before another went ahead: neither followed nor queued", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRunFixture(t)
			acct := f.srv.AccountIDs()[0]
			c := f.client(t)
			floor := look(t, c, acct).mark
			o := c.run(context.Background(), acct, RunOptions{WaitForCompletion: true})
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if tc.readAfter {
				floor = look(t, c, acct).mark
			}
			before := f.srv.Stats().BackupsQueued[acct]
			rec := Record{BackupID: o.Backup.ID, Status: o.Backup.Status}
			got := c.follow(context.Background(), acct, rec, followOptions{Counts: stillCounts, Renew: true, Above: floor})
			switch {
			case tc.readAfter && (got.Kind != Refused || !errors.Is(got.Err, errNotAboveReplaced)):
				t.Fatalf("follow: %d, %v; want it refused, not above the others' floors", got.Kind, got.Err)
			case !tc.readAfter && (got.Backup == nil || got.Backup.ID != o.Backup.ID):
				t.Fatalf("follow: %d, %v; want the recorded backup", got.Kind, got.Err)
			}
			if queued := f.srv.Stats().BackupsQueued[acct] - before; queued != 0 {
				t.Errorf("follow queued %d backups, want none", queued)
			}
		})
	}
}

// The others' floor pushed past the recorded backup's page (more backups
// since than a page holds, or a service that pages short) is read on for:
// the backup is followed when the listing shows the floor further down.
func TestFollowAboveOthersFloorsFurtherDown(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, 2*time.Hour)
	floor := look(t, w, fs.account).mark
	own := fs.addOld(client.StatusSuccess, 30*time.Minute)
	fs.addOld(client.StatusSuccess, 10*time.Minute)
	fs.mu.Lock()
	fs.pageSize = 2 // the recorded backup's page ends above the floor
	fs.mu.Unlock()
	o := w.follow(context.Background(), fs.account, Record{BackupID: own.ID, Status: own.Status}, followOptions{Counts: stillCounts, Above: floor})
	if o.Backup == nil || o.Backup.ID != own.ID {
		t.Fatalf("follow: %d, %v; want %s, listed above the floor further down", o.Kind, o.Err, own.ID)
	}
}

// A stopped destroy's record that no longer stands on the service's clock
// is not followed: a new backup is taken, whatever this machine's clock says.
func TestFollowRenewsARecordThatNoLongerStands(t *testing.T) {
	t.Parallel()
	for _, stands := range []bool{true, false} {
		f := newRunFixture(t)
		acct := f.srv.AccountIDs()[0]
		c := f.client(t)
		o := c.run(context.Background(), acct, RunOptions{WaitForCompletion: true})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		before := f.srv.Stats().BackupsQueued[acct]
		rec := Record{Phase: phaseIdentified, BackupID: o.Backup.ID, Status: o.Backup.Status}
		got := c.follow(context.Background(), acct, rec, followOptions{Counts: stillCounts, Renew: true,
			StandsAt: func(at client.AnswerTime) bool { return stands && !at.Service.IsZero() }})
		want := 1
		if stands {
			want = 0
		}
		if queued := f.srv.Stats().BackupsQueued[acct] - before; queued != want || got.Backup == nil {
			t.Errorf("stands %t: queued %d backups (outcome %d, %v), want %d", stands, queued, got.Kind, got.Err, want)
		}
		if got.Renewed == stands { // what a guard's destroy tells: it followed, or queued its own
			t.Errorf("stands %t: Renewed %t", stands, got.Renewed)
		}
	}
}

// A record not identified, whose change has not gone ahead, is never let
// go ahead when not one listing could be read: its backup, queued before,
// may have ended badly (seed 100927: a not-waited create adopted one and
// went ahead on it). Once its change went ahead, it stays not identified.
func TestFollowOfAnUnidentifiedRecordFailsClosedWhenNothingIsRead(t *testing.T) {
	t.Parallel()
	for _, ahead := range []bool{false, true} {
		f := newRunFixture(t)
		acct := f.srv.AccountIDs()[0]
		c := f.client(t)
		rec := Record{Phase: phaseUnidentified, TriggeredAt: f.clock.Now(), Confirmed: true, Prior: look(t, c, acct).mark, Ahead: ahead}
		f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListBackups})
		o := c.follow(context.Background(), acct, rec, followOptions{Counts: stillCounts})
		var unread *UnreadError
		switch {
		case !ahead && (o.Kind != Refused || !errors.As(o.Err, &unread) || unread.BackupID != ""):
			t.Errorf("not gone ahead: %d %v; want it refused, unread", o.Kind, o.Err)
		case ahead && o.Kind != NotIdentified:
			t.Errorf("gone ahead: %d %v; want it not identified still", o.Kind, o.Err)
		}
	}
}

// A record's backup that no longer counts is never the run that replaces it:
// not even when the listing read before that run's trigger drops it, and a
// later one lists it above that read (deep-run seed 126609: the failed
// backup was taken for the new trigger's, whose own then went unseen).
func TestRenewNeverTakesTheRecordsOwnBackup(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	floor := fs.addOld(client.StatusSuccess, 10*time.Minute)
	failed := fs.addOld(client.StatusFailed, time.Minute)
	fs.onListing = func(n int) {
		if n == 2 { // the read before the new trigger
			fs.hiddenFor[failed.ID] = 1
		}
	}
	rec := Record{Phase: phaseFailed, BackupID: failed.ID, Status: failed.Status, TriggeredAt: failed.CreatedAt, Prior: &Mark{IDs: []string{floor.ID}}}
	o := c.follow(context.Background(), fs.account, rec, followOptions{RunOptions: RunOptions{Since: rec.Prior}, Counts: stillCounts, Renew: true})
	if o.Backup == nil || o.Backup.ID == failed.ID || !slices.Contains(fs.queuedIDs(), o.Backup.ID) || !o.Renewed {
		t.Fatalf("renewed = %d %+v %v (Renewed %t); want the backup its trigger queued (%v), never %s", o.Kind, o.Backup, o.Err, o.Renewed, fs.queuedIDs(), failed.ID)
	}
}

// A stopped destroy's record that no longer stands: the run in its place
// never takes its backup, good as it is, when the read before the trigger
// drops it.
func TestRunInPlaceOfNeverTakesTheRecordsBackup(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	stale := fs.addOld(client.StatusSuccess, time.Hour)
	fs.onListing = func(n int) {
		if n == 1 { // the read before the trigger
			fs.hiddenFor[stale.ID] = 1
		}
	}
	rec := Record{Phase: phaseIdentified, BackupID: stale.ID, Status: stale.Status, TriggeredAt: stale.CreatedAt}
	o := c.renew(context.Background(), fs.account, RunOptions{}, rec.BackupID)
	if o.Backup == nil || o.Backup.ID == stale.ID || !slices.Contains(fs.queuedIDs(), o.Backup.ID) || !o.Renewed {
		t.Fatalf("run = %d %+v %v (Renewed %t); want the backup its trigger queued (%v), never %s", o.Kind, o.Backup, o.Err, o.Renewed, fs.queuedIDs(), stale.ID)
	}
}

// A backup found above an unidentified record's read that no longer counts
// (failed) gives way to a new one, as the record's own would, for a caller
// that counts (deep-run seed 148830: a stopped destroy's trigger, processed
// after its answer was lost, failed; the next destroy reported that failure).
func TestFollowOfAnUnidentifiedRecordRenewsAFailedBackup(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	floor := fs.addOld(client.StatusSuccess, 10*time.Minute)
	failed := fs.addOld(client.StatusFailed, time.Minute)
	rec := Record{Phase: phaseUnidentified, TriggeredAt: failed.CreatedAt.Add(-time.Second), Prior: &Mark{IDs: []string{floor.ID}}}
	o := c.follow(context.Background(), fs.account, rec, followOptions{Counts: stillCounts, Renew: true})
	if o.Backup == nil || o.Backup.ID == failed.ID || !slices.Contains(fs.queuedIDs(), o.Backup.ID) || !o.Renewed {
		t.Fatalf("followed = %d %+v %v (Renewed %t); want a new backup queued (%v), not %s reported", o.Kind, o.Backup, o.Err, o.Renewed, fs.queuedIDs(), failed.ID)
	}
}
