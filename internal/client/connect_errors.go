package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Failures to connect that no retry can fix: the Reason of a *ConnectionError
// (as is ErrInsecureURL).
var (
	ErrUntrustedCertificate = errors.New("the server's TLS certificate is not trusted")
	ErrHostNotFound         = errors.New("the host name does not resolve")
	ErrNotTLS               = errors.New("the server does not speak TLS")
)

// ConnectionError is a failure to connect that retrying cannot fix; the
// request was never sent.
type ConnectionError struct {
	Host   string
	Reason error
	Err    error
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

// transportError describes a request that got no response.
func (c *Client) transportError(method, shown string, sent bool, attemptCtx context.Context, err error) error {
	err = scrubURLError(err)
	if reason := permanentReason(err); reason != nil {
		return &TransportError{Method: method, Path: shown, Sent: false,
			Err: &ConnectionError{Host: c.base.Host, Reason: reason, Err: c.guard.wrap(err)}}
	}
	if errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
		err = &TimeoutError{After: c.opts.RequestTimeout}
	}
	return &TransportError{Method: method, Path: shown, Sent: sent, Err: c.guard.wrap(err)}
}

// scrubURLError drops the URL, which the caller knows, from a transport error.
func scrubURLError(err error) error {
	var uErr *url.Error
	if errors.As(err, &uErr) {
		return uErr.Err
	}
	return err
}

func permanentReason(err error) error {
	var (
		verr      *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		dnsErr    *net.DNSError
		recErr    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verr), errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid):
		return ErrUntrustedCertificate
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ErrHostNotFound
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, &recErr):
		return ErrNotTLS
	}
	return nil
}

// ErrNoCertificate: a PEM given as a trusted CA holds no certificate.
var ErrNoCertificate = errors.New("no PEM certificate found")

// CertPool is the system's trusted roots plus each PEM's certificates. A PEM
// without one is an error: a typo must not silently trust nothing new.
func CertPool(pems ...[]byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, pem := range pems {
		if !pool.AppendCertsFromPEM(pem) {
			return nil, ErrNoCertificate
		}
	}
	return pool, nil
}
