package workflow

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

var (
	t0      = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	done    = t0.Add(11 * time.Minute)
	running = client.Backup{ID: "bkp_0123456789abcdef", AccountID: "acc_0123456789abcdef", Status: client.StatusRunning, CreatedAt: t0}
	good    = client.Backup{ID: "bkp_0123456789abcdef", AccountID: "acc_0123456789abcdef", Status: client.StatusSuccess, CreatedAt: t0, CompletedAt: &done}
	bad     = client.Backup{ID: "bkp_0123456789abcdef", AccountID: "acc_0123456789abcdef", Status: client.StatusFailed, CreatedAt: t0, CompletedAt: &done}
	other   = client.Backup{ID: "bkp_fedcba9876543210", AccountID: "acc_0123456789abcdef", Status: client.StatusPending, CreatedAt: t0.Add(time.Hour)}
)

// stopped is a wait for b that stopped as kind, for cause.
func stopped(kind Kind, b client.Backup, cause error) Outcome {
	return Outcome{Kind: kind, Backup: &b, Waited: time.Minute, Err: cause}
}

// Every outcome of a run, and of a follow of a recorded backup, lands in
// one phase.
func TestAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		prior Record
		o     Outcome
		want  Record
	}{
		{"queued, not waited", Record{}, notWaited(&running, nil),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"waited, succeeded", Record{}, Outcome{Kind: Succeeded, Backup: &good},
			Record{Phase: phaseIdentified, BackupID: good.ID, Status: client.StatusSuccess, TriggeredAt: t0, CompletedAt: done}},
		{"waited, failed", Record{}, failed(bad, nil),
			Record{Phase: phaseFailed, BackupID: bad.ID, Status: client.StatusFailed, TriggeredAt: t0, CompletedAt: done}},
		{"wait interrupted", Record{}, stopped(Unsettled, running, context.Canceled),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"wait timed out", Record{}, stopped(Unsettled, running, context.DeadlineExceeded),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"polling failed", Record{}, stopped(Unsettled, running, errors.New("503")),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"not listed", Record{}, Outcome{Kind: NotIdentified, TriggeredAt: t0, Confirmed: true, Err: errNotListed},
			Record{Phase: phaseUnidentified, TriggeredAt: t0, Confirmed: true}},
		{"refused", Record{}, refused(fmt.Errorf("refused: %w", client.ErrUnprocessable)), Record{}},
		{"conflict waited out", Record{}, Outcome{Kind: Refused, Err: &ConflictWaitError{Err: context.DeadlineExceeded}}, Record{}},
		{"interrupted wait resumed to success", Record{Phase: phaseIdentified, BackupID: good.ID, Status: client.StatusRunning, TriggeredAt: t0}, Outcome{Kind: Succeeded, Backup: &good},
			Record{Phase: phaseIdentified, BackupID: good.ID, Status: client.StatusSuccess, TriggeredAt: t0, CompletedAt: done}},
		{"interrupted wait resumed without waiting", Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusPending, TriggeredAt: t0}, notWaited(&running, nil),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"unidentified, then identified", Record{Phase: phaseUnidentified, TriggeredAt: t0.Add(-time.Second), Confirmed: true}, notWaited(&running, nil),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
		{"a new backup replaces a failed one", Record{Phase: phaseFailed, BackupID: bad.ID, Status: client.StatusFailed, TriggeredAt: t0, CompletedAt: done}, notWaited(&other, nil),
			Record{Phase: phaseIdentified, BackupID: other.ID, Status: client.StatusPending, TriggeredAt: other.CreatedAt}},
		{"the read gave no times: the record's stay", Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0},
			stopped(Unsettled, client.Backup{ID: running.ID, Status: client.StatusRunning}, context.Canceled),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.prior.after(tc.o); got != tc.want {
				t.Errorf("after = %+v\nwant    %+v", got, tc.want)
			}
		})
	}
}

