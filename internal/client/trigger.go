package client

import (
	"context"
	"errors"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// PostBackup sends the trigger of one backup of the account (POST
// /accounts/{id}/backup) and returns the account as the service answered:
// nil, with no error, when the service accepted the trigger (2xx) in an
// answer that could not be read.
// It is the endpoint only: knowing which backup the trigger queued, and
// what to do when its outcome is unknown, is internal/workflow's.
//
// The POST is not idempotent and the API has no idempotency key: it is
// resent only when it certainly did not reach the service (a 429, or a
// request never written). sent says whether any attempt reached the wire,
// so that a caller whose context ended knows a backup may be queued. A
// 404 is judged by the absence rule, as on every path of an account. With
// Options.Organization set, the key's organization is checked first (see
// CheckOrganization).
func (c *Client) PostBackup(ctx context.Context, accountID string) (acct *Account, sent bool, err error) {
	if err := c.CheckOrganization(ctx); err != nil {
		return nil, false, err
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }})
	var a Account
	err = c.do(ctx, postBackupCall(accountID), &a)
	var decErr *DecodeError
	switch {
	case errors.As(err, &decErr):
		c.log.Warn(ctx, "the answer to a backup trigger could not be read; the service accepted it all the same",
			map[string]any{"account_id": accountID, "error": err.Error()})
		return nil, true, nil
	case err != nil:
		return nil, wrote.Load(), c.judgeAbsence(ctx, accountID, err)
	}
	return &a, true, nil
}

func postBackupCall(accountID string) call {
	return call{method: "POST", path: accountPath(accountID) + "/backup"}
}

// OutcomeUnknown reports whether a failed POST may have been processed all
// the same: it reached the service and got no answer, or a server error.
func OutcomeUnknown(err error) bool {
	var tErr *TransportError
	if errors.As(err, &tErr) {
		return tErr.Sent
	}
	return errors.Is(err, ErrServer)
}

// NoAnswer reports whether a failed request got no answer at all: the
// service may still be processing it.
func NoAnswer(err error) bool {
	var tErr *TransportError
	return errors.As(err, &tErr)
}

// WaitToResend waits before sending the trigger of accountID again, as
// retry number attempt+1 of a request whose every failure counts against
// max_retries, within the retry budget and the context's deadline; waited
// adds up the waits. Otherwise it returns a *RetryError wrapping last.
func (c *Client) WaitToResend(ctx context.Context, accountID string, attempt int, waited *time.Duration, last error) error {
	return c.waitToRetry(ctx, postBackupCall(accountID), attempt, c.backoff(attempt), waited, last)
}
