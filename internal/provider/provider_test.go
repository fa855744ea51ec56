package provider

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Environment variables are process-wide, so these tests do not run in
// parallel with each other (t.Setenv forbids it).

func TestAccProviderFromEnvironment(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 601})
	e.setenv(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:            withProvider(`data "backup_token" "this" {}`),
			ConfigStateChecks: []statecheck.StateCheck{str("data.backup_token.this", "name", mockservice.DemoKeyName)},
		}},
	})
}

func TestAccProviderAttributesWinOverEnvironment(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 602})
	other := e.srv.AddKey(mockservice.KeySpec{Name: "from-attribute"})
	t.Setenv(EnvBaseURL, "http://127.0.0.1:1") // nothing listens there
	t.Setenv(EnvAPIKey, "bks_from_environment")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:            e.configWithKey(other, `data "backup_token" "this" {}`),
			ConfigStateChecks: []statecheck.StateCheck{str("data.backup_token.this", "name", "from-attribute")},
		}},
	})
}

func TestAccProviderMissingSettings(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 603})
	t.Setenv(EnvBaseURL, "")
	t.Setenv(EnvAPIKey, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      withProvider(`data "backup_token" "this" {}`),
				ExpectError: expectError("Missing Backup Service base URL", "Set base_url in the provider block, or the BACKUP_BASE_URL environment variable", "an empty base_url counts as not set"),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url = %q
}
data "backup_token" "this" {}`, e.url)),
				ExpectError: expectError("Missing Backup Service API key", "Set api_key in the provider block, or the BACKUP_API_KEY environment variable", "an empty api_key counts as not set"),
			},
		},
	})
	e.noRequests()
}

func TestAccProviderUnknownAtPlan(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 604})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: withProvider(fmt.Sprintf(`
resource "terraform_data" "key" {
  input = timestamp()
}
provider "backup" {
  base_url = %q
  api_key  = terraform_data.key.output
}
data "backup_token" "this" {}
`, e.url)),
			ExpectError: expectError("Unknown Backup Service api_key", "unknown at plan time", "BACKUP_API_KEY"),
		}},
	})
	e.noRequests()
}

func TestAccProviderRefusesPlainHTTPToRemoteHosts(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 605})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url = "http://backup.example.com"
  api_key  = %q
}
data "backup_token" "this" {}`, e.key)),
				ExpectError: expectError("Plain http base URL refused", "from base_url", "would send the API key in clear", "set allow_insecure_http = true"),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url        = %q
  api_key         = %q
  request_timeout = "soon"
}
data "backup_token" "this" {}`, e.url, e.key)),
				ExpectError: expectError("Invalid duration", `request_timeout must be a duration: a number followed by a unit`, `got "soon".`),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url    = %q
  api_key     = %q
  max_retries = 99
}
data "backup_token" "this" {}`, e.url, e.key)),
				ExpectError: expectError("max_retries must be a whole number from 0 to 20; got 99."),
			},
		},
	})
	e.noRequests()
}

// The provider makes no request until a data source or resource needs one,
// so that terraform validate and plans without backup objects work offline.
func TestAccProviderConfigureIsOffline(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 606})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`resource "terraform_data" "x" {}`),
		}},
	})
	e.noRequests()
}

