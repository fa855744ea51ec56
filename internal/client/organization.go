package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrWrongOrganization matches an *OrganizationMismatchError.
var ErrWrongOrganization = errors.New("the API key belongs to another organization")

// OrganizationMismatchError: Options.Organization names one organization
// and the key belongs to another, so nothing was changed. It guards against
// a key of the wrong environment (a staging key in production's pipeline).
type OrganizationMismatchError struct {
	Expected string
	Actual   Organization
}

func (e *OrganizationMismatchError) Error() string {
	return fmt.Sprintf("the API key belongs to organization %s (%q), not to the expected %s; nothing was changed",
		e.Actual.ID, e.Actual.Name, e.Expected)
}

func (e *OrganizationMismatchError) Is(target error) bool { return target == ErrWrongOrganization }

// keyToken is the key's token as first read by a Client (one provider
// process): the organization check and the expiry warning share the read.
type keyToken struct {
	mu  sync.Mutex
	tok *Token
}

// KeyToken is the key's token (GET /api/v1/token), read once per Client
// and shared by every caller that needs it for the life of the process
// (concurrent callers wait for the one read); a failed read, or an answer
// that names no organization, is not remembered. A read proves base_url (see judgeAbsence). The
// backup_token data source reads the token afresh instead (Token).
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

// orgCheck remembers the outcome of the organization check for the life
// of a Client (one provider process): a match or a mismatch is final; a
// failed read is not remembered, so the next change asks again.
type orgCheck struct {
	mu      sync.Mutex
	checked bool
	err     error
}

// CheckOrganization returns nil when Options.Organization is unset (with
// no request) or is the key's organization. Trigger.Post calls it before
// any POST; a guard calls it when it is planned and created, so that a key
// of another organization fails there, not at the destroy it exists for.
// Concurrent callers wait for the one read.
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
		// Not a mismatch to report with an empty name: an answer that
		// names no organization cannot vouch for the key. Asked again next
		// time.
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
