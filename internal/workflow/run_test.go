package workflow

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// runFixture is a mock on a manual clock and a client whose waits move
// that clock: a backup's whole life passes in no real time.
type runFixture struct {
	*fixture
	mockClock *clocktest.Virtual
}

func newRunFixture(t *testing.T) *runFixture {
	t.Helper()
	mc := clocktest.NewVirtual(time.Now().Truncate(time.Second))
	f := newFixture(t, mockservice.Options{Seed: 31, Clock: mc, PendingFor: 10 * time.Second, RunningFor: 20 * time.Second}, nil)
	return &runFixture{fixture: f, mockClock: mc}
}

// advancingClock is the fixture's fake clock, moving the mock's clock by
// every wait too.
type advancingClock struct {
	*clocktest.Virtual
	mock *clocktest.Virtual
}

func (c advancingClock) After(d time.Duration) <-chan time.Time {
	c.mock.Advance(d)
	return c.Virtual.After(d)
}

func (f *runFixture) client(t *testing.T) *Runner {
	t.Helper()
	c := newRunner(t, client.Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: advancingClock{f.clock, f.mockClock}}, Settings{})
	return c
}

func TestRunBackupWaitsAndReportsEachStep(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	var events []Event
	o := f.client(t).run(context.Background(), acct, RunOptions{
		WaitForCompletion: true, Progress: func(e Event) { events = append(events, e) },
	})
	b, err := o.Backup, o.Err
	if err != nil || b.Status != client.StatusSuccess || b.CompletedAt == nil {
		t.Fatalf("RunBackup = %+v, %v; want a finished, successful backup", b, err)
	}
	var kinds []EventKind
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	want := []EventKind{EventQueued, EventStatus, EventStatus, EventDone}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if events[1].Previous != client.StatusPending || events[1].Backup.Status != client.StatusRunning || events[1].Elapsed < 10*time.Second {
		t.Errorf("first status change %+v, want pending -> running after the 10 s the mock keeps it pending", events[1])
	}
	if n := f.srv.BackupsQueued(acct); n != 1 {
		t.Errorf("%d backups queued", n)
	}
	// The first 20 s, every 2 s; then a tenth of the time waited (the
	// limiter's pacing of a few microseconds at the fixture's rate left out).
	var waits []time.Duration
	for _, d := range f.clock.Waits() {
		if d >= time.Millisecond {
			waits = append(waits, d)
		}
	}
	if len(waits) < 13 || waits[0] != 2*time.Second || waits[10] != 2*time.Second || waits[11] != 2200*time.Millisecond || waits[12] != 2420*time.Millisecond {
		t.Errorf("poll intervals %v, want 2s ×11, 2.2s, 2.42s, …", waits)
	}
}

func TestPollIntervalIsATenthOfTheWait(t *testing.T) {
	t.Parallel()
	p := defaultPoll
	for _, c := range []struct{ waited, want time.Duration }{
		{0, 2 * time.Second}, {19 * time.Second, 2 * time.Second}, {43 * time.Second, 4300 * time.Millisecond},
		{5 * time.Minute, 30 * time.Second}, {3 * time.Hour, 30 * time.Second},
	} {
		if got := p.interval(c.waited); got != c.want {
			t.Errorf("after %s: %s, want %s", c.waited, got, c.want)
		}
	}
	if (pollSettings{}).orDefault() != defaultPoll {
		t.Error("zero settings do not fall back to the defaults")
	}
}

