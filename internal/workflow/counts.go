package workflow

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Which backup counts is decided from what the service lists, never by a record's time against a clock. The service runs one
// backup of an account at a time (409 otherwise), ids are unique, the listing is newest first, an ended record never changes
// (api-contract.md). An operation that may POST first reads the newest backups into a Mark: a backup later listed above
// all of it started after that read, whoever queued it. A clock set back may list a new one below the mark: unrecognised,
// it fails closed, or one listed above later (started since too) is followed, costing a backup if it fails (seed 15060).

// Mark is what one read of an account's first page showed: every backup's id. One listed above them all started since; one
// among or below them that is none of them was listed since (a clock set back stamps it below older ones). Nil: none known.
type Mark struct {
	IDs []string `json:"ids"`
	// below: a backup a listing read on past a first page showed above IDs[0], never stored: a first page that lists it,
	// and goes on, lists only backups started since the read (provenBelow).
	below string
	// readAt: an empty read's answer time (this machine's clock), never stored: all above it must have run since (ranSince).
	readAt time.Time
}

var errEmptyFirstPage = errors.New("the account's first page of backups is empty but names a next page, so what it lists is unknown")

func pageMark(p client.BackupsPage) (*Mark, error) {
	if len(p.Backups) == 0 && p.More {
		return nil, errEmptyFirstPage
	}
	m := &Mark{IDs: make([]string, 0, len(p.Backups))}
	for _, b := range p.Backups {
		m.IDs = append(m.IDs, b.ID)
	}
	return m, nil
}

// listsBeyond says whether p lists a backup the mark does not hold.
func (m *Mark) listsBeyond(p client.BackupsPage) bool {
	return slices.ContainsFunc(p.Backups, func(b client.Backup) bool { return !m.has(b.ID) })
}

// has says whether id, a backup's, is in the mark; never for none.
func (m *Mark) has(id string) bool { return m != nil && id != "" && slices.Contains(m.IDs, id) }

// with is the mark and id, a backup no longer new (its operation's own, or one a conflict waited out). An empty read stays
// one: its ids follow an empty first one as stored (prior_backup_ids ",bkp_…"), for id proves no absence above it (ranSince).
func (m *Mark) with(id string) *Mark {
	switch {
	case m == nil, id == "", m.has(id):
		return m
	case len(m.IDs) == 0 && !m.readAt.IsZero():
		return emptyReadWith([]string{id}, m.readAt)
	}
	return &Mark{IDs: append(slices.Clip(m.IDs), id), below: m.below, readAt: m.readAt}
}

// emptyReadWith is the mark of an empty read at readAt (zero: unknown) joined by ids, after its empty first one as stored.
func emptyReadWith(ids []string, readAt time.Time) *Mark {
	return &Mark{IDs: append([]string{""}, ids...), readAt: readAt}
}

// readEmpty says whether m was made from a read that listed nothing.
func (m *Mark) readEmpty() bool { return m != nil && (len(m.IDs) == 0 || m.IDs[0] == "") }

// anchored says whether m has an anchor: a backup its read listed.
func (m *Mark) anchored() bool { return m != nil && !m.readEmpty() }

func (m *Mark) without(id string) *Mark {
	if !m.has(id) {
		return m
	}
	return &Mark{IDs: slices.DeleteFunc(slices.Clone(m.IDs), func(s string) bool { return s == id })}
}

// union is what both marks hold: a backup above it is new since both reads. After an empty read a, absence is proven from
// the later empty read (ranSince). None when either is unknown.
func union(a, b *Mark) *Mark {
	if a == nil || b == nil {
		return nil
	}
	u := a
	for _, id := range b.IDs {
		u = u.with(id)
	}
	if u.readEmpty() && b.readEmpty() && b.readAt.After(u.readAt) {
		u = &Mark{IDs: u.IDs, readAt: b.readAt}
	}
	return u
}

// joined is m, a read's mark, with n's backups: an empty read stays one (its ids after an empty first one), proven by time
// alone (ranSince), whatever a union anchors (deep-run seed 414043: an empty read joined by another create's backup became
// anchored by it, and a backup listed above that one, older than the read, was adopted).
func (m *Mark) joined(n *Mark) *Mark {
	u := union(m, n)
	if m.readEmpty() && u.anchored() {
		return emptyReadWith(u.IDs, m.readAt)
	}
	return u
}

