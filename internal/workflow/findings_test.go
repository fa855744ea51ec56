package workflow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// The findings of issue 56, each against a service that behaves so: no
// clock and no Date decides which backup counts.

// A wrong Date on every answer, in any form, changes no decision but
// whether a reuse is taken: a lost answer is found by listing (not sent
// again), a waited trigger succeeds, and reuse_within takes no shortcut.
// (A Date 2 minutes stale left a trigger stuck on a backup it called
// misdated; one more than 292 years off overflowed a clock comparison and
// made a second backup.)
func TestWrongDateChangesNothingButReuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		date func(fs *faultyService) string
		why  string // why reuse_within is refused
	}{
		{"2 minutes stale", func(fs *faultyService) string { return fs.now().Add(-2 * time.Minute).UTC().Format(http.TimeFormat) }, "2m0s behind"},
		{"a year ahead", func(fs *faultyService) string {
			return fs.now().Add(365 * 24 * time.Hour).UTC().Format(http.TimeFormat)
		}, "ahead of this machine's"},
		{"year 0001", func(*faultyService) string { return "Mon, 01 Jan 0001 00:00:00 GMT" }, "could not be read"},
		{"year 9999", func(*faultyService) string { return "Fri, 31 Dec 9999 23:59:59 GMT" }, "could not be read"},
		{"unparsable", func(*faultyService) string { return "yesterday" }, "could not be read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			t.Run("a lost answer is found", func(t *testing.T) {
				t.Parallel()
				fs, w := newFaultyService(t)
				fs.date, fs.resetPOSTs = tc.date(fs), 1
				fs.addOld(client.StatusSuccess, time.Hour)
				o := w.backUp(context.Background(), fs.account, RunOptions{})
				if posts, _ := fs.counts(); o.Kind != NotWaited || posts != 1 || len(fs.queuedIDs()) != 1 || o.Backup.ID != fs.queuedIDs()[0] {
					t.Fatalf("outcome %d (%v) after %d POSTs, queued %v; want the one backup, found", o.Kind, o.Err, posts, fs.queuedIDs())
				}
			})
			t.Run("a waited trigger succeeds", func(t *testing.T) {
				t.Parallel()
				fs, w := newFaultyService(t)
				fs.date, fs.runFor = tc.date(fs), time.Minute
				o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
				if o.Kind != Succeeded || !o.Seen.has(o.Backup.ID) {
					t.Fatalf("outcome %d (%v), seen %v; want it succeeded, and the next change's floor with it", o.Kind, o.Err, o.Seen)
				}
			})
			t.Run("reuse_within takes no shortcut", func(t *testing.T) {
				t.Parallel()
				fs, w := newFaultyService(t)
				fs.date, fs.runFor = tc.date(fs), time.Minute
				recent := fs.addOld(client.StatusSuccess, time.Minute)
				o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, ReuseWithin: time.Hour, Unrecorded: true})
				if o.Kind != Succeeded || o.Reused || o.Backup.ID == recent.ID || o.ReuseRefused == nil || !strings.Contains(o.ReuseRefused.Error(), tc.why) {
					t.Fatalf("outcome %d reused %t (%v), refused: %v; want a new backup, and %q", o.Kind, o.Reused, o.Err, o.ReuseRefused, tc.why)
				}
			})
		})
	}
}

// The service's clock 30 s or 4 min behind (or ahead): every trigger
// identifies its backup, after a 202 and after a lost answer alike (a
// clock comparison failed them all after 30 s).
func TestServiceClockOffNeverStopsIdentification(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{-30 * time.Second, -4 * time.Minute, 4 * time.Minute} {
		for _, lost := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, answer lost %t", skew, lost), func(t *testing.T) {
				t.Parallel()
				fs, w := newFaultyService(t)
				fs.skew, fs.runFor = skew, time.Minute
				fs.addOld(client.StatusSuccess, 10*time.Minute)
				if lost {
					fs.resetPOSTs = 1
				}
				o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
				if posts, _ := fs.counts(); o.Kind != Succeeded || posts != 1 || o.Backup.ID != fs.queuedIDs()[0] {
					t.Fatalf("outcome %d (%v) after %d POSTs; want its own backup, one POST", o.Kind, o.Err, posts)
				}
			})
		}
	}
}