// TestAccBadInputRefusedBeforeAnyRequest: input no request could succeed
// with is refused at validate or plan time, naming the attribute, with a
// message users can act on, and nothing reaches the service.
func TestAccBadInputRefusedBeforeAnyRequest(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 607})
	acct := e.srv.AccountIDs()[0]
	provider := func(baseURL, key, extra string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n%s}\n", baseURL, key, extra))
	}
	token := `data "backup_token" "this" {}`
	cases := []struct {
		name, config string
		want         []string
	}{
		// Not a key the mock issued: Terraform quotes the offending line of
		// the configuration, and the suite's secret scan would flag it.
		{"key with a trailing newline", provider(e.url, "bks_00000000000000000000000000000000\n", "") + token,
			[]string{"Invalid Backup Service API key", "The API key, from api_key", "begins or ends with white space", "trimspace(file(...))"}},
		{"key with a control character", provider(e.url, "bks_a\tb", "") + token,
			[]string{"Invalid Backup Service API key", "control characters"}},
		{"base_url without a scheme", provider(strings.TrimPrefix(e.url, "http://"), e.key, "") + token,
			[]string{"Invalid Backup Service base URL", "add https://", "https://" + strings.TrimPrefix(e.url, "http://")}},
		{"base_url with /api/v1", provider(e.url+"/api/v1", e.key, "") + token,
			[]string{"Invalid Backup Service base URL", "leave out /api/v1", "for example " + e.url}},
		{"base_url with credentials", provider("https://admin:hunter2@backup.example.com", e.key, "") + token,
			[]string{"Invalid Backup Service base URL", `"https://backup.example.com"`, "must not carry credentials"}},
		{"base_url with a query", provider(e.url+"/?tenant=1", e.key, "") + token,
			[]string{"Invalid Backup Service base URL", "must not carry credentials, a query or a fragment"}},
		{"fractional max_retries", provider(e.url, e.key, "  max_retries = 2.5\n") + token,
			[]string{"Invalid number", "max_retries must be a whole number from 0 to 20; got 2.5."}},
		{"fractional max_results", e.config(`data "backup_audit_logs" "x" { max_results = 1.5 }`),
			[]string{"Invalid number", "max_results must be a whole number from 1 to 2147483647; got 1.5."}},
		{"huge max_results", e.config(fmt.Sprintf(`data "backup_account_backups" "x" {
  account_id  = %q
  max_results = 1e30
}`, acct)),
			[]string{"max_results must be a whole number from 1 to 2147483647; got 1e+30."}},
		{"empty platform filter", e.config(`data "backup_accounts" "x" { platform = "" }`),
			[]string{"Attribute platform string length must be at least 1"}},
		{"empty service_type filter", e.config(`data "backup_accounts" "x" { service_type = "" }`),
			[]string{"Attribute service_type string length must be at least 1"}},
		{"zero create timeout", e.config(triggerConfig(acct, "  timeouts {\n    create = \"0s\"\n  }\n")),
			[]string{"Invalid timeout", `timeouts.create must be positive; got "0s". Write a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m".`}},
		{"negative delete timeout of backup_on_destroy", e.config(fmt.Sprintf("resource \"backup_on_destroy\" \"g\" {\n  account_id = %q\n  timeouts {\n    delete = \"-1m\"\n  }\n}\n", acct)),
			[]string{"Invalid timeout", `timeouts.delete must be positive; got "-1m".`}},
		{"malformed account of backup_on_destroy", e.config(`resource "backup_on_destroy" "g" { account_id = "acc_short" }`),
			[]string{"account_id", "acc_"}},
		{"negative create timeout", e.config(triggerConfig(acct, "  timeouts {\n    create = \"-1m\"\n  }\n")),
			[]string{"Invalid timeout", `timeouts.create must be positive; got "-1m".`}},
		{"create timeout in days", e.config(triggerConfig(acct, "  timeouts {\n    create = \"1d\"\n  }\n")),
			[]string{"Invalid timeout", `timeouts.create must be a duration: a number followed by a unit (ns, us, ms, s, m or h)`,
				`got "1d".`}},
	}
	steps := make([]resource.TestStep, 0, len(cases))
	for _, tc := range cases {
		steps = append(steps, resource.TestStep{Config: tc.config, ExpectError: expectError(tc.want...)})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: e.factories(), Steps: steps})
	e.noRequests()
}

// TestAccKeyFromEnvironmentWithNewline: a key read from a file into
// BACKUP_API_KEY often ends with a newline; the error names the variable.
func TestAccKeyFromEnvironmentWithNewline(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 608})
	t.Setenv(EnvAPIKey, e.key+"\n")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n}\ndata \"backup_token\" \"this\" {}\n", e.url)),
			ExpectError: expectError("The API key, from the BACKUP_API_KEY environment variable", "white space", "trimspace"),
		}},
	})
	e.noRequests()
}