// then is m, a read's mark, and n, a later read's: n anchors it when it listed backups, as a first read that did would.
func (m *Mark) then(n *Mark) *Mark {
	if m.readEmpty() && n.anchored() {
		return union(n, m)
	}
	return union(m, n)
}

// above is what p lists above every backup of m: the backups started since m was read. m's anchor, its first id, is its
// read's newest backup (pageMark keeps a page's order; union and with keep it first): p must list it, or a listing read on
// past p must have shown it further down (provenBelow). Else nothing on p counts: a first page going on without it, or a
// listing ending without it (the service never removes a backup), is another listing, a wrong host's or a front's, beside
// which m's older backups prove nothing (simulation seeds 227, 493 and 815; edges_test.go). m's other backups may be missing:
// a bad earlier read must not hold every later change back. All of p is above an empty mark; nothing is above an unknown one.
func (m *Mark) above(p client.BackupsPage) []client.Backup {
	switch {
	case m == nil:
		return nil
	case len(m.IDs) == 0:
		return p.Backups
	case m.anchored() && !listed(p, m.IDs[0]) && !m.furtherDown(p):
		return nil
	}
	if i := slices.IndexFunc(p.Backups, func(b client.Backup) bool { return m.has(b.ID) }); i >= 0 {
		return p.Backups[:i]
	}
	return p.Backups
}

func listed(p client.BackupsPage, id string) bool {
	return slices.ContainsFunc(p.Backups, func(b client.Backup) bool { return b.ID == id })
}

// lostFrom: p, a listing that ends, lacks m's anchor, which the service never removes: p or m's read is another listing.
func (m *Mark) lostFrom(p client.BackupsPage) bool {
	return m.anchored() && !p.More && !listed(p, m.IDs[0])
}

// emptiedOf says whether p, an empty listing, lacks all of m's backups though m listed some: the service never removes one.
func (m *Mark) emptiedOf(p client.BackupsPage) bool {
	return m != nil && len(m.IDs) > 0 && len(p.Backups) == 0 && !p.More
}

// furtherDown says whether p goes on and lists the backup a listing read on past a first page showed above m's anchor.
func (m *Mark) furtherDown(p client.BackupsPage) bool {
	return p.More && m.below != "" && listed(p, m.below)
}

// unproven says whether p goes on without m's anchor: only a listing read past p can show every backup on p started since m.
func (m *Mark) unproven(p client.BackupsPage) bool {
	return m.anchored() && p.More && len(p.Backups) > 0 && !listed(p, m.IDs[0]) && !m.furtherDown(p)
}

// ranSince says whether what p lists above m, made from an empty read (whatever ids joined since), all started since it: run
// one at a time, their run times (service stamps) add up to at most the time from the read to p's answer (this machine's
// clock), plus a second each (whole-second stamps) and no clock allowance: with it, an old backup of 10 s counted after an
// empty read a moment before (deep-run seed 909198); a service clock stepped during a backup costs one instead. An empty
// page proves absence only so, within the horizon: a front's or a cache's empty page lists old backups afterwards as new,
// the more the later the look. Clocks measure durations only, and only to refuse; a mark whose read listed a backup needs
// none of it.
func (m *Mark) ranSince(p client.BackupsPage, horizon time.Duration) bool {
	if !m.readEmpty() {
		return true
	}
	above := m.above(p)
	switch {
	case len(above) == 0:
		return true // nothing to prove
	case m.readAt.IsZero(), p.At.Received.IsZero(), p.At.Received.Sub(m.readAt) > horizon:
		return false
	}
	var ran time.Duration
	for _, b := range above {
		if b.CompletedAt != nil && b.CompletedAt.After(b.CreatedAt) {
			ran = min(ran+min(b.CompletedAt.Sub(b.CreatedAt), maxRun), maxRun) // no overflow, however far the stamps
		}
	}
	return ran <= p.At.Received.Sub(m.readAt)+time.Duration(len(above))*time.Second
}

// maxRun bounds a sum of run times: longer than any wait.
const maxRun = 100 * 365 * 24 * time.Hour

// readSince is m, made from an empty read at t (this machine's clock); a mark whose read listed backups, as is.
func (m *Mark) readSince(t time.Time) *Mark {
	if !m.readEmpty() {
		return m
	}
	return &Mark{IDs: m.IDs, readAt: t}
}

