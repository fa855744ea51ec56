// Package client is a small client for the Backup Service API. One Client is
// shared by every data source and resource of a configured provider: it is
// safe for concurrent use, paces requests to the key's rate limit, retries
// what is safe to retry, and returns typed errors.
package client

import (
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Defaults of Options.
const (
	DefaultMaxRetries     = 4 // waits of about 1, 2, 4 and 8 seconds
	DefaultRequestTimeout = 30 * time.Second
	DefaultBackoffBase    = time.Second
	DefaultMaxBackoff     = 30 * time.Second
	DefaultRetryAfterCap  = 60 * time.Second
	DefaultRetryBudget    = 2 * time.Minute
)

// PageSize is the largest page the service gives: listings ask for it so
// that they need the fewest requests.
const PageSize = 50

// Options configure a Client. Zero values take the defaults above.
type Options struct {
	// BaseURL is scheme + host (+ optional path prefix), without /api/v1.
	BaseURL string
	// APIKey is sent in X-API-Key and nowhere else.
	APIKey string
	// AllowInsecureHTTP permits plain http to hosts other than loopback.
	AllowInsecureHTTP bool
	// UserAgent names the caller, for example "terraform-provider-backup/1.2.0".
	UserAgent string

	// MaxRetries is the number of retries after the first attempt: 0 (the
	// zero value) means none, as it reads; DefaultMaxRetries is the
	// provider's default.
	MaxRetries     int
	RequestTimeout time.Duration // per attempt
	BackoffBase    time.Duration // first backoff; doubles each retry
	MaxBackoff     time.Duration // cap of one backoff
	RetryAfterCap  time.Duration // cap on a server's Retry-After
	RetryBudget    time.Duration // cap on the total time spent waiting to retry

	// Organization, when set, is the id of the organization the key must
	// belong to: before its first POST, the client reads the key's
	// organization (GET /token, once per Client) and refuses to change
	// anything in another (*OrganizationMismatchError).
	Organization string

	// RootCAs, when set, are the certificates the client trusts (see
	// CertPool); nil trusts the system's. Ignored with HTTPClient.
	RootCAs *x509.CertPool

	HTTPClient *http.Client
	Clock      clock.Clock
	Logger     Logger
	// Jitter draws, uniform in [0, 1), the backoffs' jitter and the rate
	// limiter's entry; nil draws from math/rand/v2. A seeded one replays.
	Jitter func() float64
}

// Client talks to one Backup Service with one key.
type Client struct {
	base    *url.URL
	key     *secret
	ua      string
	opts    Options
	http    *http.Client
	clock   clock.Clock
	log     Logger
	limiter *limiter
	jitter  func() float64
	guard   textGuard // cleans what the service sends before it is shown
	org     orgCheck
	tok     keyToken
	proof   baseProof // see judgeAbsence
	noHTTP2 bool      // see HTTP2DebugLogging

	serviceClock serviceClock // see ClockOffset
}

// secret holds the key behind a pointer, so that printing a Client (or
// anything holding one) shows an address, and printing the secret itself
// shows a placeholder. The key leaves it only for the X-API-Key header.
type secret struct {
	value string
	// folded is the key as text cleaning leaves it (see textGuard.clean),
	// computed once: clean masks it in every string the service sends.
	folded string
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
	if err := CheckAPIKey(opts.APIKey); err != nil {
		return nil, err
	}
	key := newSecret(opts.APIKey)
	base, err := parseBaseURL(opts.BaseURL, opts.AllowInsecureHTTP, textGuard{key: key})
	if err != nil {
		return nil, err
	}
	noHTTP2 := false
	if opts.HTTPClient == nil {
		ts := settingsFor(base, opts)
		noHTTP2 = ts.noHTTP2
		opts.HTTPClient = &http.Client{Transport: newTransport(ts)}
	}
	setDefaults(&opts)
	// A copy, so that the caller's client is left as it was: this one
	// follows no redirect (see RedirectError).
	hc := *opts.HTTPClient
	hc.CheckRedirect = refuseRedirects
	opts.HTTPClient = &hc
	c := &Client{
		base:   base,
		key:    key,
		ua:     opts.UserAgent,
		http:   opts.HTTPClient,
		clock:  opts.Clock,
		log:    opts.Logger,
		jitter: opts.Jitter,
		guard:  textGuard{key: key},
		// Set only for the client's own transport: a caller's is theirs.
		noHTTP2: noHTTP2,
	}
	opts.APIKey = "" // keep one copy only, in a type that never prints
	c.opts = opts
	c.limiter = newLimiter(c.clock)
	c.limiter.draw = c.jitter
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
	def(&o.BackoffBase, DefaultBackoffBase)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.RetryAfterCap, DefaultRetryAfterCap)
	def(&o.RetryBudget, DefaultRetryBudget)
	if o.UserAgent == "" {
		o.UserAgent = "terraform-provider-backup"
	}
	if o.Clock == nil {
		o.Clock = clock.Wall{}
	}
	if o.Logger == nil {
		o.Logger = nopLogger{}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
}

// CheckAPIKey refuses a key that no request could carry: an HTTP header
// cannot hold control characters, and white space around a key (a newline
// at the end of a file, most often) is never part of it. Retrying such a
// key only delays the error.
func CheckAPIKey(key string) error {
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
