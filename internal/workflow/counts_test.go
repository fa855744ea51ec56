package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// tm0 is the time the rule's tables are written around.
var tm0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// lb is a listed backup: id bkp_ followed by name padded to 16 characters,
// of account acc_0123456789abcdef, created at tm0 plus created.
func lb(name, status string, created time.Duration) client.Backup {
	b := client.Backup{ID: "bkp_" + (name + strings.Repeat("0", 16))[:16], AccountID: "acc_0123456789abcdef", Status: status, CreatedAt: tm0.Add(created)}
	if !client.InProgress(status) {
		done := b.CreatedAt.Add(time.Minute)
		b.CompletedAt = &done
	}
	if status == client.StatusFailed {
		text := "quota exceeded"
		b.Error = &text
	}
	return b
}

func ids(bs []client.Backup) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

func page(more bool, bs ...client.Backup) client.BackupsPage {
	return client.BackupsPage{Backups: bs, More: more, At: client.AnswerTime{Received: tm0.Add(time.Hour), Service: tm0.Add(time.Hour)}}
}

func mark(bs ...client.Backup) *Mark { return &Mark{IDs: ids(bs)} }

const (
	stRunning = client.StatusRunning
	stPending = client.StatusPending
	stSuccess = client.StatusSuccess
	stFailed  = client.StatusFailed
)

// The mark is the whole first page: any id on it, whatever its status,
// order or date, is no backup started since.
func TestMarkOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		page client.BackupsPage
		want []string // nil: no mark
	}{
		{"every backup of the page, in progress or ended", page(true, lb("a", stRunning, 0), lb("b", stSuccess, -time.Hour), lb("c", stFailed, -2*time.Hour)),
			[]string{"bkp_a000000000000000", "bkp_b000000000000000", "bkp_c000000000000000"}},
		{"out of order too", page(false, lb("b", stSuccess, -time.Hour), lb("d", stPending, time.Hour)), []string{"bkp_b000000000000000", "bkp_d000000000000000"}},
		{"an empty listing", page(false), []string{}},
		{"an empty first page that names a next one", page(true), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := pageMark(tc.page)
			switch {
			case tc.want == nil && err == nil:
				t.Fatalf("mark %v; want none", m.IDs)
			case tc.want != nil && (err != nil || !slices.Equal(m.IDs, tc.want)):
				t.Fatalf("mark %v (%v); want %v", m, err, tc.want)
			}
		})
	}
}

// Each condition of "new since a mark", alone.
func TestMarkAbove(t *testing.T) {
	t.Parallel()
	a, b, c := lb("a", stRunning, 0), lb("b", stSuccess, -time.Hour), lb("c", stSuccess, -2*time.Hour)
	n1, n2 := lb("n1", stRunning, time.Hour), lb("n2", stSuccess, 30*time.Minute)
	for _, tc := range []struct {
		name string
		mark *Mark
		page client.BackupsPage
		want []string
	}{
		{"listed above the mark", mark(a, b), page(false, n1, a, b, c), ids([]client.Backup{n1})},
		{"above every backup of the mark, the one in progress too", mark(a, b), page(false, n2, b, n1, a, c), ids([]client.Backup{n2})},
		{"nothing above the mark", mark(a, b), page(false, a, b, c), []string{}},
		{"a backup of the mark is never new, wherever listed", mark(a, b), page(false, a, n1, b), []string{}},
		{"the mark pushed past the page, shown further down", mark(a, b).shownBelow(n2.ID), page(true, n1, n2), ids([]client.Backup{n1, n2})},
		{"the mark pushed past the page, not shown", mark(a, b), page(true, n1, n2), []string{}},
		{"shown below a backup this page does not list", mark(a, b).shownBelow(c.ID), page(true, n1, n2), []string{}},
		{"shown below, on a page that ends", mark(a, b).shownBelow(n2.ID), page(false, n1, n2), []string{}},
		{"the mark lost from a listing that ends", mark(a, b), page(false, n1, n2), []string{}},
		{"part of the mark lost from a listing that ends", mark(a, b), page(false, n1, b, c), []string{}},
		{"an older part of the mark lost from a listing that ends", mark(a, b), page(false, n1, a, c), ids([]client.Backup{n1})},
		{"the newest of the mark past a page that goes on, not shown", mark(a, b), page(true, n1, b), []string{}},
		{"the newest of the mark past a page that goes on, shown", mark(a, b).shownBelow(n1.ID), page(true, n1, b), ids([]client.Backup{n1})},
		{"the older part of the mark past a page that goes on", mark(a, b), page(true, n1, a), ids([]client.Backup{n1})},
		{"an older mark's backups beside a read another listing made", mark(c, b), page(true, n1, n2, b), []string{}},
		{"an empty mark: everything is new", mark(), page(false, n1, n2), ids([]client.Backup{n1, n2})},
		{"no mark: nothing is new", nil, page(false, n1, n2), []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ids(tc.mark.above(tc.page)); !slices.Equal(got, tc.want) {
				t.Fatalf("above: %v; want %v", got, tc.want)
			}
		})
	}
}

