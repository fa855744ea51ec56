package client

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Bounds of one listing, so that a service that keeps sending cursors
// cannot make a plan page forever; a real listing is far below them.
const (
	maxListPages   = 2000     // 100,000 records
	maxListBytes   = 32 << 20 // encoded
	maxBarrenPages = 3        // pages in a row with a cursor and no new record
)

// Errors that stop a listing the service would never let end.
var (
	errRepeatedCursor = errors.New("the service returned a cursor it had already returned")
	errListingTooLong = errors.New("the listing passed the most the provider reads")
	errBarrenPages    = errors.New("the service kept returning pages with a next cursor and no new records")
	errOversizedPage  = errors.New("a page held more records than the limit asked for")
)

// ListingError stops a listing: which listing, how far it got, and why.
type ListingError struct {
	Path         string
	Pages, Items int
	Err          error
}

func (e *ListingError) Error() string {
	return fmt.Sprintf("GET %s: stopped after %d page(s) and %d record(s): %v", e.Path, e.Pages, e.Items, e.Err)
}

func (e *ListingError) Unwrap() error { return e.Err }

// ListOptions shape a listing.
type ListOptions struct {
	Order Order // empty: the service's default (desc); ignored without an order
	Max   int   // stop after this many items; 0: all
	// Skipped, when set, is called once at the end with the count of records
	// left out for a malformed id, and one of them (cleaned).
	Skipped func(count int, example string)
	// Ended, when set, is called once when the listing stops without an
	// error: complete is false when Max, Pages or the caller left records unread.
	Ended func(complete bool)
	Pages int // when positive, the listing stops after that many pages
	// Unbroken: a refused cursor stops the listing with its error, not a restart, so that every
	// record comes from one pass, each page reached by the cursor of the one before.
	Unbroken bool
	answered func(AnswerTime) // when set, told when each page's answer came
	// from, when set, is the cursor the listing starts from (with Unbroken: a refused one is never
	// followed by the first page); next, when set, is told each page's next cursor ("" at the end).
	from string
	next func(string)
}

// listing pages through path; after an invalid-cursor 400 it restarts once,
// as the API document says. newSeen (nil: drop repeated ids) may stop it.
func listing[T any](ctx context.Context, c *Client, path string, opts ListOptions, idOf func(*T) string, accept func(*T) bool, newSeen func() seenRecords[T]) iter.Seq2[T, error] {
	if opts.Ended == nil {
		opts.Ended = func(bool) {}
	}
	return func(yield func(T, error) bool) {
		var zero T
		yielded, pages, size, barren := 0, 0, 0, 0
		skipped, example := 0, ""
		defer func() {
			if skipped == 0 {
				return
			}
			c.opts.Logger.Warn(ctx, "the service listed records whose id is malformed; they were left out",
				map[string]any{"path": path, "count": skipped, "example": example})
			if opts.Skipped != nil {
				opts.Skipped(skipped, example)
			}
		}()
		stop := func(err error) {
			yield(zero, &ListingError{Path: c.base.EscapedPath() + path, Pages: pages, Items: yielded, Err: err})
		}
		var seen seenRecords[T] = idsSeen[T]{}
		if newSeen != nil {
			seen = newSeen()
		}
		restarted, reread := false, 0
	restart:
		seenCursors := map[string]struct{}{}
		cursor, pass := "", 0 // pass: pages read since the listing (re)started
		if !restarted {
			cursor = opts.from
		}
		for {
			if pages >= maxListPages {
				stop(fmt.Errorf("%w (%d pages)", errListingTooLong, maxListPages))
				return
			}
			q := url.Values{"limit": {strconv.Itoa(pageSize)}}
			if cursor != "" {
				q.Set("cursor", cursor)
			} else if opts.Order != "" {
				q.Set("order", string(opts.Order))
			}
			p := &pageDecoder[T]{accept: accept, idOf: idOf, text: c.guard}
			err := c.do(ctx, call{method: "GET", path: path, query: q, idempotent: true}, p)
			if err != nil {
				if cursor != "" && !restarted && !opts.Unbroken && errors.Is(err, errBadRequest) {
					c.opts.Logger.Warn(ctx, "the service refused a listing cursor; restarting the listing from its first page",
						map[string]any{"path": path, "error": err.Error()})
					restarted = true
					reread = pass // the pages read again hold nothing new: not barren
					seen.restart()
					goto restart
				}
				if errors.Is(err, errOversizedPage) {
					stop(err)
					return
				}
				yield(zero, err)
				return
			}
			pages++
			pass++
			size += p.size
			if opts.answered != nil {
				opts.answered(p.at)
			}
			if opts.next != nil && p.hasNext() {
				opts.next(*p.Pagination.NextCursor)
			}
			if skipped == 0 {
				example = p.first // "" on a page without malformed records
			}
			skipped += p.malformed
			// The whole page is checked before any of it is handed out: a caller that
			// stops at its first record still gets only a page that holds together.
			fresh := make([]int, 0, len(p.Data)) // the records not seen before
			for i := range p.Data {
				repeat, err := seen.see(idOf(&p.Data[i]), &p.Data[i], pages)
				if err != nil {
					stop(err)
					return
				}
				if !repeat {
					fresh = append(fresh, i)
				}
			}
			for n, i := range fresh {
				yielded++
				if !yield(p.Data[i], nil) || opts.Max > 0 && yielded >= opts.Max {
					opts.Ended(n == len(fresh)-1 && !p.hasNext())
					return
				}
			}
			if !p.hasNext() {
				opts.Ended(true)
				return
			}
			if opts.Pages > 0 && pages >= opts.Pages {
				opts.Ended(false)
				return
			}
			barren++
			if len(fresh) > 0 || pass <= reread {
				barren = 0
			}
			next := *p.Pagination.NextCursor
			_, again := seenCursors[next]
			switch {
			case again:
				stop(errRepeatedCursor)
				return
			case barren >= maxBarrenPages:
				stop(fmt.Errorf("%w (%d pages in a row)", errBarrenPages, barren))
				return
			case size > maxListBytes:
				stop(fmt.Errorf("%w (%d MiB)", errListingTooLong, maxListBytes>>20))
				return
			}
			seenCursors[next] = struct{}{}
			cursor = next
		}
	}
}

