package client

import (
	"errors"
	"fmt"
	"hash/maphash"
	"time"
)

// A listing is checked, not trusted: the backups listing is newest first
// (api-contract), and a backup record never changes once its status is
// terminal. Over the pages one read goes through, a record that cannot be
// where it is stops the listing with an *InconsistentListingError, from
// the pages already in hand: the check costs no request.

// ListingClockAllowance is how much newer than a record listed before it a
// record of a newest-first listing may be: the clocks of the machines that
// wrote two records may disagree by that much.
const ListingClockAllowance = 10 * time.Second

// ErrInconsistentListing matches an *InconsistentListingError: the
// listing, or a proxy or replica in front of the service, answered pages
// that contradict each other or the documented order.
var ErrInconsistentListing = errors.New("the listing is out of order or inconsistent")

// Inconsistency is what is wrong with two records of a listing.
type Inconsistency int

// Kinds of Inconsistency.
const (
	// OutOfOrder: a record is newer, by more than ListingClockAllowance,
	// than one listed before it.
	OutOfOrder Inconsistency = iota + 1
	// ChangedRepeat: an id is listed twice with different contents, other
	// than a backup in progress that moved on (pending, running, then its
	// outcome) between the two.
	ChangedRepeat
)

// ListedRecord is one record as a listing showed it, enough to name it.
// Its id has the documented format (records without one are left out) and
// its status has passed the client's text guard.
type ListedRecord struct {
	ID        string
	CreatedAt time.Time
	Status    string
	// Page is the number of the page that held it, from 1, counted over
	// the whole listing (a restart after an invalid cursor goes on
	// counting).
	Page int
}

func (r ListedRecord) String() string {
	return fmt.Sprintf("%s (%s, created_at %s, page %d)", r.ID, r.Status, r.CreatedAt.UTC().Format(time.RFC3339Nano), r.Page)
}

// InconsistentListingError names the two records of a listing that cannot
// both be right. It reaches callers wrapped in a *ListingError, which
// names the listing; errors.Is(err, ErrInconsistentListing) matches it.
type InconsistentListingError struct {
	Kind Inconsistency
	// Earlier was listed before Later. For a ChangedRepeat both have the
	// same id.
	Earlier, Later ListedRecord
}

func (e *InconsistentListingError) Error() string {
	switch e.Kind {
	case OutOfOrder:
		return fmt.Sprintf("%v: backup %v is listed after backup %v but is %v newer, in a listing that is newest first (clocks may differ by %v)",
			ErrInconsistentListing, e.Later, e.Earlier, e.Later.CreatedAt.Sub(e.Earlier.CreatedAt), ListingClockAllowance)
	default:
		return fmt.Sprintf("%v: backup %s is listed twice with different contents: first as %v, then as %v",
			ErrInconsistentListing, e.Earlier.ID, e.Earlier, e.Later)
	}
}

// Is makes errors.Is(err, ErrInconsistentListing) true.
func (e *InconsistentListingError) Is(target error) bool { return target == ErrInconsistentListing }

// seenRecords is what a listing remembers of the records it has read, to
// tell a repeat (an id listed again: dropped) from a new record, and, for a
// checked listing, to refuse a record that cannot be where it is.
type seenRecords[T any] interface {
	// see takes the next record of the listing, on page page; repeat is
	// true for an id listed before with the same contents (or, for a
	// backup in progress, contents it could have moved on to).
	see(r *T, page int) (repeat bool, err error)
	// restart says that the listing starts again from its first page.
	restart()
}

// idsSeen remembers ids only: a repeated id is dropped, whatever it holds.
// It serves the listings that are not checked (accounts, audit logs),
// whose order the caller chooses.
type idsSeen[T any] struct {
	idOf func(*T) string
	ids  map[string]struct{}
}

func newIDsSeen[T any](idOf func(*T) string) *idsSeen[T] {
	return &idsSeen[T]{idOf: idOf, ids: map[string]struct{}{}}
}

