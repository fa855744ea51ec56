package mockservice

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// adminCall is an admin request as the documented clients send it: the
// admin token, a JSON content type on a POST, a loopback Host.
func adminCall(t *testing.T, s *Server, method, target, body string) result {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Authorization", "Bearer "+s.AdminToken())
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	res := result{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &res.body)
	return res
}

// mockHTTP serves s on a loopback port and sends requests to it over HTTP,
// without following redirects.
type mockHTTP struct {
	t      *testing.T
	s      *Server
	url    string
	port   string
	client *http.Client
}

func serveHTTP(t *testing.T, s *Server) *mockHTTP {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	// The server's own transport: another test's server, closing, closes
	// the idle connections of http.DefaultTransport, which would break a
	// request of this test about to reuse one.
	client := ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &mockHTTP{t: t, s: s, url: ts.URL, port: port, client: client}
}

// do sends a request; header values "" are left out, and "Host" sets the
// Host header.
func (m *mockHTTP) do(method, path, body string, header map[string]string) result {
	m.t.Helper()
	req, err := http.NewRequestWithContext(m.t.Context(), method, m.url+path, strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	for k, v := range header {
		switch {
		case v == "":
		case k == "Host":
			req.Host = v
		default:
			req.Header.Set(k, v)
		}
	}
	res, err := m.client.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := result{status: res.StatusCode, header: res.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// tokenStatus is the token endpoint's status for the demo key.
func (m *mockHTTP) tokenStatus() int {
	m.t.Helper()
	return m.do("GET", "/api/v1/token", "", map[string]string{"X-API-Key": m.s.DemoKey()}).status
}

// A web page can POST text/plain across origins without a preflight; it
// switched a redirect fault on, after which the token endpoint sent the key
// elsewhere. Now refused, without the token (401) and even with it (415),
// and no fault is on.
func TestAdminRefusesCrossOriginTextPlainPost(t *testing.T) {
	t.Parallel()
	m := serveHTTP(t, New(Options{Seed: 40, RateLimit: 1000}))
	fault := `{"Kind":8,"Location":"http://evil.example"}`
	browser := map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://evil.example"}
	checkProblem(t, m.do("POST", "/_mock/faults", fault, browser), 401, "Unauthenticated")
	browser["X-Mock-Admin-Token"] = m.s.AdminToken()
	checkProblem(t, m.do("POST", "/_mock/faults", fault, browser), 415, "Unsupported Media Type")
	for _, ct := range []string{"", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"} {
		browser["Content-Type"] = ct
		if r := m.do("POST", "/_mock/faults", fault, browser); r.status != 415 {
			t.Errorf("Content-Type %q: %d, want 415", ct, r.status)
		}
	}
	if got := m.tokenStatus(); got != 200 {
		t.Fatalf("token endpoint: %d, want 200 (no fault on)", got)
	}
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if len(m.s.faults) != 0 {
		t.Errorf("%d fault(s) on", len(m.s.faults))
	}
}

// Every admin endpoint wants the token; without it, or with a wrong one,
// nothing changes.
func TestAdminWantsTheToken(t *testing.T) {
	t.Parallel()
	m := serveHTTP(t, New(Options{Seed: 41, RateLimit: 1000}))
	if m.tokenStatus() != 200 {
		t.Fatal("token endpoint")
	}
	for _, auth := range []map[string]string{
		{},
		{"Authorization": "Bearer wrong"},
		{"X-Mock-Admin-Token": "wrong"},
		{"Authorization": "Basic " + m.s.AdminToken()},
		{"Authorization": m.s.AdminToken()},
		{"X-API-Key": m.s.DemoKey()},
	} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/_mock/stats", ""},
			{"POST", "/_mock/reset", ""},
			{"POST", "/_mock/faults", `{"Kind":1}`},
			{"POST", "/_mock/rate-limit?n=1", ""},
			{"GET", "/_mock/nowhere", ""},
		} {
			h := map[string]string{"Content-Type": "application/json"}
			for k, v := range auth {
				h[k] = v
			}
			r := m.do(c.method, c.path, c.body, h)
			checkProblem(t, r, 401, "Unauthenticated")
			if !strings.Contains(r.header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(r.raw, "BACKUP_MOCK_ADMIN_TOKEN") {
				t.Errorf("%s %s with %v: %v %s", c.method, c.path, auth, r.header, r.raw)
			}
		}
	}
	st := m.s.Stats()
	if st.Requests[RouteToken] != 1 || m.tokenStatus() != 200 {
		t.Errorf("an admin request without the token took effect: %+v", st)
	}
}

// A Host that is not a loopback name, as DNS rebinding brings, is refused
// on the API and the admin API alike, with a problem body, before counting
// or authenticating.
func TestNonLoopbackHostRefused(t *testing.T) {
	t.Parallel()
	m := serveHTTP(t, New(Options{Seed: 42, RateLimit: 1000}))
	key, token := m.s.DemoKey(), m.s.AdminToken()
	for _, host := range []string{"evil.example:" + m.port, "evil.example", "localhost.evil.example:" + m.port, "127.0.0.1.nip.io:" + m.port,
		"10.0.0.1:" + m.port, "[fe80::1%25lo]:" + m.port, "0.0.0.0:" + m.port} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/token", ""},
			{"GET", "/_mock/stats", ""},
			{"POST", "/_mock/faults", `{"Kind":1}`},
		} {
			r := m.do(c.method, c.path, c.body, map[string]string{"Host": host, "X-API-Key": key,
				"Authorization": "Bearer " + token, "Content-Type": "application/json"})
			checkProblem(t, r, http.StatusMisdirectedRequest, "Misdirected Request")
			if !strings.Contains(r.body["detail"].(string), "loopback") {
				t.Errorf("detail %q", r.body["detail"])
			}
		}
	}
	if st := m.s.Stats(); st.TotalRequests() != 0 || m.tokenStatus() != 200 {
		t.Errorf("refused requests took effect: %+v", st)
	}
}

