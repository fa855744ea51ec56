package client

import (
	"context"
	"errors"
)

// AccountIndex shares one accounts listing, made on first need, among many
// callers. An id it lacks proves nothing: callers confirm it with Account.
type AccountIndex struct {
	c        *Client
	turn     chan struct{} // held by the one caller listing or reading
	listed   bool
	accounts map[string]Account
	err      error
	reported bool
}

// NewAccountIndex returns an index that lists nothing until asked.
func (c *Client) NewAccountIndex() *AccountIndex {
	return &AccountIndex{c: c, turn: make(chan struct{}, 1)}
}

// Lookup returns the account as listed, or nil. A failed listing is to be
// reported by one caller only: the first, whose report is true.
func (x *AccountIndex) Lookup(ctx context.Context, accountID string) (account *Account, report bool, err error) {
	select {
	case x.turn <- struct{}{}: // a free turn is taken even when ctx has ended
	default:
		select {
		case x.turn <- struct{}{}:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	defer func() { <-x.turn }()
	if !x.listed {
		accounts, err := Collect(x.c.Accounts(ctx, ListOptions{}))
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, false, err // only this caller gave up: the next lists again
		}
		x.listed, x.err, x.accounts = true, err, map[string]Account{}
		for _, a := range accounts {
			x.accounts[a.ID] = a
		}
	}
	if x.err != nil {
		report, x.reported = !x.reported, true
		return nil, report, x.err
	}
	if a, found := x.accounts[accountID]; found {
		return &a, false, nil
	}
	return nil, false, nil
}