// TestAccErrorsShowThePathSent: with a path prefix in base_url, an error
// names the whole path requested, prefix included.
func TestAccErrorsShowThePathSent(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 609})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n}\ndata \"backup_token\" \"this\" {}\n",
				e.url+"/backup", e.key)),
			ExpectError: errorWithRequestID("Unable to read backup_token", 404, "Resource not found.", "to GET /backup/api/v1/token."),
		}},
	})
}

// base_url = "" and api_key = "" (empty variables) do not hide the
// environment variables.
func TestAccProviderEmptyAttributesUseEnvironment(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 1706})
	e.setenv(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: withProvider(`provider "backup" {
  base_url = ""
  api_key  = ""
}
data "backup_token" "this" {}`),
			ConfigStateChecks: []statecheck.StateCheck{str("data.backup_token.this", "name", mockservice.DemoKeyName)},
		}},
	})
}

// hostileBaseURL is a base_url holding what no message may show.
type hostileBaseURL struct {
	name, url string
	secrets   []string // none of these may appear
}

// hostileBaseURLs: credentials and queries in malformed URLs, where
// url.Parse's errors quote the URL, and the key given as the user.
func hostileBaseURLs(key string) []hostileBaseURL {
	return []hostileBaseURL{
		{"missing colon", "https//ci:Pa55w0rd@backup.example.com", []string{"Pa55w0rd", "ci:"}},
		{"bad escape in the password", "https://ci:Pa55%w0rd@backup.example.com", []string{"Pa55", "w0rd", "ci:"}},
		{"query", "https://backup.example.com?token=s3cret", []string{"s3cret", "token"}},
		{"everything", "https://user:pa55word@backup.example.com/path?x=qs3cret#fr4gment", []string{"pa55word", "user", "qs3cret", "fr4gment"}},
		{"key as the user", "https://" + key + "@backup.example.com", []string{key}},
		{"plain http with a password", "http://ci:Pa55w0rd@backup.example.com", []string{"Pa55w0rd"}},
	}
}

// configure runs Configure as Terraform would, with base_url and api_key
// set (base_url null when empty), and returns the diagnostics' text and
// what the provider logged.
func configure(t *testing.T, p *backupProvider, baseURL, key string) (diagnostics, logs string) {
	t.Helper()
	ctx := context.Background()
	var sresp provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(ctx).(tftypes.Object)
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	if baseURL != "" {
		values["base_url"] = tftypes.NewValue(tftypes.String, baseURL)
	}
	values["api_key"] = tftypes.NewValue(tftypes.String, key)
	var out bytes.Buffer
	ctx = tflogtest.RootLogger(ctx, &out)
	var resp provider.ConfigureResponse
	p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: sresp.Schema, Raw: tftypes.NewValue(typ, values)}}, &resp)
	var b strings.Builder
	for _, d := range resp.Diagnostics {
		fmt.Fprintf(&b, "%s: %s\n%s\n", d.Severity(), d.Summary(), d.Detail())
	}
	return b.String(), out.String()
}

// No base_url message holds the credentials, the query or the key,
// whether base_url or BACKUP_BASE_URL holds them.
func TestProviderBaseURLMessagesHoldNoCredentials(t *testing.T) {
	const key = "bks_0123456789abcdefKEYKEYKEYKEYKE"
	for _, h := range hostileBaseURLs(key) {
		for _, fromEnv := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/env=%v", h.name, fromEnv), func(t *testing.T) {
				attr := h.url
				if fromEnv {
					t.Setenv(EnvBaseURL, h.url)
					attr = ""
				}
				diags, _ := configure(t, &backupProvider{version: "test"}, attr, key)
				if !strings.Contains(diags, "base URL") {
					t.Fatalf("no base URL error:\n%s", diags)
				}
				if want := map[bool]string{false: "from base_url", true: "from the BACKUP_BASE_URL environment variable"}[fromEnv]; !strings.Contains(diags, want) {
					t.Errorf("the message does not say %q:\n%s", want, diags)
				}
				for _, s := range h.secrets {
					if strings.Contains(diags, s) {
						t.Errorf("the diagnostics show %q:\n%s", s, diags)
					}
				}
				t.Log(diags)
			})
		}
	}
}