// A create or an update saves what its outcome left, and its change goes
// ahead only when the apply goes on past it.
func TestSaved(t *testing.T) {
	t.Parallel()
	floor := &Mark{IDs: []string{"bkp_t000000000000000"}}
	replaced := Record{Phase: phaseIdentified, BackupID: bad.ID, Status: client.StatusFailed, Prior: floor}
	accepted := Outcome{Kind: NotIdentified, TriggeredAt: t0, Confirmed: true, Err: errNotListed}
	unknown := Outcome{Kind: NotIdentified, TriggeredAt: t0, Err: errNotListed}
	adopted := accepted
	adopted.Adopted = true
	failedNotWaited := notWaited(&bad, nil)
	for _, tc := range []struct {
		name        string
		prior       Record
		o           Outcome
		s           Saving
		saved, goes bool
	}{
		{"succeeded", Record{}, Outcome{Kind: Succeeded, Backup: &good}, Saving{Creating: true, Waits: true}, true, true},
		{"succeeded, the apply interrupted as it returned", Record{}, Outcome{Kind: Succeeded, Backup: &good}, Saving{Creating: true, Waits: true, Stopped: true}, true, false},
		{"not waited, running", Record{}, notWaited(&running, nil), Saving{Creating: true}, true, true},
		{"not waited, already failed", Record{}, failedNotWaited, Saving{Creating: true}, true, false},
		{"an import's first apply, not waited, failed", Record{}, failedNotWaited, Saving{Importing: true}, true, true},
		{"failed", Record{}, failed(bad, nil), Saving{Creating: true, Waits: true}, true, false},
		{"wait interrupted", Record{}, stopped(Unsettled, running, context.Canceled), Saving{Creating: true, Waits: true}, true, false},
		{"wait timed out", Record{}, stopped(Unsettled, running, context.DeadlineExceeded), Saving{Creating: true, Waits: true}, true, false},
		{"accepted, not identified, not waited", Record{}, accepted, Saving{Creating: true}, true, true},
		{"accepted, not identified, the apply interrupted", Record{}, accepted, Saving{Creating: true, Stopped: true}, true, true},
		{"accepted, not identified, waited", Record{}, accepted, Saving{Creating: true, Waits: true}, true, false},
		{"unknown outcome, not identified", Record{}, unknown, Saving{Creating: true}, true, false},
		{"a replaced trigger's adopted, not identified", Record{}, adopted, Saving{Creating: true}, true, false},
		{"refused, replacing a change", replaced, refused(client.ErrUnprocessable), Saving{Creating: true}, true, false},
		{"refused, replacing nothing", Record{}, refused(client.ErrUnprocessable), Saving{Creating: true}, false, false},
		{"refused, an update", replaced, refused(client.ErrUnprocessable), Saving{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, saved := tc.prior.Saved(tc.o, tc.s)
			if saved != tc.saved || got.Ahead != tc.goes {
				t.Errorf("Saved = %s, saved %t; want saved %t, gone ahead %t", got, saved, tc.saved, tc.goes)
			}
			if tc.o.Kind == Refused && saved && got != tc.prior {
				t.Errorf("Saved = %s; want the record it replaces, %s", got, tc.prior)
			}
		})
	}
}

// A refresh updates the status; why nobody waits for a backup in progress
// stays; an import stays imported until its first apply.
func TestObserveAndAdopt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		prior Record
		read  client.Backup
		want  phase
	}{
		{"in progress, then done", Record{Phase: phaseIdentified, BackupID: good.ID}, good, phaseIdentified},
		{"interrupted, still running", Record{Phase: phaseIdentified, BackupID: running.ID}, running, phaseIdentified},
		{"timed out, still running", Record{Phase: phaseIdentified, BackupID: running.ID}, running, phaseIdentified},
		{"timed out, then failed", Record{Phase: phaseIdentified, BackupID: bad.ID}, bad, phaseFailed},
		{"unidentified, then found", Record{Phase: phaseUnidentified, Confirmed: true}, running, phaseIdentified},
		{"imported, first read", ImportedAs(good.ID), good, phaseImported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.prior.Observe(tc.read)
			if got.Phase != tc.want || got.BackupID != tc.read.ID || got.Status != tc.read.Status || !got.TriggeredAt.Equal(t0) || got.Confirmed {
				t.Errorf("Observe = %+v, want phase %s with the read's values", got, tc.want)
			}
		})
	}
	if got := ImportedAs(good.ID).Observe(good).Adopted(); got.Phase != phaseIdentified {
		t.Errorf("an adopted import is %s, want %s", got.Phase, phaseIdentified)
	}
	if got := ImportedAs(good.ID).Adopted(); got.Phase != phaseImported {
		t.Errorf("an import never read, adopted, is %s: its phase is unknown until a read", got.Phase)
	}
}

