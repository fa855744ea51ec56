package client

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Sentinel errors for errors.Is; an *APIError matches the one that fits its status code.
var (
	errBadRequest      = errors.New("bad request")
	errUnauthenticated = errors.New("unauthenticated")
	ErrForbidden       = errors.New("forbidden")
	ErrNotFound        = errors.New("not found")
	ErrConflict        = errors.New("conflict")
	ErrUnprocessable   = errors.New("unprocessable entity")
	errRateLimited     = errors.New("rate limited")
	errServer          = errors.New("server error")

	// ErrInsecureURL: plain http to a non-loopback host without AllowInsecureHTTP (New, or dialling).
	ErrInsecureURL = errors.New("plain http to a non-loopback host would send the API key in clear")
	// ErrInvalidBaseURL and ErrInvalidAPIKey: settings no request could succeed with.
	ErrInvalidBaseURL = errors.New("invalid base URL")
	ErrInvalidAPIKey  = errors.New("invalid API key")
)

// rateLimit holds the rate-limit headers of a response, when present.
type rateLimit struct {
	Limit      int       // X-RateLimit-Limit: requests per second for the key
	Remaining  int       // X-RateLimit-Remaining
	Reset      time.Time // X-RateLimit-Reset
	RetryAfter time.Duration
	HasLimit   bool // a usable X-RateLimit-Limit came
}

// APIError is an error response, from its RFC 7807 problem document or described from its body.
type APIError struct {
	Method, Path string
	StatusCode   int

	Type, Title, Detail, Instance string
	RequestID                     string
	RateLimit                     *rateLimit
	NotProblem                    bool // the body was not a problem document; Detail describes it

	// The body's own status and request_id tell the service's answer from a look-alike (FromService).
	problemStatus    int
	problemRequestID string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.StatusCode)
	if e.Title != "" {
		s += " " + e.Title
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.RequestID == "" {
		return s + " (no request id in the response)"
	}
	return s + " (request id " + e.RequestID + ")"
}

// FromService says whether the answer is the service's own problem document.
func (e *APIError) FromService() bool { return e.notFromService() == "" }

var statusOf = map[error]int{
	errBadRequest: http.StatusBadRequest, errUnauthenticated: http.StatusUnauthorized, ErrForbidden: http.StatusForbidden,
	ErrNotFound: http.StatusNotFound, ErrConflict: http.StatusConflict, ErrUnprocessable: http.StatusUnprocessableEntity,
	errRateLimited: http.StatusTooManyRequests,
}

// Is makes errors.Is(err, ErrNotFound) and the other sentinels work.
func (e *APIError) Is(target error) bool {
	if target == errServer {
		return e.StatusCode >= 500
	}
	status, ok := statusOf[target]
	return ok && e.StatusCode == status
}

// transportError is a failure to get a complete response.
type transportError struct {
	Method, Path string
	Sent         bool // the request may have reached the service
	Err          error
}

func (e *transportError) Error() string { return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err) }
func (e *transportError) Unwrap() error { return e.Err }

// decodeError is a successful response whose body could not be decoded.
type decodeError struct {
	Method, Path string
	StatusCode   int
	RequestID    string
	Err          error
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d with a body that is not the expected JSON (request id %s): %v",
		e.Method, e.Path, e.StatusCode, cmp.Or(e.RequestID, "none"), e.Err)
}

func (e *decodeError) Unwrap() error { return e.Err }

// errRedirect matches a *redirectError.
var errRedirect = errors.New("redirect refused")

// redirectError is a 3xx answer, never followed: Go would carry X-API-Key to the Location's host.
type redirectError struct {
	Method, Path string
	StatusCode   int
	Location     string // without credentials; empty when none came
	Origin       string // base_url's scheme://host[:port]
	RequestID    string
}

func (e *redirectError) Error() string {
	where := "without a Location header"
	if e.Location != "" {
		where = "to " + e.Location
	}
	id := ""
	if e.RequestID != "" {
		id = fmt.Sprintf(" (request id %s)", e.RequestID)
	}
	return fmt.Sprintf("%s %s: HTTP %d redirect %s%s, not followed: the API key is sent only to %s, the origin of base_url. "+
		"Set base_url to the address the Backup Service answers at directly", e.Method, e.Path, e.StatusCode, where, id, e.Origin)
}

// Is makes errors.Is(err, errRedirect) work.
func (e *redirectError) Is(target error) bool { return target == errRedirect }

// RetryError: retrying stopped before success. It unwraps to the last attempt's error.
type RetryError struct {
	Attempts int
	Cause    RetryCause
	Reason   string
	Err      error
}

// RetryCause says which bound stopped the retries, so that advice names a setting that can help.
type RetryCause int

// Causes of a RetryError.
const (
	retriesExhausted  RetryCause = iota + 1 // max_retries retries were made
	RetryBudgetSpent                        // the next wait would pass the retry budget
	RetryPastDeadline                       // the next wait would outlive the operation's timeout
)

func (e *RetryError) Error() string {
	return fmt.Sprintf("giving up after %d attempt(s), %s: %v", e.Attempts, e.Reason, e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

// problem is the wire form of an RFC 7807 problem document.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Instance  string `json:"instance"`
	RequestID string `json:"request_id"`
}

// snippetLen bounds how much of a non-problem body is quoted in an error.
const snippetLen = 200

// parseProblem builds the APIError for an error response; it never fails.
func parseProblem(g textGuard, method, path string, status int, header http.Header, body []byte, now time.Time) *APIError {
	e := &APIError{Method: method, Path: path, StatusCode: status, RequestID: g.requestID(header.Get("X-Request-ID"))}
	var p problem
	if err := json.Unmarshal(body, &p); err == nil && (p.Title != "" || p.RequestID != "" || p.Status != 0) {
		e.Type, e.Title, e.Detail, e.Instance = g.text(p.Type), g.text(p.Title), g.text(p.Detail), g.text(p.Instance)
		e.problemStatus = p.Status
		if p.RequestID != "" {
			e.RequestID = g.requestID(p.RequestID)
			e.problemRequestID = e.RequestID
		}
	} else {
		e.NotProblem = true
		e.Title = http.StatusText(status)
		ct := cmp.Or(g.cut(g.clean(header.Get("Content-Type")), 80), "no content type")
		// Cleaned whole before it is cut, so that a key is never half shown; not
		// escaped again (%q), which would double a body of quotes past the bound.
		if s := g.cut(g.clean(string(body)), snippetLen); s != "" {
			e.Detail = fmt.Sprintf("the response was not a problem document (%s): \"%s\"", ct, s)
		} else {
			e.Detail = fmt.Sprintf("the response was not a problem document (%s, empty body)", ct)
		}
	}
	e.RateLimit = parseRateLimit(header, now)
	return e
}
