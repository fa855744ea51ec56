package provider

import (
	"bufio"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// connectProxy is a forward proxy that only tunnels (CONNECT), to the
// addresses routes gives for the host:port asked for, and keeps what it
// saw: the CONNECT targets and headers, other requests, and every byte the
// client sent through a tunnel.
type connectProxy struct {
	routes map[string]string

	mu        sync.Mutex
	connects  []string
	headers   []http.Header
	plain     int
	fromPeers bytes.Buffer
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if r.Method != http.MethodConnect {
		p.plain++
		p.mu.Unlock()
		http.Error(w, "this proxy only tunnels", http.StatusMethodNotAllowed)
		return
	}
	p.connects = append(p.connects, r.Host)
	p.headers = append(p.headers, r.Header.Clone())
	p.mu.Unlock()
	target, ok := p.routes[r.Host]
	if !ok {
		http.Error(w, "no route to "+r.Host, http.StatusBadGateway)
		return
	}
	upstream, err := net.Dial("tcp", target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	_, _ = conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	go func() {
		_, _ = io.Copy(conn, upstream)
		conn.Close()
	}()
	_, _ = io.Copy(upstream, io.TeeReader(bufio.NewReader(rw), (*lockedWriter)(p)))
	upstream.Close()
}

// lockedWriter records what a client sent through a tunnel.
type lockedWriter connectProxy

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fromPeers.Write(b)
}

// Behind a corporate proxy (HTTPS_PROXY), an https base URL is reached
// through a CONNECT tunnel: the proxy sees the host and port, never a
// request in clear, and the key crosses it only inside TLS. The service's
// name is not loopback (loopback bypasses proxies): example.com, which the
// proxy routes to the mock, as a corporate proxy resolves names itself.
// Not parallel: the proxy settings are the process's environment.
func TestAccProviderThroughConnectProxy(t *testing.T) {
	// The mock answers loopback names only unless told of another.
	e := newTestEnv(t, mockservice.Options{Seed: 2220, AllowHosts: []string{"example.com"}})
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	service := fmt.Sprintf("example.com:%d", port) // a name in httptest's certificate
	proxy := &connectProxy{routes: map[string]string{service: ts.Listener.Addr().String()}}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	for _, v := range []string{"HTTPS_PROXY", "https_proxy"} {
		t.Setenv(v, ps.URL)
	}
	t.Setenv("CHECKPOINT_DISABLE", "1") // Terraform's own version check would take the proxy too
	for _, v := range []string{"NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"} {
		t.Setenv(v, "")
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	cfg := withProvider(fmt.Sprintf(`provider "backup" {
  base_url    = %q
  api_key     = %q
  ca_cert_pem = %q
}

data "backup_token" "t" {}

resource "backup_trigger" "this" {
  account_id = %q
}
`, (&url.URL{Scheme: "https", Host: service}).String(), e.key, caPEM, e.srv.AccountIDs()[0]))

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:            cfg,
			ConfigStateChecks: []statecheck.StateCheck{str("data.backup_token.t", "name", mockservice.DemoKeyName)},
			Check: func(*terraform.State) error {
				proxy.mu.Lock()
				defer proxy.mu.Unlock()
				if len(proxy.connects) == 0 || proxy.plain != 0 {
					return fmt.Errorf("%d tunnels, %d requests in clear; want tunnels only", len(proxy.connects), proxy.plain)
				}
				for i, host := range proxy.connects {
					if host != service || proxy.headers[i].Get("X-API-Key") != "" {
						return fmt.Errorf("CONNECT %s with headers %v", host, proxy.headers[i])
					}
				}
				sent := proxy.fromPeers.Bytes()
				if len(sent) == 0 || sent[0] != 0x16 { // a TLS handshake record
					return fmt.Errorf("the tunnel did not start with TLS: % x", sent[:min(len(sent), 8)])
				}
				if bytes.Contains(sent, []byte(e.key)) || strings.Contains(string(sent), "X-API-Key") {
					return fmt.Errorf("the key crossed the proxy in clear")
				}
				if n := e.srv.BackupsQueued(e.srv.AccountIDs()[0]); n != 1 {
					return fmt.Errorf("%d backups queued through the proxy, want 1", n)
				}
				return nil
			},
		}},
	})
}