// The end of a backup is noticed within max(2 s, 10% of the time waited),
// until the 30 s cap (past 5 minutes, within 30 s).
func TestPollNoticesTheEndWithinATenthOfTheWait(t *testing.T) {
	t.Parallel()
	for _, took := range []time.Duration{3 * time.Second, 11 * time.Second, 43 * time.Second, 2 * time.Minute, 7 * time.Minute, 95 * time.Minute} {
		mc := clocktest.NewVirtual(time.Now().Truncate(time.Second))
		f := &runFixture{fixture: newFixture(t, mockservice.Options{Seed: 32, Clock: mc, PendingFor: took / 4, RunningFor: took - took/4}, nil), mockClock: mc}
		var noticed time.Duration
		o := f.client(t).run(context.Background(), f.srv.AccountIDs()[0], RunOptions{
			WaitForCompletion: true,
			Progress: func(e Event) {
				if e.Kind == EventDone {
					noticed = e.Elapsed
				}
			},
		})
		b, err := o.Backup, o.Err
		if err != nil || b.Status != client.StatusSuccess {
			t.Fatalf("%s: %v %+v", took, err, b)
		}
		late := noticed - took
		bound := min(max(2*time.Second, noticed/10), defaultPoll.Max)
		if late < 0 || late > bound {
			t.Errorf("a backup of %s was noticed after %s: %s late, bound %s", took, noticed, late, bound)
		}
		t.Logf("%s backup: noticed %s late, %d polls", took, late, f.srv.Requests(mockservice.RouteListBackups))
	}
}

func TestRunBackupFailedIsTyped(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AddAccount(mockservice.AccountSpec{FailWith: "export refused"})
	o := f.client(t).run(context.Background(), acct, RunOptions{WaitForCompletion: true})
	if o.Kind != Failed || o.Backup.Status != client.StatusFailed {
		t.Fatalf("outcome %d, %v, want Failed of a failed backup", o.Kind, o.Err)
	}
}

// stuckClock never ends a wait: only the context does.
type stuckClock struct{}

func (stuckClock) Now() time.Time                       { return time.Now() }
func (stuckClock) After(time.Duration) <-chan time.Time { return nil }