// With the token, a JSON content type and a loopback Host, the admin API
// works, under every loopback name and either header.
func TestAdminWorksWithTokenJSONAndLoopbackHost(t *testing.T) {
	t.Parallel()
	m := serveHTTP(t, New(Options{Seed: 43, RateLimit: 1000}))
	token := m.s.AdminToken()
	if !strings.HasPrefix(token, "bkm_") || len(token) != 36 || token == New(Options{Seed: 43}).AdminToken() {
		t.Fatalf("admin token %q: want bkm_ and 32 random hex digits, new on every server", token)
	}
	for i, host := range []string{"", "127.0.0.1:" + m.port, "localhost:" + m.port, "LocalHost:" + m.port, "[::1]:" + m.port, "127.0.0.2:" + m.port, "localhost", "[::1]"} {
		auth := map[string]string{"Authorization": "Bearer " + token}
		if i%2 == 1 {
			auth = map[string]string{AdminTokenHeader: token}
		}
		h := func(more map[string]string) map[string]string {
			out := map[string]string{"Host": host}
			for k, v := range auth {
				out[k] = v
			}
			for k, v := range more {
				out[k] = v
			}
			return out
		}
		if r := m.do("POST", "/_mock/faults", `{"Kind":8,"Location":"http://127.0.0.2:9","Route":"token","Times":1}`,
			h(map[string]string{"Content-Type": "application/json; charset=utf-8"})); r.status != 204 {
			t.Fatalf("Host %q: faults: %d %s", host, r.status, r.raw)
		}
		if r := m.do("GET", "/api/v1/token", "", map[string]string{"Host": host, "X-API-Key": m.s.DemoKey()}); r.status != 307 ||
			r.header.Get("Location") != "http://127.0.0.2:9/api/v1/token" {
			t.Fatalf("Host %q: the fault did not take: %d %v", host, r.status, r.header)
		}
		r := m.do("GET", "/_mock/stats", "", h(nil))
		if r.status != 200 || r.body["requests"].(map[string]any)["token"] != float64(1) {
			t.Fatalf("Host %q: stats: %d %s", host, r.status, r.raw)
		}
		if r := m.do("POST", "/_mock/reset", "", h(map[string]string{"Content-Type": "application/json"})); r.status != 204 {
			t.Fatalf("Host %q: reset: %d %s", host, r.status, r.raw)
		}
	}
}

