package workflow

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Two triggers of one account replaced in one command are both kept for
// their replacements, whatever the order of the Deletes, and each create
// counts above the floor of every deleted trigger but the one it took.
func TestReplacementsKeepsEveryReplacedTriggerOfAnAccount(t *testing.T) {
	s := newReplacements()
	s.remember("acc_0123456789abcdef", "a", Record{Phase: phaseIdentified, BackupID: "bkp_a", Prior: &Mark{IDs: []string{"bkp_a"}}})
	s.remember("acc_0123456789abcdef", "b", Record{Phase: phaseIdentified, BackupID: "bkp_b", Prior: &Mark{IDs: []string{"bkp_b"}}})
	if m, replaced := s.floor("acc_0123456789abcdef", -1, true); !replaced || !m.has("bkp_a") || !m.has("bkp_b") {
		t.Fatalf("floor %v, %t: want both floors", m, replaced)
	}
	for _, want := range []string{"bkp_b", "bkp_a"} {
		got, own := s.take("acc_0123456789abcdef", strings.TrimPrefix(want, "bkp_"))
		if own < 0 || got.Record.BackupID != want {
			t.Fatalf("take %s = %+v, %v", want, got, own)
		}
		if m, replaced := s.floor("acc_0123456789abcdef", own, true); !replaced || m.has(want) || len(m.IDs) != 1 {
			t.Fatalf("floor beside %s: %v, %t: want the other's only", want, m, replaced)
		}
	}
	if _, own := s.take("acc_0123456789abcdef", "a"); own >= 0 {
		t.Fatal("taken twice")
	}
	// Both have their replacements: a create that adopts neither (create_before_destroy's) counts above neither (seed 12724).
	if m, replaced := s.floor("acc_0123456789abcdef", -1, false); replaced || len(m.IDs) != 0 {
		t.Fatalf("floor of the triggers not taken: %v, %t: want none", m, replaced)
	}
	// One whose floor is unknown makes the account's unknown; none replaced is none known.
	s.remember("acc_0123456789abcdef", "c", Record{})
	if m, replaced := s.floor("acc_0123456789abcdef", -1, true); !replaced || m != nil {
		t.Errorf("floor %v, %t: want none known", m, replaced)
	}
	if m, replaced := s.floor("acc_fedcba9876543210", -1, true); replaced || m == nil || len(m.IDs) != 0 {
		t.Errorf("floor of an account none was replaced of: %v, %t", m, replaced)
	}
}

// A floor made from an empty read stays one among the floors of the
// account's replaced triggers: reuse_within takes no shortcut above it.
func TestReplacementsFloorKeepsAnEmptyRead(t *testing.T) {
	t.Parallel()
	s := newReplacements()
	s.remember("acc_0123456789abcdef", "a", Record{Phase: phaseUnidentified, Prior: &Mark{IDs: []string{"", "bkp_a"}}})
	if m, replaced := s.floor("acc_0123456789abcdef", -1, true); !replaced || !m.readEmpty() || !m.has("bkp_a") {
		t.Fatalf("floor %v, %t: want the empty read kept, with bkp_a", m, replaced)
	}
	s.remember("acc_0123456789abcdef", "b", Record{Phase: phaseIdentified, BackupID: "bkp_b", Prior: &Mark{IDs: []string{"bkp_b"}}})
	if m, replaced := s.floor("acc_0123456789abcdef", -1, true); !replaced || !m.readEmpty() || !m.has("bkp_a") || !m.has("bkp_b") {
		t.Fatalf("floor %v, %t: want the empty read kept beside the other's floor", m, replaced)
	}
}

