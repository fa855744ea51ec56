package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// ErrRedirect matches a *RedirectError.
var ErrRedirect = errors.New("redirect refused")

// RedirectError is a 3xx answer, never followed: Go's HTTP client would
// carry X-API-Key to whatever host the Location names.
type RedirectError struct {
	Method     string
	Path       string
	StatusCode int
	Location   string // without credentials; empty when none came
	Origin     string // base_url's scheme://host[:port]
	RequestID  string
}

func (e *RedirectError) Error() string {
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

// Is makes errors.Is(err, ErrRedirect) work.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirect }

// refuseRedirects makes an http.Client hand every 3xx back to the caller.
func refuseRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// safeLocation returns a Location header fit to show: credentials in it
// are replaced, and one that does not parse is described, not repeated.
func safeLocation(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable Location)"
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"***"}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = "***", ""
	}
	return u.Redacted()
}
