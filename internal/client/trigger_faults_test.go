package client

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// The listing holds an old successful backup and shows the new one only
// after a few listings (a lagging read replica): the trigger waits for its
// own backup and never reports the old one.
func TestTriggerLaggingListingNeverClaimsAnOldBackup(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	old := fs.addOld(StatusSuccess, 365*24*time.Hour)
	fs.lag = 2
	tr, err := c.TriggerBackup(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	queued := fs.queuedIDs()
	if tr.Backup.ID == old.ID || len(queued) != 1 || tr.Backup.ID != queued[0] {
		t.Fatalf("got backup %s; queued %v; the old one is %s", tr.Backup.ID, queued, old.ID)
	}
	if posts, listings := fs.counts(); posts != 1 || listings != 3 {
		t.Errorf("%d POSTs and %d listings, want 1 and 3", posts, listings)
	}
}

// A listing that never shows the new backup: the trigger fails, saying the
// backup was queued, after looking for IdentifyWithin; it claims nothing
// and sends no second POST. Through RunBackup with a wait, the error is no
// success either.
func TestTriggerListingWithoutTheNewBackupFailsClearly(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.addOld(StatusSuccess, 365*24*time.Hour)
	fs.lag = -1
	start := fs.clock.Now()
	b, err := c.RunBackup(context.Background(), fs.account, RunOptions{WaitForCompletion: true, WaitOnConflict: true})
	var ue *UnidentifiedError
	if !errors.As(err, &ue) || !ue.Queued || !errors.Is(err, ErrNotListed) || b != nil {
		t.Fatalf("got %v, %T %v", b, err, err)
	}
	if !ue.TriggeredAt.Equal(start) {
		t.Errorf("triggered at %s, want %s", ue.TriggeredAt, start)
	}
	if waited := fs.clock.Now().Sub(start); waited < DefaultIdentifyWithin || waited > DefaultIdentifyWithin+identifyMaxInterval {
		t.Errorf("looked for %s, want about %s", waited, DefaultIdentifyWithin)
	}
	if posts, _ := fs.counts(); posts != 1 {
		t.Errorf("%d POSTs, want 1", posts)
	}
}

// Queued, but the listing fails every time: the error says the backup was
// queued and carries the listing's error.
func TestTriggerQueuedButListingFails(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.listingStatus = http.StatusInternalServerError
	_, err := c.TriggerBackup(context.Background(), fs.account)
	var ue *UnidentifiedError
	if !errors.As(err, &ue) || !ue.Queued || !errors.Is(err, ErrServer) {
		t.Fatalf("%T %v", err, err)
	}
	if posts, _ := fs.counts(); posts != 1 || len(fs.queuedIDs()) != 1 {
		t.Errorf("%d POSTs, %d queued; want 1 and 1", posts, len(fs.queuedIDs()))
	}
}

// The POST is processed but answered by a reset connection, and the
// service's clock is 3 s behind: the backup is recognised as this
// trigger's, with one POST.
func TestTriggerResetAfterProcessingWithServiceClockBehind(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.skew = -3 * time.Second
	fs.addOld(StatusSuccess, time.Hour)
	fs.resetPOSTs = 1
	tr, err := c.TriggerBackup(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	if queued := fs.queuedIDs(); !tr.Recovered || len(queued) != 1 || tr.Backup.ID != queued[0] {
		t.Fatalf("%+v; queued %v", tr, queued)
	}
	if posts, _ := fs.counts(); posts != 1 {
		t.Errorf("%d POSTs, want 1", posts)
	}
}

// The same, with a listing that lags longer than the grace period: the
// POST is sent again and answered 409. The backup in progress is this
// trigger's own: it is returned, not waited for as another's before a
// second backup.
func TestTriggerConflictAfterResetIsOurOwnBackup(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.skew = -3 * time.Second
	fs.resetPOSTs = 1
	fs.lag = 12 // longer than the looks of the grace period
	b, err := c.RunBackup(context.Background(), fs.account, RunOptions{WaitOnConflict: true})
	if err != nil {
		t.Fatal(err)
	}
	queued := fs.queuedIDs()
	if len(queued) != 1 || b.ID != queued[0] {
		t.Fatalf("got %s; queued %v", b.ID, queued)
	}
	if posts, _ := fs.counts(); posts != 2 {
		t.Errorf("%d POSTs, want 2 (the second answered 409)", posts)
	}
}

// A POST that got no answer is processed by the service later (after a
// request timeout, say): it is looked for during the grace period before
// anything is sent again, and found.
func TestTriggerProcessedLateIsFoundWithinGrace(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.dropPOSTs, fs.processLater = 1, 4
	tr, err := c.TriggerBackup(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	if posts, _ := fs.counts(); posts != 1 || !tr.Recovered || !slices.Equal(fs.queuedIDs(), []string{tr.Backup.ID}) {
		t.Fatalf("%d POSTs, %+v, queued %v", posts, tr, fs.queuedIDs())
	}
}

// The limit of that guarantee, as documented: a POST processed after the
// grace period, once a second POST was sent, makes two backups. The
// second one is the trigger's.
func TestTriggerProcessedAfterGraceIsTheDocumentedLimit(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.runFor = time.Second
	fs.dropPOSTs, fs.processLater = 1, 1000
	tr, err := c.TriggerBackup(context.Background(), fs.account)
	if err != nil {
		t.Fatal(err)
	}
	if posts, _ := fs.counts(); posts != 2 || tr.Recovered {
		t.Fatalf("%d POSTs, %+v", posts, tr)
	}
}

// A 409 after an unknown outcome, from a backup that was running before
// this trigger began: the first POST queued nothing, so the conflict
// stands (and on_conflict = "wait" then queues this change's backup).
func TestTriggerConflictWithBackupOlderThanTheTrigger(t *testing.T) {
	t.Parallel()
	fs, c := newFaultyService(t)
	fs.mu.Lock()
	fs.backups = []Backup{{ID: "bkp_other00000000000", AccountID: fs.account, Status: StatusRunning, CreatedAt: fs.now().Add(-10 * time.Minute)}}
	fs.mu.Unlock()
	fs.dropPOSTs, fs.processLater = 1, -1 // never processed
	_, err := c.TriggerBackup(context.Background(), fs.account)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("%T %v", err, err)
	}
	if len(fs.queuedIDs()) != 0 {
		t.Fatalf("queued %v", fs.queuedIDs())
	}
}
