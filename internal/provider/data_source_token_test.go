package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestAccTokenDataSource(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 101})
	expires := e.clock.Now().Add(400 * 24 * time.Hour).UTC().Truncate(time.Second)
	e.key = e.srv.AddKey(mockservice.KeySpec{Name: "ci-key", ExpiresAt: expires})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`data "backup_token" "this" {}`),
			ConfigStateChecks: []statecheck.StateCheck{
				str("data.backup_token.this", "name", "ci-key"),
				str("data.backup_token.this", "expires_at", expires.Format(time.RFC3339)),
				str("data.backup_token.this", "organization_id", e.srv.OrganizationID()),
				str("data.backup_token.this", "organization_name", "Example Org"),
			},
		}},
	})
}

// The docs' example: a check block warns (and does not fail) when the key
// expires within 30 days of the plan.
const keyExpiryCheck = `
data "backup_token" "this" {}

check "key_expiry" {
  assert {
    condition     = timecmp(data.backup_token.this.expires_at, timeadd(plantimestamp(), "720h")) > 0
    error_message = "The Backup Service API key ${data.backup_token.this.name} expires on ${data.backup_token.this.expires_at}, within 30 days: rotate it."
  }
}
`

func TestAccTokenCheckBlockWarnsNearExpiry(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 102})
	soon := e.srv.AddKey(mockservice.KeySpec{Name: "soon", ExpiresAt: e.clock.Now().Add(10 * 24 * time.Hour)})
	later := e.srv.AddKey(mockservice.KeySpec{Name: "later", ExpiresAt: e.clock.Now().Add(100 * 24 * time.Hour)})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		TerraformVersionChecks:   needsChecks,
		Steps: []resource.TestStep{
			{
				// A failed check block is a warning: the apply succeeds and
				// the check's status in state is "fail".
				Config:            e.configWithKey(soon, keyExpiryCheck),
				ConfigStateChecks: []statecheck.StateCheck{expectCheckBlock{name: "key_expiry", status: "fail"}},
			},
			{
				Config:            e.configWithKey(later, keyExpiryCheck),
				ConfigStateChecks: []statecheck.StateCheck{expectCheckBlock{name: "key_expiry", status: "pass"}},
			},
		},
	})
}

func TestAccTokenPostconditionFailsPlan(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 103})
	soon := e.srv.AddKey(mockservice.KeySpec{Name: "soon", ExpiresAt: e.clock.Now().Add(5 * 24 * time.Hour)})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		TerraformVersionChecks:   needsChecks,
		Steps: []resource.TestStep{{
			Config: e.configWithKey(soon, `
data "backup_token" "this" {
  lifecycle {
    postcondition {
      condition     = timecmp(self.expires_at, timeadd(plantimestamp(), "168h")) > 0
      error_message = "The API key expires within 7 days."
    }
  }
}
`),
			ExpectError: expectError("The API key expires within 7 days"),
		}},
	})
}

func TestAccTokenUnauthenticated(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 104})
	expired := e.srv.AddKey(mockservice.KeySpec{ExpiresAt: e.clock.Now().Add(-time.Hour)})
	cases := map[string]string{"unknown key": "bks_not-a-real-key", "expired key": expired,
		"other organization":  e.srv.AddKey(mockservice.KeySpec{OtherOrganization: true}),
		"creator lost access": e.srv.AddKey(mockservice.KeySpec{OwnerRevoked: true})}
	var steps []resource.TestStep
	for _, key := range cases {
		steps = append(steps, resource.TestStep{
			Config:      e.configWithKey(key, `data "backup_token" "this" {}`),
			ExpectError: errorWithRequestID("Unable to read backup_token", 401, "Unauthenticated"),
		}, resource.TestStep{
			Config:      e.configWithKey(key, `data "backup_token" "this" {}`),
			ExpectError: expectError("The API key was rejected", "API keys are created and revoked", "in the Backup Service web application"),
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: e.factories(), Steps: steps})
}

func TestAccTokenServerErrorsAfterRetries(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 105})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteToken})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.config(`data "backup_token" "this" {}`),
			ExpectError: errorWithRequestID("Unable to read backup_token", 500, "Internal Server Error"),
		}},
	})
	// One read: the first attempt and the default four retries.
	if n := e.srv.Requests(mockservice.RouteToken); n%5 != 0 || n == 0 {
		t.Errorf("%d token requests, want a multiple of 5 attempts", n)
	}
}

func TestAccTokenRateLimitedAfterRetries(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 106})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteToken})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:      e.config(`data "backup_token" "this" {}`),
			ExpectError: errorWithRequestID("Unable to read backup_token", 429, "Too Many Requests"),
		}},
	})
}