// Each deleted trigger of an account is the floor of one create that adopts
// none; a create beyond them replaces none, and counts above no floor.
func TestReplacementsServesOneCreatePerDeletedTrigger(t *testing.T) {
	s := newReplacements()
	if s.serve("acc_0123456789abcdef") {
		t.Fatal("served with none deleted")
	}
	s.remember("acc_0123456789abcdef", "a", Record{Phase: phaseIdentified, BackupID: "bkp_a", Ahead: true, Prior: &Mark{IDs: []string{"bkp_a"}}})
	s.remember("acc_0123456789abcdef", "b", Record{Phase: phaseIdentified, BackupID: "bkp_b", Prior: &Mark{IDs: []string{"bkp_b"}}})
	if _, own := s.take("acc_0123456789abcdef", "b"); own < 0 {
		t.Fatal("b not adopted")
	}
	if !s.serve("acc_0123456789abcdef") {
		t.Fatal("the replacement of a not served")
	}
	if s.serve("acc_0123456789abcdef") {
		t.Fatal("a third create served by two deleted triggers")
	}
}

// Terraform names neither a deleted trigger nor the create that replaces it:
// of several deleted triggers of one account with the same triggers, each
// create takes one whose change did not go ahead, the earliest first, and
// counts above the others' floors too (seed 664); one whose change went
// ahead unidentified is taken by none, and its floor is unknown (seed 11138).
func TestReplacementsPairsTwoAlike(t *testing.T) {
	s := newReplacements()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s.remember("acc_0123456789abcdef", "v2", Record{Phase: phaseUnidentified, Ahead: true, TriggeredAt: at, Prior: &Mark{IDs: []string{"bkp_a"}}})
	s.remember("acc_0123456789abcdef", "v2", Record{Phase: phaseIdentified, BackupID: "bkp_c", TriggeredAt: at.Add(2 * time.Minute), Prior: &Mark{IDs: []string{"bkp_c"}}})
	s.remember("acc_0123456789abcdef", "v2", Record{Phase: phaseUnidentified, TriggeredAt: at.Add(time.Minute), Prior: &Mark{IDs: []string{"bkp_b"}}})
	for _, want := range []string{"bkp_b", "bkp_c"} {
		got, own := s.take("acc_0123456789abcdef", "v2")
		if own < 0 || !got.Record.Prior.has(want) {
			t.Fatalf("took %+v (%d); want the one of %s", got, own, want)
		}
		if m, replaced := s.floor("acc_0123456789abcdef", own, true); !replaced || m != nil {
			t.Fatalf("floor beside %s: %v: want none known", want, m)
		}
	}
	if got, own := s.take("acc_0123456789abcdef", "v2"); own >= 0 {
		t.Fatalf("took %+v, whose change went ahead", got)
	}
}

// Of two replaced triggers of one value, a create takes first the one whose
// backup no other's floor lists: the other's could not be adopted (its
// trigger read it before its own trigger), and taking it would defer the
// create and cost the change a second backup (simulation seed 55400).
func TestReplacementsTakesTheAdoptableFirst(t *testing.T) {
	s := newReplacements()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s.remember("acc_0123456789abcdef", "v1", Record{Phase: phaseIdentified, BackupID: "bkp_a", TriggeredAt: at, Prior: &Mark{IDs: []string{"bkp_0"}}})
	s.remember("acc_0123456789abcdef", "v1", Record{Phase: phaseIdentified, BackupID: "bkp_b", TriggeredAt: at.Add(time.Minute), Prior: &Mark{IDs: []string{"bkp_a", "bkp_0"}}})
	if got, own := s.take("acc_0123456789abcdef", "v1"); own < 0 || got.Record.BackupID != "bkp_b" {
		t.Fatalf("took %+v (%d); want the one of bkp_b, listed above the other's floor", got, own)
	}
	if got, own := s.take("acc_0123456789abcdef", "v1"); own < 0 || got.Record.BackupID != "bkp_a" {
		t.Fatalf("then took %+v (%d); want the one of bkp_a", got, own)
	}
}