// Terraform itself shows no more than the message: an attribute's
// diagnostic would quote the configuration line, and the value of a
// variable in it.
func TestAccProviderBaseURLNotQuotedByTerraform(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 611})
	c := newCLI(t, e, withProvider(`data "backup_token" "this" {}`))
	t.Setenv(EnvAPIKey, e.key) // read by the provider, served from this process: the key is nowhere in the configuration
	for _, h := range hostileBaseURLs(e.key) {
		literal := fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n}\n", h.url)
		variable := fmt.Sprintf("variable \"url\" {\n  default = %q\n}\nprovider \"backup\" {\n  base_url = var.url\n}\n", h.url)
		for form, provider := range map[string]string{"literal": literal, "variable": variable} {
			c.write(withProvider(provider + `data "backup_token" "this" {}`))
			out, err := c.exec(nil, "plan", "-input=false", "-no-color")
			if err == nil || !strings.Contains(out, "base URL") {
				t.Fatalf("%s, %s: want a base URL error, got %v\n%s", h.name, form, err, out)
			}
			for _, s := range h.secrets {
				if strings.Contains(out, s) {
					t.Errorf("%s, %s: Terraform shows %q:\n%s", h.name, form, s, out)
				}
			}
		}
	}
	e.noRequests()
}

// With GODEBUG asking for HTTP/2 debug logs, the provider says once why
// it uses HTTP/1.1; without, it says nothing.
func TestProviderWarnsOnceWhenHTTP2DebugTurnsHTTP2Off(t *testing.T) {
	ts := httptest.NewServer(mockservice.New(mockservice.Options{Seed: 612}))
	t.Cleanup(ts.Close)
	const key = "bks_0123456789abcdef0123456789abcdef"
	const warning = "GODEBUG sets http2debug"
	t.Setenv("GODEBUG", "")
	p := &backupProvider{version: "test"}
	if diags, logs := configure(t, p, ts.URL, key); diags != "" || strings.Contains(logs, warning) {
		t.Fatalf("without GODEBUG: %s%s", diags, logs)
	}
	t.Setenv("GODEBUG", "http2debug=2")
	diags, logs := configure(t, p, ts.URL, key)
	if diags != "" || strings.Count(logs, warning) != 1 || !strings.Contains(logs, `"@level":"warn"`) ||
		!strings.Contains(logs, "HTTP/1.1") {
		t.Fatalf("want one WARN:\n%s%s", diags, logs)
	}
	if _, logs := configure(t, p, ts.URL, key); strings.Contains(logs, warning) {
		t.Errorf("warned again:\n%s", logs)
	}
}

// A service behind a certificate of a private CA: refused, with advice
// naming ca_cert_file and ca_cert_pem, until the CA is given by either;
// a PEM or a file without a certificate is refused at validate time.
func TestAccProviderPrivateCA(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2101})
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	ts.StartTLS()
	t.Cleanup(ts.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(extra string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n%s}\ndata \"backup_token\" \"t\" {}\n", ts.URL, e.key, extra))
	}
	named := []statecheck.StateCheck{str("data.backup_token.t", "name", mockservice.DemoKeyName)}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: cfg(""), ExpectError: expectError("not trusted", "ca_cert_file or ca_cert_pem", "Retrying cannot help")},
			{Config: cfg("  ca_cert_pem = \"not a certificate\"\n"), ExpectError: expectError("Invalid CA certificates", "ca_cert_pem holds no PEM certificate")},
			{Config: cfg("  ca_cert_file = \"/nonexistent/ca.pem\"\n"), ExpectError: expectError("Unreadable CA certificate file")},
			{Config: cfg(fmt.Sprintf("  ca_cert_pem = %q\n", caPEM)), ConfigStateChecks: named},
			{Config: cfg(fmt.Sprintf("  ca_cert_file = %q\n", caFile)), ConfigStateChecks: named},
		},
	})
}

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

// keyCollector plays a host that a redirect would send requests to: it
// counts them, and the API keys they carry.
type keyCollector struct {
	mu             sync.Mutex
	requests, keys int
}

func (k *keyCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests++
	if r.Header.Get("X-API-Key") != "" {
		k.keys++
	}
	w.WriteHeader(http.StatusNotFound)
}

