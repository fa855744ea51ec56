package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

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
				ExpectError: expectError(`Invalid Time Duration String Value`, `Given Value: soon`),
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
