package client

import (
	"context"
	"errors"
	"sync"
)

// AccountIndex tells many callers what the accounts listing holds, from
// one listing made on first need and shared. An id it lacks proves nothing:
// callers confirm it with Account.
type AccountIndex struct {
	c        *Client
	mu       sync.Mutex
	flight   chan struct{} // closed when the current listing ends; nil: none yet
	accounts map[string]Account
	err      error
	reported bool
}

// NewAccountIndex returns an index that lists nothing until asked.
func (c *Client) NewAccountIndex() *AccountIndex { return &AccountIndex{c: c} }

// Lookup returns the account as the listing holds it, or nil. When the
// listing failed, report is true for exactly one caller, so that the failure
// is told once. A listing its own caller cancelled is started afresh.
func (x *AccountIndex) Lookup(ctx context.Context, accountID string) (account *Account, report bool, err error) {
	for {
		x.mu.Lock()
		if x.flight == nil {
			flight := make(chan struct{})
			x.flight = flight
			x.mu.Unlock()
			accounts, lerr := x.list(ctx)
			x.mu.Lock()
			if lerr != nil && ctx.Err() != nil && errors.Is(lerr, ctx.Err()) {
				// Only this caller gave up: let a waiter list again.
				x.flight = nil
				close(flight)
				x.mu.Unlock()
				return nil, false, lerr
			}
			x.accounts, x.err = accounts, lerr
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
				return nil, first, x.err
			}
			if a, found := x.accounts[accountID]; found {
				return &a, false, nil
			}
			return nil, false, nil
		default:
		}
		x.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-flight:
		}
	}
}

func (x *AccountIndex) list(ctx context.Context) (map[string]Account, error) {
	accounts := map[string]Account{}
	for a, err := range x.c.Accounts(ctx, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		accounts[a.ID] = a
	}
	return accounts, nil
}