// What the next apply of a trigger does, for each phase and each way its
// wait_for_completion changes.
func TestNext(t *testing.T) {
	t.Parallel()
	rec := func(p phase, status string) Record {
		return Record{Phase: p, BackupID: "bkp_0123456789abcdef", Status: status}
	}
	wentAhead := func(r Record) Record { r.Ahead = true; return r }
	for _, tc := range []struct {
		rec                    Record
		waitedBefore, waitsNow bool
		want                   Step
	}{
		{Record{Phase: phaseUnidentified, TriggeredAt: t0}, false, false, Settle},
		{Record{Phase: phaseUnidentified, TriggeredAt: t0}, true, true, Settle},
		{rec(phaseImported, client.StatusSuccess), false, false, Settle},
		{rec(phaseImported, client.StatusFailed), true, true, Settle},
		{rec(phaseIdentified, client.StatusSuccess), false, true, Settle}, // the wait switched on
		{rec(phaseFailed, client.StatusFailed), false, true, Settle},
		{wentAhead(rec(phaseIdentified, client.StatusRunning)), false, false, keep},
		{wentAhead(rec(phaseIdentified, client.StatusRunning)), true, false, keep}, // the wait switched off
		{rec(phaseIdentified, client.StatusRunning), true, true, Settle},
		{rec(phaseIdentified, client.StatusPending), true, true, Settle},
		{rec(phaseIdentified, client.StatusRunning), true, true, Settle},
		{wentAhead(rec(phaseIdentified, client.StatusSuccess)), true, true, keep},
		// Its change has not gone ahead on record (a wait interrupted, good
		// by the next plan): that apply records when, through an update.
		{rec(phaseIdentified, client.StatusSuccess), true, true, Settle},
		{rec(phaseIdentified, client.StatusRunning), true, false, Settle},
		{rec(phaseIdentified, client.StatusSuccess), false, false, Settle},
		{rec(phaseFailed, client.StatusFailed), true, true, Retake},
		{rec(phaseFailed, "cancelled"), true, true, Retake},                    // a status the service added later: not a good backup
		{wentAhead(rec(phaseFailed, client.StatusFailed)), false, false, keep}, // not waited for, it went ahead in progress
		// Its change never went ahead (a wait interrupted, then switched
		// off): not on a failed backup (simulation seed 1836).
		{rec(phaseFailed, client.StatusFailed), true, false, Retake},
		{rec(phaseFailed, client.StatusFailed), false, false, Retake},
	} {
		if got := tc.rec.Next(tc.waitedBefore, tc.waitsNow); got != tc.want {
			t.Errorf("%s, waited %t, waits %t: step %d, want %d", tc.rec, tc.waitedBefore, tc.waitsNow, got, tc.want)
		}
	}
	if !ImportedAs("bkp_0123456789abcdef").TakesConfigTriggers() || (Record{Phase: phaseIdentified}).TakesConfigTriggers() {
		t.Error("only an import not yet applied takes the configuration's triggers in place")
	}
}

// A replaced trigger's backup stands for its replacement (of the same
// triggers) while in progress, or good for a change that never went ahead;
// never when it failed, or when its change went ahead with it (a -replace
// asks for a new one), or for an import never applied.
func TestReplacedAdoptable(t *testing.T) {
	t.Parallel()
	wentAhead := Record{Phase: phaseIdentified, Ahead: true}
	waiting := Record{Phase: phaseIdentified}
	for _, tc := range []struct {
		name string
		rec  Record
		read client.Backup
		want bool
	}{
		{"in progress", waiting, running, true},
		// Another trigger created with those triggers would take it (simulation seed 303).
		{"in progress, its change gone ahead", wentAhead, running, false},
		{"in progress, imported and never applied", ImportedAs(running.ID), running, false},
		{"succeeded, its change gone ahead with it", wentAhead, good, false},
		// Not identified until a refresh found it good (simulation seed 2219).
		{"succeeded, its change never went ahead", waiting, good, true},
		{"succeeded, imported and never applied", ImportedAs(good.ID), good, false},
		{"failed", waiting, bad, false},
	} {
		if got := tc.rec.awaitsItsBackup() && stillCounts(tc.read); got != tc.want {
			t.Errorf("%s: adopted %t, want %t", tc.name, got, tc.want)
		}
	}
}