// Another pipeline's backup, running when the read before the trigger was
// made (queued in the same second), is never adopted after a 500: the 409
// that follows is its own, and on_conflict waits it out (a guard adopted
// one queued 16 ms earlier, a clock comparison calling it its own).
func TestAnotherPipelinesRunningBackupIsNeverAdopted(t *testing.T) {
	t.Parallel()
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprint("wait ", wait), func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			fs.runFor = time.Minute
			fs.mu.Lock()
			other := client.Backup{ID: "bkp_otherpipeline001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
			fs.backups = append([]client.Backup{other}, fs.backups...)
			fs.mu.Unlock()
			fs.failPOSTs = 1 // a front's 500: not processed
			o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: wait})
			if o.Backup != nil && o.Backup.ID == other.ID {
				t.Fatalf("adopted %s, another pipeline's, running before the trigger", other.ID)
			}
			switch {
			case wait && (o.Kind != Succeeded || len(fs.queuedIDs()) != 1 || o.Backup.ID != fs.queuedIDs()[0]):
				t.Errorf("outcome %d (%v), queued %v; want its own, after the other", o.Kind, o.Err, fs.queuedIDs())
			case !wait && (o.Kind != Refused || !errors.Is(o.Err, client.ErrConflict)):
				t.Errorf("outcome %d (%v); want the 409", o.Kind, o.Err)
			}
		})
	}
}

// A backup another pipeline queued in the very second a shared backup
// ended, before this trigger's wait read it ended, is listed when its
// change goes ahead: it is in the floor, and the next change never counts
// it (the same second counted it, and happened five times in a run).
func TestTheSameSecondIsInTheFloor(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = 30 * time.Second
	shared := fs.addOld(client.StatusRunning, 5*time.Second)
	var late client.Backup
	fs.onListing = func(int) {
		if late.ID == "" && !fs.now().Before(shared.CreatedAt.Add(fs.runFor)) {
			// Queued the moment the shared one ended, by a pipeline that waited it out.
			late = client.Backup{ID: "bkp_samesecond000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
			fs.backups = append([]client.Backup{late}, fs.backups...)
		}
	}
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, ReuseWithin: time.Hour, Unrecorded: true})
	if o.Kind != Succeeded || !o.Reused || o.Backup.ID != shared.ID {
		t.Fatalf("outcome %d reused %t (%v); want the shared backup joined", o.Kind, o.Reused, o.Err)
	}
	rec := Record{}.after(o).goesAhead(o)
	if !rec.Prior.has(late.ID) || !rec.Prior.has(shared.ID) {
		t.Fatalf("floor %v; want the backup queued in that second in it", rec.Prior)
	}
	fs.onListing = nil
	fs.clock.Advance(time.Minute) // the late one succeeds, well within the window
	next := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, ReuseWithin: time.Hour, Since: rec.floor()})
	if next.Backup == nil || next.Backup.ID == late.ID || next.Backup.ID == shared.ID || next.Reused {
		t.Fatalf("the next change: outcome %d (%v) %+v; want a new backup, never one listed when this change went ahead", next.Kind, next.Err, next.Backup)
	}
}

// A change that went ahead while the service's answers were dated a year
// ahead leaves a floor of ids, not of times: the next change reuses a
// backup listed since, and a lost answer is found (a floor a year ahead
// refused both until the state was removed).
func TestAFloorIsNeverStuckInTheFuture(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = time.Minute
	fs.date = fs.now().Add(365 * 24 * time.Hour).UTC().Format(http.TimeFormat)
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != Succeeded {
		t.Fatalf("outcome %d (%v)", o.Kind, o.Err)
	}
	rec := Record{}.after(o).goesAhead(o)
	fs.date = ""
	fs.clock.Advance(10 * time.Minute)
	since := fs.addOld(client.StatusSuccess, time.Minute) // another's, since
	next := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, ReuseWithin: time.Hour, Since: rec.floor()})
	if next.Kind != Succeeded || !next.Reused || next.Backup.ID != since.ID {
		t.Fatalf("reuse: outcome %d reused %t (%v) %+v; want %s", next.Kind, next.Reused, next.Err, next.Backup, since.ID)
	}
	fs.resetPOSTs = 1
	lost := w.backUp(context.Background(), fs.account, RunOptions{Since: rec.floor()})
	if posts, _ := fs.counts(); lost.Kind != NotWaited || posts != 2 {
		t.Fatalf("a lost answer: outcome %d (%v) after %d POSTs in all; want it found, not sent again", lost.Kind, lost.Err, posts)
	}
}