// A timeout reads the status once more, so that the error tells the truth:
// the backup last seen pending has started running since.
func TestWaitTimeoutRereadsStatus(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	tr, o := triggerOnce(t, f.client(t), context.Background(), acct)
	if tr == nil || tr.Backup.Status != client.StatusPending {
		t.Fatalf("trigger = %+v, %v", tr, o.Err)
	}
	f.mockClock.Advance(15 * time.Second) // pending 10 s, then running
	c := newRunner(t, client.Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: stuckClock{}}, Settings{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	o = c.follow(ctx, tr.Backup.AccountID, Record{BackupID: tr.Backup.ID, Status: tr.Backup.Status, TriggeredAt: tr.Backup.CreatedAt}, followOptions{RunOptions: RunOptions{WaitForCompletion: true}})
	if o.Kind != Unsettled || !errors.Is(o.Err, context.DeadlineExceeded) {
		t.Fatalf("outcome %d, %v, want Unsettled for the deadline", o.Kind, o.Err)
	}
	if o.Backup.Status != client.StatusRunning {
		t.Errorf("the timeout reports %q, want the status read after it: running", o.Backup.Status)
	}
}

// Cancellation stops a wait at once and says which backup goes on.
func TestWaitForBackupStopsOnCancel(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	tr, o := triggerOnce(t, f.client(t), context.Background(), acct)
	if tr == nil {
		t.Fatal(o.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = f.client(t).follow(ctx, acct, Record{BackupID: tr.Backup.ID, Status: tr.Backup.Status, TriggeredAt: tr.Backup.CreatedAt}, followOptions{RunOptions: RunOptions{WaitForCompletion: true}})
	if o.Kind != Unsettled || !errors.Is(o.Err, context.Canceled) || o.Backup.ID != tr.Backup.ID {
		t.Fatalf("the resumed wait after cancel = %+v, %v; want Interrupted for %s", o.Backup, o.Err, tr.Backup.ID)
	}
}

// With on_conflict = wait, a backup in progress is waited for, then a new
// one is queued; the running one is never adopted.
func TestRunBackupWaitsOutAConflict(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	first, o := triggerOnce(t, c, context.Background(), acct)
	if first == nil {
		t.Fatal(o.Err)
	}
	var conflict *Event
	o = c.run(context.Background(), acct, RunOptions{WaitOnConflict: true, Progress: func(e Event) {
		if e.Kind == EventConflict {
			conflict = &e
		}
	}})
	b, err := o.Backup, o.Err
	if err != nil || b.ID == first.Backup.ID {
		t.Fatalf("RunBackup = %+v, %v; want a new backup after %s", b, err, first.Backup.ID)
	}
	if conflict == nil || conflict.Backup.ID != first.Backup.ID {
		t.Errorf("no conflict event naming %s: %+v", first.Backup.ID, conflict)
	}
	if n := f.srv.BackupsQueued(acct); n != 2 {
		t.Errorf("%d backups queued, want 2", n)
	}

	// With on_conflict = fail, the 409 comes back as it is.
	if _, o := triggerOnce(t, c, context.Background(), acct); !errors.Is(o.Err, client.ErrConflict) {
		t.Fatalf("a second trigger while one runs: %v, want a 409", err)
	}
}

// A long wait is not silent: with no change of status for a minute, an
// EventStatus with no change says the wait goes on, and one for another's backup says so
// as a conflict again.
func TestALongWaitSaysItGoesOnEveryMinute(t *testing.T) {
	t.Parallel()
	mc := clocktest.NewVirtual(time.Now().Truncate(time.Second))
	f := &runFixture{fixture: newFixture(t, mockservice.Options{Seed: 31, Clock: mc, PendingFor: time.Second, RunningFor: 200 * time.Second}, nil), mockClock: mc}
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	first, o := triggerOnce(t, c, context.Background(), acct)
	if first == nil {
		t.Fatal(o.Err)
	}
	var waiting, conflicts []Event
	o = c.run(context.Background(), acct, RunOptions{WaitOnConflict: true, WaitForCompletion: true, Progress: func(e Event) {
		switch e.Kind {
		case EventStatus:
			if e.Previous == e.Backup.Status {
				waiting = append(waiting, e)
			}
		case EventConflict:
			conflicts = append(conflicts, e)
		}
	}})
	if o.Kind != Succeeded {
		t.Fatalf("run = %+v, want a success", o)
	}
	// 200 s of another's backup: told at once, then after each minute of it.
	if len(conflicts) != 4 || conflicts[0].Elapsed >= StillWaitingEvery || conflicts[3].Elapsed < 3*StillWaitingEvery {
		t.Errorf("conflict events %+v, want 4: at once, then one a minute", conflicts)
	}
	// Its own: pending -> running is news; then about 200 s running.
	if len(waiting) != 3 {
		t.Fatalf("waiting events %+v, want 3 (one a minute of the 200 s running)", waiting)
	}
	for i, e := range waiting {
		if e.Backup.ID != o.Backup.ID || e.Backup.Status != client.StatusRunning || e.Previous != client.StatusRunning {
			t.Errorf("waiting event %d: %+v, want backup %s still running", i, e, o.Backup.ID)
		}
		if i > 0 && e.Elapsed-waiting[i-1].Elapsed < StillWaitingEvery {
			t.Errorf("waiting events %d and %d %s apart, want a minute at least", i-1, i, e.Elapsed-waiting[i-1].Elapsed)
		}
	}
}

// A trigger whose own backup the listing shows under another account (the
// mock's record-quirk other_account) never identifies it: it looks for it
// for IdentifyWithin, then stops, with no second trigger.
func TestABackupListedUnderAnotherAccountIsNeverIdentified(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 37}, nil)
	acct := f.srv.AccountIDs()[0]
	f.srv.SetRecordQuirk(acct, mockservice.QuirkOtherAccount)
	o := f.client.run(context.Background(), acct, RunOptions{WaitForCompletion: true})
	if o.Kind != NotIdentified || !o.Confirmed || o.Backup != nil {
		t.Fatalf("run = %+v, want a confirmed trigger whose backup is not identified", o)
	}
	if n := f.srv.BackupsQueued(acct); n != 1 {
		t.Errorf("%d backups queued, want 1", n)
	}
}

// A backup the previous change's floor lists never becomes a later run's
// own, even where a lagging listing hid it from the read before the
// trigger and shows it again while a lost answer is looked for (a new
// user's run through the CLI: release 1's backup reported for release 3).
func TestRunNeverIdentifiesABackupOfThePreviousChange(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	prev := c.run(ctx, acct, RunOptions{WaitForCompletion: true})
	if prev.Err != nil {
		t.Fatal(prev.Err)
	}
	floor := look(t, c, acct).mark // the previous change went ahead on it
	const lag = 3 * time.Minute
	f.srv.SetListingLag(lag)
	// The next run begins just before the previous backup shows again.
	skip := lag - 10*time.Second - f.mockClock.Now().Sub(prev.Backup.CreatedAt)
	f.clock.Advance(skip)
	f.mockClock.Advance(skip)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, AccountID: acct, Times: 1})
	o := c.backUp(ctx, acct, RunOptions{WaitForCompletion: true, Since: floor})
	if o.Backup != nil && o.Backup.ID == prev.Backup.ID {
		t.Fatalf("the run took %s, the previous change's backup, as its own (%d, %v)", prev.Backup.ID, o.Kind, o.Err)
	}
}