// Of two replaced triggers of one value whose backups neither's floor
// lists, the earlier triggered is taken first, whichever was remembered first.
func TestReplacementsTakesTheEarliestTriggeredFirst(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	early := Record{Phase: phaseIdentified, BackupID: "bkp_a", TriggeredAt: at, Prior: &Mark{IDs: []string{"bkp_0"}}}
	late := Record{Phase: phaseIdentified, BackupID: "bkp_b", TriggeredAt: at.Add(time.Minute), Prior: &Mark{IDs: []string{"bkp_0"}}}
	for _, order := range [][]Record{{early, late}, {late, early}} {
		s := newReplacements()
		for _, r := range order {
			s.remember("acc_0123456789abcdef", "v1", r)
		}
		if got, own := s.take("acc_0123456789abcdef", "v1"); own < 0 || got.Record.BackupID != "bkp_a" {
			t.Errorf("remembered %s first: took %+v (%d); want the earlier, bkp_a", order[0].BackupID, got, own)
		}
	}
}

// A create that cannot show that the backup it would adopt stands for its
// change (listed below another replaced trigger's floor) keeps the record
// with that floor: replaced alone by the next apply, it still counts only
// above it, and never takes that backup (seed 683 of the paired
// replacements: the other trigger's previous backup counted for its next
// change).
func TestCreateTriggerDeferredKeepsTheOthersFloor(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	opts := RunOptions{WaitOnConflict: true, WaitForCompletion: true}
	// The first trigger's answer was lost: not identified, above the read before it.
	lost := Record{Phase: phaseUnidentified, TriggeredAt: f.clock.Now(), Prior: look(t, c, acct).mark}
	// The second took backup X afterwards, and its change went ahead.
	x := c.run(ctx, acct, opts)
	if x.Err != nil {
		t.Fatal(x.Err)
	}
	went := Record{Phase: phaseIdentified, BackupID: x.Backup.ID, Ahead: true, Prior: look(t, c, acct).mark}
	reps := newReplacements()
	reps.remember(acct, "v2", lost)
	reps.remember(acct, "v1", went)
	before := f.srv.Stats().BackupsQueued[acct]
	o, kept := c.createTrigger(ctx, reps, acct, "v2", opts)
	if o.Kind != Refused || !errors.Is(o.Err, errNotAboveReplaced) {
		t.Fatalf("CreateTrigger: %d, %v; want it refused, X below the other's floor", o.Kind, o.Err)
	}
	if !kept.Prior.has(x.Backup.ID) {
		t.Fatalf("kept %v: want the other's floor in it", kept.Prior)
	}
	// The next apply replaces this trigger alone.
	again := newReplacements()
	again.remember(acct, "v2", kept)
	o, _ = c.createTrigger(ctx, again, acct, "v2", opts)
	if o.Backup != nil && o.Backup.ID == x.Backup.ID {
		t.Fatalf("the next apply took %s, the other trigger's previous backup, for this change", x.Backup.ID)
	}
	if queued := f.srv.Stats().BackupsQueued[acct] - before; queued > 1 {
		t.Errorf("%d backups queued, want at most one", queued)
	}
}