// A name given in Options.AllowHosts is served; others still are not.
func TestAllowHosts(t *testing.T) {
	t.Parallel()
	m := serveHTTP(t, New(Options{Seed: 44, RateLimit: 1000, AllowHosts: []string{"example.com"}}))
	for host, want := range map[string]int{"example.com:" + m.port: 200, "Example.COM": 200, "evil.example:" + m.port: 421, "www.example.com": 421} {
		if r := m.do("GET", "/api/v1/token", "", map[string]string{"Host": host, "X-API-Key": m.s.DemoKey()}); r.status != want {
			t.Errorf("Host %q: %d, want %d", host, r.status, want)
		}
	}
}

// The latency fault delays a request by at most MaxLatency: ParseFault
// (the -fault flag) and the admin API refuse more, saying so; AddFault
// clamps.
func TestLatencyCap(t *testing.T) {
	t.Parallel()
	if MaxLatency != 30*time.Second {
		t.Errorf("MaxLatency %v", MaxLatency)
	}
	if f, err := ParseFault("latency,latency=30s"); err != nil || f.Latency != 30*time.Second {
		t.Errorf("30s: %+v, %v", f, err)
	}
	for _, spec := range []string{"latency,latency=1h", "latency,latency=30.001s", "server-error,latency=-1s"} {
		if _, err := ParseFault(spec); err == nil || !strings.Contains(err.Error(), "at most 30s") {
			t.Errorf("%s: %v, want a refusal naming the 30s cap", spec, err)
		}
	}

	s := New(Options{Seed: 45})
	r := adminCall(t, s, "POST", "/_mock/faults", `{"Kind":4,"Latency":3600000000000}`)
	checkProblem(t, r, 400, "Bad Request")
	if !strings.Contains(r.raw, "at most 30s") {
		t.Errorf("refusal %s does not name the cap", r.raw)
	}
	if r := adminCall(t, s, "POST", "/_mock/faults", `{"Kind":4,"Latency":30000000000}`); r.status != 204 {
		t.Errorf("30s refused: %d %s", r.status, r.raw)
	}
	s.AddFault(Fault{Kind: FaultLatency, Latency: time.Hour})
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) != 2 || s.faults[0].Latency != 30*time.Second || s.faults[1].Latency != MaxLatency {
		t.Errorf("faults %+v %+v", s.faults[0], s.faults[len(s.faults)-1])
	}
}

func TestHostAllowed(t *testing.T) {
	t.Parallel()
	s := New(Options{Seed: 46})
	for host, want := range map[string]bool{
		"localhost": true, "localhost:1": true, "LOCALHOST:65535": true, "127.0.0.1": true, "127.0.0.1:80": true,
		"127.255.0.9:8": true, "[::1]": true, "[::1]:443": true, "::1": true, "[::ffff:127.0.0.1]:1": true,
		"": false, "localhost.": false, "localhost.:1": false, "evil.example:1": false, "a.localhost:1": false,
		"127.0.0.1.evil.example": false, "[::2]:1": false, "0.0.0.0:1": false, "[::]:1": false, "10.1.2.3": false,
		"[fe80::1%lo]:1": false, "127.1:1": false,
	} {
		if got := s.hostAllowed(host); got != want {
			t.Errorf("%q: %v, want %v", host, got, want)
		}
	}
}