// A trigger sent after waiting out another's backup is dated on the service
// by the wait's last read, the read just before it, not by the read before
// the first POST (deep-run seed 78363: a stopped destroy's record, dated
// minutes early, stood for no time, and the next destroy queued a second backup).
func TestTriggerAfterAConflictIsDatedByTheReadBeforeIt(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t) // each backup lasts 30 s
	acct := f.srv.AccountIDs()[0]
	c := newRunner(t, client.Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: advancingClock{f.clock, f.mockClock}},
		Settings{IdentifyWithin: 5 * time.Second})
	ctx := context.Background()
	queuedOnce(t, c, acct)
	// Longer than IdentifyWithin, shorter than a backup: the other is listed in time to be waited out, the run's own never.
	f.srv.SetListingLag(10 * time.Second)
	o := c.run(ctx, acct, RunOptions{WaitOnConflict: true, WaitForCompletion: true})
	if o.Kind != NotIdentified {
		t.Fatalf("run = %d %v %+v; want its backup not identified", o.Kind, o.Err, o.Backup)
	}
	if early := o.TriggeredAt.Sub(o.TriggeredOnService); early > 5*time.Second {
		t.Errorf("the trigger at %s is dated %s on the service, %s earlier: the read before the first POST, not the last",
			o.TriggeredAt.Format(time.RFC3339), o.TriggeredOnService.Format(time.RFC3339), early)
	}
}

// A wait says it goes on once a whole StillWaitingEvery has passed without
// news, not before; news starts the minute again.
func TestStillWaitingEveryWholeMinute(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	w := f.client(t)
	var told []string
	still := w.stillWaiting(func(_ EventKind, b client.Backup, _ string) { told = append(told, b.ID) }, EventStatus)
	b := client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusRunning}
	f.clock.Advance(StillWaitingEvery - time.Nanosecond)
	still(b)
	f.clock.Advance(time.Nanosecond)
	still(b)
	still(client.Backup{}) // news
	f.clock.Advance(StillWaitingEvery - time.Nanosecond)
	still(b)
	if len(told) != 1 {
		t.Errorf("told %d times, want once: at the whole minute", len(told))
	}
}

// Without reuse_within, no backup is reused, not even one of no age (dated
// a few seconds ahead, within the clocks' allowance): another's in progress
// is a conflict.
func TestRunWithoutReuseWithinReusesNothing(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	f.srv.SetClockOffset(5 * time.Second)
	queuedOnce(t, c, acct)
	f.srv.SetClockOffset(0)
	o := c.backUp(ctx, acct, RunOptions{Unrecorded: true})
	if o.Kind != Refused || !errors.Is(o.Err, client.ErrConflict) || o.Reused {
		t.Fatalf("run = %d %v, reused %t; want the 409 of the other's backup", o.Kind, o.Err, o.Reused)
	}
}

