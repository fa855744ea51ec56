package workflow

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const window = 15 * time.Minute

// The reuse window, case by case, on the fake clock, for a caller that
// records no change (an action, a guard's destroy): what counts, what the
// run then costs, and what it reports.
func TestReuseWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(fs *faultyService)
		waits bool
		// want: the outcome's kind, whether it was reused, POSTs sent,
		// backups this run queued.
		kind          Kind
		reused        bool
		posts, queued int
	}{
		{"a good backup inside the window is adopted", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, 5*time.Minute)
		}, true, Succeeded, true, 0, 0},
		{"adopted without waiting too", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, 5*time.Minute)
		}, false, NotWaited, true, 0, 0},
		{"a good backup outside the window is not", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, window+time.Second)
		}, true, Succeeded, false, 1, 1},
		{"a backup in progress is joined and counts once it succeeds", func(fs *faultyService) {
			fs.addOld(client.StatusRunning, 2*time.Minute)
		}, true, Succeeded, true, 0, 0},
		{"a backup in progress that fails is followed by a new one", func(fs *faultyService) {
			b := fs.addOld(client.StatusRunning, 2*time.Minute)
			fs.failing = map[string]bool{b.ID: true}
		}, true, Succeeded, false, 1, 1},
		{"a failed backup inside the window does not count", func(fs *faultyService) {
			fs.addOld(client.StatusFailed, time.Minute)
		}, true, Succeeded, false, 1, 1},
		{"an older good one behind a newer failed one counts", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, 10*time.Minute)
			fs.addOld(client.StatusFailed, time.Minute)
		}, true, Succeeded, true, 0, 0},
		// Not reused; the new backup, created a minute before it, lists
		// out of order: every page that holds both is refused, and the
		// new backup is never identified from such a listing.
		{"a record dated beyond the clock allowance never counts", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, -time.Minute)
		}, true, NotIdentified, false, 1, 1},
		{"a record dated within the clock allowance counts", func(fs *faultyService) {
			fs.addOld(client.StatusSuccess, -5*time.Second)
		}, true, Succeeded, true, 0, 0},
		// The look for a backup to reuse is the read before the trigger
		// too: without it, nothing is queued (fails closed).
		{"a listing with a malformed time: nothing reused, nothing queued", func(fs *faultyService) {
			fs.rawListing = fmt.Sprintf(`{"data":[{"id":"bkp_0123456789abcdef","account_id":%q,"status":"success",`+
				`"created_at":"yesterday"}],"pagination":{"limit":50,"next_cursor":null}}`, fs.account)
		}, true, Refused, false, 0, 0},
		{"a backup another client queued since the look is joined after the 409", func(fs *faultyService) {
			fs.onPOST = func(n int) {
				if n == 1 { // after the look: the POST meets it
					fs.backups = append([]client.Backup{{ID: "bkp_otherclient00001", AccountID: fs.account,
						Status: client.StatusRunning, CreatedAt: fs.now()}}, fs.backups...)
				}
			}
		}, true, Succeeded, true, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			tc.setup(fs)
			var reusedEvents int
			o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: tc.waits, WaitOnConflict: true, ReuseWithin: window, Unrecorded: true,
				Progress: func(ev Event) {
					if ev.Kind == EventReused {
						reusedEvents++
					}
				}})
			posts, _ := fs.counts()
			if o.Kind != tc.kind || o.Reused != tc.reused || posts != tc.posts || len(fs.queuedIDs()) != tc.queued {
				t.Fatalf("outcome %d reused %t (%v), %d POSTs, queued %v; want %d reused %t, %d POSTs, %d queued",
					o.Kind, o.Reused, o.Err, posts, fs.queuedIDs(), tc.kind, tc.reused, tc.posts, tc.queued)
			}
			if tc.reused && reusedEvents != 1 {
				t.Errorf("%d reuse events, want 1", reusedEvents)
			}
		})
	}
}

// A joined backup that fails leaves the window to the next good one, as
// the first look could have counted it (seed 225862): no backup is queued,
// and the next change's floor is a look read after the failure, with it.
// The window is read again after the wait: one the failure leaves too old
// counts no more, and a new backup is queued.
func TestReuseFallsBackToAnOlderGoodBackup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		runFor time.Duration // how long the joined backup runs before it fails
		reused bool
	}{{3 * time.Minute, true}, {8 * time.Minute, false}} {
		t.Run(tc.runFor.String(), func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			fs.runFor = tc.runFor
			good := fs.addOld(client.StatusSuccess, 10*time.Minute)
			joined := fs.addOld(client.StatusRunning, 2*time.Minute)
			fs.failing = map[string]bool{joined.ID: true}
			o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: true, ReuseWithin: window, Unrecorded: true})
			posts, _ := fs.counts()
			switch {
			case o.Kind != Succeeded || o.Reused != tc.reused || o.Backup == nil:
				t.Fatalf("outcome %d reused %t (%v), backup %+v; want reused %t", o.Kind, o.Reused, o.Err, o.Backup, tc.reused)
			case tc.reused && (o.Backup.ID != good.ID || posts != 0):
				t.Fatalf("backup %s, %d POSTs; want %s, no POST", o.Backup.ID, posts, good.ID)
			case !tc.reused && posts != 1:
				t.Fatalf("%d POSTs, want 1", posts)
			case !o.Seen.has(joined.ID) || !o.Seen.has(o.Backup.ID):
				t.Errorf("the next change's floor %v lacks the failed %s or the outcome's %s", o.Seen, joined.ID, o.Backup.ID)
			}
		})
	}
}