// shownBelow is m, knowing that id is listed above m's anchor.
func (m *Mark) shownBelow(id string) *Mark {
	return &Mark{IDs: m.IDs, below: id, readAt: m.readAt}
}

// newest is each first page's newest backup an operation read: a listing that ends lists them all (the service never removes
// one); one that does not is another listing (a wrong host behind a load balancer), proving nothing (deep-run seed 332449:
// a trigger read from another history, which the service's first page contradicted, took that history's backup as its own).
type newest struct{ ids []string }

// newestKept bounds newest: a look reads a few dozen pages.
const newestKept = 16

// contradictedBy says whether p, a listing that ends, lacks a backup a first page read before it showed newest.
func (n *newest) contradictedBy(p client.BackupsPage) bool {
	return !p.More && slices.ContainsFunc(n.ids, func(id string) bool { return !listed(p, id) })
}

func (n newest) clone() newest { return newest{ids: slices.Clone(n.ids)} }

func (n *newest) add(p client.BackupsPage) {
	if len(p.Backups) == 0 || slices.Contains(n.ids, p.Backups[0].ID) {
		return
	}
	if len(n.ids) == newestKept {
		n.ids = n.ids[1:]
	}
	n.ids = append(n.ids, p.Backups[0].ID)
}

// rule is which backup counts for one operation; its methods alone decide. No time, no clock: identity is by listing, and a
// backup's age (reuse_within) is read from the page listing it, which lists only the account's own (the client drops others).
type rule struct {
	AccountID string
	// Mark: what a backup must be above: the read before the POST or, for reuse_within, the previous change's (nil: unknown).
	Mark *Mark
	// Claimed: backups other operations of this process queued or took for their changes: above Mark, yet never this one's.
	Claimed *Mark
	// Shown: each first page's newest read before the POST since Mark's (a conflict's wait): a listing that ends lists each.
	Shown newest
	// Unrecorded: the caller records no change (an action, a guard's destroy): a recent backup counts wherever listed.
	Unrecorded bool
	// ReuseWithin, when positive, lets a backup started within it before the page was read count (reuse_within).
	ReuseWithin time.Duration
	Allowance   time.Duration // how far the two readings of an age may disagree
}

// errNotCounted matches every reason check and reusable give.
var errNotCounted = errors.New("the backup does not count for this change")

// notCountedError is why a backup does not count; Cause is the clocks', for reuse_within.
type notCountedError struct {
	Backup client.Backup
	Why    string
	Cause  error
}

func (e *notCountedError) Unwrap() error { return e.Cause }

func (e *notCountedError) Error() string {
	return fmt.Sprintf("backup %s of account %s does not count for this change: %s", e.Backup.ID, e.Backup.AccountID, e.Why)
}

func (e *notCountedError) Is(target error) bool { return target == errNotCounted }

// counted says why the operation's b (by id or above its mark) does not count once ended: nil if good by a consistent record.
func counted(b client.Backup) error {
	if !b.Good() {
		return &notCountedError{Backup: b, Why: fmt.Sprintf("it is not a good backup by a consistent record (%s)", describeRecord(b))}
	}
	return nil
}

// countable says why b can never count: nil while it is in progress or good.
func countable(b client.Backup) error {
	if !b.Good() && !client.InProgress(b.Status) {
		return &notCountedError{Backup: b, Why: fmt.Sprintf("it ended with status %q", b.Status)}
	}
	return nil
}

// identify is the operation's backup on p: the oldest above the mark (nil: none). Any keeps the promise (all started since
// its read); the oldest is the trigger's own (one runs at a time; the read just precedes the POST); later ones are others'.
func (r rule) identify(p client.BackupsPage) *client.Backup {
	above := r.Mark.above(p)
	for i := len(above) - 1; i >= 0; i-- {
		if !r.Claimed.has(above[i].ID) {
			return &above[i]
		}
	}
	return nil
}

// unexplained is a backup below the mark its read did not list (a clock set back, a lagging listing), which identify skips:
// maybe the operation's own, so nothing is resent while it is listed; nil: a resend cannot double a backup already listed.
func (r rule) unexplained(p client.BackupsPage) *client.Backup {
	for i := len(r.Mark.above(p)); i < len(p.Backups); i++ {
		if !r.Mark.has(p.Backups[i].ID) {
			return &p.Backups[i]
		}
	}
	return nil
}

