package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// transportSettings shape the transport a Client builds for itself.
type transportSettings struct {
	roots *x509.CertPool // nil: the system's
	// loopbackOnly: plain http without AllowInsecureHTTP. Each address
	// dialled is checked, since DNS may resolve "localhost" elsewhere.
	loopbackOnly bool
	noHTTP2      bool          // see http2DebugLogging
	resolver     *net.Resolver // tests' resolver; nil: the system's
}

func settingsFor(base *url.URL, opts Options) transportSettings {
	return transportSettings{
		roots:        opts.RootCAs,
		loopbackOnly: base.Scheme == "http" && !opts.AllowInsecureHTTP,
		noHTTP2:      http2DebugLogging(),
	}
}

// newTransport is http.DefaultTransport's set-up, idle connections enough for Terraform's -parallelism=10.
func newTransport(s transportSettings) *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: s.resolver}
	dial := dialer.DialContext
	if s.loopbackOnly {
		dial = loopbackOnlyDialer(dialer)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(!s.noHTTP2)
	return &http.Transport{
		TLSClientConfig:       &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12},
		Proxy:                 proxyFromEnvironment(),
		DialContext:           dial,
		Protocols:             protocols,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// proxyFromEnvironment reads the proxy variables now, not once per process
// as http.ProxyFromEnvironment does; loopback never goes through a proxy.
func proxyFromEnvironment() func(*http.Request) (*url.URL, error) {
	proxy := httpproxy.FromEnvironment().ProxyFunc()
	return func(req *http.Request) (*url.URL, error) {
		if isLoopback(req.URL.Hostname()) {
			return nil, nil
		}
		return proxy(req.URL)
	}
}

// notLoopbackError is refuseNonLoopback's refusal of one address.
type notLoopbackError struct{ addr netip.Addr }

func (e *notLoopbackError) Error() string { return e.addr.String() + " is not a loopback address" }

// refuseNonLoopback, a net.Dialer's Control, runs before connecting: a refused address gets no byte.
func refuseNonLoopback(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dialling %q: %w", address, err)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return &notLoopbackError{addr: ap.Addr().Unmap()}
	}
	return nil
}

// loopbackOnlyDialer dials as d does, to loopback addresses only.
func loopbackOnlyDialer(d *net.Dialer) func(context.Context, string, string) (net.Conn, error) {
	d.Control = refuseNonLoopback
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		var nl *notLoopbackError
		if errors.As(err, &nl) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &ConnectionError{Host: addr, Reason: ErrInsecureURL, Err: fmt.Errorf(
				"%s resolved to %s, which is not a loopback address; plain http goes only to loopback unless "+
					"allow_insecure_http is set", host, nl.addr)}
		}
		return conn, err
	}
}

// http2DebugLogging says whether GODEBUG turns on the HTTP/2 debug logs,
// which print X-API-Key: a client built then does not use HTTP/2.
func http2DebugLogging() bool {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "http2debug=1") || strings.Contains(godebug, "http2debug=2") {
		return true
	}
	for _, kv := range strings.Split(godebug, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if k == "http2debug" && v != "" && v != "0" {
			return true
		}
	}
	return false
}

// HTTP2Off says whether c turned HTTP/2 off (see http2DebugLogging).
func (c *Client) HTTP2Off() bool { return c.noHTTP2 }

// Failures to connect that no retry can fix: a *ConnectionError's Reason (as is ErrInsecureURL).
var (
	ErrUntrustedCertificate = errors.New("the server's TLS certificate is not trusted")
	ErrHostNotFound         = errors.New("the host name does not resolve")
	ErrNotTLS               = errors.New("the server does not speak TLS")
)

// ConnectionError is a failure to connect that retrying cannot fix; the request was never sent.
type ConnectionError struct {
	Host        string
	Reason, Err error
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("connecting to %s: %v: %v", e.Host, e.Reason, e.Err)
}

func (e *ConnectionError) Unwrap() []error { return []error{e.Reason, e.Err} }

// TimeoutError: one attempt got no complete response within request_timeout.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no response within request_timeout (%s)", e.After)
}

// Timeout lets net-style checks see it as a timeout.
func (e *TimeoutError) Timeout() bool { return true }

// transportFailure describes a request that got no response.
func (c *Client) transportFailure(method, shown string, sent bool, attemptCtx context.Context, err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		err = uErr.Err // the caller knows the URL
	}
	if reason := permanentReason(err); reason != nil {
		return &transportError{Method: method, Path: shown, Sent: false,
			Err: &ConnectionError{Host: c.base.Host, Reason: reason, Err: c.guard.wrap(err)}}
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		err = &TimeoutError{After: c.opts.RequestTimeout}
	}
	return &transportError{Method: method, Path: shown, Sent: sent, Err: c.guard.wrap(err)}
}

func permanentReason(err error) error {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, new(*tls.CertificateVerificationError)), errors.As(err, new(x509.UnknownAuthorityError)),
		errors.As(err, new(x509.HostnameError)), errors.As(err, new(x509.CertificateInvalidError)):
		return ErrUntrustedCertificate
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ErrHostNotFound
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, new(tls.RecordHeaderError)):
		return ErrNotTLS
	}
	return nil
}

// errNoCertificate: a PEM given as a trusted CA holds no certificate.
var errNoCertificate = errors.New("no PEM certificate found")

// CertPool is the system's trusted roots plus each PEM's certificates. A PEM
// without one is an error: a typo must not silently trust nothing new.
func CertPool(pems ...[]byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, pem := range pems {
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errNoCertificate
		}
	}
	return pool, nil
}