func (s *idsSeen[T]) see(r *T, _ int) (bool, error) {
	id := s.idOf(r)
	if _, dup := s.ids[id]; dup {
		return true, nil
	}
	s.ids[id] = struct{}{}
	return false, nil
}

func (s *idsSeen[T]) restart() {}

// backupSeen is what a backups listing keeps of each backup: a few words
// per record, so that memory stays within the listing's bounds (at most
// MaxListPages*PageSize records), not the records themselves.
type backupSeen struct {
	created time.Time
	status  string
	sum     uint64 // every field the record holds, hashed
	page    int
}

// backupsChecked checks a backups listing as it is read: newest first,
// within ListingClockAllowance, and every id listed again either as it was
// or, for a backup in progress, as it could have become.
type backupsChecked struct {
	seed maphash.Seed
	seen map[string]backupSeen
	// oldest is the oldest record of the current pass, with its id: a new
	// record newer than it by more than the allowance is out of order.
	oldest   backupSeen
	oldestID string
}

func newBackupsChecked() *backupsChecked {
	return &backupsChecked{seed: maphash.MakeSeed(), seen: map[string]backupSeen{}}
}

func (s *backupsChecked) restart() { s.oldestID = "" }

func (s *backupsChecked) see(b *Backup, page int) (bool, error) {
	now := backupSeen{created: b.CreatedAt, status: internStatus(b.Status), sum: s.digest(b), page: page}
	if before, ok := s.seen[b.ID]; ok {
		if before.sum == now.sum {
			return true, nil
		}
		if !movedOn(before, now) {
			return false, &InconsistentListingError{Kind: ChangedRepeat, Earlier: before.record(b.ID), Later: now.record(b.ID)}
		}
		s.seen[b.ID] = now // a later change is judged against this one
		return true, nil
	}
	// A repeat is not judged by its place: a service whose cursors are
	// offsets lists again the records that a new backup pushed down.
	if s.oldestID != "" && b.CreatedAt.Sub(s.oldest.created) > ListingClockAllowance {
		return false, &InconsistentListingError{Kind: OutOfOrder, Earlier: s.oldest.record(s.oldestID), Later: now.record(b.ID)}
	}
	s.seen[b.ID] = now
	if s.oldestID == "" || b.CreatedAt.Before(s.oldest.created) {
		s.oldest, s.oldestID = now, b.ID
	}
	return false, nil
}

func (s backupSeen) record(id string) ListedRecord {
	return ListedRecord{ID: id, CreatedAt: s.created, Status: s.status, Page: s.page}
}

// movedOn says whether a backup listed as before can have become now: it
// was in progress, it was created at the same time, and it did not go back
// from running to pending. Anything else changed a record that the
// contract says never changes (a terminal one), or made it another backup.
func movedOn(before, now backupSeen) bool {
	return InProgress(before.status) && before.created.Equal(now.created) &&
		(before.status != StatusRunning || now.status != StatusPending)
}

// digest hashes every field of a backup, so that a repeat is compared
// without keeping the record.
func (s *backupsChecked) digest(b *Backup) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	str := func(v string) {
		var n [8]byte
		for i, l := 0, uint64(len(v)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		_, _ = h.Write(n[:])
		_, _ = h.WriteString(v)
	}
	tm := func(t time.Time) {
		bin, _ := t.UTC().MarshalBinary()
		str(string(bin))
	}
	str(b.AccountID)
	str(b.Status)
	tm(b.CreatedAt)
	if b.CompletedAt != nil {
		str("completed")
		tm(*b.CompletedAt)
	} else {
		str("")
	}
	if b.Error != nil {
		str("error")
		str(*b.Error)
	} else {
		str("")
	}
	return h.Sum64()
}

// internStatus shares the known statuses' text among every record kept.
func internStatus(s string) string {
	for _, known := range [...]string{StatusPending, StatusRunning, StatusSuccess, StatusFailed} {
		if s == known {
			return known
		}
	}
	return s
}