// A listing that ends empty shows a mark's backups removed only when the
// mark listed some; a page that goes on proves an anchored mark's backups
// below it only when it lists backups of its own.
func TestMarkListingShapes(t *testing.T) {
	t.Parallel()
	a, n := lb("a", stSuccess, 0), lb("n", stRunning, time.Hour)
	if !mark(a).emptiedOf(page(false)) {
		t.Error("a mark with a backup, then an empty listing that ends: want it emptied")
	}
	if mark().emptiedOf(page(false)) || mark(a).emptiedOf(page(true)) || mark(a).emptiedOf(page(false, n)) {
		t.Error("an empty mark, a page that goes on or one that lists a backup: want none emptied")
	}
	if mark(a).unproven(page(true)) {
		t.Error("an empty page that goes on: want it not unproven (nothing on it to prove)")
	}
	if !mark(a).unproven(page(true, n)) || mark(a).unproven(page(true, n, a)) || mark(a).unproven(page(false, n)) {
		t.Error("unproven: want only a page that goes on without the anchor")
	}
}

// An empty read proves what is listed above it new only by durations: the
// run times listed add up to at most the time since the read, plus a second
// per backup (whole-second stamps), and no clock allowance.
func TestMarkRanSince(t *testing.T) {
	t.Parallel()
	ran := func(name string, d time.Duration) client.Backup {
		b := lb(name, stSuccess, 0)
		done := b.CreatedAt.Add(d)
		b.CompletedAt = &done
		return b
	}
	read := (&Mark{IDs: []string{}}).readSince(tm0)
	answered := func(after time.Duration, bs ...client.Backup) client.BackupsPage {
		return client.BackupsPage{Backups: bs, At: client.AnswerTime{Received: tm0.Add(after)}}
	}
	const horizon = 90 * time.Second
	for _, tc := range []struct {
		name string
		page client.BackupsPage
		want bool
	}{
		{"nothing listed", answered(time.Minute), true},
		{"within the time since", answered(time.Minute, ran("a", 55*time.Second)), true},
		{"exactly the time since and a second", answered(time.Minute, ran("a", 61*time.Second)), true},
		{"a second longer", answered(time.Minute, ran("a", 62*time.Second)), false},
		{"two backups: a second each", answered(time.Minute, ran("a", 31*time.Second), ran("b", 31*time.Second)), true},
		{"two backups, a second longer", answered(time.Minute, ran("a", 31*time.Second), ran("b", 32*time.Second)), false},
		{"an old backup of 10 s a moment after the read (deep-run seed 909198)", answered(4*time.Millisecond, ran("a", 10*time.Second)), false},
		{"answered past the horizon", answered(horizon+time.Second, ran("a", time.Second)), false},
		{"an answer of unknown time", client.BackupsPage{Backups: []client.Backup{ran("a", time.Second)}}, false},
	} {
		if got := read.ranSince(tc.page, horizon); got != tc.want {
			t.Errorf("%s: ran since %t, want %t", tc.name, got, tc.want)
		}
	}
	if !mark(lb("a", stSuccess, 0)).ranSince(answered(0, ran("n", time.Hour)), horizon) {
		t.Error("a mark whose read listed a backup needs no durations")
	}
}

