package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
)

// ListOptions shape a listing.
type ListOptions struct {
	// Order by the listing's primary timestamp; empty leaves the service's
	// default (desc). Ignored by listings that have no order.
	Order Order
	// Max stops the listing after this many items; 0 means all.
	Max int
}

// listing pages through path, PageSize items a request, following
// next_cursor. After an invalid-cursor 400 it restarts once from the first
// page, as the API document says to, and skips the items it already yielded.
// A cursor that comes back a second time ends the listing with
// ErrRepeatedCursor instead of looping forever.
func listing[T any](ctx context.Context, c *Client, path string, opts ListOptions, idOf func(*T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yielded := 0
		seenIDs := map[string]struct{}{}
		restarted := false
	restart:
		seenCursors := map[string]struct{}{}
		cursor := ""
		for {
			q := url.Values{"limit": {strconv.Itoa(PageSize)}}
			if opts.Order != "" && cursor == "" {
				q.Set("order", string(opts.Order))
			}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var p page[T]
			err := c.do(ctx, call{method: "GET", path: path, query: q, idempotent: true}, &p)
			if err != nil {
				if cursor != "" && !restarted && errors.Is(err, ErrBadRequest) {
					c.log.Warn(ctx, "the service refused a listing cursor; restarting the listing from its first page",
						map[string]any{"path": path, "error": err.Error()})
					restarted = true
					goto restart
				}
				yield(zero, err)
				return
			}
			for i := range p.Data {
				id := idOf(&p.Data[i])
				if _, dup := seenIDs[id]; dup {
					continue
				}
				seenIDs[id] = struct{}{}
				if !yield(p.Data[i], nil) {
					return
				}
				yielded++
				if opts.Max > 0 && yielded >= opts.Max {
					return
				}
			}
			if p.Pagination.NextCursor == nil || *p.Pagination.NextCursor == "" {
				return
			}
			next := *p.Pagination.NextCursor
			if _, again := seenCursors[next]; again || next == cursor {
				yield(zero, fmt.Errorf("GET %s: %w", path, ErrRepeatedCursor))
				return
			}
			seenCursors[next] = struct{}{}
			cursor = next
		}
	}
}

// collect gathers a listing into a slice, stopping at the first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