// TestAccRedirectToAnotherHostIsRefused: a service that redirects every
// request elsewhere fails the data source at plan time and the trigger at
// apply time, clearly; the other host never sees a request, and no backup
// is queued.
func TestAccRedirectToAnotherHostIsRefused(t *testing.T) {
	collector := &keyCollector{}
	other := httptest.NewServer(collector)
	t.Cleanup(other.Close)
	e := newTestEnv(t, mockservice.Options{Seed: 1401})
	acct := e.srv.AccountIDs()[0]
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultRedirect, Location: other.URL})

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "backup_token" "current" {}`),
				ExpectError: expectError("Unable to read backup_token", "GET /api/v1/token: HTTP 307 redirect to "+other.URL+"/api/v1/token", "not followed", "Set base_url"),
			},
			{
				Config: e.config(triggerConfig(acct, "")),
				ExpectError: expectError("Unable to trigger a backup of account "+acct,
					"HTTP 307 redirect to "+other.URL+"/api/v1/accounts/"+acct+"/backup", "the API key is sent only to "+e.url),
			},
		},
	})
	collector.mu.Lock()
	defer collector.mu.Unlock()
	if collector.requests != 0 || collector.keys != 0 {
		t.Errorf("the other host got %d requests, %d with the key; want none", collector.requests, collector.keys)
	}
	if n := e.srv.BackupsQueued(acct); n != 0 {
		t.Errorf("%d backups queued, want none", n)
	}
}

// configForOrg is a provider block with organization_id, followed by body.
func (e *testEnv) configForOrg(org, body string) string {
	return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url        = %q\n  api_key         = %q\n  organization_id = %q\n}\n\n%s",
		e.url, e.key, org, body))
}

const foreignOrg = "org_0000000000000000"

// A key of another organization changes nothing: the trigger fails naming
// both organizations, before any POST; with the right organization the
// same configuration takes its backup, after one token read.
func TestAccProviderOrganizationGuardsTriggers(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2201})
	id := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: e.configForOrg(foreignOrg, triggerConfig(id, "")),
				ExpectError: expectError("API key of another organization for backup_trigger of account "+id,
					"the API key belongs to organization "+e.srv.OrganizationID()+` ("Example Org"), not to the expected `+foreignOrg,
					"nothing was changed", "check which key the provider was given"),
			},
			{
				PreConfig: func() {
					if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
						t.Errorf("%d POSTs under the wrong organization", n)
					}
					if n := e.srv.BackupsQueued(id); n != 0 {
						t.Errorf("%d backups queued under the wrong organization", n)
					}
				},
				Config: e.configForOrg(e.srv.OrganizationID(), triggerConfig(id, "")),
				Check: resource.ComposeAggregateTestCheckFunc(e.expectQueued(id, 1), func(*terraform.State) error {
					// One read per provider process that plans or applies a
					// trigger's creation: the refused plan, then this step's
					// plan and apply. Refreshes and other plans read none.
					if n := e.srv.Requests(mockservice.RouteToken); n != 3 {
						return fmt.Errorf("%d token reads, want 3 (one per process planning or applying a creation)", n)
					}
					return nil
				}),
			},
		},
	})
}

// A value no organization id has is refused at validate time.
func TestAccProviderOrganizationIDValidated(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2202})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.configForOrg("acme-production", triggerConfig(e.srv.AccountIDs()[0], "")),
			PlanOnly:    true,
			ExpectError: expectError("organization_id", "must be an organization id: org_ followed by exactly 16 letters or digits", `got "acme-production"`),
		}},
	})
	e.noRequests()
}

// A guard for a key of another organization is refused when it is
// planned, not when the destroy it exists for is under way: nothing is
// created. The destroy-time backup is guarded too: a guard whose provider
// is later given another organization fails its destroy before the
// guarded resource goes, and nothing is queued.
func TestAccProviderOrganizationGuardsDestroyBackups(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 2203, PendingFor: 20 * time.Millisecond, RunningFor: 40 * time.Millisecond})
	id := e.srv.AccountIDs()[0]
	c := newCLI(t, e, e.configForOrg(foreignOrg, guardedDatabase(id, "")))
	mismatch := regexp.MustCompile(words("not to the expected " + foreignOrg + "; nothing was changed"))
	out, err := c.exec(nil, "plan", "-no-color")
	if err == nil || !mismatch.MatchString(out) || !strings.Contains(out, "API key of another organization for backup_on_destroy of account "+id) {
		t.Fatalf("planning a guard under the wrong organization: %v\n%s", err, out)
	}
	if out, err := c.exec(nil, "apply", "-auto-approve", "-no-color"); err == nil || c.state(guardAddr) != nil {
		t.Fatalf("a guard was created under the wrong organization (%v):\n%s", err, out)
	}

	c.write(e.configForOrg(e.srv.OrganizationID(), guardedDatabase(id, "")))
	c.run("apply", "-auto-approve", "-no-color")
	c.write(e.configForOrg(foreignOrg, guardedDatabase(id, "")))
	out, err = c.exec(nil, "destroy", "-auto-approve", "-no-color")
	if err == nil {
		t.Fatalf("destroy succeeded under the wrong organization:\n%s", out)
	}
	if !mismatch.MatchString(out) {
		t.Errorf("the error does not name the organizations:\n%s", out)
	}
	if _, gone := c.destroyedAt(); gone {
		t.Error("the guarded resource was destroyed without its backup")
	}
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued under the wrong organization", n)
	}
}

// The action checks organization_id at plan: a key of another
// organization fails the plan of the change it guards, with no POST.
func TestAccProviderOrganizationGuardsActions(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2204})
	id := e.srv.AccountIDs()[0]
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsActions,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.configForOrg(foreignOrg, guarded(id, "", "v1", "after_create")),
			ExpectError: expectError("API key of another organization for the backup_trigger action", "not to the expected "+foreignOrg),
		}},
	})
	if n := e.srv.Requests(mockservice.RouteTrigger); n != 0 {
		t.Errorf("%d POSTs under the wrong organization", n)
	}
}

// key_expiry_warning warns in a plan when the key expires within it,
// naming the key and the date; not otherwise. It costs one token read per
// provider process, shared with the organization check, and validate sends
// nothing.
func TestAccKeyExpiryWarning(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 4110})
	expires := e.clock.Now().Add(10*24*time.Hour - time.Minute).UTC().Truncate(time.Second) // reads 10 days (a helper: 6 d 23 h read 6)
	soon := e.srv.AddKey(mockservice.KeySpec{Name: "ci-soon", ExpiresAt: expires})
	later := e.srv.AddKey(mockservice.KeySpec{Name: "ci-later", ExpiresAt: e.clock.Now().Add(60 * 24 * time.Hour)})
	provider := func(key string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url           = %q\n  api_key            = %q\n"+
			"  organization_id    = %q\n  key_expiry_warning = \"720h\"\n}\n\n%s",
			e.url, key, e.srv.OrganizationID(), triggerConfig(e.srv.AccountIDs()[0], "")))
	}
	c := newCLI(t, e, provider(soon))
	before := e.srv.Requests(mockservice.RouteToken)
	c.run("validate", "-no-color")
	if n := e.srv.Requests(mockservice.RouteToken) - before; n != 0 {
		t.Errorf("validate read the token %d times", n)
	}
	out := c.run("plan", "-no-color")
	if !regexp.MustCompile(words(`The Backup Service API key "ci-soon" expires in 10 days`)).MatchString(out) ||
		!regexp.MustCompile(words(expires.Format(time.RFC3339))).MatchString(out) {
		t.Errorf("no warning naming the key and its expiry:\n%s", out)
	}
	// One token read: the warning's, which the organization check of the
	// trigger planned for creation shares.
	if n := e.srv.Requests(mockservice.RouteToken) - before; n != 1 {
		t.Errorf("the plan read the token %d times, want once", n)
	}

	c2 := newCLI(t, e, provider(later))
	if out := c2.run("plan", "-no-color"); regexp.MustCompile(`expires in`).MatchString(out) {
		t.Errorf("a warning for a key expiring in 60 days:\n%s", out)
	}
}

// keyVariableConfig reads the key from a variable, sensitive and, when
// ephemeral, ephemeral too.
func keyVariableConfig(baseURL string, ephemeral bool) string {
	return withProvider(fmt.Sprintf(`variable "backup_api_key" {
  type      = string
  sensitive = true
  ephemeral = %t
}