func TestMarkOperations(t *testing.T) {
	t.Parallel()
	a, b, c := lb("a", stRunning, 0), lb("b", stSuccess, -time.Hour), lb("c", stSuccess, -2*time.Hour)
	if got := mark(a).with(b.ID).with(a.ID); !slices.Equal(got.IDs, ids([]client.Backup{a, b})) {
		t.Errorf("with: %v", got.IDs)
	}
	if got := mark(a, b).without(a.ID); !slices.Equal(got.IDs, ids([]client.Backup{b})) {
		t.Errorf("without: %v", got.IDs)
	}
	if got := union(mark(a, b), mark(b, c)); !slices.Equal(got.IDs, ids([]client.Backup{a, b, c})) {
		t.Errorf("union: %v", got.IDs)
	}
	if union(mark(a), nil) != nil || union(nil, mark(a)) != nil || (*Mark)(nil).with(a.ID) != nil || (*Mark)(nil).has(a.ID) {
		t.Error("an unknown mark stays unknown")
	}
	read := (&Mark{IDs: []string{}}).readSince(tm0)
	if got := read.with(c.ID); !slices.Equal(got.IDs, []string{"", c.ID}) || !got.readEmpty() || !got.readAt.Equal(tm0) {
		t.Errorf("an empty read with a backup: %v (read at %v); want it shown empty first, still proven by time", got.IDs, got.readAt)
	}
	if got := read.with(c.ID).then(mark(a, b)); !slices.Equal(got.IDs, ids([]client.Backup{a, b, c})) || got.readEmpty() {
		t.Errorf("an empty read, then one that listed backups: %v; want the later read's anchor first", got.IDs)
	}
	if got := mark(a).then(read); !slices.Equal(got.IDs, ids([]client.Backup{a})) || got.readEmpty() {
		t.Errorf("a read, then an empty one: %v; want the first anchor kept", got.IDs)
	}
	if got := (&Mark{IDs: []string{}}).joined(mark(a)); !slices.Equal(got.IDs, []string{"", a.ID}) || !got.readEmpty() {
		t.Errorf("an empty read joined by a backup: %v; want it still an empty read (deep-run seed 414043)", got.IDs)
	}
	if got := mark(a).joined(mark(b)); !slices.Equal(got.IDs, ids([]client.Backup{a, b})) || got.readEmpty() {
		t.Errorf("a read joined by a backup: %v; want its anchor kept", got.IDs)
	}
	m := mark(a, b)
	_ = m.with(c.ID)
	_ = m.without(a.ID)
	if !slices.Equal(m.IDs, ids([]client.Backup{a, b})) {
		t.Errorf("with and without changed their mark: %v", m.IDs)
	}
}

// Each condition of counted and countable, alone.
func TestCountedAndCountable(t *testing.T) {
	t.Parallel()
	text := "disk full"
	good := lb("g", stSuccess, 0)
	with := func(f func(*client.Backup)) client.Backup { b := good; f(&b); return b }
	for _, tc := range []struct {
		name  string
		b     client.Backup
		check func(client.Backup) error
		why   string // "" when it counts
	}{
		{"a good backup", good, counted, ""},
		{"a success without completed_at", with(func(b *client.Backup) { b.CompletedAt = nil }), counted, "consistent record"},
		{"a success completed before it started", with(func(b *client.Backup) { v := tm0.Add(-time.Second); b.CompletedAt = &v }), counted, "consistent record"},
		{"a success with an error", with(func(b *client.Backup) { b.Error = &text }), counted, "consistent record"},
		{"a failed backup is not countable", lb("f", stFailed, 0), countable, `status "failed"`},
		{"one in progress is countable", lb("r", stRunning, 0), countable, ""},
		{"one in progress is not counted", lb("r", stRunning, 0), counted, "consistent record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.check(tc.b)
			switch {
			case tc.why == "" && err != nil:
				t.Fatalf("does not count: %v", err)
			case tc.why != "" && err == nil:
				t.Fatalf("counts; want it refused for %q", tc.why)
			case tc.why != "" && (!strings.Contains(err.Error(), tc.why) || !errors.Is(err, errNotCounted)):
				t.Fatalf("refused for %v; want %q", err, tc.why)
			}
		})
	}
}