// A create that adopts a replaced trigger's record and cannot show that its
// backup stands (the listing unreadable, or the backup not listed yet)
// keeps the record with the other replaced triggers' floors too: replaced
// alone by the next apply, it never takes a backup listed below them
// (deep-run seed 227670: a 404 page kept the record without the other's
// floor, and the next apply adopted a backup that started before the other
// trigger's change went ahead, for that trigger's next change).
func TestCreateTriggerNotAdoptedKeepsTheOthersFloor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		identified bool // the record knows its backup by id; else its answer was lost
		fault      mockservice.Fault
		lag        time.Duration
	}{
		{"identified, the listing unreadable", true, mockservice.Fault{Kind: mockservice.FaultProxyNotFound, Route: mockservice.RouteListBackups}, 0},
		{"not identified, the listing unreadable", false, mockservice.Fault{Kind: mockservice.FaultProxyNotFound, Route: mockservice.RouteListBackups}, 0},
		{"not identified, its backup not listed yet", false, mockservice.Fault{}, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRunFixture(t)
			acct := f.srv.AccountIDs()[0]
			c := f.client(t)
			ctx := context.Background()
			opts := RunOptions{WaitOnConflict: true, WaitForCompletion: true}
			// The first trigger took backup B, not waited for: its change never went ahead.
			read := look(t, c, acct).mark
			b := c.run(ctx, acct, RunOptions{WaitOnConflict: true})
			if b.Backup == nil {
				t.Fatal(b.Err)
			}
			first := Record{Phase: phaseIdentified, BackupID: b.Backup.ID, Status: b.Backup.Status, TriggeredAt: b.Backup.CreatedAt, Prior: read}
			if !tc.identified {
				first = Record{Phase: phaseUnidentified, TriggeredAt: b.Backup.CreatedAt, Confirmed: true, Prior: read}
			}
			// The second's change went ahead after B started: its floor lists B.
			f.mockClock.Advance(10 * time.Minute)
			f.clock.Advance(10 * time.Minute)
			second := Record{Phase: phaseIdentified, BackupID: b.Backup.ID, Ahead: true, Prior: look(t, c, acct).mark}
			reps := newReplacements()
			reps.remember(acct, "v2", first)
			reps.remember(acct, "v1", second)
			if tc.fault.Kind != 0 {
				f.srv.AddFault(tc.fault)
			}
			f.srv.SetListingLag(tc.lag)
			o, kept := c.createTrigger(ctx, reps, acct, "v2", opts)
			if o.Backup != nil && o.Backup.ID == b.Backup.ID && o.Good(true) {
				t.Fatalf("CreateTrigger took %s, listed below the other's floor", b.Backup.ID)
			}
			f.srv.ClearFaults()
			f.srv.SetListingLag(0)
			// What the provider saves, tainted (resource_trigger.go, record): a refused create keeps the record.
			saved := kept.after(o)
			if o.Kind == Refused {
				saved = kept
			}
			// The next apply replaces this trigger alone.
			again := newReplacements()
			again.remember(acct, "v2", saved)
			o, _ = c.createTrigger(ctx, again, acct, "v2", opts)
			if o.Backup != nil && o.Backup.ID == b.Backup.ID {
				t.Fatalf("the next apply took %s, started before the other trigger's change went ahead (outcome %d, %v)", b.Backup.ID, o.Kind, o.Err)
			}
		})
	}
}

// A create beside another replaced trigger whose floor is unknown takes a
// new backup at once, never the record's, which may predate the other's
// change (seed 136118: a trigger's record, taken by its triggers value, was
// adopted for another trigger whose previous change went ahead after it).
func TestCreateTriggerBesideAnUnknownFloorTakesANewBackup(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	opts := RunOptions{WaitOnConflict: true, ReuseWithin: time.Hour}
	// The first trigger's backup B, followed, not yet gone ahead.
	before := look(t, c, acct).mark
	b := c.run(ctx, acct, RunOptions{WaitOnConflict: true})
	if b.Backup == nil {
		t.Fatal(b.Err)
	}
	reps := newReplacements()
	reps.remember(acct, "v3", Record{Phase: phaseIdentified, BackupID: b.Backup.ID, Status: b.Backup.Status, TriggeredAt: b.Backup.CreatedAt, Prior: before})
	// The second's change went ahead after B, its own backup never identified: its floor is unknown.
	reps.remember(acct, "v2", Record{Phase: phaseUnidentified, Ahead: true, TriggeredAt: f.clock.Now(), Prior: look(t, c, acct).mark})
	f.mockClock.Advance(10 * time.Minute) // B has ended, good and recent
	f.clock.Advance(10 * time.Minute)
	queued := f.srv.Stats().BackupsQueued[acct]
	o, rec := c.createTrigger(ctx, reps, acct, "v3", opts)
	if o.Err != nil || o.Backup == nil || o.Backup.ID == b.Backup.ID || o.Reused {
		t.Fatalf("CreateTrigger: %d %+v reused %t (%v); want a new backup, never %s", o.Kind, o.Backup, o.Reused, o.Err, b.Backup.ID)
	}
	if !errors.Is(o.ReuseRefused, ErrNoEarlierChange) {
		t.Errorf("reuse refused: %v; want ErrNoEarlierChange", o.ReuseRefused)
	}
	if rec.Prior != nil {
		t.Errorf("the record's floor %v; want none", rec.Prior)
	}
	if n := f.srv.Stats().BackupsQueued[acct] - queued; n != 1 {
		t.Errorf("%d backups queued, want one", n)
	}
}

