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
		in, want pollSettings
	}{
		{pollSettings{}, defaultPoll},
		{pollSettings{Initial: time.Second}, defaultPoll},
		{pollSettings{Max: time.Minute}, defaultPoll},
		{pollSettings{Initial: -time.Second, Max: time.Minute}, defaultPoll},
		{pollSettings{Initial: time.Millisecond, Max: time.Second}, pollSettings{Initial: time.Millisecond, Max: time.Second}},
	} {
		if got := tc.in.orDefault(); got != tc.want {
			t.Errorf("%+v: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// A record of a trigger whose outcome was unknown sends a new trigger once
// UncertainGrace has passed since it began, to the second, and not before:
// the look for its backup waits out what is left of it. The grace is read
// on both clocks, and the younger reading counts.
func TestFollowUnconfirmedSendsAgainFromTheGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		elapsed   time.Duration // since the trigger began, when the follow begins
		onService time.Duration // the same on the service's clock; 0: unknown
		posts     int
	}{
		{"past the grace", DefaultUncertainGrace, 0, 1},
		{"within it: the rest is waited out", 10 * time.Second, 0, 1},
		{"within it on the service's clock, which reads younger", DefaultUncertainGrace, DefaultUncertainGrace - defaultIdentifyWithin - time.Second, 0},
		{"past it on both clocks", DefaultUncertainGrace, DefaultUncertainGrace - defaultIdentifyWithin, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, w := newFaultyService(t)
			start := fs.clock.Now()
			rec := Record{TriggeredAt: start.Add(-tc.elapsed), Prior: &Mark{IDs: []string{}}}
			if tc.onService != 0 {
				rec.TriggeredOnService = fs.now().Add(-tc.onService)
			}
			var postedAt time.Time
			fs.onPOST = func(int) { postedAt = fs.clock.Now() }
			o := w.follow(context.Background(), fs.account, rec, followOptions{})
			posts, _ := fs.counts()
			if posts != tc.posts {
				t.Fatalf("%d POSTs, want %d (outcome %d, %v)", posts, tc.posts, o.Kind, o.Err)
			}
			if tc.posts == 0 && (o.Kind != NotIdentified || o.Confirmed || !strings.Contains(fmt.Sprint(o.Err), "less than the 1m0s")) {
				t.Errorf("outcome %d, confirmed %t (%v): want an unconfirmed NotIdentified naming the grace", o.Kind, o.Confirmed, o.Err)
			}
			if tc.posts == 1 && (o.Kind != NotWaited || postedAt.Sub(rec.TriggeredAt) < DefaultUncertainGrace) {
				t.Errorf("outcome %d (%v), sent again %s after the trigger: want the new backup, from the grace on", o.Kind, o.Err, postedAt.Sub(rec.TriggeredAt))
			}
		})
	}
}

// A record stamped on a runner clock 9 s ahead of this one: read on this
// machine's clock, the grace never ends within the look's wait of a whole
// grace; this operation's own time since it began is a floor of the time
// since the trigger, so the trigger is sent again once that wait is over
// (deep-run seed 631460: it failed after 60 s, reading 56).
func TestFollowUnconfirmedCountsItsOwnTimeAsAFloor(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	start := fs.clock.Now()
	var postedAt time.Time
	fs.onPOST = func(int) { postedAt = fs.clock.Now() }
	rec := Record{TriggeredAt: start.Add(5 * time.Second), TriggeredOnService: fs.now().Add(-4 * time.Second), Prior: &Mark{IDs: []string{}}}
	o := w.follow(context.Background(), fs.account, rec, followOptions{})
	if posts, _ := fs.counts(); posts != 1 || postedAt.Sub(start) < DefaultUncertainGrace {
		t.Fatalf("%d POSTs, the last %s after the follow began (outcome %d, %v); want one, a grace after", posts, postedAt.Sub(start), o.Kind, o.Err)
	}
}

// A record whose trigger's start on the service's clock is unknown (a
// tainted trigger's replacement has no stored record), stamped on a runner
// clock 20 minutes behind: it is sent again only a whole grace after this
// operation began, not at once (deep-run seed 283844).
func TestFollowUnconfirmedWithoutTheServicesStartWaitsAWholeGrace(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	start := fs.clock.Now()
	var postedAt time.Time
	fs.onPOST = func(int) { postedAt = fs.clock.Now() }
	rec := Record{TriggeredAt: start.Add(-20 * time.Minute), Prior: &Mark{IDs: []string{}}}
	o := w.follow(context.Background(), fs.account, rec, followOptions{})
	if posts, _ := fs.counts(); posts != 1 || postedAt.Sub(start) < DefaultUncertainGrace {
		t.Fatalf("%d POSTs, the last %s after the follow began (outcome %d, %v); want one, a grace after", posts, postedAt.Sub(start), o.Kind, o.Err)
	}
	// Its start on the service known, but no answer dated: this operation's time reads, and it is not sent yet.
	fs, w = newFaultyService(t)
	fs.date = "not a date"
	rec = Record{TriggeredAt: fs.clock.Now().Add(-20 * time.Minute), TriggeredOnService: fs.now().Add(-20 * time.Minute), Prior: &Mark{IDs: []string{}}}
	if o := w.follow(context.Background(), fs.account, rec, followOptions{}); o.Kind != NotIdentified {
		t.Errorf("undated answers: outcome %d (%v); want NotIdentified, not sent again", o.Kind, o.Err)
	}
	if posts, _ := fs.counts(); posts != 0 {
		t.Errorf("undated answers: %d POSTs; want none", posts)
	}
}