// pageDecoder decodes one page of a listing without ever holding more than
// pageSize records, and leaves out the records accept refuses.
type pageDecoder[T any] struct {
	accept func(*T) bool // may complete the record (a backup's account)
	idOf   func(*T) string
	text   textGuard

	Data       []T
	Pagination pagination
	size       int        // encoded length
	malformed  int        // records left out for a malformed id
	first      string     // one of them, for the warning
	at         AnswerTime // when the page's answer came
}

func (d *pageDecoder[T]) answeredAt(at AnswerTime) { d.at = at }

type pagination struct {
	Limit      int     `json:"limit"`
	NextCursor *string `json:"next_cursor"`
}

// hasNext says whether the page names a next one.
func (d *pageDecoder[T]) hasNext() bool {
	return d.Pagination.NextCursor != nil && *d.Pagination.NextCursor != ""
}

// decodeFrom reads a page from dec in one pass, records as they come (a listing page is most
// of what a wait reads). Keys match as encoding/json matches a struct's (case folded); every
// data value must be an array of records, and the last one is the page's.
func (d *pageDecoder[T]) decodeFrom(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err // null: no data array, as admit says
	}
	if tok != json.Delim('{') {
		return errors.New("the listing is not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "data"):
			err = d.decodeData(dec)
		case strings.EqualFold(key, "pagination"):
			err = dec.Decode(&d.Pagination)
		default:
			err = dec.Decode(new(json.RawMessage)) // skipped
		}
		if err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	d.size = int(dec.InputOffset())
	return nil
}

// decodeData reads the data array, leaving out the records accept refuses.
func (d *pageDecoder[T]) decodeData(dec *json.Decoder) error {
	d.Data, d.malformed, d.first = nil, 0, ""
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil:
		return nil // null is no data array: admit says so
	case tok != json.Delim('['):
		return errors.New("the listing's data is not an array")
	}
	d.Data = make([]T, 0, pageSize)
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		// A record without an id is kept, for admit to refuse the page.
		if id := d.idOf(&v); id != "" && !d.accept(&v) {
			if d.malformed == 0 {
				d.first = strconv.Quote(d.text.cut(d.text.clean(id), 40))
			}
			d.malformed++
			continue
		}
		if len(d.Data) == pageSize {
			return fmt.Errorf("%w (%d)", errOversizedPage, pageSize)
		}
		d.Data = append(d.Data, v)
	}
	_, err = dec.Token()
	return err
}