// A change whose reuse_within joined another's running backup, which then
// failed, is retaken by a replacement that may reuse any good backup above
// the previous change's floor, as the first attempt could: not only one
// newer than the page that attempt read (deep-run seed 39680).
func TestCreateTriggerRetakeReusesAboveThePreviousChange(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	waited := RunOptions{WaitOnConflict: true, WaitForCompletion: true}
	prev := c.run(ctx, acct, waited) // the previous change's backup, gone ahead
	if prev.Err != nil {
		t.Fatal(prev.Err)
	}
	floor := look(t, c, acct).mark
	good := c.run(ctx, acct, waited) // another pipeline's, since
	if good.Err != nil {
		t.Fatal(good.Err)
	}
	f.srv.SetAccountFailure(acct, "disk full")
	doomed := c.run(ctx, acct, RunOptions{}) // another pipeline's, running, to fail
	reuse := RunOptions{ReuseWithin: 10 * time.Minute, Since: floor, WaitOnConflict: true}
	joined := c.backUp(ctx, acct, reuse)
	if !joined.Reused || joined.Backup == nil || joined.Backup.ID != doomed.Backup.ID {
		t.Fatalf("the first attempt: %+v (%v); want it to join %s", joined.Backup, joined.Err, doomed.Backup.ID)
	}
	rec := Record{Prior: floor}.after(joined)
	f.clock.Advance(time.Minute)
	f.mockClock.Advance(time.Minute)
	f.srv.SetAccountFailure(acct, "")
	before := f.srv.Stats().BackupsQueued[acct]
	reps := newReplacements()
	reps.remember(acct, "v2", rec)
	reuse.Since, reuse.WaitForCompletion = nil, true
	o, _ := c.createTrigger(ctx, reps, acct, "v2", reuse)
	if !o.Reused || o.Backup == nil || o.Backup.ID != good.Backup.ID {
		t.Fatalf("the retake: %+v reused %t (%v); want %s reused", o.Backup, o.Reused, o.Err, good.Backup.ID)
	}
	if queued := f.srv.Stats().BackupsQueued[acct] - before; queued != 0 {
		t.Errorf("%d backups queued, want none", queued)
	}
}

// A trigger the service accepted (202), its backup hidden by a listing
// that lags longer than the grace for a lost answer, is never sent again by
// its tainted replacement, which has only the state (trigger_accepted), not
// the stored record: a second trigger would be a second backup for the
// change (simulation seed 328).
func TestCreateTriggerNeverResendsAnAcceptedTrigger(t *testing.T) {
	t.Parallel()
	f, c, acct, o := acceptedNotListed(t, RunOptions{WaitForCompletion: true})
	ctx := context.Background()
	rec := Record{}.after(o)
	tainted, err := FromTriggerState(Record{TriggeredAt: rec.TriggeredAt, Prior: rec.Prior, Confirmed: true}, nil)
	if err != nil || !tainted.Confirmed {
		t.Fatalf("from the state alone: %+v, %v; want it accepted", tainted, err)
	}
	f.clock.Advance(2 * DefaultUncertainGrace)
	f.mockClock.Advance(2 * DefaultUncertainGrace)
	reps := newReplacements()
	reps.remember(acct, "v1", tainted)
	o, _ = c.createTrigger(ctx, reps, acct, "v1", RunOptions{WaitForCompletion: true})
	if queued := f.srv.Stats().BackupsQueued[acct]; o.Kind != NotIdentified || queued != 1 {
		t.Fatalf("the replacement: %d (%v), %d backups queued; want it still looked for, one backup", o.Kind, o.Err, queued)
	}
}