// An unconfirmed trigger's record followed past the grace, its backup
// queued late and still hidden by a lagging listing: the trigger sent again
// is answered 409, and the backup in progress, once listed above the mark,
// is that earlier trigger's, not another's to wait out before a second
// one (deep-run seed 283844). The destroy that follows it did not queue it.
func TestFollowUnconfirmedAdoptsTheLateBackupItsResendMeets(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, time.Hour)
	fs.runFor = 5 * time.Minute
	late := client.Backup{ID: "bkp_queuedlate000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
	fs.mu.Lock()
	fs.backups = append([]client.Backup{late}, fs.backups...)
	fs.hiddenFor[late.ID] = -1
	fs.onPOST = func(int) { fs.hiddenFor[late.ID] = 1 } // the lag ends as the trigger is sent again
	fs.mu.Unlock()
	rec := Record{TriggeredAt: fs.clock.Now().Add(-DefaultUncertainGrace), Prior: &Mark{IDs: []string{old.ID}}}
	o := w.follow(context.Background(), fs.account, rec, followOptions{RunOptions: RunOptions{WaitOnConflict: true}})
	posts, _ := fs.counts()
	if fs.mu.Lock(); len(fs.backups) != 2 {
		t.Errorf("%d backups queued; want none but the late one", len(fs.backups)-1)
	}
	fs.mu.Unlock()
	if posts != 1 || o.Backup == nil || o.Backup.ID != late.ID || o.Renewed {
		t.Fatalf("%d POSTs, outcome %d (%v), renewed %t, backup %+v; want one POST, %s followed", posts, o.Kind, o.Err, o.Renewed, o.Backup, late.ID)
	}
}

// An unconfirmed trigger's record followed past the grace, its backup
// hidden by a lagging listing through the look and listed by the read
// before sending it again: that backup is the earlier trigger's, followed,
// and nothing is sent (deep-run seed 526915: the read took it for
// another's, the resend met its 409, and the next apply queued a second).
func TestFollowUnconfirmedTakesTheBackupItsResendsReadLists(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, time.Hour)
	late := client.Backup{ID: "bkp_queuedlate000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
	lookEnds := fs.clock.Now().Add(w.set.IdentifyWithin)
	after := 0
	fs.mu.Lock()
	fs.backups = append([]client.Backup{late}, fs.backups...)
	fs.hiddenFor[late.ID] = -1
	fs.onListing = func(int) {
		if !fs.clock.Now().Before(lookEnds) {
			if after++; after == 2 { // the look's last read, then the read before sending it again
				fs.hiddenFor[late.ID] = 0
			}
		}
	}
	fs.mu.Unlock()
	// Its start on the service's clock known, the look lasts IdentifyWithin, the grace being over.
	rec := Record{TriggeredAt: fs.clock.Now().Add(-DefaultUncertainGrace), TriggeredOnService: fs.now().Add(-DefaultUncertainGrace),
		Prior: &Mark{IDs: []string{old.ID}}}
	o := w.follow(context.Background(), fs.account, rec, followOptions{})
	if posts, _ := fs.counts(); posts != 0 || o.Backup == nil || o.Backup.ID != late.ID || o.Renewed {
		t.Fatalf("%d POSTs, outcome %d (%v), renewed %t, backup %+v; want no POST, %s followed", posts, o.Kind, o.Err, o.Renewed, o.Backup, late.ID)
	}
}

// An unconfirmed trigger whose record is followed takes a backup listed
// above the mark read before it, whoever queued it (it started since the
// trigger began), and sends nothing.
func TestFollowUnconfirmedTakesABackupListedSinceIt(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, time.Hour)
	began := fs.clock.Now().Add(-time.Hour)
	fs.mu.Lock()
	since := client.Backup{ID: "bkp_sincethetrigger1", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now().Add(-59 * time.Minute)}
	fs.backups = append([]client.Backup{since}, fs.backups...)
	fs.mu.Unlock()
	o := w.follow(context.Background(), fs.account, Record{TriggeredAt: began, Prior: &Mark{IDs: []string{old.ID}}}, followOptions{})
	if posts, _ := fs.counts(); posts != 0 || o.Kind != NotWaited || o.Backup.ID != since.ID {
		t.Fatalf("%d POSTs, outcome %d (%v); want none, %s", posts, o.Kind, o.Err, since.ID)
	}
}

// A trigger whose POSTs never get an answer, and whose backup never shows,
// is sent max_retries + 1 times, then gives up unidentified.
func TestTriggerSendsAtMostMaxRetriesAgain(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.dropPOSTs, fs.processLater = 100, 1<<30
	_, o := triggerOnce(t, w, context.Background(), fs.account)
	var re *client.RetryError
	if o.Kind != NotIdentified || o.Confirmed || !errors.As(o.Err, &re) {
		t.Fatalf("outcome %d, %v; want an unconfirmed NotIdentified from the retry limit", o.Kind, o.Err)
	}
	// The look comes first in the message: the retry limit is only why it was not sent again.
	if msg := o.Err.Error(); !strings.HasPrefix(msg, "no backup of it was listed in the 1m0s it was looked for, and it was not sent again: giving up") {
		t.Errorf("message %q; want it to say what the look found first", msg)
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
	_, o := triggerOnce(t, w, context.Background(), fs.account)
	if !errors.Is(o.Err, client.ErrConflict) || o.Kind == NotIdentified {
		t.Fatalf("outcome %d, %v; want the 409", o.Kind, o.Err)
	}
	// The read before the trigger; the 500's backup is looked for as long
	// as after a 202 (a listing may lag): 7 listings over IdentifyWithin,
	// then one for the 409.
	if posts, listings := fs.counts(); posts != 2 || listings != 9 {
		t.Errorf("%d POSTs, %d listings; want 2 and 9", posts, listings)
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
		if n == 2 { // the first after the read before the trigger
			cancel()
		}
	}
	tr, o := triggerOnce(t, w, ctx, fs.account)
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
		if n == 2 { // the first after the read before the trigger
			cancel()
		}
	}
	_, o := triggerOnce(t, w, ctx, fs.account)
	if o.Kind != NotIdentified || !o.Confirmed || !errors.Is(o.Err, errNotListed) {
		t.Fatalf("trigger: %v; want a queued unidentified trigger, not listed", o.Err)
	}
}