// Which backup above the mark is the operation's.
func TestRuleIdentify(t *testing.T) {
	t.Parallel()
	old := lb("o", stSuccess, -time.Hour)
	for _, tc := range []struct {
		name string
		page client.BackupsPage
		want string // "": none
	}{
		{"the oldest listed above the mark, in progress", page(false, lb("d", stSuccess, 2*time.Hour), lb("r", stRunning, time.Hour), old), "bkp_r000000000000000"},
		{"the oldest listed above the mark, whatever its status", page(false, lb("d", stSuccess, 2*time.Hour), lb("f", stFailed, time.Hour), old), "bkp_f000000000000000"},
		// A look minutes later: its own ended, another pipeline's runs since (seed 110 of the simulation took that one).
		{"its own, ended, under another's in progress", page(false, lb("r", stRunning, 2*time.Hour), lb("d", stSuccess, time.Hour), old), "bkp_d000000000000000"},
		{"none above the mark", page(false, old), ""},
		{"none listed below it", page(false, old, lb("r", stRunning, time.Hour)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rule{AccountID: old.AccountID, Mark: mark(old)}
			got := r.identify(tc.page)
			if tc.want == "" && got != nil || tc.want != "" && (got == nil || got.ID != tc.want) {
				t.Fatalf("identified %v; want %q", got, tc.want)
			}
		})
	}
}

// A backup listed since, below or among the mark, stops a resend; one
// listed before, or above the mark (the trigger's own), does not.
func TestRuleUnexplained(t *testing.T) {
	t.Parallel()
	top, mid, old := lb("t", stSuccess, -time.Hour), lb("m", stSuccess, -2*time.Hour), lb("o", stFailed, -3*time.Hour)
	r := rule{AccountID: top.AccountID, Mark: mark(top, mid, old)}
	stamped := lb("s", stRunning, -90*time.Minute) // a clock set back: listed among the mark
	for _, tc := range []struct {
		name string
		page client.BackupsPage
		want string
	}{
		{"the page read before", page(false, top, mid, old), ""},
		{"listed among the mark", page(false, top, stamped, mid, old), stamped.ID},
		{"listed below the mark", page(false, top, mid, old, lb("u", stSuccess, -4*time.Hour)), "bkp_u000000000000000"},
		{"above the mark: the trigger's own", page(false, lb("n", stRunning, time.Hour), top, mid, old), ""},
		{"above and below: the one below", page(false, lb("n", stRunning, time.Hour), top, mid, stamped, old), stamped.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if b := r.unexplained(tc.page); b != nil {
				got = b.ID
			}
			if got != tc.want {
				t.Fatalf("unexplained %q; want %q", got, tc.want)
			}
		})
	}
}

