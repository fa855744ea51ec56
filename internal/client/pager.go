package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
)

// Bounds of one listing, so that a service that keeps sending cursors
// cannot make a plan page forever; a real listing is far below them.
const (
	MaxListPages   = 2000     // 100,000 records
	MaxListBytes   = 32 << 20 // encoded
	maxBarrenPages = 3        // pages in a row with a cursor and no new record
)

// Errors that stop a listing the service would never let end.
var (
	ErrRepeatedCursor = errors.New("the service returned a cursor it had already returned")
	ErrListingTooLong = errors.New("the listing passed the most the provider reads")
	ErrBarrenPages    = errors.New("the service kept returning pages with a next cursor and no new records")
	ErrOversizedPage  = errors.New("a page held more records than the limit asked for")
)

// ListingError stops a listing: which listing, how far it got, and why.
type ListingError struct {
	Path  string
	Pages int
	Items int
	Err   error
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
	// error: complete is false when Max or the caller left records unread.
	Ended func(complete bool)
}

// listing pages through path; after an invalid-cursor 400 it restarts once,
// as the API document says. newSeen (nil: drop repeated ids) may stop it.
func listing[T any](ctx context.Context, c *Client, path string, opts ListOptions, idOf func(*T) string, accept func(*T) bool, newSeen func() seenRecords[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yielded, pages, size, barren := 0, 0, 0, 0
		skipped, example := 0, ""
		defer func() {
			if skipped == 0 {
				return
			}
			c.log.Warn(ctx, "the service listed records whose id is malformed; they were left out",
				map[string]any{"path": path, "count": skipped, "example": example})
			if opts.Skipped != nil {
				opts.Skipped(skipped, example)
			}
		}()
		stop := func(err error) {
			yield(zero, &ListingError{Path: c.base.EscapedPath() + path, Pages: pages, Items: yielded, Err: err})
		}
		ended := func(left bool) {
			if opts.Ended != nil {
				opts.Ended(!left)
			}
		}
		var seen seenRecords[T] = &idsSeen[T]{idOf: idOf, ids: map[string]struct{}{}}
		if newSeen != nil {
			seen = newSeen()
		}
		restarted := false
	restart:
		seenCursors := map[string]struct{}{}
		cursor := ""
		for {
			if pages >= MaxListPages {
				stop(fmt.Errorf("%w (%d pages)", ErrListingTooLong, MaxListPages))
				return
			}
			q := url.Values{"limit": {strconv.Itoa(PageSize)}}
			if opts.Order != "" && cursor == "" {
				q.Set("order", string(opts.Order))
			}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			p := page[T]{}
			err := c.do(ctx, call{method: "GET", path: path, query: q, idempotent: true}, &pageDecoder[T]{p: &p, accept: accept, idOf: idOf, text: c.guard})
			if err != nil {
				if cursor != "" && !restarted && errors.Is(err, ErrBadRequest) {
					c.log.Warn(ctx, "the service refused a listing cursor; restarting the listing from its first page",
						map[string]any{"path": path, "error": err.Error()})
					restarted = true
					seen.restart()
					goto restart
				}
				if errors.Is(err, ErrOversizedPage) {
					stop(err)
					return
				}
				yield(zero, err)
				return
			}
			pages++
			size += p.size
			if skipped == 0 {
				example = p.first // "" on a page without malformed records
			}
			skipped += p.malformed
			fresh := false // whether the page held a record not seen before
			for i := range p.Data {
				// Checked as it comes: those after the caller's last are not judged.
				repeat, err := seen.see(&p.Data[i], pages)
				if err != nil {
					stop(err)
					return
				}
				if repeat {
					continue
				}
				fresh = true
				yielded++
				if !yield(p.Data[i], nil) || opts.Max > 0 && yielded >= opts.Max {
					ended(i < len(p.Data)-1 || hasNext(&p))
					return
				}
			}
			if !hasNext(&p) {
				ended(false)
				return
			}
			barren++
			if fresh {
				barren = 0
			}
			next := *p.Pagination.NextCursor
			_, again := seenCursors[next]
			switch {
			case again:
				stop(ErrRepeatedCursor)
				return
			case barren >= maxBarrenPages:
				stop(fmt.Errorf("%w (%d pages in a row)", ErrBarrenPages, barren))
				return
			case size > MaxListBytes:
				stop(fmt.Errorf("%w (%d MiB)", ErrListingTooLong, MaxListBytes>>20))
				return
			}
			seenCursors[next] = struct{}{}
			cursor = next
		}
	}
}

// hasNext says whether a page names a next one.
func hasNext[T any](p *page[T]) bool {
	return p.Pagination.NextCursor != nil && *p.Pagination.NextCursor != ""
}

// pageDecoder decodes a page without ever holding more than PageSize
// records, and leaves out the records accept refuses.
type pageDecoder[T any] struct {
	p      *page[T]
	accept func(*T) bool // may complete the record (a backup's account)
	idOf   func(*T) string
	text   textGuard
}

func (d *pageDecoder[T]) UnmarshalJSON(b []byte) error {
	var env struct {
		Data       json.RawMessage `json:"data"`
		Pagination pagination      `json:"pagination"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	d.p.size = len(b)
	d.p.Pagination = env.Pagination
	if len(env.Data) == 0 || bytes.Equal(env.Data, []byte("null")) {
		return nil // no data array: check() says so
	}
	dec := json.NewDecoder(bytes.NewReader(env.Data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errors.New("the listing's data is not an array")
	}
	d.p.Data = make([]T, 0, PageSize)
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		// A record without an id is kept, for check() to refuse the page.
		if id := d.idOf(&v); id != "" && !d.accept(&v) {
			if d.p.malformed == 0 {
				d.p.first = strconv.Quote(d.text.cut(d.text.clean(id), 40))
			}
			d.p.malformed++
			continue
		}
		if len(d.p.Data) == PageSize {
			return fmt.Errorf("%w (%d)", ErrOversizedPage, PageSize)
		}
		d.p.Data = append(d.p.Data, v)
	}
	return nil
}

// check requires the data array and checks every record (see page.check).
func (d *pageDecoder[T]) check() error { return d.p.check() }

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
