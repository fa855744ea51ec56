package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrWrongOrganization matches an *OrganizationMismatchError.
var ErrWrongOrganization = errors.New("the API key belongs to another organization")

// OrganizationMismatchError: the key belongs to another organization than
// Options.Organization, so nothing was changed.
type OrganizationMismatchError struct {
	Expected string
	Actual   Organization
}

func (e *OrganizationMismatchError) Error() string {
	return fmt.Sprintf("the API key belongs to organization %s (%q), not to the expected %s; nothing was changed",
		e.Actual.ID, e.Actual.Name, e.Expected)
}

func (e *OrganizationMismatchError) Is(target error) bool { return target == ErrWrongOrganization }

// remembered is one read shared by a Client's callers; a read that keep
// refuses is not remembered, and the next caller reads again.
type remembered[T any] struct {
	mu   sync.Mutex
	done bool
	val  T
	err  error
}

func (r *remembered[T]) get(read func() (val T, err error, keep bool)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return r.val, r.err
	}
	val, err, keep := read()
	if keep {
		r.done, r.val, r.err = true, val, err
	}
	return val, err
}

// KeyToken is the key's token, read once per Client and shared; a failed
// read, or one that names no organization, is not remembered.
func (c *Client) KeyToken(ctx context.Context) (*Token, error) {
	return c.tok.get(func() (*Token, error, bool) {
		tok, err := c.Token(ctx)
		if err != nil {
			return nil, err, false
		}
		c.baseProven()
		return tok, nil, tok.Organization.ID != ""
	})
}

// CheckOrganization returns nil when Options.Organization is unset or is
// the key's organization; a failed read is asked again.
func (c *Client) CheckOrganization(ctx context.Context) error {
	if c.opts.Organization == "" {
		return nil
	}
	_, err := c.org.get(func() (struct{}, error, bool) {
		tok, err := c.KeyToken(ctx)
		switch {
		case err != nil:
			return struct{}{}, fmt.Errorf("reading the API key's organization (organization_id is set): %w", err), false
		case tok.Organization.ID == "": // it cannot vouch for the key
			return struct{}{}, &DecodeError{Method: "GET", Path: c.base.EscapedPath() + "/api/v1/token", StatusCode: 200,
				Err: errors.New("it names no organization, so organization_id cannot be checked; nothing was changed")}, false
		case tok.Organization.ID != c.opts.Organization:
			return struct{}{}, &OrganizationMismatchError{Expected: c.opts.Organization,
				Actual: Organization{ID: c.guard.text(tok.Organization.ID), Name: c.guard.text(tok.Organization.Name)}}, true
		}
		return struct{}{}, nil, true
	})
	return err
}