// A wait whose polls fail ends Unsettled with the polls' error, never as
// a finished backup.
func TestPollingFailureIsUnsettled(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.onListing = func(n int) {
		if n == 3 { // the first poll, after the read before the trigger and the identifying listing
			fs.listingStatus = 500
		}
	}
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true})
	if o.Kind != Unsettled || !serverError(o.Err) || o.Backup == nil || o.Backup.Status != client.StatusRunning {
		t.Fatalf("outcome %d, %v, %+v; want Unsettled with the 500, the backup still running", o.Kind, o.Err, o.Backup)
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

// triggerOnce reads the account's first page, then triggers once.
func triggerOnce(t *testing.T, w *Runner, ctx context.Context, accountID string) (*triggered, Outcome) {
	t.Helper()
	l, err := w.look(ctx, accountID)
	if err != nil {
		t.Fatalf("the read before the trigger: %v", err)
	}
	return w.trigger(ctx, accountID, l, false)
}

// queuedOnce triggers once, as another user of the service would, and
// returns the backup queued; the test fails when none was.
func queuedOnce(t *testing.T, w *Runner, accountID string) client.Backup {
	t.Helper()
	tr, o := triggerOnce(t, w, context.Background(), accountID)
	if tr == nil {
		t.Fatalf("the trigger queued nothing: %d %v", o.Kind, o.Err)
	}
	return tr.Backup
}

// A first page that lists none of what the read before the trigger listed,
// and goes on, proves nothing until the listing shows that read further
// down: the read before came from another listing (a front's, another
// account's), so the account's own old good backups are never taken as the
// trigger's (simulation seed 227).
func TestTriggerTakesNothingFromAPageThatListsNoneOfItsMark(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	for range 5 {
		fs.addOld(client.StatusSuccess, time.Hour)
	}
	fs.mu.Lock()
	fs.pageSize = 2
	fs.rawListing = fs.elsewhere(1)
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified", tr, o.Kind, o.Err)
	}
	if posts, _ := fs.counts(); posts != 1 {
		t.Fatalf("%d POSTs; want 1", posts)
	}
}

// When more backups than a page holds start between the read before a
// trigger and the look for its backup, the listing is read on until it
// shows that read's backups further down; then the first page counts.
func TestTriggerReadsOnWhenItsMarkIsPushedPastThePage(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	for range 3 {
		fs.addOld(client.StatusSuccess, time.Hour)
	}
	fs.mu.Lock()
	fs.pageSize = 2
	fs.onPOST = func(int) { // another pipeline's two backups, ended since the read
		for range 2 {
			done := fs.now()
			fs.backups = append([]client.Backup{{ID: fmt.Sprintf("bkp_since%011d", len(fs.backups)), AccountID: fs.account,
				Status: client.StatusSuccess, CreatedAt: fs.now(), CompletedAt: &done}}, fs.backups...)
		}
	}
	fs.mu.Unlock()
	_, before := fs.counts()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr == nil {
		t.Fatalf("outcome %d (%v); want a backup identified", o.Kind, o.Err)
	}
	if strings.HasPrefix(tr.Backup.ID, "bkp_old") {
		t.Fatalf("identified %s, listed before the trigger", tr.Backup.ID)
	}
	// The read before, the look, and the listing read on to the mark: 2 pages.
	if _, listings := fs.counts(); listings-before != 1+1+2 {
		t.Fatalf("%d listings; want 4", listings-before)
	}
}

// The previous change's floor, listed further down, proves nothing when
// the read before the trigger came from another listing, which listed it
// below a backup of its own: only that read's newest backup anchors what
// is new (simulation seed 493).
func TestRunTakesNothingAboveTheFloorBesideAnotherListingsRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	floor := fs.addOld(client.StatusSuccess, 2*time.Hour)
	for range 3 {
		fs.addOld(client.StatusSuccess, time.Hour)
	}
	stamp, later := floor.CreatedAt.UTC().Format(time.RFC3339), floor.CreatedAt.Add(time.Minute).UTC().Format(time.RFC3339)
	fs.mu.Lock()
	fs.pageSize = 2
	fs.rawListing = `{"data":[{"id":"bkp_elsewhere0000001","account_id":"` + fs.account + `","status":"success","created_at":"` + later + `",` +
		`"completed_at":"` + later + `"},{"id":"` + floor.ID + `","account_id":"` + fs.account + `","status":"success","created_at":"` + stamp +
		`","completed_at":"` + stamp + `"}],"pagination":{"limit":50,"next_cursor":null}}`
	fs.mu.Unlock()
	o := w.backUp(context.Background(), fs.account, RunOptions{Since: &Mark{IDs: []string{floor.ID}}})
	if o.Kind != NotIdentified || o.Backup != nil {
		t.Fatalf("outcome %d, backup %+v (%v); want none identified", o.Kind, o.Backup, o.Err)
	}
}

// A read before the trigger that ends without any backup the previous
// change listed is another listing (a cache's empty page): no trigger is
// sent, for the old backups would read as new above it.
func TestRunRefusesAReadThatLostThePreviousChange(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	floor := fs.addOld(client.StatusSuccess, 2*time.Hour)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.rawListing = `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`
	fs.mu.Unlock()
	o := w.backUp(context.Background(), fs.account, RunOptions{Since: &Mark{IDs: []string{floor.ID}}})
	if posts, _ := fs.counts(); o.Kind != Refused || !errors.Is(o.Err, errReadLost) || posts != 0 {
		t.Fatalf("outcome %d (%v) after %d POSTs; want refused before any", o.Kind, o.Err, posts)
	}
}

