package client

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestRefuseNonLoopback(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:80":          true,
		"127.10.0.1:80":         true,
		"[::1]:80":              true,
		"[::ffff:127.0.0.1]:80": true,
		"192.0.2.1:80":          false,
		"10.0.0.1:443":          false,
		"[::ffff:192.0.2.1]:80": false,
		"[2001:db8::1]:80":      false,
		"[fe80::1%eth0]:80":     false,
		"0.0.0.0:80":            false,
		"localhost:80":          false, // never called with a name; refused if it were
	} {
		err := refuseNonLoopback("tcp", addr, nil)
		if (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// The loopback-only transport is what a client of a plain http base URL
// gets without AllowInsecureHTTP, and only that client.
func TestLoopbackOnlyIsChosenForPlainHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url   string
		allow bool
		want  bool
	}{
		{"http://localhost:8080", false, true},
		{"http://127.0.0.1:8080", false, true},
		{"http://backup.internal", true, false},
		{"https://backup.example.com", false, false},
		{"https://localhost:8443", false, false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := settingsFor(u, Options{AllowInsecureHTTP: tc.allow}).loopbackOnly; got != tc.want {
			t.Errorf("%s, allow_insecure_http=%v: loopbackOnly %v", tc.url, tc.allow, got)
		}
	}
}

// Plain http to loopback works, by address and by name.
func TestPlainHTTPToLoopbackWorks(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"127.0.0.1", "localhost", "LOCALHOST", "LocalHost"} {
		f := newFixture(t, mockservice.Options{}, func(o *Options) {
			o.BaseURL = strings.Replace(o.BaseURL, "127.0.0.1", host, 1)
		})
		if _, err := f.client.Token(context.Background()); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
}

// fakeResolver answers every A query with ip, as a DNS server that sends
// a name elsewhere would, and every other query with no record. It speaks
// DNS over a pipe, framed as over TCP.
func fakeResolver(ip netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go answerDNS(server, ip)
		return client, nil
	}}
}

func answerDNS(conn net.Conn, ip netip.Addr) {
	defer conn.Close()
	var size [2]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return
	}
	query := make([]byte, int(size[0])<<8|int(size[1]))
	if _, err := io.ReadFull(conn, query); err != nil {
		return
	}
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return
	}
	q, err := p.Question()
	if err != nil {
		return
	}
	b := dnsmessage.NewBuilder(make([]byte, 2, 514), dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	if q.Type == dnsmessage.TypeA {
		_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: ip.As4()})
	}
	msg, err := b.Finish()
	if err != nil {
		return
	}
	msg[0], msg[1] = byte((len(msg)-2)>>8), byte(len(msg)-2)
	_, _ = conn.Write(msg)
}

// nonLoopbackIPv4 is an address of this machine that is not loopback.
func nonLoopbackIPv4(t *testing.T) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() {
			return p.Addr()
		}
	}
	t.Skip("this machine has no IPv4 address but loopback")
	return netip.Addr{}
}