provider "backup" {
  base_url = %q
  api_key  = var.backup_api_key
}

data "backup_token" "this" {}

output "key_name" {
  value = data.backup_token.this.name
}
`, ephemeral, baseURL))
}

// planHolds reports whether any file of a saved plan (a zip archive)
// contains s.
func planHolds(t *testing.T, plan, s string) bool {
	t.Helper()
	zr, err := zip.OpenReader(plan)
	if err != nil {
		t.Fatalf("the saved plan: %v", err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// The docs recommend an ephemeral variable for the key: a saved plan
// (plan -out) then does not hold it, and apply takes it again. A sensitive
// variable alone is written into the plan file: the difference is what the
// recommendation rests on, so both are checked.
func TestAccEphemeralKeyVariableStaysOutOfSavedPlans(t *testing.T) {
	t.Parallel()
	skipBelow(t, "1.10.0", "ephemeral input variables")
	for _, ephemeral := range []bool{false, true} {
		t.Run(fmt.Sprintf("ephemeral=%t", ephemeral), func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t, mockservice.Options{Seed: 2210})
			c := newCLI(t, e, keyVariableConfig(e.url, ephemeral))
			keyVar := "TF_VAR_backup_api_key=" + e.key
			c.env = append(c.env, keyVar)
			c.run("plan", "-input=false", "-no-color", "-out=tfplan")
			held := planHolds(t, filepath.Join(c.dir, "tfplan"), e.key)
			if held == ephemeral {
				t.Fatalf("ephemeral = %t: the saved plan holds the key: %t", ephemeral, held)
			}
			if !ephemeral {
				return
			}
			// Apply asks for the ephemeral value again, and works with it.
			c.env = c.env[:len(c.env)-1]
			out, err := c.exec(nil, "apply", "-input=false", "-no-color", "tfplan")
			if err == nil || !strings.Contains(out, "backup_api_key") {
				t.Fatalf("apply of the saved plan without the key: %v\n%s", err, out)
			}
			c.env = append(c.env, keyVar)
			if out := c.run("apply", "-input=false", "-no-color", "tfplan"); !strings.Contains(out, mockservice.DemoKeyName) {
				t.Errorf("apply with the key:\n%s", out)
			}
		})
	}
}

// noSecret fails a plan or state check whose JSON holds the secret.
type noSecret struct{ secret string }

func (c noSecret) find(what string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if n := strings.Count(string(b), c.secret); n > 0 {
		return fmt.Errorf("the API key appears %d time(s) in the %s JSON", n, what)
	}
	return nil
}

// CheckPlan looks at the whole plan but its input variables: Terraform keeps
// the values of input variables, sensitive ones included, in every plan, so
// a key given through a variable is there whatever the provider does. (The
// docs recommend BACKUP_API_KEY for that reason.)
func (c noSecret) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	p := *req.Plan
	p.Variables = nil
	resp.Error = c.find("plan", p)
}

func (c noSecret) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c.find("state", req.State)
}

// The API key never reaches Terraform's or the provider's logs at TRACE
// level, the state or the plan, over every data source, the resource's
// whole life, retries and error paths. The key is given as users should:
// in BACKUP_API_KEY, or in a sensitive variable.
func TestAccSecretsNeverLeak(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)

	e := newTestEnv(t, mockservice.Options{Seed: 1101, Accounts: 60, AuditLogs: 60,
		PendingFor: 20 * time.Millisecond, RunningFor: 30 * time.Millisecond})
	ids := e.srv.AccountIDs()
	paused := e.srv.AddAccount(mockservice.AccountSpec{State: mockservice.StatePaused})
	failing := e.srv.AddAccount(mockservice.AccountSpec{FailWith: "export refused"})
	wrongKey := e.srv.AddKey(mockservice.KeySpec{ExpiresAt: e.clock.Now().Add(-time.Hour)}) // expired: 401
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, PerRoute: true, Times: 1})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1})
	e.setenv(t)

	guard := noSecret{secret: e.key}
	checks := func(step resource.TestStep) resource.TestStep {
		step.ConfigPlanChecks = resource.ConfigPlanChecks{
			PreApply:             append(step.ConfigPlanChecks.PreApply, guard),
			PostApplyPostRefresh: []plancheck.PlanCheck{guard},
		}
		if step.ExpectError == nil {
			step.ConfigStateChecks = append(step.ConfigStateChecks, guard)
		}
		return step
	}
	everything := withProvider(fmt.Sprintf(`