// A create that does not wait, adopting a replaced trigger's accepted
// trigger whose backup it cannot find, says so (Adopted): its change has not
// gone ahead on that backup, which may have failed unseen (deep-run seed
// 382733); its own trigger not found is not one.
func TestCreateTriggerSaysItAdoptedATriggerNotFound(t *testing.T) {
	t.Parallel()
	f, c, acct, o := acceptedNotListed(t, RunOptions{})
	if o.Adopted {
		t.Fatalf("the trigger says it adopted another's (%v); want its own", o.Err)
	}
	reps := newReplacements()
	reps.remember(acct, "v1", Record{}.after(o))
	o, _ = c.createTrigger(context.Background(), reps, acct, "v1", RunOptions{})
	if queued := f.srv.Stats().BackupsQueued[acct]; o.Kind != NotIdentified || !o.Adopted || queued != 1 {
		t.Fatalf("the replacement: %d adopted %t (%v), %d backups queued; want the accepted trigger adopted, not found, one backup",
			o.Kind, o.Adopted, o.Err, queued)
	}
}

// acceptedNotListed is a trigger the service accepted (202) whose backup a
// listing lagging 5 minutes hides: not identified.
func acceptedNotListed(t *testing.T, opts RunOptions) (*runFixture, *Runner, string, Outcome) {
	t.Helper()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	f.srv.SetListingLag(5 * time.Minute)
	o := c.backUp(context.Background(), acct, opts)
	if o.Kind != NotIdentified || !o.Confirmed {
		t.Fatalf("the trigger: %d confirmed %t (%v); want it accepted, not identified", o.Kind, o.Confirmed, o.Err)
	}
	return f, c, acct, o
}

// A replaced trigger's backup not identified is never one that another
// create of the same process queued: that one's change went ahead on it
// (deep-run seed 74910: a create_before_destroy trigger's new backup,
// taken by another trigger created with the replaced one's value).
func TestCreateTriggerNeverAdoptsAnotherCreatesBackup(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	lost := Record{Phase: phaseUnidentified, TriggeredAt: f.clock.Now(), Prior: look(t, c, acct).mark} // its trigger queued nothing
	reps := newReplacements()
	other, _ := c.createTrigger(ctx, reps, acct, "v9", RunOptions{WaitForCompletion: true})
	if other.Backup == nil {
		t.Fatalf("the other create: %d, %v", other.Kind, other.Err)
	}
	reps.remember(acct, "v2", lost)
	o, _ := c.createTrigger(ctx, reps, acct, "v2", RunOptions{WaitForCompletion: true})
	if o.Backup != nil && o.Backup.ID == other.Backup.ID {
		t.Fatalf("the replacement took %s, the other create's backup (%d)", other.Backup.ID, o.Kind)
	}
}

// Its own backup, listed below one another create of the process took, is
// still found: the other's is skipped, not cut at (deep-run seed 482951:
// the other reused the account's newest backup, and the replacement failed
// in a healthy window).
func TestCreateTriggerFindsItsBackupBelowAnotherCreatesBackup(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	queuedOnce(t, c, acct)
	f.mockClock.Advance(time.Minute)
	before := look(t, c, acct).mark
	own := queuedOnce(t, c, acct)
	lost := Record{Phase: phaseUnidentified, Confirmed: true, TriggeredAt: own.CreatedAt, Prior: before}
	f.mockClock.Advance(time.Minute) // its own has ended
	reps := newReplacements()
	other, _ := c.createTrigger(ctx, reps, acct, "v9", RunOptions{WaitForCompletion: true})
	if other.Backup == nil || other.Backup.ID == own.ID {
		t.Fatalf("the other create: %d, %+v, %v; want a backup of its own", other.Kind, other.Backup, other.Err)
	}
	reps.remember(acct, "v2", lost)
	o, _ := c.createTrigger(ctx, reps, acct, "v2", RunOptions{})
	if o.Backup == nil || o.Backup.ID != own.ID {
		t.Fatalf("the replacement: %d %+v %v; want %s, its own, adopted", o.Kind, o.Backup, o.Err, own.ID)
	}
}

