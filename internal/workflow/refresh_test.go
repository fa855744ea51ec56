package workflow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// A refresh reads no more than what can change the record, and says what
// it learnt: a finished backup's account once per command, a backup in
// progress by its id, an unidentified one only when nobody waits for it.
func TestRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4701, Accounts: 3}, nil)
	w, ctx := f.client, context.Background()
	ids := f.srv.AccountIDs()
	requests := func() int { n := f.srv.Stats().TotalRequests(); f.srv.ResetStats(); return n }

	before, err := w.look(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	o := w.backUp(ctx, ids[0], RunOptions{})
	if o.Kind != NotWaited {
		t.Fatalf("run: %+v", o)
	}
	requests()
	inProgress := Record{}.after(o)
	if c := w.Refresh(ctx, ids[0], inProgress, false); c.Verdict != Current || c.Backup == nil || c.Backup.ID != o.Backup.ID || requests() != 1 {
		t.Errorf("in progress: %+v", c)
	}

	done := Record{Phase: phaseIdentified, BackupID: o.Backup.ID, Status: client.StatusSuccess, TriggeredAt: o.Backup.CreatedAt}
	for i := range 2 {
		if c := w.Refresh(ctx, ids[1], done, false); c.Verdict != Current || c.Backup != nil || c.Record != done {
			t.Errorf("finished: %+v", c)
		}
		if n, want := requests(), 1-i; n != want {
			t.Errorf("finished, read %d: %d requests, want %d (one account read per command)", i, n, want)
		}
	}
	f.srv.DeleteAccount(ids[2])
	if c := w.Refresh(ctx, ids[2], done, false); c.Verdict != Gone || c.Err == nil {
		t.Errorf("finished, account deleted: %+v", c)
	}

	unknown := Record{Phase: phaseIdentified, BackupID: "bkp_0000000000000000", Status: client.StatusRunning, TriggeredAt: o.Backup.CreatedAt}
	if c := w.Refresh(ctx, ids[0], unknown, false); c.Verdict != Unread || !errors.As(c.Err, new(*client.BackupNotFoundError)) || !c.Report {
		t.Errorf("not listed: %+v", c)
	}
	if c := w.Refresh(ctx, ids[0], ImportedAs(unknown.BackupID), false); c.Verdict != NotImported {
		t.Errorf("imported, not listed: %+v", c)
	}

	requests()
	unidentified := Record{Phase: phaseUnidentified, TriggeredAt: f.clock.Now().Add(-time.Minute), Prior: before.mark}
	if c := w.Refresh(ctx, ids[0], unidentified, true); c.Verdict != Current || c.Backup != nil || requests() != 0 {
		t.Errorf("unidentified, waited for: %+v", c)
	}
	if c := w.Refresh(ctx, ids[0], unidentified, false); c.Verdict != Current || c.Backup == nil || c.Record.BackupID != o.Backup.ID || requests() != 1 ||
		c.Record.Prior != before.mark {
		t.Errorf("unidentified, not waited for: %+v", c)
	}
	// Its change gone ahead unidentified, the page that found it (read since) is the next change's floor.
	unidentified.Ahead = true
	if c := w.Refresh(ctx, ids[0], unidentified, false); c.Verdict != Current || c.Backup == nil || !c.Record.Prior.has(o.Backup.ID) || !c.Record.Ahead {
		t.Errorf("unidentified, gone ahead: %+v", c)
	}
	// Without the mark read before it, it cannot be told from another's.
	unidentified.Prior = nil
	if c := w.Refresh(ctx, ids[0], unidentified, false); c.Verdict != Unread || !errors.Is(c.Err, errNoPrior) {
		t.Errorf("unidentified, no mark: %+v", c)
	}
}

// The check before a guard's destroy refuses a destroy that would not wait
// for a backup in progress, and not one that would.
func TestCheckDestroy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4702, Accounts: 1}, nil)
	w, ctx, id := f.client, context.Background(), f.srv.AccountIDs()[0]
	if o := w.backUp(ctx, id, RunOptions{}); o.Kind != NotWaited {
		t.Fatalf("run: %+v", o)
	}
	if c := w.CheckDestroy(ctx, id, false); c.Verdict != Busy || !client.InProgress(c.Account.BackupStatus) {
		t.Errorf("on_conflict fail: %+v", c)
	}
	if c := w.CheckDestroy(ctx, id, true); c.Verdict != Current {
		t.Errorf("on_conflict wait: %+v", c)
	}
}

// A command reads its first directAccountReads accounts with a GET each,
// and the rest from one shared listing.
func TestAccountReadsPerCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4702, Accounts: directAccountReads + 2}, nil)
	ids := f.srv.AccountIDs()
	for i, id := range ids {
		f.srv.ResetStats()
		if c := f.client.CheckAccount(context.Background(), id); c.Err != nil || c.Account == nil || c.Account.ID != id {
			t.Fatalf("account %d: %+v", i, c)
		}
		want := 1 // a GET, then one listing of every account, then nothing
		if i > directAccountReads {
			want = 0
		}
		if n := f.srv.Stats().TotalRequests(); n != want {
			t.Errorf("account %d: %d requests, want %d", i, n, want)
		}
	}
	// One the shared listing lacks is read directly: only that proves it gone.
	if c := f.client.CheckAccount(context.Background(), "acc_notlisted0000000"); c.Account != nil || !errors.Is(c.Err, client.ErrGone) {
		t.Errorf("an account not listed: %+v; want it proven gone", c)
	}
}