data "backup_token" "this" {}
data "backup_accounts" "all" {}
data "backup_account" "first" { id = %[1]q }
data "backup_audit_logs" "all" {}
data "backup_account_backups" "first" { account_id = %[1]q }

resource "backup_trigger" "this" {
  account_id          = %[1]q
  wait_for_completion = true
}
`, ids[0]))
	withWait := func(on string) string {
		return strings.Replace(everything, "wait_for_completion = true", "wait_for_completion = true\n  on_conflict = "+on, 1)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			checks(resource.TestStep{Config: everything}),
			checks(resource.TestStep{Config: withWait(`"fail"`)}), // in-place update
			{Config: withWait(`"fail"`), ResourceName: "backup_trigger.this", ImportState: true, ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"wait_for_completion", "on_conflict", "prior_backup_ids"}, // settings, not in the import id; the listing when its change went ahead, unknown to an import
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return ids[0] + "/" + s.RootModule().Resources["backup_trigger.this"].Primary.ID, nil
				}},
			checks(resource.TestStep{
				// The same key through a sensitive variable.
				Config: withProvider(`
variable "backup_api_key" {
  type      = string
  sensitive = true
}
provider "backup" {
  api_key = var.backup_api_key
}
data "backup_token" "this" {}
`),
				ConfigVariables: config.Variables{"backup_api_key": config.StringVariable(e.key)},
			}),
			checks(resource.TestStep{
				Config:      withProvider(`data "backup_account" "x" { id = "acc_0000000000000000" }`),
				ExpectError: expectError("No account acc_0000000000000000."),
			}),
			checks(resource.TestStep{
				Config:      withProvider(fmt.Sprintf(`resource "backup_trigger" "p" { account_id = %q }`, paused)),
				ExpectError: expectError("Unable to trigger a backup of account "+paused, "HTTP 422", "paused"),
			}),
			checks(resource.TestStep{
				Config:      withProvider(fmt.Sprintf(`resource "backup_trigger" "f" {`+"\n"+`  account_id = %q`+"\n"+`  wait_for_completion = true`+"\n"+`}`, failing)),
				ExpectError: expectError("Backup did not succeed"),
			}),
			checks(resource.TestStep{
				Config: withProvider(fmt.Sprintf(`
