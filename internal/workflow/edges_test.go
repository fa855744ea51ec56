package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// The edges `make mutation` found untested: each test below fails when
// the comparison or the branch it names is turned around.

// Poll settings with a part missing are the defaults, whole.
func TestPollSettingsDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want PollSettings
	}{
		{PollSettings{}, DefaultPoll},
		{PollSettings{Initial: time.Second}, DefaultPoll},
		{PollSettings{Max: time.Minute}, DefaultPoll},
		{PollSettings{Initial: -time.Second, Max: time.Minute}, DefaultPoll},
		{PollSettings{Initial: time.Millisecond, Max: time.Second}, PollSettings{Initial: time.Millisecond, Max: time.Second}},
	} {
		if got := tc.in.orDefault(); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// A replaced trigger's backup that succeeded exactly at the end of its
// wait was seen to succeed by that wait: it is not adopted once its change
// went ahead.
func TestReplacedAdoptableOnlyAfterItsWait(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) client.Backup {
		done := created.Add(d)
		return client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusSuccess, CreatedAt: created, CompletedAt: &done}
	}
	rec := Record{Phase: PhaseSucceeded, AheadAt: created.Add(10 * time.Minute)}
	if rec.Adoptable(at(10*time.Minute), 10*time.Minute) {
		t.Error("a backup that ended as the wait ran out is adopted")
	}
	if !rec.Adoptable(at(10*time.Minute+time.Second), 10*time.Minute) {
		t.Error("a backup that ended after the wait ran out is not adopted")
	}
}

// A record of a trigger whose outcome was unknown sends a new trigger once
// UncertainGrace has passed since it began, to the second, and not before.
func TestFollowUnconfirmedSendsAgainFromTheGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		elapsed time.Duration // since the trigger began, once the look is over
		posts   int
	}{
		{"at the grace", DefaultUncertainGrace, 1},
		{"a second before", DefaultUncertainGrace - time.Second, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			// The look for the earlier trigger's backup lasts IdentifyWithin
			// on the fake clock, which moves only by the look's sleeps.
			began := fs.clock.Now().Add(DefaultIdentifyWithin - tc.elapsed)
			o := w.Follow(context.Background(), fs.account, Record{TriggeredAt: began}, FollowOptions{})
			posts, _ := fs.counts()
			if posts != tc.posts {
				t.Fatalf("%d POSTs, want %d (outcome %d, %v)", posts, tc.posts, o.Kind, o.Err)
			}
			if tc.posts == 0 && (o.Kind != NotIdentified || o.Confirmed) {
				t.Errorf("outcome %d, confirmed %t: want an unconfirmed NotIdentified", o.Kind, o.Confirmed)
			}
			if tc.posts == 1 && o.Kind != NotWaited {
				t.Errorf("outcome %d, %v: want the new backup, not waited for", o.Kind, o.Err)
			}
		})
	}
}

// Past the grace, an unconfirmed trigger is not sent again while a backup
// dated since it is listed, even one the rule refuses: its own may be that
// one, or below it.
func TestFollowUnconfirmedNotSentAgainOverABackupSinceIt(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	began := fs.clock.Now().Add(-time.Hour)
	fs.mu.Lock()
	since := client.Backup{ID: "bkp_sincethetrigger1", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now().Add(-59 * time.Minute)}
	fs.backups = append([]client.Backup{since}, fs.backups...)
	fs.mu.Unlock()
	// A previous change dated after it (a record that misdates) refuses it.
	o := w.Follow(context.Background(), fs.account, Record{TriggeredAt: began}, FollowOptions{RunOptions: RunOptions{After: fs.now().Add(-30 * time.Minute)}})
	if posts, _ := fs.counts(); posts != 0 || o.Kind != NotIdentified || !strings.Contains(fmt.Sprint(o.Err), since.ID) {
		t.Fatalf("%d POSTs, outcome %d (%v); want none, not identified, naming %s", posts, o.Kind, o.Err, since.ID)
	}
}

// A trigger whose POSTs never get an answer, and whose backup never shows,
// is sent max_retries + 1 times, then gives up unidentified.
func TestTriggerSendsAtMostMaxRetriesAgain(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.dropPOSTs, fs.processLater = 100, 1<<30
	_, o := w.trigger(context.Background(), fs.account, RunOptions{})
	var re *client.RetryError
	if o.Kind != NotIdentified || o.Confirmed || !errors.As(o.Err, &re) {
		t.Fatalf("outcome %d, %v; want an unconfirmed NotIdentified from the retry limit", o.Kind, o.Err)
	}
	if posts, _ := fs.counts(); posts != 2 {
		t.Errorf("%d POSTs, want 2 (max_retries = 1)", posts)
	}
}

