package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Environment variables are process-wide, so these tests do not run in
// parallel with each other (t.Setenv forbids it).

func TestAccProviderFromEnvironment(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 601})
	t.Setenv(EnvBaseURL, e.url)
	t.Setenv(EnvAPIKey, e.key)
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
				ExpectError: expectError("Missing Backup Service base URL", "Set base_url in the provider block, or the BACKUP_BASE_URL environment variable."),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url = %q
}
data "backup_token" "this" {}`, e.url)),
				ExpectError: expectError("Missing Backup Service API key", "Set api_key in the provider block, or the BACKUP_API_KEY environment variable."),
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
				ExpectError: expectError("Invalid Backup Service provider configuration", "would send the API key in clear"),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url        = %q
  api_key         = %q
  request_timeout = "soon"
}
data "backup_token" "this" {}`, e.url, e.key)),
				ExpectError: expectError(`"soon" is not a positive duration`),
			},
			{
				Config: withProvider(fmt.Sprintf(`provider "backup" {
  base_url    = %q
  api_key     = %q
  max_retries = 99
}
data "backup_token" "this" {}`, e.url, e.key)),
				ExpectError: expectError("max_retries value must be between 0 and 20"),
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