// A stopped destroy's record stands for the next destroy until its
// counts_until, and never without one; what it becomes after each outcome
// of a destroy that stops again.
func TestDestroyRecord(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Minute
	rec := Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0, CountsUntil: t0.Add(45 * time.Minute)}
	unbounded := rec
	unbounded.CountsUntil = time.Time{}
	for _, tc := range []struct {
		name string
		r    Record
		at   time.Time
		want bool
	}{
		{"before counts_until", rec, t0.Add(45 * time.Minute), true},
		{"after counts_until", rec, t0.Add(46 * time.Minute), false},
		{"no counts_until", unbounded, t0, false},
		{"none", Record{}, t0, false},
		// Written by a runner whose clock ran ahead: never longer than
		// resume_within from now on this machine, give or take the clock
		// allowance (simulation seed 1501: a runner 9 s ahead at the stop).
		{"counts_until beyond resume_within and the allowance from now", rec, t0.Add(45*time.Minute - 10*time.Minute - DefaultClockAllowance - time.Second), false},
		{"counts_until resume_within and the allowance from now", rec, t0.Add(45*time.Minute - 10*time.Minute - DefaultClockAllowance), true},
	} {
		if got := tc.r.standsForDestroy(tc.at, 10*time.Minute); got != tc.want {
			t.Errorf("%s: stands %t, want %t", tc.name, got, tc.want)
		}
	}

	// counts_until is whole seconds, as the state shows it: the record
	// stands exactly as long as users read.
	now := t0.Add(time.Hour + 300*time.Millisecond)
	stoppedOn := func(t time.Time) Record {
		r := rec
		r.CountsUntil, r.StoppedOnService = now.Add(time.Minute).Truncate(time.Second), t
		return r
	}
	aheadRec := rec
	aheadRec.CountsUntil = now.Add(timeout + 3*time.Minute).Truncate(time.Second)
	if !aheadRec.standsTooLong(now, timeout) {
		t.Fatal("the record written on a clock ahead must stand too long")
	}
	for _, tc := range []struct {
		name    string
		earlier Record
		o       Outcome
		want    Record
	}{
		{"the backup failed: the next destroy takes a new one", rec, failed(bad, nil), Record{}},
		{"its wait timed out", Record{}, stopped(Unsettled, running, context.DeadlineExceeded),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0, CountsUntil: now.Add(timeout).Truncate(time.Second)}},
		{"not listed", Record{}, Outcome{Kind: NotIdentified, TriggeredAt: t0, Err: errNotListed},
			Record{Phase: phaseUnidentified, TriggeredAt: t0, CountsUntil: now.Add(timeout).Truncate(time.Second)}},
		{"a transient error keeps what was followed", rec, Outcome{Kind: Refused, Err: &UnreadError{BackupID: rec.BackupID, Err: errors.New("503")}},
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0, CountsUntil: now.Add(timeout).Truncate(time.Second)}},
		{"refused before any backup", Record{}, refused(client.ErrUnprocessable), Record{}},
		// Written on a clock ahead, not followed, and nothing queued in its place: kept as it was, so that it never
		// stands again (deep-run seeds 430187 and 461015).
		{"one that stood too long, refused", aheadRec, refused(client.ErrUnprocessable), aheadRec},
		// Followed no longer (it stood on this machine's clock, not on the service's), and nothing queued in its
		// place: kept as it was (deep-run seed 494374: re-armed, a backup 45 minutes old counted for the next destroy).
		{"one over on the service's clock, renewed, refused", stoppedOn(now.Add(-timeout - time.Second)),
			Outcome{Kind: Refused, Err: client.ErrConflict, Renewed: true, At: client.AnswerTime{Service: now, Received: now}},
			stoppedOn(now.Add(-timeout - time.Second))},
		// The clocks apart, the renewal could not tell: re-armed, as a stop of the same destroy (seed 125452).
		{"one renewed on clocks apart, refused", stoppedOn(now.Add(-timeout - time.Second)),
			Outcome{Kind: Refused, Err: client.ErrConflict, Renewed: true, At: client.AnswerTime{Service: now, Received: now.Add(time.Minute)}},
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0,
				CountsUntil: now.Add(timeout).Truncate(time.Second), StoppedOnService: now}},
	} {
		if got := tc.earlier.afterStoppedDestroy(tc.o, now, timeout); got != tc.want {
			t.Errorf("%s: %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	if !stillCounts(running) || !stillCounts(good) || stillCounts(bad) {
		t.Error("an earlier destroy's backup counts while in progress or succeeded, never failed")
	}
}

// Only a backup seen to succeed lets a waiting guard's change go ahead;
// a caller that does not wait needs one queued that has not failed.
func TestGood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o           Outcome
		waits, want bool
	}{
		{Outcome{Kind: Succeeded, Backup: &good}, true, true},
		{stopped(Unsettled, running, context.Canceled), true, false},
		{stopped(Unsettled, running, context.DeadlineExceeded), true, false},
		{notWaited(&running, nil), false, true},
		{notWaited(&running, nil), true, false},
		{failed(bad, nil), true, false},
		{notWaited(&bad, nil), false, false},
		{Outcome{Kind: NotIdentified, TriggeredAt: t0, Confirmed: true}, false, false},
		{refused(errNoBackup), false, false},
		{refused(client.ErrConflict), false, false},
	} {
		if got := tc.o.Good(tc.waits); got != tc.want {
			t.Errorf("%+v, waits %t: kind %d good %t, want %t", tc.o.Backup, tc.waits, tc.o.Kind, got, tc.want)
		}
	}
}