// admit requires the data array (null is not an empty page) and admits every record.
func (d *pageDecoder[T]) admit(g textGuard) error {
	if d.Data == nil {
		return missing("the listing's data array")
	}
	for i := range d.Data {
		if r, ok := any(&d.Data[i]).(record); ok {
			if err := r.admit(g); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	}
	return nil
}

// listingClockAllowance is how much newer than a record listed before it a
// record of a newest-first listing may be (the writers' clocks may differ).
const listingClockAllowance = 10 * time.Second

// ErrInconsistentListing matches an *inconsistentListingError.
var ErrInconsistentListing = errors.New("the listing is out of order or inconsistent")

// inconsistency is what is wrong with two records of a listing.
type inconsistency int

// Kinds of inconsistency.
const (
	outOfOrder    inconsistency = iota + 1 // newer than one listed before it, beyond the allowance
	changedRepeat                          // listed twice with contents it cannot have moved on to
)

// listedRecord is one record as a listing showed it, enough to name it.
type listedRecord struct {
	ID        string
	CreatedAt time.Time
	Status    string
	Page      int // from 1, over the whole listing
}

func (r listedRecord) String() string {
	return fmt.Sprintf("%s (%s, created_at %s, page %d)", r.ID, r.Status, r.CreatedAt.UTC().Format(time.RFC3339Nano), r.Page)
}

// inconsistentListingError names two records of a listing that cannot both be right; in a *ListingError.
type inconsistentListingError struct {
	Kind           inconsistency
	Earlier, Later listedRecord
}

func (e *inconsistentListingError) Error() string {
	switch e.Kind {
	case outOfOrder:
		return fmt.Sprintf("%v: backup %v is listed after backup %v but is %v newer, in a listing that is newest first (clocks may differ by %v)",
			ErrInconsistentListing, e.Later, e.Earlier, e.Later.CreatedAt.Sub(e.Earlier.CreatedAt), listingClockAllowance)
	default:
		return fmt.Sprintf("%v: backup %s is listed twice with different contents: first as %v, then as %v",
			ErrInconsistentListing, e.Earlier.ID, e.Earlier, e.Later)
	}
}

// Is makes errors.Is(err, ErrInconsistentListing) true.
func (e *inconsistentListingError) Is(target error) bool { return target == ErrInconsistentListing }

// seenRecords is what a listing remembers of the records it has read, to
// drop a repeat and, for a checked listing, refuse an inconsistent record.
type seenRecords[T any] interface {
	see(id string, r *T, page int) (repeat bool, err error)
	restart() // the listing starts again from its first page
}

// idsSeen remembers ids only, for the listings that are not checked.
type idsSeen[T any] map[string]struct{}

func (s idsSeen[T]) see(id string, _ *T, _ int) (bool, error) {
	_, repeat := s[id]
	s[id] = struct{}{}
	return repeat, nil
}

func (idsSeen[T]) restart() {}

// backupSeen is what a backups listing keeps of each backup: a few words, not the record.
type backupSeen struct {
	listedRecord
	sum uint64 // every field the record holds, hashed
}

// backupsChecked checks a backups listing as it is read: newest first, and
// every id listed again as it was or as it could have become.
type backupsChecked struct {
	seed   maphash.Seed
	seen   map[string]backupSeen
	oldest listedRecord // the oldest record of the current pass
}

func newBackupsChecked() *backupsChecked {
	return &backupsChecked{seed: maphash.MakeSeed(), seen: map[string]backupSeen{}}
}

func (s *backupsChecked) restart() { s.oldest = listedRecord{} }

func (s *backupsChecked) see(_ string, b *Backup, page int) (bool, error) {
	now := backupSeen{listedRecord{ID: b.ID, CreatedAt: b.CreatedAt, Status: internStatus(b.Status), Page: page}, s.digest(b)}
	if before, ok := s.seen[b.ID]; ok {
		if before.sum == now.sum {
			return true, nil
		}
		if !movedOn(before, now) {
			return false, &inconsistentListingError{Kind: changedRepeat, Earlier: before.listedRecord, Later: now.listedRecord}
		}
		s.seen[b.ID] = now // a later change is judged against this one
		return true, nil
	}
	// A repeat is not judged by its place: offset cursors list again what a new backup pushed down.
	if s.oldest.ID != "" && b.CreatedAt.Sub(s.oldest.CreatedAt) > listingClockAllowance {
		return false, &inconsistentListingError{Kind: outOfOrder, Earlier: s.oldest, Later: now.listedRecord}
	}
	s.seen[b.ID] = now
	if s.oldest.ID == "" || b.CreatedAt.Before(s.oldest.CreatedAt) {
		s.oldest = now.listedRecord
	}
	return false, nil
}

// movedOn says whether a backup listed as before can have become now: it
// was in progress, has the same created_at, and did not go back to pending.
func movedOn(before, now backupSeen) bool {
	return InProgress(before.Status) && before.CreatedAt.Equal(now.CreatedAt) &&
		(before.Status != StatusRunning || now.Status != StatusPending)
}

// digest hashes every field of a backup, each length-prefixed or flagged
// so that no two records hash alike by how their fields split.
func (s *backupsChecked) digest(b *Backup) uint64 {
	var h maphash.Hash
	h.SetSeed(s.seed)
	var n [8]byte
	number := func(v int64) { binary.LittleEndian.PutUint64(n[:], uint64(v)); _, _ = h.Write(n[:]) }
	text := func(v string) { number(int64(len(v))); _, _ = h.WriteString(v) }
	at := func(t *time.Time) {
		if t == nil {
			_ = h.WriteByte(0)
			return
		}
		_ = h.WriteByte(1)
		number(t.Unix())
		number(int64(t.Nanosecond()))
	}
	text(b.AccountID)
	text(b.Status)
	at(&b.CreatedAt)
	at(b.CompletedAt)
	if b.Error == nil {
		_ = h.WriteByte(0)
	} else {
		_ = h.WriteByte(1)
		text(*b.Error)
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

// Collect gathers a listing into a slice, up to the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
