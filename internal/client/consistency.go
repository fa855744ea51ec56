package client

import (
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"time"
)

// ListingClockAllowance is how much newer than a record listed before it a
// record of a newest-first listing may be (the writers' clocks may differ).
const ListingClockAllowance = 10 * time.Second

// ErrInconsistentListing matches an *InconsistentListingError.
var ErrInconsistentListing = errors.New("the listing is out of order or inconsistent")

// Inconsistency is what is wrong with two records of a listing.
type Inconsistency int

// Kinds of Inconsistency.
const (
	OutOfOrder    Inconsistency = iota + 1 // newer than one listed before it, beyond the allowance
	ChangedRepeat                          // listed twice with contents it cannot have moved on to
)

// ListedRecord is one record as a listing showed it, enough to name it.
type ListedRecord struct {
	ID        string
	CreatedAt time.Time
	Status    string
	Page      int // from 1, over the whole listing
}

func (r ListedRecord) String() string {
	return fmt.Sprintf("%s (%s, created_at %s, page %d)", r.ID, r.Status, r.CreatedAt.UTC().Format(time.RFC3339Nano), r.Page)
}

// InconsistentListingError names the two records of a listing that cannot
// both be right; it reaches callers in a *ListingError.
type InconsistentListingError struct {
	Kind           Inconsistency
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
// drop a repeat and, for a checked listing, refuse an inconsistent record.
type seenRecords[T any] interface {
	see(r *T, page int) (repeat bool, err error)
	restart() // the listing starts again from its first page
}

// idsSeen remembers ids only, for the listings that are not checked.
type idsSeen[T any] struct {
	idOf func(*T) string
	ids  map[string]struct{}
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

// backupSeen is what a backups listing keeps of each backup: a few words,
// not the record.
type backupSeen struct {
	ListedRecord
	sum uint64 // every field the record holds, hashed
}

// backupsChecked checks a backups listing as it is read: newest first, and
// every id listed again as it was or as it could have become.
type backupsChecked struct {
	seed   maphash.Seed
	seen   map[string]backupSeen
	oldest ListedRecord // the oldest record of the current pass
}

func newBackupsChecked() *backupsChecked {
	return &backupsChecked{seed: maphash.MakeSeed(), seen: map[string]backupSeen{}}
}

func (s *backupsChecked) restart() { s.oldest = ListedRecord{} }

func (s *backupsChecked) see(b *Backup, page int) (bool, error) {
	now := backupSeen{ListedRecord{ID: b.ID, CreatedAt: b.CreatedAt, Status: internStatus(b.Status), Page: page}, s.digest(b)}
	if before, ok := s.seen[b.ID]; ok {
		if before.sum == now.sum {
			return true, nil
		}
		if !movedOn(before, now) {
			return false, &InconsistentListingError{Kind: ChangedRepeat, Earlier: before.ListedRecord, Later: now.ListedRecord}
		}
		s.seen[b.ID] = now // a later change is judged against this one
		return true, nil
	}
	// A repeat is not judged by its place: offset cursors list again what a
	// new backup pushed down.
	if s.oldest.ID != "" && b.CreatedAt.Sub(s.oldest.CreatedAt) > ListingClockAllowance {
		return false, &InconsistentListingError{Kind: OutOfOrder, Earlier: s.oldest, Later: now.ListedRecord}
	}
	s.seen[b.ID] = now
	if s.oldest.ID == "" || b.CreatedAt.Before(s.oldest.CreatedAt) {
		s.oldest = now.ListedRecord
	}
	return false, nil
}

// movedOn says whether a backup listed as before can have become now: it
// was in progress, has the same created_at, and did not go back to pending.
func movedOn(before, now backupSeen) bool {
	return InProgress(before.Status) && before.CreatedAt.Equal(now.CreatedAt) &&
		(before.Status != StatusRunning || now.Status != StatusPending)
}

// digest hashes every field of a backup.
func (s *backupsChecked) digest(b *Backup) uint64 {
	at := func(t *time.Time) string {
		if t == nil {
			return "none"
		}
		return fmt.Sprint(t.Unix(), t.Nanosecond())
	}
	errText := "none"
	if b.Error != nil {
		errText = strconv.Quote(*b.Error)
	}
	return maphash.String(s.seed, fmt.Sprintf("%q %q %s %s %s", b.AccountID, b.Status, at(&b.CreatedAt), at(b.CompletedAt), errText))
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