// A 409 whose backup a lagging listing hides, until it has ended, is
// waited for until listed: else the next trigger took it, the first listed
// above the read before it, as its own.
func TestRunNeverTakesTheBackupA409AnsweredFor(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t) // each backup lasts 30 s
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	other := queuedOnce(t, c, acct)
	f.srv.SetListingLag(40 * time.Second)
	o := c.run(ctx, acct, RunOptions{WaitOnConflict: true, WaitForCompletion: true})
	if o.Backup != nil && o.Backup.ID == other.ID {
		t.Fatalf("the run took %s, the backup its 409 answered for, as its own (%d)", other.ID, o.Kind)
	}
}

// The same with a lag shorter than the look for a trigger's backup: the
// 409's backup is waited for until listed, and the next trigger's backup,
// listed above it, is identified and waited for.
func TestRunAfterA409OfAHiddenBackupTakesItsOwn(t *testing.T) {
	t.Parallel()
	mc := clocktest.NewVirtual(time.Now().Truncate(time.Second))
	f := &runFixture{fixture: newFixture(t, mockservice.Options{Seed: 32, Clock: mc, PendingFor: 5 * time.Second, RunningFor: 5 * time.Second}, nil), mockClock: mc}
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	other := queuedOnce(t, c, acct)
	f.srv.SetListingLag(15 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := c.run(ctx, acct, RunOptions{WaitOnConflict: true, WaitForCompletion: true})
	if o.Kind != Succeeded || o.Backup == nil || o.Backup.ID == other.ID {
		t.Fatalf("run = %d %v, backup %+v; want its own backup, not %s, waited for", o.Kind, o.Err, o.Backup, other.ID)
	}
}

// A 409 for the backup the read before the trigger listed in progress is
// over once that backup has ended: the wait does not look for another.
func TestConflictWaitForAListedBackupEndsWithIt(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	queuedOnce(t, f.client(t), acct)
	// The listed backup ends just as the service answers the run's trigger 409.
	ends := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil && r.Method == http.MethodPost && resp.StatusCode == http.StatusConflict {
			f.mockClock.Advance(time.Minute)
		}
		return resp, err
	})}
	c := newRunner(t, client.Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: advancingClock{f.clock, f.mockClock}, HTTPClient: ends}, Settings{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o := c.run(ctx, acct, RunOptions{WaitOnConflict: true}); o.Kind != NotWaited {
		t.Fatalf("run = %d %v; want its own backup queued once the other ended", o.Kind, o.Err)
	}
}

// A conflict wait that stops says when the service last answered it: a
// stopped destroy's record then stands for resume_within from this stop on
// the service's clock too, not from an earlier stop's (deep-run seed
// 125452: the next destroy, on that earlier bound, queued a second backup).
func TestConflictWaitThatStopsSaysWhenTheServiceLastAnswered(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	queuedOnce(t, f.client(t), acct)
	c := newRunner(t, client.Options{BaseURL: f.url, APIKey: f.srv.DemoKey(), Clock: stuckClock{}}, Settings{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	o := c.run(ctx, acct, RunOptions{WaitOnConflict: true})
	if wait := new(ConflictWaitError); o.Kind != Refused || !errors.As(o.Err, &wait) {
		t.Fatalf("run = %d %v; want the conflict wait stopped", o.Kind, o.Err)
	}
	if want := f.mockClock.Now().Truncate(time.Second); !o.At.Service.Truncate(time.Second).Equal(want) {
		t.Errorf("the stopped wait's last answer read %s on the service's clock, want %s", o.At.Service, want)
	}
}

// roundTrip is an http.RoundTripper of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// After a read that listed nothing, a trigger the service refuses (429) past
// that read's reach is not sent then: the account is read again before it
// is, and its backup is identified (before, queued 100 s after the read, past
// the 90 s an empty read proves absence for, it was never identified).
func TestRunReadsAgainWhenRefusalsOutlastAnEmptyRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 61}, nil)
	id := f.srv.AddAccount(mockservice.AccountSpec{})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, Times: 4, RetryAfter: 25 * time.Second})
	o := f.client.run(t.Context(), id, RunOptions{})
	if o.Kind != NotWaited || o.Backup == nil || o.Backup.ID != f.srv.NewestBackupID(id) {
		t.Fatalf("outcome %v %v (%v); want the backup queued, identified", o.Kind, o.Backup, o.Err)
	}
	posts, listings, queued := f.srv.Requests(mockservice.RouteTrigger), f.srv.Requests(mockservice.RouteListBackups), f.srv.BackupsQueued(id)
	// POSTs at 0 and 25 s, read again at 50 s; POSTs at 50 and 75 s, read again at 100 s; the POST at 100 s, its look.
	if posts != 5 || listings != 4 || queued != 1 {
		t.Errorf("%d POSTs, %d listings, %d queued; want 5, 4 and 1", posts, listings, queued)
	}
}