// A name that resolves to an address other than loopback is refused when
// dialled, before any byte is sent: the service, listening there, never
// sees a connection. The same name through a transport without the check
// reaches it, key and all, so that the refusal is the check's.
func TestPlainHTTPRefusedWhenTheNameResolvesElsewhere(t *testing.T) {
	t.Parallel()
	ip := nonLoopbackIPv4(t)
	var conns atomic.Int32
	var mu sync.Mutex
	var keys []string
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-API-Key"))
		mu.Unlock()
		http.Error(w, "{}", http.StatusTeapot)
	}))
	ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	ts.Listener = ln
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	// Not "localhost", which /etc/hosts answers before any resolver: a
	// name this resolver sends away, as DNS would a localhost that
	// /etc/hosts lacks.
	base := "http://localhost.test:" + port

	client := func(loopbackOnly bool) *Client {
		// AllowInsecureHTTP lets the name past the configuration check,
		// which trusts only "localhost" and loopback addresses: the
		// transport's check is the subject here.
		c, err := New(Options{BaseURL: base, APIKey: hostileKey, AllowInsecureHTTP: true, Clock: newFakeClock(), MaxRetries: 3,
			HTTPClient: &http.Client{Transport: newTransport(transportSettings{loopbackOnly: loopbackOnly, resolver: fakeResolver(ip)})}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	c := client(true)
	_, err = c.Token(context.Background())
	var ce *ConnectionError
	var re *RetryError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInsecureURL) || errors.As(err, &re) {
		t.Fatalf("want a ConnectionError for ErrInsecureURL without retries, got %T %v", err, err)
	}
	msg := err.Error()
	for _, want := range []string{"localhost.test", ip.String(), "not a loopback address", "allow_insecure_http"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, hostileKey) {
		t.Errorf("the message shows the key: %s", msg)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the service saw %d connection(s)", n)
	}

	// Without the check, the key would have gone there in clear.
	_, _ = client(false).Token(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(keys) == 0 || keys[0] != hostileKey {
		t.Errorf("the control request did not reach the service with the key: %q", keys)
	}
}

// With GODEBUG asking Go's HTTP/2 code to log headers, the client speaks
// HTTP/1.1 to a server that offers HTTP/2; without, HTTP/2, as before.
func TestHTTP2DebugTurnsHTTP2Off(t *testing.T) {
	srv := mockservice.New(mockservice.Options{RateLimit: 10000})
	var proto atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(int32(r.ProtoMajor))
		srv.ServeHTTP(w, r)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	for _, tc := range []struct {
		godebug string
		want    int32
	}{
		{"", 2},
		{"http2debug=0", 2},
		{"netdns=go", 2},
		{"http2debug=2", 1},
		{"http2debug=1", 1},
		{"netdns=go,http2debug=2", 1},
		{"http2debug=3", 1},
	} {
		t.Setenv("GODEBUG", tc.godebug)
		c, err := New(Options{BaseURL: ts.URL, APIKey: srv.DemoKey(), RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		proto.Store(0)
		if _, err := c.Token(context.Background()); err != nil {
			t.Fatalf("GODEBUG=%q: %v", tc.godebug, err)
		}
		if got := proto.Load(); got != tc.want {
			t.Errorf("GODEBUG=%q: HTTP/%d, want HTTP/%d", tc.godebug, got, tc.want)
		}
		if c.HTTP2Off() != (tc.want == 1) {
			t.Errorf("GODEBUG=%q: HTTP2Off() = %v", tc.godebug, c.HTTP2Off())
		}
	}
}

// A caller's HTTP client is left as it is, and not reported as changed.
func TestHTTP2DebugLeavesCallersClientAlone(t *testing.T) {
	t.Setenv("GODEBUG", "http2debug=2")
	c, err := New(Options{BaseURL: "https://backup.example.com", APIKey: hostileKey, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP2Off() {
		t.Error("HTTP2Off() for a caller's client")
	}
}

// The proxy settings are read when a client is built, not once per
// process; NO_PROXY and loopback bypass the proxy.
func TestProxyFromEnvironmentIsReadPerClient(t *testing.T) {
	for _, v := range []string{"HTTP_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		t.Setenv(v, "")
	}
	cases := []struct {
		proxy, noProxy, url, want string
	}{
		{"", "", "https://backup.example.com/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://backup.example.com/api/v1/token", "http://proxy.corp:3128"},
		{"http://proxy.corp:3128", "example.com", "https://backup.example.com/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://127.0.0.1:8443/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://localhost:8443/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "https://LOCALHOST:8443/api/v1/token", ""},
		{"http://proxy.corp:3128", "", "http://LocalHost:8080/api/v1/token", ""},
	}
	for _, c := range cases {
		t.Setenv("HTTPS_PROXY", c.proxy)
		t.Setenv("HTTP_PROXY", c.proxy)
		t.Setenv("NO_PROXY", c.noProxy)
		req, err := http.NewRequest(http.MethodGet, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := proxyFromEnvironment()(req)
		if err != nil {
			t.Fatal(err)
		}
		shown := ""
		if got != nil {
			shown = got.String()
		}
		if shown != c.want {
			t.Errorf("HTTPS_PROXY=%q NO_PROXY=%q %s: proxy %q, want %q", c.proxy, c.noProxy, c.url, shown, c.want)
		}
	}
}