// ErrNoEarlierChange: reuse_within takes no shortcut for a change whose previous change left no mark the provider can read.
var ErrNoEarlierChange = errors.New("this trigger's state records no earlier change of it (it is created for the first time, its replaced " +
	"trigger was not deleted first by this command, as with create_before_destroy, or a runner was killed between the two; or another " +
	"trigger of its account replaced in this command has no known prior_backup_ids, and Terraform does not say which one this replaces), " +
	"so a backup of the previous change could not be told from a later one")

// ErrEmptyEarlierChange: reuse_within takes no shortcut above a previous change whose listing showed no backup: an empty
// page proves no absence afterwards (Mark.ranSince), so a backup it hid may predate that change.
var ErrEmptyEarlierChange = errors.New("this trigger's previous change went ahead on a listing of the account that showed no backup " +
	"(prior_backup_ids empty, or starting with an empty entry), which a cache's or a wrong host's empty page also shows, so a " +
	"backup of that change's time could not be told from a later one")

// reusable is the newest backup p lists that reuse_within lets count: above the previous change's mark, in progress or good,
// in the window by the older of its two readings (age). refused: why none was reused when one may have been; nil, nil: none.
func (r rule) reusable(p client.BackupsPage) (found *client.Backup, age time.Duration, refused error) {
	candidates := p.Backups
	if !r.Unrecorded && r.Mark != nil {
		candidates = r.Mark.above(p)
	}
	for i, b := range candidates {
		if countable(b) != nil {
			continue
		}
		age, err := ageOf(b, p.At, r.Allowance)
		switch {
		case err != nil:
			return nil, 0, err
		case age < -r.Allowance, age > r.ReuseWithin:
			continue // dated in the future of both clocks (its age cannot be read), or too old
		case !r.Unrecorded && r.Mark == nil:
			return nil, 0, ErrNoEarlierChange // it may be the previous change's
		case !r.Unrecorded && r.Mark.readEmpty():
			return nil, 0, ErrEmptyEarlierChange // it may have been hidden from the previous change
		}
		return &candidates[i], max(age, 0), nil
	}
	return nil, 0, nil
}

// ageOf is how long before its page's answer b started, the older of the service's reading (the answer's Date) and this
// machine's (the record's time as its own); an error when the service's clock is unreadable or apart beyond the allowance.
func ageOf(b client.Backup, at client.AnswerTime, allowance time.Duration) (time.Duration, error) {
	if at.Service.IsZero() {
		return 0, errors.New("the service's clock could not be read from the listing's answer (no Date header that parses and is " +
			"within a year of this machine's clock), so reuse_within cannot be measured")
	}
	// Sub saturates, and is never negated: no overflow however far off.
	ahead, behind := at.Service.Sub(at.Received), at.Received.Sub(at.Service)
	switch {
	case ahead > allowance:
		return 0, fmt.Errorf("the service's clock is %s ahead of this machine's, beyond the %s allowance, so reuse_within cannot be measured",
			ahead.Round(time.Second), allowance)
	case behind > allowance:
		return 0, fmt.Errorf("the service's clock is %s behind this machine's, beyond the %s allowance, so reuse_within cannot be measured",
			behind.Round(time.Second), allowance)
	}
	return max(at.Service.Sub(b.CreatedAt), at.Received.Sub(b.CreatedAt)), nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// describeRecord says what a backup's record holds, for a contradiction.
func describeRecord(b client.Backup) string {
	completed, errText := "no completed_at", "no error"
	if b.CompletedAt != nil {
		completed = "completed_at " + stamp(*b.CompletedAt)
	}
	if b.Error != nil && *b.Error != "" {
		errText = "an error"
	}
	return fmt.Sprintf("status %q, created_at %s, %s, %s", b.Status, stamp(b.CreatedAt), completed, errText)
}

// markOf is the mark of a page listing backup (the outcome's), with it: the next change's floor if it goes ahead now.
func markOf(p *client.BackupsPage, backup string) *Mark {
	if p == nil {
		return nil
	}
	m, _ := pageMark(*p) // nil for an empty first page that goes on (errEmptyFirstPage), which with keeps
	return m.with(backup)
}