// The stored record reads back; one of another version is refused; the
// state wins where it and the record differ.
func TestStored(t *testing.T) {
	t.Parallel()
	rec := Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0, CountsUntil: t0.Add(time.Hour)}
	if back, err := Decode(Encode(rec)); err != nil || back != rec {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, rec)
	}
	marked := Record{Phase: phaseUnidentified, TriggeredAt: t0, TriggeredOnService: t0.Add(time.Second), Ahead: true, Prior: &Mark{IDs: []string{}}}
	if back, err := Decode(Encode(marked)); err != nil || !reflect.DeepEqual(back, marked) {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, marked)
	}
	if back, err := Decode(Encode(Record{Prior: &Mark{IDs: []string{good.ID}}})); err != nil || back.Phase != phaseNone || !back.Prior.has(good.ID) {
		t.Errorf("a floor without a backup is stored: %+v, %v", back, err)
	}
	if Encode(Record{}) != nil {
		t.Error("None is stored as no key")
	}
	if _, err := Decode([]byte(`{"v":2,"phase":"succeeded"}`)); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a record of a later version: %v", err)
	}
	if _, err := Decode([]byte(`{"v":`)); err == nil {
		t.Error("an unreadable record reads")
	}

	state := Record{BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}
	shown := func(r Record) Record {
		return Record{BackupID: r.BackupID, Status: r.Status, TriggeredAt: r.TriggeredAt, CompletedAt: r.CompletedAt, Reused: r.Reused, Prior: r.Prior}
	}
	for _, tc := range []struct {
		name    string
		s       Record
		stored  []byte
		want    Record
		wantErr string
	}{
		{"stored", state, Encode(rec),
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}, ""},
		{"the state says it ended since", Record{BackupID: good.ID, Status: client.StatusSuccess, TriggeredAt: t0, CompletedAt: done},
			Encode(rec), Record{Phase: phaseIdentified, BackupID: good.ID, Status: client.StatusSuccess, TriggeredAt: t0, CompletedAt: done}, ""},
		{"no record", state, nil,
			Record{Phase: phaseIdentified, BackupID: running.ID, Status: client.StatusRunning, TriggeredAt: t0}, ""},
		{"imported, never read", Record{BackupID: running.ID}, Encode(ImportedAs(running.ID)),
			Record{Phase: phaseImported, BackupID: running.ID}, ""},
		{"unidentified, confirmed", Record{TriggeredAt: t0}, Encode(Record{Phase: phaseUnidentified, TriggeredAt: t0, Confirmed: true}),
			Record{Phase: phaseUnidentified, TriggeredAt: t0, Confirmed: true}, ""},
		{"unidentified, stored", Record{TriggeredAt: t0}, Encode(Record{Phase: phaseUnidentified, TriggeredAt: t0}),
			Record{Phase: phaseUnidentified, TriggeredAt: t0}, ""},
		{"neither backup id nor triggered_at: none", Record{}, nil, Record{}, ""},
		{"a record of a later version", state, []byte(`{"v":9}`), Record{}, "version 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := FromTriggerState(tc.s, tc.stored)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%+v, %v\nwant %+v", got, err, tc.want)
			}
			if s := shown(got); s != tc.s {
				t.Errorf("shown as %+v, read from %+v", s, tc.s)
			}
		})
	}

}

