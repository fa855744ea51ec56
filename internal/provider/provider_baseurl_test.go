package provider

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

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
