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

// keyToken is the key's token as first read by a Client.
type keyToken struct {
	mu  sync.Mutex
	tok *Token
}

// KeyToken is the key's token, read once per Client and shared; a failed
// read, or one that names no organization, is not remembered.
func (c *Client) KeyToken(ctx context.Context) (*Token, error) {
	c.tok.mu.Lock()
	defer c.tok.mu.Unlock()
	if c.tok.tok != nil {
		return c.tok.tok, nil
	}
	tok, err := c.Token(ctx)
	if err != nil {
		return nil, err
	}
	c.baseProven()
	if tok.Organization.ID != "" {
		c.tok.tok = tok
	}
	return tok, nil
}

// orgCheck keeps the organization check's match or mismatch; a failed read
// is asked again.
type orgCheck struct {
	mu      sync.Mutex
	checked bool
	err     error
}

// CheckOrganization returns nil when Options.Organization is unset or is
// the key's organization; Trigger.Post calls it before any POST.
func (c *Client) CheckOrganization(ctx context.Context) error {
	if c.opts.Organization == "" {
		return nil
	}
	c.org.mu.Lock()
	defer c.org.mu.Unlock()
	if c.org.checked {
		return c.org.err
	}
	tok, err := c.KeyToken(ctx)
	if err != nil {
		return fmt.Errorf("reading the API key's organization (organization_id is set): %w", err)
	}
	if tok.Organization.ID == "" {
		// It cannot vouch for the key; asked again next time.
		return &DecodeError{Method: "GET", Path: c.base.EscapedPath() + "/api/v1/token", StatusCode: 200,
			Err: errors.New("it names no organization, so organization_id cannot be checked; nothing was changed")}
	}
	c.org.checked = true
	if tok.Organization.ID != c.opts.Organization {
		c.org.err = &OrganizationMismatchError{
			Expected: c.opts.Organization,
			Actual:   Organization{ID: c.guard.text(tok.Organization.ID), Name: c.guard.text(tok.Organization.Name)},
		}
	}
	return c.org.err
}