// A create that adopts its replaced trigger's backup keeps that record, and
// a backup the replaced trigger reused is still reused; a create that takes
// a new backup builds a new record on the replaced trigger's floor.
func TestCreateTriggerAdoptsTheReplacedRecord(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	before := look(t, c, acct).mark
	queued := queuedOnce(t, c, acct)
	replaced := Record{Phase: phaseIdentified, BackupID: queued.ID, Status: queued.Status, TriggeredAt: queued.CreatedAt,
		Prior: before, Reused: true}
	reps := newReplacements()
	reps.remember(acct, "v2", replaced)
	o, rec := c.createTrigger(ctx, reps, acct, "v2", RunOptions{})
	if o.Backup == nil || o.Backup.ID != queued.ID || !o.Reused || rec.BackupID != queued.ID {
		t.Fatalf("adopting: %d %v, reused %t, record %s; want %s adopted, still reused, its record kept", o.Kind, o.Err, o.Reused, rec, queued.ID)
	}
	// A replaced trigger whose lost answer queued nothing, long ago: a new backup, on a new record.
	lost := Record{Phase: phaseUnidentified, TriggeredAt: f.clock.Now().Add(-time.Hour), Prior: look(t, c, acct).mark}
	reps = newReplacements()
	reps.remember(acct, "v3", lost)
	o, rec = c.createTrigger(ctx, reps, acct, "v3", RunOptions{})
	if o.Backup == nil || o.Backup.ID == queued.ID || rec.Unidentified() || rec.BackupID != "" {
		t.Fatalf("retaking: %d %v %+v, record %s; want a new backup on a new record", o.Kind, o.Err, o.Backup, rec)
	}
}

// The claims of an account are the backups its creates queued or reused,
// never one they only read; progress still hears each event.
func TestReplacementsClaimWhatCreatesQueuedOrReused(t *testing.T) {
	t.Parallel()
	s := newReplacements()
	var heard int
	progress := s.claiming("acc_0123456789abcdef", func(Event) { heard++ })
	for kind, id := range map[EventKind]string{EventQueued: "bkp_q", EventReused: "bkp_r", EventStatus: "bkp_s", EventConflict: "bkp_c"} {
		progress(Event{Kind: kind, Backup: client.Backup{ID: id}})
	}
	claimed := s.claimed("acc_0123456789abcdef")
	if !claimed.has("bkp_q") || !claimed.has("bkp_r") || claimed.has("bkp_s") || claimed.has("bkp_c") || heard != 4 {
		t.Errorf("claimed %v, heard %d events; want bkp_q and bkp_r only, and 4 heard", claimed.IDs, heard)
	}
	if other := s.claimed("acc_fedcba9876543210"); other == nil || len(other.IDs) != 0 {
		t.Errorf("another account's claims: %v, want none, known", other)
	}
}

// A trigger sent again after an unknown outcome that meets a 409 whose
// backup no listing shows is not confirmed: the 409 proves that a backup
// runs, not that it is this trigger's (deep-run seed 510231: the previous
// change's, hidden by a listing that lagged since, and a trigger that does
// not wait went ahead on it).
func TestResendMeetingAHiddenBackupIsNotConfirmed(t *testing.T) {
	t.Parallel()
	f := newRunFixture(t)
	acct := f.srv.AccountIDs()[0]
	c := f.client(t)
	ctx := context.Background()
	queuedOnce(t, c, acct) // another's, running
	f.srv.SetListingLag(5 * time.Minute)
	l, err := c.look(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	tr, o := c.trigger(ctx, acct, l, true)
	if tr != nil || o.Kind != NotIdentified || o.Confirmed {
		t.Fatalf("%+v, %d confirmed %t (%v); want not identified, not confirmed", tr, o.Kind, o.Confirmed, o.Err)
	}
}

// A create beside a replaced trigger that went ahead before its backup was
// identified (its floor unknown) still never takes a backup that trigger
// listed before its own: a lagging listing hid it from this create's read,
// and listed it above that read afterwards (deep-run seed 538772).
func TestCreateTriggerNeverTakesWhatAReplacedTriggerListed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	old := fs.addOld(client.StatusSuccess, time.Hour)
	recent := fs.addOld(client.StatusSuccess, time.Minute)
	fs.mu.Lock()
	fs.hiddenFor[recent.ID] = 1 // the read before this create's trigger
	fs.mu.Unlock()
	reps := newReplacements()
	reps.remember(fs.account, "v1", Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now(), Confirmed: true, Ahead: true,
		Prior: &Mark{IDs: []string{recent.ID, old.ID}}})
	o, _ := w.createTrigger(context.Background(), reps, fs.account, "v2", RunOptions{})
	if o.Backup == nil || o.Backup.ID == recent.ID || !strings.HasPrefix(o.Backup.ID, "bkp_new") {
		t.Fatalf("outcome %d (%v), backup %+v; want the create's own backup, never %s", o.Kind, o.Err, o.Backup, recent.ID)
	}
}

