package client

import (
	"context"
	"errors"
	"sync"
)

// AccountIndex tells many callers whether accounts still exist, from one
// paged listing of the organization's accounts: ⌈A/50⌉ requests, made on
// first need and shared by every caller (single flight). It keeps ids
// only, and lives as long as the caller keeps it: the provider keeps one
// per Terraform command, so nothing outlives the command.
type AccountIndex struct {
	c *Client

	mu       sync.Mutex
	flight   chan struct{} // closed when the current listing ends; nil: none yet
	ids      map[string]struct{}
	err      error
	reported bool
}

// NewAccountIndex returns an index that lists nothing until asked.
func (c *Client) NewAccountIndex() *AccountIndex { return &AccountIndex{c: c} }

// Has reports whether the organization's listing holds the account. When
// the listing failed, err says why, and report is true for exactly one
// caller, so that a failure shared by thousands of callers is told once.
// A caller whose context ends while it waits returns at once; a listing cut
// short by its own caller's cancellation is started afresh by the next one.
func (x *AccountIndex) Has(ctx context.Context, accountID string) (found bool, report bool, err error) {
	for {
		x.mu.Lock()
		if x.flight == nil {
			flight := make(chan struct{})
			x.flight = flight
			x.mu.Unlock()
			ids, lerr := x.list(ctx)
			x.mu.Lock()
			if lerr != nil && ctx.Err() != nil && errors.Is(lerr, ctx.Err()) {
				// Only this caller gave up: let a waiter list again.
				x.flight = nil
				close(flight)
				x.mu.Unlock()
				return false, false, lerr
			}
			x.ids, x.err = ids, lerr
			close(flight)
			x.mu.Unlock()
			continue
		}
		flight := x.flight
		select {
		case <-flight:
			defer x.mu.Unlock()
			if x.err != nil {
				first := !x.reported
				x.reported = true
				return false, first, x.err
			}
			_, found := x.ids[accountID]
			return found, false, nil
		default:
		}
		x.mu.Unlock()
		select {
		case <-ctx.Done():
			return false, false, ctx.Err()
		case <-flight:
		}
	}
}

func (x *AccountIndex) list(ctx context.Context) (map[string]struct{}, error) {
	ids := map[string]struct{}{}
	for a, err := range x.c.Accounts(ctx, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		ids[a.ID] = struct{}{}
	}
	return ids, nil
}
