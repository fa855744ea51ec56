package client

import (
	"context"
	"errors"
	"sync"
)

// AccountIndex tells many callers what the accounts listing holds, from
// one paged listing of the organization's accounts: ⌈A/50⌉ requests, made
// on first need and shared by every caller (single flight). It lives as
// long as the caller keeps it: the provider keeps one per Terraform
// command, so nothing outlives the command. An id the listing does not
// hold proves nothing (a listing may lag, or not be the service's):
// callers confirm it with Account (see judgeAbsence).
type AccountIndex struct {
	c *Client

	mu       sync.Mutex
	flight   chan struct{} // closed when the current listing ends; nil: none yet
	accounts map[string]Account
	err      error
	reported bool
}

// NewAccountIndex returns an index that lists nothing until asked.
func (c *Client) NewAccountIndex() *AccountIndex { return &AccountIndex{c: c} }

// Lookup returns the account as the organization's listing holds it, or
// nil when the listing does not hold it. When the listing failed, err
// says why, and report is true for exactly one caller, so that a failure
// shared by thousands of callers is told once.
// A caller whose context ends while it waits returns at once; a listing cut
// short by its own caller's cancellation is started afresh by the next one.
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