// A trigger whose change went ahead before its backup was listed is kept
// while the listing does not show that backup: a replacement whose read
// before its trigger lags too would take it for its own (deep-run seed
// 650160). Once found, it is the replacement's floor: a read before the
// replacement's trigger that lags again, without it, sends nothing.
func TestDeleteTriggerKeepsOneGoneAheadOnABackupNotListed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	ctx := context.Background()
	old := fs.addOld(client.StatusSuccess, time.Hour)
	previous := fs.addOld(client.StatusSuccess, 5*time.Second) // the previous change's, accepted, never identified
	fs.mu.Lock()
	fs.hiddenFor[previous.ID] = 1
	fs.mu.Unlock()
	rec := Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now().Add(-6 * time.Second), Confirmed: true, Ahead: true,
		Prior: &Mark{IDs: []string{old.ID}}}
	if err := w.DeleteTrigger(ctx, fs.account, "v2", rec); !errors.Is(err, errNotListed) {
		t.Fatalf("delete while the listing hides the backup: %v; want it kept (errNotListed)", err)
	}
	if posts, _ := fs.counts(); posts != 0 {
		t.Fatalf("%d POSTs; want none", posts)
	}
	if err := w.DeleteTrigger(ctx, fs.account, "v2", rec); err != nil {
		t.Fatalf("delete once listed: %v", err)
	}
	fs.mu.Lock()
	fs.hiddenFor[previous.ID] = 1 // the read before the replacement's trigger lags again: it lacks the floor's newest
	fs.mu.Unlock()
	o, _ := w.CreateTrigger(ctx, fs.account, "v3", RunOptions{})
	if posts, _ := fs.counts(); o.Kind != Refused || !errors.Is(o.Err, errReadLost) || posts != 0 {
		t.Fatalf("outcome %d (%v), %d POSTs; want refused, nothing sent: never %s taken for the replacement's", o.Kind, o.Err, posts, previous.ID)
	}
}

// A trigger gone ahead whose backup is listed below the backups listed
// before it (a service clock set back), where it may stay, is deleted: its
// backup is listed, and kept from its replacement.
func TestDeleteTriggerTakesABackupListedBelowAsListed(t *testing.T) {
	t.Parallel()
	fs, w := newFaultyService(t)
	ctx := context.Background()
	l := datedAhead(t, fs, w)
	below := fs.addOld(client.StatusSuccess, 0) // the previous change's, accepted, never identified
	rec := Record{Phase: phaseUnidentified, TriggeredAt: fs.clock.Now(), Confirmed: true, Ahead: true, Prior: l.mark}
	if err := w.DeleteTrigger(ctx, fs.account, "v1", rec); err != nil {
		t.Fatalf("delete: %v; want it deleted", err)
	}
	if !w.replaced.predating(fs.account).has(below.ID) {
		t.Errorf("%s is not kept from the replacement: %v", below.ID, w.replaced.predating(fs.account))
	}
}
