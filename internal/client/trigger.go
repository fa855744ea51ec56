package client

import (
	"context"
	"errors"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// Trigger is one backup trigger of an account. Its POST is not idempotent:
// the client resends it by itself only when it certainly did not arrive.
type Trigger struct {
	c         *Client
	accountID string
	sent      bool
	resends   int
	waited    time.Duration
}

// Trigger prepares a trigger of one backup of the account; it sends nothing.
func (c *Client) Trigger(accountID string) *Trigger { return &Trigger{c: c, accountID: accountID} }

// UnsureError is a failed trigger that the service may have processed all
// the same: a server error, or no answer to a request that reached it.
type UnsureError struct {
	// Answered: a server error came back. Otherwise no answer came, and the
	// service may still be processing the request.
	Answered bool
	Err      error
}

func (e *UnsureError) Error() string { return e.Err.Error() }

func (e *UnsureError) Unwrap() error { return e.Err }

// Post checks the organization, sends the trigger and returns the account
// as answered: nil, with no error, when the answer could not be read.
func (t *Trigger) Post(ctx context.Context) (*Account, error) {
	c := t.c
	if err := c.CheckOrganization(ctx); err != nil {
		return nil, err
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }})
	var a Account
	err := c.do(ctx, t.call(), &a)
	var decErr *DecodeError
	switch {
	case errors.As(err, &decErr):
		t.sent = true
		c.log.Warn(ctx, "the answer to a backup trigger could not be read; the service accepted it all the same",
			map[string]any{"account_id": t.accountID, "error": err.Error()})
		return nil, nil
	case err == nil:
		t.sent = true
		return &a, nil
	}
	t.sent = t.sent || wrote.Load()
	err = c.judgeAbsence(ctx, t.accountID, err)
	var tErr *TransportError
	if noAnswer := errors.As(err, &tErr); noAnswer && tErr.Sent || !noAnswer && errors.Is(err, ErrServer) {
		return nil, &UnsureError{Answered: !noAnswer, Err: err}
	}
	return nil, err
}

// Sent says whether any POST of t reached the wire, so that a caller whose
// context ended knows a backup may be queued.
func (t *Trigger) Sent() bool { return t.sent }

// Wait waits before t is sent again after the failure last, as the client's
// own retries would, or returns the *RetryError that stops it.
func (t *Trigger) Wait(ctx context.Context, last error) error {
	n := t.resends
	t.resends++
	delay := t.c.backoff(n)
	if err := t.c.mayRetry(ctx, n, n, false, delay, t.waited, last); err != nil {
		return err
	}
	return t.c.retryAfter(ctx, t.call(), n, delay, &t.waited, last)
}

func (t *Trigger) call() call {
	return call{method: "POST", path: accountPath(t.accountID) + "/backup"}
}
