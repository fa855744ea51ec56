// Helpers shared by the provider's tests: configurations, expectations on
// errors and state, and clients of a test's mock. Helpers of one test file
// stay in it; anything a second file uses lives here.

package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

const addr = "backup_trigger.this"

var bkpID = knownvalue.StringRegexp(regexp.MustCompile(`^bkp_[A-Za-z0-9]{16}$`))

var rfc3339 = knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`))

func triggerConfig(accountID, extra string) string {
	return fmt.Sprintf("resource \"backup_trigger\" \"this\" {\n  account_id = %q\n%s}\n", accountID, extra)
}

func expectAction(a plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, a)}}
}

func (e *testEnv) expectQueued(accountID string, n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := e.srv.BackupsQueued(accountID); got != n {
			return fmt.Errorf("%d backups queued for %s, want %d", got, accountID, n)
		}
		return nil
	}
}

// expectPOSTs checks the number of trigger requests the mock received.
func (e *testEnv) expectPOSTs(n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := e.srv.Requests(mockservice.RouteTrigger); got != n {
			return fmt.Errorf("%d trigger POSTs, want %d", got, n)
		}
		return nil
	}
}

// hclList writes strings as an HCL list.
func hclList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Actions need Terraform 1.14. (Destroy events need 1.16, from its
// release candidates on, which semver orders before 1.16.0: the tests of
// them drive the binary and check with skipBelow.)
var needsActions = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)}

// needsChecks skips tests of check blocks and plantimestamp() on Terraform
// older than 1.5, which has neither.
var needsChecks = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_5_0)}

// requiredProviders is the terraform block every configuration needs.
const requiredProviders = `terraform {
  required_providers {
    backup = {
      source = "backup-service/backup"
    }
  }
}
`

// withProvider prefixes body with the terraform block.
func withProvider(body string) string { return requiredProviders + body }

// config is a provider block for this mock, followed by body.
func (e *testEnv) config(body string) string {
	return e.configWithKey(e.key, body)
}

func (e *testEnv) configWithKey(key, body string) string {
	return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n}\n\n%s", e.url, key, body))
}

// noRequests asserts that nothing reached the service (validation refused
// the configuration first).
func (e *testEnv) noRequests() {
	e.t.Helper()
	if n := e.srv.Stats().TotalRequests(); n != 0 {
		e.t.Errorf("%d requests reached the service; validation should have refused the configuration first", n)
	}
}

// words matches text literally, but with any white space between words:
// Terraform wraps diagnostics to the terminal's width.
func words(text string) string {
	parts := strings.Fields(text)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, `\s+`)
}

// expectError matches a diagnostic holding each text, in order.
func expectError(texts ...string) *regexp.Regexp {
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = words(t)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*`))
}

// requestIDPattern matches "Request ID: <uuid v4>".
const requestIDPattern = `Request\s+ID:\s+[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`

// errorWithRequestID matches a diagnostic that names what failed, the
// status and problem title, then each of details, and last the request id.
func errorWithRequestID(what string, status int, title string, details ...string) *regexp.Regexp {
	pattern := `(?s)` + words(what) + `.*` + words(fmt.Sprintf("HTTP %d (%s)", status, title))
	for _, d := range details {
		pattern += `.*` + words(d)
	}
	return regexp.MustCompile(pattern + `.*` + requestIDPattern)
}

func str(addr, attr string, v string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.StringExact(v))
}

// expectCheckBlock asserts the status of a check block in state.
type expectCheckBlock struct {
	name   string
	status string
}

func (c expectCheckBlock) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Checks {
		if string(r.Address.Kind) == "check" && r.Address.Name == c.name {
			if string(r.Status) != c.status {
				resp.Error = fmt.Errorf("check %q is %q, want %q", c.name, r.Status, c.status)
			}
			return
		}
	}
	resp.Error = fmt.Errorf("check %q not found in state", c.name)
}

// rawClient is a client of the test's mock, to act on it as another user
// of the service would.
func (e *testEnv) rawClient(t *testing.T, mods ...func(*client.Options)) *client.Client {
	t.Helper()
	opts := client.Options{BaseURL: e.url, APIKey: e.key}
	if e.clock != nil {
		// The mock's time: it recognises the backups it triggers, and its
		// waits move with the test's.
		opts.Clock = e.clock
	}
	for _, mod := range mods {
		mod(&opts)
	}
	c, err := client.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// outsideBackup queues a backup of the account as another user of the
// service would, outside Terraform, and returns it.
func (e *testEnv) outsideBackup(t *testing.T, accountID string) client.Backup {
	t.Helper()
	tr, err := e.rawClient(t).TriggerBackup(t.Context(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Backup
}

func nullAttr(addr, attr string) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, tfjsonpath.New(attr), knownvalue.Null())
}

func jsonDecode(b []byte, v any) error { return json.Unmarshal(bytes.TrimSpace(b), v) }

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// filterAccounts adds three accounts that the account filters tell apart:
// two slack ones (a successful backup service, a failed archive) and a
// github one whose backup failed.
func (e *testEnv) filterAccounts() (slackA, slackB, github string) {
	slackA = e.srv.AddAccount(mockservice.AccountSpec{Platform: "slack", ServiceType: "backup", BackupStatus: "success"})
	slackB = e.srv.AddAccount(mockservice.AccountSpec{Platform: "slack", ServiceType: "archive", BackupStatus: "failed"})
	github = e.srv.AddAccount(mockservice.AccountSpec{Platform: "github", ServiceType: "backup", BackupStatus: "failed"})
	return slackA, slackB, github
}

// stringList checks a list of exactly these strings, in order.
func stringList(v ...string) knownvalue.Check {
	checks := []knownvalue.Check{}
	for _, s := range v {
		checks = append(checks, knownvalue.StringExact(s))
	}
	return knownvalue.ListExact(checks)
}