// A 409 after a POST whose outcome was unknown, while a backup older than
// the trigger is running, is that backup's conflict: the first POST queued
// nothing, and the 409 stands.
func TestConflictAfterUnknownOutcomeWithAnOlderBackupRunning(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusRunning, 10*time.Minute)
	fs.failPOSTs = 1
	_, o := w.trigger(context.Background(), fs.account, RunOptions{})
	if !errors.Is(o.Err, client.ErrConflict) || o.Kind == NotIdentified {
		t.Fatalf("outcome %d, %v; want the 409", o.Kind, o.Err)
	}
	// The 500's backup is looked for as long as after a 202 (a listing may
	// lag): 7 listings over IdentifyWithin, then one for the 409.
	if posts, listings := fs.counts(); posts != 2 || listings != 8 {
		t.Errorf("%d POSTs, %d listings; want 2 and 8", posts, listings)
	}
	if q := fs.queuedIDs(); len(q) != 0 {
		t.Errorf("queued %v", q)
	}
}

// Interrupted while identifying an accepted trigger's backup, the trigger
// looks once more, detached, and returns the backup it finds there.
func TestIdentifyLooksOnceMoreWhenInterrupted(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs.lag = 1 // the first listing after the POST omits its backup
	fs.onListing = func(n int) {
		if n == 1 {
			cancel()
		}
	}
	tr, o := w.trigger(ctx, fs.account, RunOptions{})
	if tr == nil {
		t.Fatalf("trigger: %v; want the backup found by the detached look", o.Err)
	}
	if q := fs.queuedIDs(); len(q) != 1 || tr.Backup.ID != q[0] {
		t.Errorf("found %s, queued %v", tr.Backup.ID, q)
	}
}

// Interrupted while identifying, when the detached look does not find the
// backup either, the trigger is unidentified, queued, and says the
// listing did not show it.
func TestIdentifyInterruptedAndNotListed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs.lag = 2 // the listing during the look and the detached one omit it
	fs.onListing = func(n int) {
		if n == 1 {
			cancel()
		}
	}
	_, o := w.trigger(ctx, fs.account, RunOptions{})
	if o.Kind != NotIdentified || !o.Confirmed || !errors.Is(o.Err, ErrNotListed) {
		t.Fatalf("trigger: %v; want a queued unidentified trigger, not listed", o.Err)
	}
}

// A wait whose polls fail ends Unfollowed with the polls' error, never as
// a finished backup.
func TestPollingFailureIsUnfollowed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.onListing = func(n int) {
		if n == 2 { // the first poll, after the identifying listing
			fs.listingStatus = 500
		}
	}
	o := w.Run(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != Unfollowed || !errors.Is(o.Err, client.ErrServer) || o.Backup == nil || o.Backup.Status != client.StatusRunning {
		t.Fatalf("outcome %d, %v, %+v; want Unfollowed with the 500, the backup still running", o.Kind, o.Err, o.Backup)
	}
}

// Clocks exactly the allowance apart agree; a zero offset is not behind.
func TestClocksApartAtTheAllowance(t *testing.T) {
	t.Parallel()
	r := Rule{OffsetKnown: true, Offset: -10 * time.Second, Allowance: 10 * time.Second}
	if err := r.clocksApart(); err != nil {
		t.Errorf("offset at the allowance: %v; want agreeing clocks", err)
	}
	r.Offset = -11 * time.Second
	if err := r.clocksApart(); err == nil || !strings.Contains(err.Error(), "11s behind") {
		t.Errorf("offset beyond the allowance: %v; want 11s behind", err)
	}
	if got := aheadOrBehind(0); got != "ahead of" {
		t.Errorf("aheadOrBehind(0) = %q", got)
	}
}

// A record's empty error is no error; a failure without a reason says so,
// and one with a reason gives it.
func TestRecordAndFailureTexts(t *testing.T) {
	t.Parallel()
	empty, reason := "", "disk full"
	b := client.Backup{ID: "bkp_0123456789abcdef", AccountID: "acc_0123456789abcdef", Status: client.StatusFailed, Error: &empty}
	if got := describeRecord(b); !strings.Contains(got, "no error") {
		t.Errorf("describeRecord with an empty error: %q", got)
	}
	if got := failed(b, nil).Err.Error(); !strings.Contains(got, `status "failed": the service gave no reason`) {
		t.Errorf("failed without a reason: %q", got)
	}
	b.Error = &reason
	if got := failed(b, nil).Err.Error(); !strings.Contains(got, "disk full") {
		t.Errorf("failed with a reason: %q", got)
	}
	if got := (Outcome{}).Reason(); got != "the service gave no reason" {
		t.Errorf("no backup: %q", got)
	}
}