// A whole listing read before the trigger that lacks the newest backup
// the previous change listed lags (or is another's): no trigger is sent,
// for an older backup it hid would read as new above it (deep-run seed
// 727310: a 2-minute lag hid the previous change's backup and an older
// one, listed above the read after the POST and taken). One that lists it
// sends the trigger.
func TestRunRefusesAReadWithoutThePreviousChangesNewest(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, 2*time.Hour)
	hidden := fs.addOld(client.StatusSuccess, 3*time.Minute)
	previous := fs.addOld(client.StatusSuccess, time.Minute)
	fs.mu.Lock()
	fs.hiddenFor[hidden.ID], fs.hiddenFor[previous.ID] = 1, 1
	fs.mu.Unlock()
	since := &Mark{IDs: []string{previous.ID, hidden.ID, old.ID}}
	o := w.backUp(context.Background(), fs.account, RunOptions{Since: since})
	if posts, _ := fs.counts(); o.Kind != Refused || !errors.Is(o.Err, errReadLost) || posts != 0 {
		t.Fatalf("outcome %d (%v) after %d POSTs; want refused before any", o.Kind, o.Err, posts)
	}
	o = w.backUp(context.Background(), fs.account, RunOptions{Since: since}) // the listing caught up
	if o.Backup == nil || !strings.HasPrefix(o.Backup.ID, "bkp_new") {
		t.Fatalf("outcome %d (%v), backup %+v; want the trigger's own", o.Kind, o.Err, o.Backup)
	}
}

