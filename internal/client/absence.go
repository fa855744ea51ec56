package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// A proxy or a wrong base_url answers 404 too: a 404 proves an account gone
// only as the service's own answer from a base_url whose token endpoint answered.

// ErrGone matches a *GoneError.
var ErrGone = errors.New("the Backup Service proved the account does not exist for this key")

// GoneError: the service proved that the account does not exist for this
// key (deleted, or in another organization: the API does not tell which).
type GoneError struct {
	AccountID string
	Answer    *APIError // the 404 that proved it
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("account %s does not exist for this API key (deleted, or outside the key's organization): %v", e.AccountID, e.Answer)
}

// Is makes errors.Is(err, ErrGone) true; a look-alike 404 matches ErrNotFound only.
func (e *GoneError) Is(target error) bool { return target == ErrGone }

// Unwrap gives the 404 itself, for errors.As(err, **APIError).
func (e *GoneError) Unwrap() error { return e.Answer }

// UnprovenAbsenceError: an answer that looked like absence but does not prove it.
type UnprovenAbsenceError struct {
	AccountID string
	Why       string // what the proof lacked
	Err       error
}

func (e *UnprovenAbsenceError) Error() string {
	return fmt.Sprintf("%v; this does not prove that account %s is gone: %s", e.Err, e.AccountID, e.Why)
}

func (e *UnprovenAbsenceError) Unwrap() error { return e.Err }

// proveBase is nil when the token endpoint answered for this key; remembered
// (unless the caller's own context ended), so that many 404s cost one read.
func (c *Client) proveBase(ctx context.Context) error {
	_, err := c.proof.get(func() (struct{}, error, bool) {
		_, err := c.Token(ctx)
		return struct{}{}, err, err == nil || ctx.Err() == nil
	})
	return err
}

// baseProven records that KeyToken's read proved base_url as well.
func (c *Client) baseProven() {
	_, _ = c.proof.get(func() (struct{}, error, bool) { return struct{}{}, nil, true })
}

// notFromService says why e is not the service's own problem document (a
// proxy's page or a look-alike), or "" when it is.
func (e *APIError) notFromService() string {
	switch {
	case e.NotProblem:
		return "the answer is not a problem document (a proxy, a load balancer or another service answers like this)"
	case e.problemStatus != e.StatusCode:
		return fmt.Sprintf("the problem document's status is %d, not %d", e.problemStatus, e.StatusCode)
	case e.Title == "":
		return "the problem document has no title"
	case !uuidRE.MatchString(e.problemRequestID):
		return "the problem document carries no request id of the service's form"
	}
	return ""
}

// judgeAbsence applies the absence rule to err, from a request on
// accountID's paths: a *GoneError, an *UnprovenAbsenceError, or err itself.
func (c *Client) judgeAbsence(ctx context.Context, accountID string, err error) error {
	var apiErr *APIError
	var gone *GoneError
	var unproven *UnprovenAbsenceError
	switch {
	case err == nil, errors.As(err, &gone), errors.As(err, &unproven):
		return err
	case !errors.As(err, &apiErr) || (apiErr.StatusCode != http.StatusNotFound && apiErr.StatusCode != http.StatusGone):
		return err
	}
	why := apiErr.notFromService()
	if apiErr.StatusCode != http.StatusNotFound {
		why = fmt.Sprintf("only a 404 can, and this is HTTP %d", apiErr.StatusCode)
	}
	if why != "" {
		return &UnprovenAbsenceError{AccountID: accountID, Why: why, Err: err}
	}
	if perr := c.proveBase(ctx); perr != nil {
		return &UnprovenAbsenceError{AccountID: accountID, Err: err, Why: "the same base URL did not prove itself: its token endpoint " +
			"did not answer 200 for this key (" + strings.TrimSpace(perr.Error()) + ")"}
	}
	return &GoneError{AccountID: accountID, Answer: apiErr}
}