provider "backup" {
  api_key = %q
}
data "backup_token" "this" {}
`, wrongKey)),
				ExpectError: expectError("The API key was rejected"),
			}),
		},
	})

	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) < 100000 || !strings.Contains(string(logs), "Backup Service response") {
		t.Fatalf("the TRACE log (%d bytes) does not hold the provider's logs; the test would prove nothing", len(logs))
	}
	if n := strings.Count(string(logs), e.key); n != 0 {
		i := strings.Index(string(logs), e.key)
		t.Errorf("the API key appears %d time(s) in the TRACE log, first at: %q", n, string(logs[max(i-300, 0):i]))
	}
}

func TestUserAgentAppendsTFAppendUserAgent(t *testing.T) {
	t.Parallel()
	for appended, want := range map[string]string{
		"":                       "terraform-provider-backup/1.2.0 Terraform/1.11.4",
		"ci-pipeline/7":          "terraform-provider-backup/1.2.0 Terraform/1.11.4 ci-pipeline/7",
		"  a/1\n  b/2\r\n":       "terraform-provider-backup/1.2.0 Terraform/1.11.4 a/1 b/2",
		"\x1b[2Jmine/3 \x00x/4 ": "terraform-provider-backup/1.2.0 Terraform/1.11.4 [2Jmine/3 x/4",
	} {
		if got := userAgent("1.2.0", "1.11.4", appended); got != want {
			t.Errorf("userAgent(%q) = %q, want %q", appended, got, want)
		}
	}
}
