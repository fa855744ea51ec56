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

// transportSettings shape the transport a Client builds for itself (none
// of this applies to an Options.HTTPClient, whose caller owns it).
type transportSettings struct {
	// roots are the trusted CAs; nil trusts the system's.
	roots *x509.CertPool
	// loopbackOnly: a plain http base URL without AllowInsecureHTTP. The
	// key may then only reach a loopback address, checked on each address
	// dialled: "localhost" passes the configuration check by name, and
	// where /etc/hosts lacks it, DNS would decide where the key goes.
	loopbackOnly bool
	// noHTTP2: GODEBUG asks Go's HTTP/2 code to log headers (see
	// HTTP2DebugLogging).
	noHTTP2 bool
	// resolver, when set, resolves host names instead of the system's
	// (tests).
	resolver *net.Resolver
}

func settingsFor(base *url.URL, opts Options) transportSettings {
	return transportSettings{
		roots:        opts.RootCAs,
		loopbackOnly: base.Scheme == "http" && !opts.AllowInsecureHTTP,
		noHTTP2:      HTTP2DebugLogging(),
	}
}

// newTransport is http.DefaultTransport's set-up with enough idle
// connections kept for Terraform's ten parallel operations.
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

// proxyFromEnvironment honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY (and
// their lower-case forms) as read now, when the client is built:
// http.ProxyFromEnvironment reads them once per process. Requests to
// loopback never go through a proxy, so that a loopback-only transport
// dials its target itself: by isLoopback's rule, since httpproxy's takes
// only a lower-case "localhost" for loopback and sent "LOCALHOST" to the
// proxy.
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

// refuseNonLoopback is a net.Dialer's Control: it runs once the address
// is resolved and before the connection is made, so that a refused
// address is never sent a byte.
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

// loopbackOnlyDialer dials as d does, to loopback addresses only. A
// refusal is a *ConnectionError (no retry can fix it) naming the host and
// the address it resolved to.
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

// HTTP2DebugLogging says whether GODEBUG, as set now, turns on the debug
// logs of Go's HTTP/2 code (http2debug=1 or 2), which print every request
// header, the X-API-Key among them, where no log mask reaches. A client
// built then does not use HTTP/2. Go reads GODEBUG for this once, as the
// process starts, matching "http2debug=1" or "=2" anywhere in it; both
// that and any other non-zero value count here.
func HTTP2DebugLogging() bool {
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

// HTTP2Off says whether c turned HTTP/2 off because of GODEBUG (see
// HTTP2DebugLogging), so that its caller can say why.
func (c *Client) HTTP2Off() bool { return c.noHTTP2 }