// A service that refuses every trigger is read again at most maxRereads
// times, then the run fails, nothing queued.
func TestRunReadsAgainBoundedly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 62}, nil)
	id := f.srv.AddAccount(mockservice.AccountSpec{})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, RetryAfter: 20 * time.Second})
	o := f.client.run(t.Context(), id, RunOptions{})
	if o.Kind != Refused || !errors.Is(o.Err, client.ErrNotSentInTime) || !errors.Is(o.Err, errRefusedPastEmptyRead) {
		t.Fatalf("outcome %v (%v); want refused, not sent in time", o.Kind, o.Err)
	}
	if n, q := f.srv.Requests(mockservice.RouteListBackups), f.srv.BackupsQueued(id); n != 1+maxRereads || q != 0 {
		t.Errorf("%d listings, %d queued; want %d and none", n, q, 1+maxRereads)
	}
}

// After a read that listed backups, absence needs no proof by time: the
// refusals are waited out, and nothing is read again.
func TestRunReadsAgainOnlyAfterAnEmptyRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 63}, nil)
	id := f.srv.AddAccount(mockservice.AccountSpec{})
	f.srv.AddBackups(id, 2, 0, "")
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, Times: 4, RetryAfter: 25 * time.Second})
	o := f.client.run(t.Context(), id, RunOptions{})
	if o.Kind != NotWaited || o.Backup == nil || o.Backup.ID != f.srv.NewestBackupID(id) {
		t.Fatalf("outcome %v %v (%v); want the backup queued, identified", o.Kind, o.Backup, o.Err)
	}
	if posts, listings := f.srv.Requests(mockservice.RouteTrigger), f.srv.Requests(mockservice.RouteListBackups); posts != 5 || listings != 2 {
		t.Errorf("%d POSTs, %d listings; want 5, and 2: the read before and the look", posts, listings)
	}
}

// A trigger whose outcome is unknown (a 500) is sent again after its look,
// whatever the time since an empty read: a read before it could list the
// first POST's backup as predating the run, and a second would be queued.
func TestRunResendAfterUnknownOutcomeIsNotBounded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 64}, nil)
	id := f.srv.AddAccount(mockservice.AccountSpec{})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger, Times: 1})
	o := f.client.run(t.Context(), id, RunOptions{})
	if o.Kind != NotWaited || o.Backup == nil || o.Backup.ID != f.srv.NewestBackupID(id) {
		t.Fatalf("outcome %v %v (%v); want the backup queued, identified", o.Kind, o.Backup, o.Err)
	}
	// The read before; the look's reads at 0, 1, 3, 7, 15, 23 and 30 s; the resend, unbounded, with no read before
	// it; the read that finds its backup.
	if posts, listings := f.srv.Requests(mockservice.RouteTrigger), f.srv.Requests(mockservice.RouteListBackups); posts != 2 || listings != 9 {
		t.Errorf("%d POSTs, %d listings; want 2 and 9", posts, listings)
	}
}