// An empty read before the trigger is absence, proven only by durations:
// what is listed above it ran one at a time since, so an account's old
// backups, listed after a front's or a cache's empty page, are not new.
func TestTriggerTakesNothingAfterAnEmptyReadOfOldBackups(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour) // ran a minute
	fs.mu.Lock()
	fs.rawListing = `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
}

// The read before a trigger answered from a cache's store, an empty page
// held ten minutes (its Age), hides what started since: nothing is sent, and
// the error names the cache. An answer a cache revalidated (Age 1) is read.
func TestTriggerSendsNothingAfterACachedRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.rawListing, fs.age = `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`, "600"
	fs.mu.Unlock()
	o := w.run(context.Background(), fs.account, RunOptions{})
	var cached *cachedReadError
	if posts, _ := fs.counts(); posts != 0 || o.Kind != Refused || !errors.As(o.Err, &cached) || cached.Stored != 10*time.Minute ||
		!strings.Contains(o.Err.Error(), "cache that had held it for 10m0s") {
		t.Fatalf("%d POSTs, outcome %d (%v); want none sent, the cached read refused", posts, o.Kind, o.Err)
	}
	fs.mu.Lock()
	fs.age = "1"
	fs.mu.Unlock()
	if o := w.run(context.Background(), fs.account, RunOptions{}); o.Kind == Refused {
		t.Fatalf("a revalidated read refused: %v", o.Err)
	}
	if posts, _ := fs.counts(); posts != 1 {
		t.Fatalf("%d POSTs after a revalidated read; want one", posts)
	}
}

// On an account that truly had no backup, the trigger's own is identified
// at once, and, not identified then, by a look in the minutes after the
// read: a later apply's look cannot tell it from an old backup a cache's
// empty page hid, and fails closed.
func TestAnEmptyAccountsFirstBackupIsIdentified(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = 30 * time.Second
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr == nil || !strings.HasPrefix(tr.Backup.ID, "bkp_new") {
		t.Fatalf("outcome %d (%v); want the new backup identified", o.Kind, o.Err)
	}
	r := Record{TriggeredAt: fs.clock.Now(), Prior: &Mark{IDs: []string{}}, Confirmed: true}
	fs.clock.Advance(time.Minute) // it ran 30 s, and succeeded
	if o := w.follow(context.Background(), fs.account, r, followOptions{}); o.Backup == nil || o.Backup.ID != tr.Backup.ID {
		t.Fatalf("followed %+v (%v); want %s", o.Backup, o.Err, tr.Backup.ID)
	}
	fs.clock.Advance(time.Hour)
	if o := w.follow(context.Background(), fs.account, r, followOptions{}); o.Backup != nil || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("followed %+v (%v) an hour later; want none identified, the listing lost", o.Backup, o.Err)
	}
	r.TriggeredAt = fs.clock.Now().Add(-10 * time.Second) // a record whose read came after it ran
	if o := w.follow(context.Background(), fs.account, r, followOptions{}); o.Backup != nil {
		t.Fatalf("followed %s, which ran longer than the time since the read", o.Backup.ID)
	}
}

// The listing read on to show the read further down is one pass: a refused
// cursor ends it unproven, for a pass started again could take another
// listing's first page, which lists the read, as this one's next page.
func TestTriggerProvesNothingAcrossARefusedCursor(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	for range 3 {
		fs.addOld(client.StatusSuccess, time.Hour)
	}
	other := fs.elsewhere(1)
	fs.mu.Lock()
	fs.pageSize, fs.refuseCursors, fs.rawListing = 2, true, other
	fs.onListing = func(n int) {
		// The read before, the look (a first page that goes on), the proof's first page, its refused
		// cursor: a pass started again would read the other listing's first page next.
		if n == 5 {
			fs.rawListing = other
		}
	}
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified", tr, o.Kind, o.Err)
	}
}

// A listing that ends without what the read before the trigger listed has
// shown that the read came from another listing: no later page is taken
// for proof, though that other listing, read again, shows a backup above
// it (simulation seed 815).
func TestTriggerStopsLookingOnceTheListingLostItsRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.misreadThenAt(3) // the read before, the service's own listing, then the other one's again
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
	if _, listings := fs.counts(); listings != 2 {
		t.Fatalf("%d listings; want 2: none after the one that lost the read", listings)
	}
}

// A pass that reads the whole listing without what the read before the
// trigger listed has shown, as a listing that ends without it does, that
// the read came from another listing (seed 815, with short pages).
func TestTriggerStopsLookingOnceAWholePassLacksItsRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, 2*time.Hour)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.pageSize = 1
	fs.mu.Unlock()
	fs.misreadThenAt(6) // the read before, the look, a pass of three pages, then the other listing again
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
	if _, listings := fs.counts(); listings != 5 {
		t.Fatalf("%d listings; want 5: none after the pass that lacked the read", listings)
	}
}

// misreadThenAt answers the read before the trigger with another host's
// history of one backup, and the listing numbered at with its history of
// two: a backup of that host's above the read.
func (fs *faultyService) misreadThenAt(at int) {
	read, later := fs.elsewhere(1), fs.elsewhere(2)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rawListing = read
	fs.onListing = func(n int) {
		if n == at {
			fs.rawListing = later
		}
	}
}

// A pass reading on that lists the read's newest backup but never the
// first page's own backups, and ends, is another host's listing: the look
// stops, though that listing, read again, shows a backup above the read
// (deep-run seed 306878).
func TestTriggerStopsLookingOnceAPassLacksTheFirstPage(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	read, later := fs.elsewhere(1), fs.elsewhere(2)
	fs.mu.Lock()
	fs.pageSize, fs.rawListing = 1, read
	fs.onListing = func(n int) {
		if n >= 3 { // the read before, the look (the service's first page), then the other listing
			fs.rawListing = later
		}
	}
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
	if _, listings := fs.counts(); listings != 3 {
		t.Fatalf("%d listings; want 3: none after the pass that lacked the first page", listings)
	}
}

// A retake's read that lists nothing (a cache's empty page) proves no
// absence by the backup it retakes: a backup listed above that one, taken
// by another before the read, is not the retake's, though the trigger's
// answer was lost and the retake looks for its own in the listing.
func TestRetakeTakesNothingAboveItsBackupAfterAnEmptyRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	failed := fs.addOld(client.StatusFailed, 40*time.Minute)
	other := fs.addOld(client.StatusSuccess, 20*time.Minute) // ran a minute
	fs.mu.Lock()
	fs.runFor = 10 * time.Minute
	fs.rawListing = `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`
	fs.resetPOSTs = 1
	fs.mu.Unlock()
	rec := Record{Phase: phaseIdentified, BackupID: failed.ID, Status: failed.Status, TriggeredAt: failed.CreatedAt}
	o := w.renew(context.Background(), fs.account, RunOptions{}, rec.BackupID)
	if o.Backup != nil && o.Backup.ID == other.ID {
		t.Fatalf("run = %d %+v %v; took %s, another's backup listed before the retake's read", o.Kind, o.Backup, o.Err, other.ID)
	}
	next := rec.after(o)
	if next.Prior == nil || len(next.Prior.IDs) != 2 || next.Prior.IDs[0] != "" || next.Prior.IDs[1] != failed.ID {
		t.Fatalf("record after = %s; want its read shown empty, then %s", next, failed.ID)
	}
	fs.clock.Advance(time.Hour) // the next apply, once the retake's own backup ended
	if o := w.follow(context.Background(), fs.account, next, followOptions{}); o.Backup != nil && o.Backup.ID == other.ID {
		t.Fatalf("followed %+v (%v); took %s, another's backup listed before the retake's read", o.Backup, o.Err, other.ID)
	}
}

// A later apply's look cannot prove an empty read's absence: by then the
// account's old backups, short ones, fit the time since, and the oldest
// listed would count as the trigger's (a cache's empty page, an answer
// lost).
func TestALaterLookProvesNoEmptyRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	for i := range 5 {
		fs.addOld(client.StatusSuccess, time.Duration(5-i)*10*time.Minute) // each ran a minute
	}
	fs.mu.Lock()
	fs.rawListing = `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`
	fs.resetPOSTs, fs.runFor = 1, time.Minute
	fs.mu.Unlock()
	o := w.backUp(context.Background(), fs.account, RunOptions{})
	if o.Kind != NotIdentified {
		t.Fatalf("run = %d %+v (%v); want none identified", o.Kind, o.Backup, o.Err)
	}
	next := Record{}.after(o)
	fs.clock.Advance(time.Hour)
	if o := w.follow(context.Background(), fs.account, next, followOptions{}); o.Backup != nil || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("followed %+v (%v) an hour later; want none identified, the listing lost", o.Backup, o.Err)
	}
}

// A listing that ends without a backup an earlier page of the look showed
// is another listing, though it lists the read before the trigger: the
// read came from it too, and its new backup is that history's (deep-run
// seed 332449: the service's own page, which went on without the read and
// whose cursor the other host refused, then the other's with a backup of
// its own above the read).
func TestTriggerTakesNothingFromAListingThatLostAPageItShowed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.pageSize, fs.refuseCursors = 1, true
	fs.mu.Unlock()
	fs.misreadThenAt(5) // the read before, the service's page, its proof (page 1, then a refused cursor), then the other's again
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
}

// A page that contradicts itself, met while looking for the trigger's
// backup, ends the look: the next look's page, another host's history
// that lists a backup above the read (itself that host's), is not believed
// (deep-run seed 524455: the service's pages, out of order by a record
// dated 30 days late, were refused, and another host's backup was taken).
func TestLookEndsAtAPageThatContradictsItself(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	read, later := fs.elsewhere(1), fs.elsewhere(2)
	disordered := `{"data":[` +
		fmt.Sprintf(`{"id":"bkp_old0000000000001","account_id":%q,"status":"success","created_at":"2001-01-01T00:00:00Z","completed_at":"2001-01-01T00:01:00Z"},`, fs.account) +
		fmt.Sprintf(`{"id":"bkp_old0000000000002","account_id":%q,"status":"success","created_at":"2001-02-01T00:00:00Z","completed_at":"2001-02-01T00:01:00Z"}`, fs.account) +
		`],"pagination":{"limit":50,"next_cursor":null}}`
	fs.mu.Lock()
	fs.rawListing = read
	fs.onListing = func(n int) {
		switch n {
		case 2:
			fs.rawListing = disordered
		case 3:
			fs.rawListing = later
		}
	}
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, errListingContradicts) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the look ended at the page that contradicts itself", tr, o.Kind, o.Err)
	}
	if posts, listings := fs.counts(); posts != 1 || listings != 2 {
		t.Errorf("%d POSTs, %d listings; want one POST, and no look after that page", posts, listings)
	}
}

// A trigger stopped after its POST, its backup not identified, is dated by
// the last page it read, not only by the read before it: a stopped
// destroy's record stands for resume_within from its stop on the service's
// clock too (deep-run seed 560472: dated by the trigger's start, two
// minutes before the stop, the record no longer stood a second after it,
// and the next destroy queued a second backup).
func TestStoppedTriggerIsDatedByItsLastRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs.mu.Lock()
	fs.dropPOSTs, fs.processLater = 1, 1000 // no answer, and nothing listed
	fs.onPOST = func(int) { cancel() }      // Ctrl-C while the POST is on its way
	fs.mu.Unlock()
	l, err := w.look(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	fs.clock.Advance(time.Minute)
	_, o := w.trigger(ctx, fs.account, l, false)
	if o.Kind != NotIdentified || o.At.Service.IsZero() || !o.At.Service.After(o.TriggeredOnService) {
		t.Fatalf("outcome %d (%v), dated %v, triggered on the service at %v; want it dated by the look after the POST", o.Kind, o.Err, o.At.Service, o.TriggeredOnService)
	}
}

// So is one whose backup the listing never shows, after a 202 or after a
// 409 that followed an unknown outcome: each looks for it, and its last
// page dates it, not the read before the POST.
func TestUnidentifiedTriggerIsDatedByItsLastLook(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{"202", "409 after an unknown outcome"} {
		fs, w := newFaultyService(t)
		fs.addOld(client.StatusSuccess, time.Hour)
		var last time.Time // the service's time at the last listing
		fs.mu.Lock()
		fs.lag = -1 // never listed
		fs.onListing = func(int) { last = fs.now() }
		if answer != "202" {
			fs.resetPOSTs = 1 // processed, unanswered; sent again, it meets its own backup's 409
		}
		fs.mu.Unlock()
		l, err := w.look(context.Background(), fs.account)
		if err != nil {
			t.Fatal(err)
		}
		_, o := w.trigger(context.Background(), fs.account, l, false)
		fs.mu.Lock()
		lastListed := last
		fs.mu.Unlock()
		if o.Kind != NotIdentified || !o.At.Service.Truncate(time.Second).Equal(lastListed) || !lastListed.After(o.TriggeredOnService) {
			t.Errorf("%s: outcome %d (%v), dated %v, triggered on the service at %v; want it dated by its last look, at %v", answer, o.Kind, o.Err, o.At.Service, o.TriggeredOnService, lastListed)
		}
		if posts, _ := fs.counts(); answer != "202" && posts != 2 {
			t.Errorf("%s: %d POSTs; want 2, the second answered 409", answer, posts)
		}
	}
}

// A wait ends at a listing that misreports its backup (a page out of
// order, one that ends without it): read past, another host's next page
// could follow that host's backup to its success (deep-run seeds 546677
// and 550739, when a wait read past up to 3 of them).
func TestWaitEndsAtAMisreport(t *testing.T) {
	t.Parallel()
	for _, misreport := range []string{"out of order", "without the backup"} {
		fs, w := newFaultyService(t)
		fs.addOld(client.StatusSuccess, time.Hour)
		fs.runFor = time.Minute
		b := client.Backup{ID: "bkp_waited0000000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}
		page := fs.elsewhere(1) // ends without the backup
		if misreport == "out of order" {
			page = `{"data":[` +
				fmt.Sprintf(`{"id":"bkp_old0000000000001","account_id":%q,"status":"success","created_at":"2001-01-01T00:00:00Z","completed_at":"2001-01-01T00:01:00Z"},`, fs.account) +
				fmt.Sprintf(`{"id":"bkp_old0000000000002","account_id":%q,"status":"success","created_at":"2001-02-01T00:00:00Z","completed_at":"2001-02-01T00:01:00Z"}`, fs.account) +
				`],"pagination":{"limit":50,"next_cursor":null}}`
		}
		fs.mu.Lock()
		fs.backups = append([]client.Backup{b}, fs.backups...)
		fs.rawListing = page
		fs.mu.Unlock()
		o := w.waitFrom(context.Background(), fs.account, &b, nil, fs.clock.Now(), func(EventKind, client.Backup, string) {})
		if _, listings := fs.counts(); o.Kind != Unsettled || listings != 1 {
			t.Errorf("%s: outcome %d (%v) after %d listings; want the wait ended at the first", misreport, o.Kind, o.Err, listings)
		}
	}
}

// A wait reads its backup past the first page from that page's cursor, in
// one pass: a pass started again from a first page, which another host may
// answer with its own history, took that history's backup, followed to its
// success (deep-run seed 358686).
func TestWaitReadsOnFromItsOwnFirstPage(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, 2*time.Hour)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.pageSize, fs.refuseCursors = 1, true
	fs.onListing = func(n int) {
		if n == 2 {
			fs.rawListing = fs.elsewhere(1) // another host's first page, had the pass started again
		}
	}
	fs.mu.Unlock()
	rec := Record{Phase: phaseIdentified, BackupID: "bkp_elsewhere0000001", Status: client.StatusRunning, TriggeredAt: fs.clock.Now()}
	o := w.follow(context.Background(), fs.account, rec, followOptions{RunOptions: RunOptions{WaitForCompletion: true}})
	if o.Kind == Succeeded || o.Backup != nil && o.Backup.Status == client.StatusSuccess {
		t.Fatalf("followed = %d %+v (%v); want the wait stopped, not another listing's backup followed to its success", o.Kind, o.Backup, o.Err)
	}
	if _, listings := fs.counts(); listings != 2 {
		t.Errorf("%d listings; want 2: the first page, then its cursor", listings)
	}
}

// The read a conflict's wait ends on is a read before the next trigger: a
// listing after that trigger's POST that ends without its newest backup is
// another listing (deep-run seed 570657: the read before the first POST
// came from another host's history, the wait read the service's, and the
// other host's listing after the second POST, which holds the first read's
// newest backup, had its new backup taken as the trigger's).
func TestTriggerAfterAConflictBelievesNoListingWithoutTheWaitsRead(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.runFor = time.Minute
	fs.mu.Lock()
	fs.backups = append([]client.Backup{{ID: "bkp_running000000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}}, fs.backups...)
	fs.rawListing = fs.elsewhere(1) // the read before the trigger: another host's history
	fs.onPOST = func(n int) {
		if n == 2 {
			fs.rawListing = fs.elsewhere(2) // that host again, with a new backup above the first read's
		}
	}
	fs.mu.Unlock()
	o := w.backUp(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: true})
	if o.Kind == Succeeded || o.Backup != nil && strings.HasPrefix(o.Backup.ID, "bkp_elsewhere") {
		t.Fatalf("outcome %d, backup %+v (%v); want none identified: the listing lacks the service's backup the wait read", o.Kind, o.Backup, o.Err)
	}
	if !errors.Is(o.Err, ErrListingLost) {
		t.Errorf("outcome %d (%v); want ErrListingLost", o.Kind, o.Err)
	}
	if posts, _ := fs.counts(); posts != 2 {
		t.Errorf("%d POSTs; want 2 (the 409, then the trigger)", posts)
	}
}

// A trigger whose look met another listing (ErrListingLost) after a read
// of the service's own is found by a later look at the service's listing:
// what its message tells the user.
func TestLostListingsTriggerIsFoundByALaterLook(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, time.Hour)
	fs.mu.Lock()
	fs.onPOST = func(int) { fs.rawListing = fs.elsewhere(1) }
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	if tr != nil || o.Kind != NotIdentified || !errors.Is(o.Err, ErrListingLost) {
		t.Fatalf("triggered %+v, outcome %d (%v); want none identified, the listing lost", tr, o.Kind, o.Err)
	}
	rec, _ := Record{}.Saved(o, Saving{Creating: true})
	got := w.follow(context.Background(), fs.account, rec, followOptions{})
	if queued := fs.queuedIDs(); got.Backup == nil || len(queued) != 1 || got.Backup.ID != queued[0] {
		t.Errorf("followed %d %+v (%v), queued %v; want the one backup queued found", got.Kind, got.Backup, got.Err, queued)
	}
}

// A 202 whose backup is listed below backups listed before it (a backup
// dated in the future tops the listing) is not identified, and the error
// names the backup listed since, so that the user can look at the clocks
// (a helper's user path: the mock's clock control left a backup dated
// ahead, and every later destroy said only that none was listed).
func TestUnidentifiedTriggerNamesABackupListedBelow(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, -time.Hour) // dated an hour ahead
	fs.mu.Lock()
	fs.byCreated = true
	fs.mu.Unlock()
	tr, o := triggerOnce(t, w, context.Background(), fs.account)
	queued := fs.queuedIDs()
	if tr != nil || o.Kind != NotIdentified || len(queued) != 1 || !strings.Contains(fmt.Sprint(o.Err), queued[0]) {
		t.Fatalf("triggered %+v, outcome %d (%v), queued %v; want none identified, the error naming the backup listed below", tr, o.Kind, o.Err, queued)
	}
}

// A resend after an unknown outcome that meets a 409 whose backup is
// listed below backups listed before it (it may be the earlier trigger's)
// stops there, not identified: it is not waited out as another's and sent
// again (deep-run seed 601591: the outcome not identified still wrapped the
// 409, so the run waited it out, and the next apply queued a second backup).
func TestResendStopsAtAConflictItCannotPlace(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.runFor = time.Minute
	l := datedAhead(t, fs, w)
	fs.mu.Lock()
	fs.backups = append([]client.Backup{{ID: "bkp_earlier000000001", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now()}}, fs.backups...)
	fs.mu.Unlock()
	o := w.runFrom(context.Background(), fs.account, RunOptions{WaitOnConflict: true, afterUnknown: true}, l)
	if posts, _ := fs.counts(); o.Kind != NotIdentified || posts != 1 {
		t.Errorf("outcome %d (%v) after %d POSTs; want none identified after the one 409, nothing waited out or sent again", o.Kind, o.Err, posts)
	}
}

// A trigger whose answer was lost is not sent again while a backup listed
// since below the backups listed before it may be its own, even where a
// short first page hides it: the listing is read on until it has shown
// every backup of the mark (deep-run seed 619763: pages of one hid the
// trigger's backup, stamped below a backup dated ahead, and the resend
// queued a second).
func TestResendReadsOnPastAShortPage(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, 2*time.Hour)
	l := datedAhead(t, fs, w)
	fs.mu.Lock()
	fs.pageSize, fs.resetPOSTs = 1, 1 // pages of one from now on; the POST processed, its answer lost
	fs.mu.Unlock()
	tr, o := w.trigger(context.Background(), fs.account, l, false)
	if posts, _ := fs.counts(); tr != nil || o.Kind != NotIdentified || posts != 1 {
		t.Fatalf("triggered %+v, outcome %d (%v), %d POSTs; want none identified and the trigger not sent again", tr, o.Kind, o.Err, posts)
	}
	if queued := fs.queuedIDs(); len(queued) != 1 || !strings.Contains(fmt.Sprint(o.Err), queued[0]) {
		t.Errorf("%v; want the error to name the backup listed below, %v", o.Err, queued)
	}
}

// The same when a later apply sends again a trigger whose outcome was
// unknown: its backup, stamped below a backup dated ahead past a short
// first page, stops the resend.
func TestFollowResendReadsOnPastAShortPage(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	fs.addOld(client.StatusSuccess, 2*time.Hour)
	l := datedAhead(t, fs, w)
	fs.mu.Lock()
	fs.queue() // the trigger's POST, processed, its answer lost
	fs.pageSize = 1
	fs.mu.Unlock()
	rec := Record{TriggeredAt: fs.clock.Now().Add(-DefaultUncertainGrace), Prior: l.mark}
	o := w.follow(context.Background(), fs.account, rec, followOptions{})
	if posts, _ := fs.counts(); o.Kind != NotIdentified || posts != 0 {
		t.Fatalf("outcome %d (%v), %d POSTs; want none identified and the trigger not sent again", o.Kind, o.Err, posts)
	}
	if queued := fs.queuedIDs(); len(queued) != 1 || !strings.Contains(fmt.Sprint(o.Err), queued[0]) {
		t.Errorf("%v; want the error to name the backup listed below, %v", o.Err, queued)
	}
}

// The pass past a short first page counts each backup of the mark once: a
// page that lists again one the first page listed (an untrusted service)
// does not stand for one it has not shown, and the backup listed since
// among them is still found.
func TestResendPassCountsEachBackupOnce(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, time.Hour)
	ahead := fs.addOld(client.StatusSuccess, -time.Hour)
	top := fs.addOld(client.StatusSuccess, -2*time.Hour)
	fs.mu.Lock()
	fs.byCreated = true
	fs.mu.Unlock()
	l, err := w.look(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	since := client.Backup{ID: "bkp_since00000000001", AccountID: fs.account, Status: client.StatusSuccess, CreatedAt: fs.now()}
	item := func(b client.Backup) string {
		return fmt.Sprintf(`{"id":%q,"account_id":%q,"status":"success","created_at":%q,"completed_at":%q}`,
			b.ID, b.AccountID, b.CreatedAt.Format(time.RFC3339), b.CreatedAt.Add(time.Minute).Format(time.RFC3339))
	}
	fs.mu.Lock()
	fs.pageSize = 1 // the first page lists top alone, and goes on
	fs.onListing = func(n int) {
		if n == 3 { // the page after it lists top again, then ahead, the backup listed since, and old
			fs.rawListing = `{"data":[` + item(top) + "," + item(ahead) + "," + item(since) + "," + item(old) + `],"pagination":{"limit":50,"next_cursor":null}}`
		}
	}
	fs.mu.Unlock()
	p, err := w.c.FirstBackupsPage(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.hiddenBelow(context.Background(), rule{AccountID: fs.account, Mark: l.mark}, p)
	if b == nil || b.ID != since.ID {
		t.Errorf("hiddenBelow = %+v, %v; want %s, listed among the mark's backups", b, err, since.ID)
	}
}

// A followed trigger the service accepted, whose backup is listed below
// the backups listed before it (a clock set back since a backup was dated
// ahead), stays not identified, and the error names that backup and how to
// record it (a helper's user path: later applies named nothing).
func TestFollowAcceptedNamesABackupListedBelow(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	l := datedAhead(t, fs, w)
	below := fs.addOld(client.StatusSuccess, 0)
	rec := Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now(), Confirmed: true, Prior: l.mark}
	o := w.follow(context.Background(), fs.account, rec, followOptions{})
	if o.Kind != NotIdentified || !strings.Contains(fmt.Sprint(o.Err), below.ID) || !strings.Contains(fmt.Sprint(o.Err), "terraform import") {
		t.Errorf("outcome %d (%v); want none identified, the error naming %s and how to record it", o.Kind, o.Err, below.ID)
	}
	if posts, _ := fs.counts(); posts != 0 {
		t.Errorf("%d POSTs; want none", posts)
	}
}

// A lost answer's trigger whose read before it is sent again fails sends
// nothing and stays not identified, its record kept: refused, it carried
// only its floor, and the next apply sent a new trigger while the first
// one's backup was listed (deep-run seed 735552: a second backup).
func TestFollowUnconfirmedKeepsItsTriggerWhenTheReadBeforeTheResendFails(t *testing.T) {
	t.Parallel()
	play := func(failListing int) (Outcome, int, int) {
		fs, w := newFaultyService(t)
		old := fs.addOld(client.StatusSuccess, time.Hour)
		postedAfter := 0
		fs.onListing = func(n int) {
			if n == failListing {
				fs.listingStatus = 500
			}
		}
		fs.onPOST = func(int) { postedAfter = fs.listings }
		rec := Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now().Add(-2 * DefaultUncertainGrace), Prior: &Mark{IDs: []string{old.ID}}}
		o := w.follow(context.Background(), fs.account, rec, followOptions{})
		posts, _ := fs.counts()
		return o, posts, postedAfter
	}
	_, posts, readBefore := play(0) // the listing read just before the POST is the read before the resend
	if posts != 1 {
		t.Fatalf("%d POSTs past the grace; want the trigger sent again", posts)
	}
	o, posts, _ := play(readBefore)
	if posts != 0 || o.Kind != NotIdentified || o.TriggeredAt.IsZero() || !serverError(o.Err) {
		t.Fatalf("outcome %d (%v), triggered at %v, %d POSTs; want nothing sent, the trigger kept not identified", o.Kind, o.Err, o.TriggeredAt, posts)
	}
}