// Each condition of reuse_within, alone.
func TestRuleReusable(t *testing.T) {
	t.Parallel()
	prev := lb("p", stSuccess, -50*time.Minute) // the previous change's, in its mark
	recent := lb("r", stSuccess, 40*time.Minute)
	at := func(service, received time.Duration) client.AnswerTime {
		return client.AnswerTime{Service: tm0.Add(service), Received: tm0.Add(received)}
	}
	listing := func(a client.AnswerTime, bs ...client.Backup) client.BackupsPage {
		return client.BackupsPage{Backups: bs, At: a}
	}
	r := rule{AccountID: recent.AccountID, Mark: mark(prev), ReuseWithin: 30 * time.Minute, Allowance: 10 * time.Second}
	with := func(f func(*rule)) rule { c := r; f(&c); return c }
	for _, tc := range []struct {
		name string
		rule rule
		page client.BackupsPage
		want string // the id reused; "" none
		why  string // in the refusal; "" none
	}{
		{"a good backup since the previous change, within the window", r, listing(at(time.Hour, time.Hour), recent, prev), recent.ID, ""},
		{"one in progress", r, listing(at(time.Hour, time.Hour), lb("r", stRunning, 40*time.Minute), prev), recent.ID, ""},
		{"a failed one is not", r, listing(at(time.Hour, time.Hour), lb("r", stFailed, 40*time.Minute), prev), "", ""},
		{"the previous change's, in the window, is not", with(func(r *rule) { r.ReuseWithin = 2 * time.Hour }), listing(at(time.Hour, time.Hour), prev), "", ""},
		{"listed below the previous change's mark", r, listing(at(time.Hour, time.Hour), prev, recent), "", ""},
		{"anywhere, for a caller that records no change", with(func(r *rule) { r.Unrecorded = true; r.ReuseWithin = 2 * time.Hour }), listing(at(time.Hour, time.Hour), prev), prev.ID, ""},
		{"no mark of the previous change", with(func(r *rule) { r.Mark = nil }), listing(at(time.Hour, time.Hour), recent, prev), "", "records no earlier change"},
		{"no mark, nothing in the window: nothing to refuse", with(func(r *rule) { r.Mark = nil }), listing(at(2*time.Hour, 2*time.Hour), recent, prev), "", ""},
		{"at the window's edge", r, listing(at(70*time.Minute, 70*time.Minute), recent, prev), recent.ID, ""},
		{"past the window", r, listing(at(70*time.Minute+time.Second, 70*time.Minute+time.Second), recent, prev), "", ""},
		{"the older reading wins: the service's", r, listing(at(70*time.Minute+5*time.Second, 70*time.Minute), recent, prev), "", ""},
		{"the older reading wins: this machine's", r, listing(at(70*time.Minute, 70*time.Minute+5*time.Second), recent, prev), "", ""},
		{"the service's clock ahead beyond the allowance", r, listing(at(time.Hour+11*time.Second, time.Hour), recent, prev), "", "11s ahead of this machine's"},
		{"the service's clock behind beyond the allowance", r, listing(at(time.Hour-4*time.Minute, time.Hour), recent, prev), "", "4m0s behind this machine's"},
		{"within the allowance", r, listing(at(time.Hour+10*time.Second, time.Hour), recent, prev), recent.ID, ""},
		{"no Date", r, listing(client.AnswerTime{Received: tm0.Add(time.Hour)}, recent, prev), "", "could not be read"},
		{"dated in the future of both clocks", r, listing(at(30*time.Minute, 30*time.Minute), recent, prev), "", ""},
		{"the newest of several", r, listing(at(time.Hour, time.Hour), lb("s", stSuccess, 50*time.Minute), recent, prev), "bkp_s000000000000000", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := tc.rule.reusable(tc.page)
			if tc.want == "" && got != nil || tc.want != "" && (got == nil || got.ID != tc.want) {
				t.Errorf("reused %v; want %q", got, tc.want)
			}
			if tc.why == "" && err != nil || tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)) {
				t.Errorf("refused: %v; want %q", err, tc.why)
			}
		})
	}
}

// The age of a backup read from Dates centuries off never overflows: the
// clocks read as apart, never as agreeing (an abs of math.MinInt64 did).
func TestAgeOfNeverOverflows(t *testing.T) {
	t.Parallel()
	b := lb("r", stSuccess, 0)
	for _, at := range []client.AnswerTime{
		{Service: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), Received: tm0},
		{Service: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), Received: tm0},
		{Service: tm0, Received: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
	} {
		if age, err := ageOf(b, at, 10*time.Second); err == nil {
			t.Errorf("%v: age %v; want the clocks apart", at, age)
		} else if !strings.Contains(err.Error(), "beyond the 10s allowance") {
			t.Errorf("%v: %v", at, err)
		}
	}
}

