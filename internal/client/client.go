// Package client is a client for the Backup Service API, safe for concurrent
// use: it paces requests to the key's rate limit and retries what is safe to.
package client

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Defaults of Options.
const (
	DefaultMaxRetries     = 4 // waits of about 1, 2, 4 and 8 seconds
	DefaultRequestTimeout = 30 * time.Second
	defaultBackoffBase    = time.Second
	defaultMaxBackoff     = 30 * time.Second
	defaultRetryAfterCap  = 60 * time.Second
	DefaultRetryBudget    = 2 * time.Minute
)

// pageSize is the largest page the service gives.
const pageSize = 50

// Options configure a Client. Zero values take the defaults above.
type Options struct {
	BaseURL           string // scheme://host[/prefix], without /api/v1
	APIKey            string // sent in X-API-Key only
	AllowInsecureHTTP bool   // plain http to hosts other than loopback
	UserAgent         string

	MaxRetries     int           // after the first attempt; 0: none
	RequestTimeout time.Duration // per attempt
	BackoffBase    time.Duration // first backoff; doubles each retry
	MaxBackoff     time.Duration // cap of one backoff
	RetryAfterCap  time.Duration // cap on a server's Retry-After
	RetryBudget    time.Duration // cap on the total time spent waiting to retry

	Organization string         // the key's organization, checked before any change
	RootCAs      *x509.CertPool // trusted CAs (see CertPool); nil: the system's; ignored with HTTPClient
	HTTPClient   *http.Client
	Clock        clock.Clock
	Logger       Logger
	Jitter       func() float64 // draws in [0, 1) for backoffs and the limiter; nil: math/rand/v2
}

// Client talks to one Backup Service with one key.
type Client struct {
	base    *url.URL
	key     *secret
	opts    Options
	limiter *limiter
	guard   textGuard // cleans what the service sends before it is shown
	tok     remembered[*Token]
	proof   remembered[struct{}] // see proveBase
	noHTTP2 bool                 // see http2DebugLogging
}

// secret holds the key behind a pointer, so that printing a Client never shows it.
type secret struct {
	value  string
	folded string // the key as fold leaves it, masked by textGuard.clean
}

func newSecret(value string) *secret { return &secret{value: value, folded: fold(value)} }

func (*secret) String() string   { return "[REDACTED]" }
func (*secret) GoString() string { return "[REDACTED]" }

// String describes the client without its key.
func (c *Client) String() string { return "backup client for " + c.base.String() }

// GoString describes the client without its key.
func (c *Client) GoString() string { return "client.Client{base: " + c.base.String() + "}" }

// New checks the options and returns a Client. It makes no request.
func New(opts Options) (*Client, error) {
	if err := checkAPIKey(opts.APIKey); err != nil {
		return nil, err
	}
	key := newSecret(opts.APIKey)
	c := &Client{key: key, guard: textGuard{key: key}}
	var err error
	if c.base, err = parseBaseURL(opts.BaseURL, opts.AllowInsecureHTTP, c.guard); err != nil {
		return nil, err
	}
	if opts.HTTPClient == nil {
		ts := settingsFor(c.base, opts)
		c.noHTTP2 = ts.noHTTP2
		opts.HTTPClient = &http.Client{Transport: newTransport(ts)}
	}
	setDefaults(&opts)
	// A copy, so that the caller's client keeps its own CheckRedirect.
	hc := *opts.HTTPClient
	hc.CheckRedirect = refuseRedirects
	opts.HTTPClient = &hc
	opts.APIKey = "" // keep one copy only, in a type that never prints
	c.opts = opts
	c.limiter = newLimiter(c.opts.Clock)
	c.limiter.draw = c.opts.Jitter
	return c, nil
}

func setDefaults(o *Options) {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	o.MaxRetries = max(o.MaxRetries, 0)
	def(&o.RequestTimeout, DefaultRequestTimeout)
	def(&o.BackoffBase, defaultBackoffBase)
	def(&o.MaxBackoff, defaultMaxBackoff)
	def(&o.RetryAfterCap, defaultRetryAfterCap)
	def(&o.RetryBudget, DefaultRetryBudget)
	o.UserAgent = cmp.Or(o.UserAgent, "terraform-provider-backup")
	o.Clock = cmp.Or[clock.Clock](o.Clock, clock.Wall{})
	o.Logger = cmp.Or[Logger](o.Logger, NopLogger{})
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
}

// checkAPIKey refuses a key that no request could carry.
func checkAPIKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return fmt.Errorf("%w: it is empty", ErrInvalidAPIKey)
	case strings.TrimSpace(key) != key:
		return fmt.Errorf("%w: it begins or ends with white space (a newline at the end of a file, often); "+
			"remove it, for example with trimspace(file(...))", ErrInvalidAPIKey)
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: it holds control characters, which an HTTP header cannot carry", ErrInvalidAPIKey)
	}
	return nil
}

// maxShownBaseURL bounds a base URL quoted in a message, in characters.
const maxShownBaseURL = 100

// shownBaseURL is raw without what may be credentials (before the last "@",
// after the first "?" or "#"), or "". Messages never quote url.Parse's errors.
func shownBaseURL(raw string, g textGuard) string {
	s := g.clean(raw)
	scheme, start, end := "", 0, len(s)
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
	// Without "@", "?" and "#", url.Parse finds no user, query or fragment.
	case strings.ContainsAny(trimmed, "@?#"):
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
	msg := err.Error()
	switch {
	case errors.As(err, new(url.EscapeError)):
		return "it holds a % not followed by two hexadecimal digits (write %25 for a % itself)"
	case errors.As(err, new(url.InvalidHostError)):
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

// isLoopback: host is "localhost" (trusted: loopbackOnlyDialer checks what it dials) or a loopback IP.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// BaseURLMayHoldSecrets says whether messages show less than raw, which callers must then not show.
func BaseURLMayHoldSecrets(raw, key string) bool {
	return shownBaseURL(raw, textGuard{key: newSecret(key)}) != strings.TrimSpace(raw)
}

// Logger receives the client's diagnostics; fields never hold the API key.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
	Warn(ctx context.Context, msg string, fields map[string]any)
}

// NopLogger discards everything.
type NopLogger struct{}

func (NopLogger) Debug(context.Context, string, map[string]any) {}
func (NopLogger) Warn(context.Context, string, map[string]any)  {}