// resume_within is read on the service's clock too: a runner's clock ahead
// at the stop cannot make a record stand longer; and an answer whose Date
// is apart from this machine's clock beyond the allowance shows nothing,
// neither that it stands nor that it is over.
func TestStandsOnService(t *testing.T) {
	t.Parallel()
	stop := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) client.AnswerTime {
		return client.AnswerTime{Received: stop.Add(d), Service: stop.Add(d)}
	}
	r := Record{Phase: phaseIdentified, StoppedOnService: stop}
	for _, tc := range []struct {
		name string
		rec  Record
		at   client.AnswerTime
		want bool
	}{
		{"within resume_within", r, at(30 * time.Minute), true},
		{"beyond it by a nanosecond", r, at(30*time.Minute + time.Nanosecond), false},
		{"an answer without a Date", r, client.AnswerTime{Received: stop}, false},
		{"a stop of unknown service time", Record{Phase: phaseIdentified}, at(time.Minute), false},
		{"the clocks apart beyond the allowance", r, client.AnswerTime{Received: stop.Add(time.Hour), Service: stop.Add(time.Minute)}, false},
		{"the clocks apart within it", r, client.AnswerTime{Received: stop.Add(time.Minute + 10*time.Second), Service: stop.Add(time.Minute)}, true},
		{"the service's clock ahead by the allowance", r, client.AnswerTime{Received: stop.Add(time.Minute), Service: stop.Add(time.Minute + 10*time.Second)}, true},
	} {
		if got := tc.rec.standsOnService(tc.at, 30*time.Minute); got != tc.want {
			t.Errorf("%s: stands %t, want %t", tc.name, got, tc.want)
		}
	}
	// Past resume_within on the service's clock shows it over, under the same allowance.
	beyond := 31 * time.Minute
	for _, tc := range []struct {
		name string
		rec  Record
		at   client.AnswerTime
		want bool
	}{
		{"beyond resume_within", r, at(beyond), true},
		{"within it", r, at(30 * time.Minute), false},
		{"an answer without a Date", r, client.AnswerTime{Received: stop.Add(beyond)}, false},
		{"a stop of unknown service time", Record{Phase: phaseIdentified}, at(beyond), false},
		{"the service's clock behind by the allowance", r, client.AnswerTime{Received: stop.Add(beyond + 10*time.Second), Service: stop.Add(beyond)}, true},
		{"the service's clock ahead by the allowance", r, client.AnswerTime{Received: stop.Add(beyond), Service: stop.Add(beyond + 10*time.Second)}, true},
		{"the clocks apart beyond it", r, client.AnswerTime{Received: stop.Add(beyond + 11*time.Second), Service: stop.Add(beyond)}, false},
		{"the service's clock ahead beyond it", r, client.AnswerTime{Received: stop.Add(beyond), Service: stop.Add(beyond + 11*time.Second)}, false},
	} {
		if got := tc.rec.overOnService(tc.at, 30*time.Minute); got != tc.want {
			t.Errorf("%s: over %t, want %t", tc.name, got, tc.want)
		}
	}
	o := Outcome{Kind: Unsettled, Backup: &client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusRunning}, At: at(5 * time.Minute)}
	if got := (Record{}).afterStoppedDestroy(o, stop, time.Minute).StoppedOnService; !got.Equal(stop.Add(5 * time.Minute)) {
		t.Errorf("stopped on the service at %s, want the last page's Date", got)
	}
	unread := Outcome{Kind: Refused, Err: &UnreadError{BackupID: o.Backup.ID, Err: errors.New("account has no backup")}}
	if got := r.afterStoppedDestroy(unread, stop.Add(time.Hour), time.Minute).StoppedOnService; !got.Equal(stop) {
		t.Errorf("a stop no answer dated is stopped on the service at %s, want the earlier stop's", got)
	}
}