// The record's floor: what the next change counts above, kept in the
// state's attributes, and when it is unknown.
func TestRecordFloor(t *testing.T) {
	t.Parallel()
	before := mark(lb("t", stSuccess, -time.Hour))
	own := lb("n", stRunning, 0)
	o := Outcome{Kind: NotWaited, Backup: &own, Before: before, Seen: mark(own, lb("t", stSuccess, -time.Hour))}
	rec := Record{}.after(o)
	if rec.Ahead || rec.Prior.has(own.ID) || !slices.Equal(rec.Prior.IDs, before.IDs) {
		t.Fatalf("after the run, before it goes ahead: %+v", rec)
	}
	ahead := rec.goesAhead(o)
	if !ahead.Ahead || !ahead.Prior.has(own.ID) || ahead.floor() != ahead.Prior {
		t.Fatalf("gone ahead: %+v; want the page it was seen on, with it", ahead)
	}
	// Without the page it was seen on, the read before it with it.
	if got := rec.goesAhead(Outcome{Backup: &own}); !got.Prior.has(own.ID) || !got.Prior.has("bkp_t000000000000000") {
		t.Fatalf("gone ahead unseen: %+v", got)
	}
	// Read back from the state alone (a tainted object's Delete has no private state).
	for _, tc := range []struct {
		name  string
		r     Record
		ahead bool
	}{{"not gone ahead", rec, false}, {"gone ahead", ahead, true}} {
		back, err := FromTriggerState(Record{BackupID: tc.r.BackupID, Status: tc.r.Status, TriggeredAt: tc.r.TriggeredAt, Prior: tc.r.Prior}, nil)
		if err != nil || back.Ahead != tc.ahead || back.floor() != tc.r.Prior {
			t.Errorf("%s: read back as %+v (%v)", tc.name, back, err)
		}
	}
	// Not identified: looked for above the read before it; gone ahead, it gives no floor.
	un := Record{}.after(Outcome{Kind: NotIdentified, TriggeredAt: tm0, Confirmed: true, Before: before})
	if un.floor() != before {
		t.Errorf("not identified, not gone ahead: floor %v", un.floor())
	}
	if f := un.goesAhead(Outcome{}).floor(); f != nil {
		t.Errorf("not identified, gone ahead: floor %v; want none: its backup may be listed above any mark", f.IDs)
	}
	// Without its private state it is a tainted trigger's, whose change did not go ahead (seed 6773).
	back, err := FromTriggerState(Record{TriggeredAt: tm0, Prior: before}, nil)
	if err != nil || back.Phase != phaseUnidentified || back.Ahead || back.floor() != before {
		t.Errorf("not identified, without its private state: %+v (%v); want it looked for above its mark, not gone ahead", back, err)
	}
	// A replacement that queued nothing carries the floor it was given.
	if back, err := FromTriggerState(Record{Prior: before}, nil); err != nil || back.Phase != phaseNone || back.floor() != before {
		t.Errorf("a replacement without a backup: %+v (%v)", back, err)
	}
	if got := (Record{Prior: before}).after(Outcome{Kind: Refused}); got.floor() != before {
		t.Errorf("refused: %+v; want the floor carried", got)
	}
}

func TestStampAndDescribe(t *testing.T) {
	t.Parallel()
	if got := describeRecord(lb("f", stFailed, 0)); !strings.Contains(got, "an error") || !strings.Contains(got, "completed_at 2026-11-26T12:01:00Z") {
		t.Errorf("%s", got)
	}
	if got := fmt.Sprint(stamp(tm0.In(time.FixedZone("x", 3600)))); got != "2026-11-26T12:00:00Z" {
		t.Errorf("%s", got)
	}
}