// Adopting a good backup costs one listing page and nothing else.
func TestReuseCostsOneListing(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	good := fs.addOld(client.StatusSuccess, 5*time.Minute)
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, ReuseWithin: window, Unrecorded: true})
	if posts, listings := fs.counts(); posts != 0 || listings != 1 || o.Backup == nil || o.Backup.ID != good.ID {
		t.Errorf("%d POSTs, %d listings, backup %+v; want 0, 1, %s", posts, listings, o.Backup, good.ID)
	}
}

// A backup older than the window, still running, is waited out as
// on_conflict says: "wait" waits for it and queues a new one, "fail"
// fails at its one POST's 409.
func TestReuseLeavesAnOlderBackupToOnConflict(t *testing.T) {
	t.Parallel()
	for _, waitOnConflict := range []bool{true, false} {
		t.Run(fmt.Sprint("wait=", waitOnConflict), func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			fs.addOld(client.StatusRunning, window+time.Minute)
			o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: waitOnConflict, ReuseWithin: window, Unrecorded: true})
			switch {
			case o.Reused:
				t.Fatalf("reused %+v, older than the window", o.Backup)
			case waitOnConflict && (o.Kind != Succeeded || len(fs.queuedIDs()) != 1):
				t.Errorf("outcome %d (%v), queued %v; want a new backup after the old one", o.Kind, o.Err, fs.queuedIDs())
			case !waitOnConflict && o.Kind != Refused:
				t.Errorf("outcome %d (%v); want the 409", o.Kind, o.Err)
			case !waitOnConflict:
				if posts, _ := fs.counts(); posts != 1 {
					t.Errorf("%d POSTs; \"fail\" sends one and stops at its 409", posts)
				}
			}
		})
	}
}

// A reused backup stays reused in the record, through a resumed wait.
func TestRecordKeepsReused(t *testing.T) {
	t.Parallel()
	o := stopped(Unsettled, running, context.Canceled)
	o.Reused = true
	rec := Record{}.after(o)
	if !rec.Reused || rec.Phase != phaseIdentified {
		t.Fatalf("record %+v", rec)
	}
	if next := rec.after(Outcome{Kind: Succeeded, Backup: &good}); !next.Reused || next.Phase != phaseIdentified {
		t.Errorf("after the resumed wait: %+v", next)
	}
	if back, err := Decode(Encode(rec)); err != nil || !back.Reused {
		t.Errorf("stored: %+v, %v", back, err)
	}
}

// A previous change whose listing showed no backup (an empty read, its
// trigger never identified) leaves no floor a recent backup can be shown
// above: one a cache's empty page hid from that change may have started
// before it went ahead, and is not reused.
func TestReuseTakesNothingAboveAnEmptyFloor(t *testing.T) {
	t.Parallel()
	for _, floor := range []*Mark{{IDs: []string{}}, {IDs: []string{"", "bkp_old0000000000000"}}} {
		fs, w := newFaultyService(t)
		fs.addOld(client.StatusFailed, time.Hour)
		before := fs.addOld(client.StatusSuccess, 5*time.Minute) // before the previous change went ahead
		o := w.backUp(context.Background(), fs.account, RunOptions{ReuseWithin: window, Since: floor})
		if o.Backup == nil || o.Backup.ID == before.ID || o.Reused || !errors.Is(o.ReuseRefused, ErrEmptyEarlierChange) {
			t.Errorf("floor %q: run = %d %+v reused=%t (%v); want a new backup, reuse refused for the empty floor", floor.IDs, o.Kind, o.Backup, o.Reused, o.ReuseRefused)
		}
	}
}

// So does a create that replaced a trigger whose floor is such a read
// (its own triggers differ: it counts above that floor).
func TestReuseTakesNothingAboveAReplacedEmptyFloor(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	failed := fs.addOld(client.StatusFailed, time.Hour)
	before := fs.addOld(client.StatusSuccess, 5*time.Minute)
	reps := newReplacements()
	reps.remember(fs.account, "v1", Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now().Add(-time.Hour), Prior: &Mark{IDs: []string{"", failed.ID}}})
	o, _ := w.createTrigger(context.Background(), reps, fs.account, "v2", RunOptions{ReuseWithin: window})
	if o.Backup == nil || o.Backup.ID == before.ID || o.Reused || !errors.Is(o.ReuseRefused, ErrEmptyEarlierChange) {
		t.Errorf("create = %d %+v reused=%t (%v); want a new backup, reuse refused for the empty floor", o.Kind, o.Backup, o.Reused, o.ReuseRefused)
	}
}