// A front's 502 page, with a stale Date, answers the POST and, later, the
// listing: the trigger is not identified, and its record, followed by the
// replacement of the tainted trigger, never takes the account's older good
// backup (it did, a stale Date moving its start 30 minutes back). A front
// that answers the read before the trigger stops it there: nothing sent.
func TestAFrontsPagesNeverMakeABackupCount(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = time.Minute
	old := fs.addOld(client.StatusSuccess, 12*time.Minute)
	fs.date = fs.now().Add(-30 * time.Minute).UTC().Format(http.TimeFormat)
	fs.failPOSTs = 100 // a front's 502 pages, never processed
	fs.onListing = func(n int) {
		if n > 1 {
			fs.listingStatus = http.StatusBadGateway // the front again, after the read before the trigger
		}
	}
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != NotIdentified || o.Confirmed || o.Backup != nil || !o.Before.has(old.ID) {
		t.Fatalf("outcome %d (%v) %+v, before %v; want not identified, unconfirmed, the good one before it", o.Kind, o.Err, o.Backup, o.Before)
	}
	rec := Record{}.after(o)
	// The next apply, the front gone: the tainted trigger's replacement follows
	// its record, from the state alone (no private state).
	back, err := FromTriggerState(Record{TriggeredAt: rec.TriggeredAt, Prior: rec.Prior}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fs.mu.Lock()
	fs.failPOSTs, fs.listingStatus, fs.onListing, fs.date = 0, 0, nil, ""
	fs.mu.Unlock()
	fs.clock.Advance(2 * time.Minute)
	got := w.follow(context.Background(), fs.account, back, followOptions{RunOptions: RunOptions{WaitForCompletion: true}, Renew: true})
	if got.Kind != Succeeded || got.Backup.ID == old.ID || len(fs.queuedIDs()) != 1 || got.Backup.ID != fs.queuedIDs()[0] {
		t.Fatalf("the replacement: outcome %d (%v) %+v, queued %v; want a new backup, never %s", got.Kind, got.Err, got.Backup, fs.queuedIDs(), old.ID)
	}

	// The front answers the read before the trigger too: nothing is sent.
	fs2, w2 := newFaultyService(t)
	fs2.addOld(client.StatusSuccess, 12*time.Minute)
	fs2.date, fs2.listingStatus = "Mon, 01 Jan 0001 00:00:00 GMT", http.StatusBadGateway
	o = w2.backUp(context.Background(), fs2.account, RunOptions{WaitForCompletion: true})
	if posts, _ := fs2.counts(); o.Kind != Refused || posts != 0 || !errors.Is(o.Err, errLookFailed) {
		t.Fatalf("outcome %d (%v) after %d POSTs; want refused before any", o.Kind, o.Err, posts)
	}
}

// A service clock set back lists a new backup below older ones: it is not
// recognised, costs a backup or fails the operation closed, and never
// makes another count. After a lost answer, it is not sent again.
func TestAClockSetBackCostsABackupNeverCountsOne(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.byCreated = true
	fs.addOld(client.StatusSuccess, 5*time.Minute)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.skew = -30 * time.Minute // set back since: new backups list below top
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != NotIdentified || !o.Confirmed || o.Backup != nil {
		t.Fatalf("after a 202: outcome %d (%v) %+v; want not identified, never another", o.Kind, o.Err, o.Backup)
	}
	fs2, w2 := newFaultyService(t)
	fs2.byCreated = true
	fs2.addOld(client.StatusSuccess, 5*time.Minute)
	fs2.skew, fs2.resetPOSTs = -30*time.Minute, 1
	o = w2.backUp(context.Background(), fs2.account, RunOptions{})
	if posts, _ := fs2.counts(); o.Kind != NotIdentified || posts != 1 || !strings.Contains(fmt.Sprint(o.Err), "not sent again") {
		t.Fatalf("after a lost answer: outcome %d (%v) after %d POSTs; want not identified, not sent again", o.Kind, o.Err, posts)
	}
}

// A backup a conflict waited out joins the mark: the backup queued after it
// is the trigger's, even when the listing shows it late (on_conflict
// "wait" promises a backup of its own, not the one it waited for).
func TestAConflictWaitedOutJoinsTheMark(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor, fs.lag = time.Minute, 1
	fs.addOld(client.StatusSuccess, time.Hour)
	var other client.Backup
	fs.onPOST = func(n int) {
		if n == 1 { // queued by another pipeline after the read before the trigger
			other = client.Backup{ID: "bkp_otherpipeline001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
			fs.backups = append([]client.Backup{other}, fs.backups...)
		}
	}
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: true})
	if q := fs.queuedIDs(); o.Kind != Succeeded || len(q) != 1 || o.Backup.ID != q[0] {
		t.Fatalf("outcome %d (%v) %+v, queued %v; want its own, not %s", o.Kind, o.Err, o.Backup, q, other.ID)
	}
}

// A waited trigger's own backup that succeeds with a record that
// contradicts itself (an error beside status success) does not count.
func TestOwnContradictorySuccessFails(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = time.Minute
	fs.spoil = func(b *client.Backup) { text := "partially failed"; b.Error = &text }
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != Failed || o.Backup == nil || o.Backup.Status != client.StatusSuccess || !errors.Is(o.Err, errNotCounted) {
		t.Fatalf("outcome %d (%v) %+v; want it failed: no good backup", o.Kind, o.Err, o.Backup)
	}
}