// A record in progress may still change its times (only an ended one never
// does): triggered_at stays what it first read, so that an apply's state
// never contradicts its plan (simulation seed 120, with the next-release
// episodes: a success shown 30 days late).
func TestObserveKeepsTriggeredAt(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	b := client.Backup{ID: "bkp_0123456789abcdef", AccountID: "acc_0123456789abcdef", Status: client.StatusRunning, CreatedAt: created}
	r := Record{}.Observe(b)
	b.Status, b.CreatedAt = client.StatusSuccess, created.Add(30*24*time.Hour)
	if got := r.Observe(b).TriggeredAt; !got.Equal(created) {
		t.Errorf("triggered_at %s after the record moved, want %s", got, created)
	}
	other := b
	other.ID = "bkp_fedcba9876543210"
	if got := r.Observe(other).TriggeredAt; !got.Equal(other.CreatedAt) {
		t.Errorf("another backup's triggered_at %s, want its own %s", got, other.CreatedAt)
	}
}

// A replaced trigger not identified is adopted when its state alone is left
// (tainted: its change did not go ahead), never when its stored record says
// its change went ahead: its backup stands for that change only (seed 11138).
func TestAwaitsItsBackup(t *testing.T) {
	t.Parallel()
	shown := Record{TriggeredAt: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), Prior: &Mark{IDs: []string{"bkp_a"}}}
	for _, tc := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"tainted: no stored record", nil, true},
		{"stored, not gone ahead", Encode(Record{Phase: phaseUnidentified}), true},
		{"stored, gone ahead", Encode(Record{Phase: phaseUnidentified, Ahead: true}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := FromTriggerState(shown, tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.awaitsItsBackup(); got != tc.want || r.Ahead && tc.raw == nil {
				t.Fatalf("awaits %t (ahead %t); want %t", got, r.Ahead, tc.want)
			}
		})
	}
}

// A record counting above another mark too reads as gone ahead once that
// mark holds its backup; one with no backup keeps whether it went ahead.
func TestRecordAbove(t *testing.T) {
	t.Parallel()
	m := &Mark{IDs: []string{"bkp_a"}}
	if got := (Record{Phase: phaseIdentified, BackupID: "bkp_a", Prior: &Mark{}}).above(m); !got.Ahead || !got.Prior.has("bkp_a") {
		t.Errorf("its backup in the mark: %+v, want it gone ahead", got)
	}
	if got := (Record{Phase: phaseIdentified, BackupID: "bkp_b", Ahead: true, Prior: &Mark{}}).above(m); got.Ahead {
		t.Errorf("its backup in neither mark: %+v, want it not gone ahead", got)
	}
	if got := (Record{Phase: phaseUnidentified, Ahead: true, Prior: &Mark{}}).above(m); !got.Ahead {
		t.Errorf("no backup, gone ahead: %+v, want it still gone ahead", got)
	}
}

// A stopped destroy's record stands too long for this clock only when its
// counts_until lies beyond resume_within and the clock allowance from now:
// kept then for the next destroy (deep-run seed 149421), and never when it
// has expired or there is none.
func TestStandsTooLong(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	resume := time.Minute
	rec := func(until time.Duration) Record {
		return Record{Phase: phaseIdentified, BackupID: "bkp", CountsUntil: now.Add(until)}
	}
	for _, tc := range []struct {
		name string
		r    Record
		want bool
	}{
		{"beyond resume_within and the allowance", rec(resume + DefaultClockAllowance + time.Second), true},
		{"at resume_within and the allowance", rec(resume + DefaultClockAllowance), false},
		{"within resume_within", rec(resume), false},
		{"expired", rec(-time.Second), false},
		{"none", Record{CountsUntil: now.Add(time.Hour)}, false},
	} {
		if got := tc.r.standsTooLong(now, resume); got != tc.want {
			t.Errorf("%s: stands too long %t, want %t", tc.name, got, tc.want)
		}
	}
}
