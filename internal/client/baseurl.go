package client

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// maxShownBaseURL bounds a base URL quoted in a message, in characters.
const maxShownBaseURL = 100

// shownBaseURL is raw without what may be credentials (before the last "@",
// after the first "?" or "#"), or "". Messages never quote url.Parse's errors.
func shownBaseURL(raw string, g textGuard) string {
	s := g.clean(raw)
	scheme := ""
	start, end := 0, len(s)
	if i := strings.Index(s, "//"); i >= 0 && !strings.ContainsAny(s[:i], "@?#") {
		scheme, start = s[:i+2], i+2
	}
	if at := strings.LastIndex(s, "@"); at >= start {
		start = at + 1
	}
	if q := strings.IndexAny(s, "?#"); q >= 0 {
		end = q
	}
	start = min(start, end) // past the end, what is left lies in the credentials or the query
	if scheme == "" && start == end {
		return ""
	}
	return g.cut(scheme+s[start:end], maxShownBaseURL)
}

// missingColonRE matches http// and https//, a colon short of a scheme.
var missingColonRE = regexp.MustCompile(`(?i)^(https?)//`)

// parseBaseURL checks base_url: https (or http to loopback, or with
// allowInsecure), a host, no credentials, query or fragment, no /api/v1.
func parseBaseURL(raw string, allowInsecure bool, g textGuard) (*url.URL, error) {
	trimmed := strings.TrimSpace(raw)
	shown := "(not shown: it may hold credentials)"
	if s := shownBaseURL(raw, g); s != "" {
		shown = strconv.Quote(s)
	}
	switch {
	case trimmed == "":
		return nil, fmt.Errorf("%w: it is empty", ErrInvalidBaseURL)
	case strings.ContainsAny(trimmed, "@?#"): // before url.Parse splits it
		return nil, fmt.Errorf("%w %s: it must not carry credentials, a query or a fragment", ErrInvalidBaseURL, shown)
	case missingColonRE.MatchString(trimmed):
		scheme := strings.ToLower(missingColonRE.FindStringSubmatch(trimmed)[1])
		return nil, fmt.Errorf("%w %s: the colon after %s is missing; write %s://", ErrInvalidBaseURL, shown, scheme, scheme)
	case !strings.Contains(trimmed, "://"):
		return nil, fmt.Errorf("%w %s: it has no scheme; add https:// (for example https://%s)",
			ErrInvalidBaseURL, shown, shownBaseURL(raw, g))
	}
	u, err := url.Parse(trimmed)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %s", ErrInvalidBaseURL, shown, unparsable(err))
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("%w %s: want https://host[:port], optionally with a path prefix", ErrInvalidBaseURL, shown)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.ForceQuery { // in case url.Parse finds them elsewhere
		return nil, fmt.Errorf("%w %s: it must not carry credentials, a query or a fragment", ErrInvalidBaseURL, shown)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if u.Path == "/api/v1" || strings.HasSuffix(u.Path, "/api/v1") || strings.Contains(u.Path, "/api/v1/") {
		return nil, fmt.Errorf("%w %s: leave out /api/v1, which the provider adds to every path; for example %s",
			ErrInvalidBaseURL, shown, shownBaseURL(strings.TrimSuffix(u.String(), "/api/v1"), g))
	}
	if u.Scheme == "http" && !allowInsecure && !isLoopback(u.Hostname()) {
		return nil, fmt.Errorf("base URL %s: %w", shown, ErrInsecureURL)
	}
	return u, nil
}

// unparsable says why url.Parse refused a base URL without quoting it.
func unparsable(err error) string {
	var escErr url.EscapeError
	var hostErr url.InvalidHostError
	msg := err.Error()
	switch {
	case errors.As(err, &escErr):
		return "it holds a % not followed by two hexadecimal digits (write %25 for a % itself)"
	case errors.As(err, &hostErr):
		return "its host holds a character no host name can hold"
	case strings.Contains(msg, "control character"):
		return "it holds control characters"
	case strings.Contains(msg, "invalid port"):
		return "its port is not a number"
	case strings.Contains(msg, "missing ']'"), strings.Contains(msg, "IPv6"):
		return "its IPv6 address is malformed (write it in brackets: https://[2001:db8::1]:8443)"
	}
	return "it is not a valid URL"
}

// isLoopback says whether host is "localhost" or a loopback IP; the name
// is trusted because loopbackOnlyDialer checks the address dialled.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// BaseURLMayHoldSecrets says whether messages show less than raw; then a
// caller must not show raw by other means either.
func BaseURLMayHoldSecrets(raw, key string) bool {
	return shownBaseURL(raw, textGuard{key: newSecret(key)}) != strings.TrimSpace(raw)
}
