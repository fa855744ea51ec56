package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The absence rule as Terraform meets it, over the protocol: for every
// answer a service, a proxy or a wrong base_url can give to the reads of a
// refresh, a resource leaves the state only on the service's own 404 from
// a base_url that proves itself, and a guard never does. No Terraform, no
// mock: an httptest server plays each answer.

const (
	ruleAccount = "acc_0123456789abcdef"
	ruleBackup  = "bkp_0123456789abcdef"
	ruleReqID   = "5b0c3c52-8f0e-4c1e-9a57-0f2b8f1f6a11"
)

// ruleAnswers are what the account's paths answer; proven marks the one
// that, with a token endpoint answering 200, proves the account gone.
var ruleAnswers = []struct {
	name        string
	status      int
	contentType string
	body        string
	proven      bool
}{
	{"the service's 404", 404, "application/problem+json", `{"title":"Resource not found.","status":404,"request_id":"` + ruleReqID + `"}`, true},
	{"HTML 404", 404, "text/html", "<html>Not Found</html>", false},
	{"empty 404", 404, "", "", false},
	{"{} 404", 404, "application/json", "{}", false},
	{"problem 404 without request id", 404, "application/problem+json", `{"title":"Resource not found.","status":404}`, false},
	{"problem 404 with status 200", 404, "application/problem+json", `{"title":"x","status":200,"request_id":"` + ruleReqID + `"}`, false},
	{"410", 410, "application/problem+json", `{"title":"Gone","status":410,"request_id":"` + ruleReqID + `"}`, false},
	{"403", 403, "application/problem+json", `{"title":"Forbidden","status":403,"request_id":"` + ruleReqID + `"}`, false},
	{"500", 500, "application/problem+json", `{"title":"Internal Server Error","status":500,"request_id":"` + ruleReqID + `"}`, false},
}

// ruleService answers the account's paths with one answer, an empty
// accounts listing, and the token endpoint with tokenStatus.
func ruleService(t *testing.T, status int, contentType, body string, tokenStatus int) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/token" && tokenStatus == 200:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"name":"ci","expires_at":"2030-01-01T00:00:00Z","organization":{"id":"org_8Fq2LmT0aZ7cX1vB","name":"Org"}}`)
		case r.URL.Path == "/api/v1/token":
			w.WriteHeader(tokenStatus)
		case r.URL.Path == "/api/v1/accounts":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"data":[],"pagination":{"limit":50,"next_cursor":null}}`)
		default:
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			_, _ = fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// configured is a provider server configured for baseURL, with no retries
// so that 5xx answers cost one request.
func configured(t *testing.T, baseURL string) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	srv, sch := protocolServer(t)
	resp, err := srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
		TerraformVersion: "1.11.4",
		Config: object(t, sch.Provider, map[string]tftypes.Value{
			"base_url": tfStr(baseURL), "api_key": tfStr("bks_rulekey0000000000001"),
			"max_retries": tftypes.NewValue(tftypes.Number, 0),
		}),
	})
	if err != nil || diagText(resp.Diagnostics) != "" {
		t.Fatalf("configure: %v %s", err, diagText(resp.Diagnostics))
	}
	return srv, sch
}

func TestAbsenceRuleOverTheProtocol(t *testing.T) {
	t.Parallel()
	states := map[string]map[string]tftypes.Value{
		"backup_on_destroy": {
			"id": tfStr(ruleAccount), "account_id": tfStr(ruleAccount), "on_conflict": tfStr("wait"), "resume_within": tfStr("10m"),
		},
		"backup_trigger (finished)": {
			"id": tfStr(ruleBackup), "account_id": tfStr(ruleAccount), "backup_status": tfStr("success"),
			"triggered_at": tfStr("2026-11-21T10:00:00Z"), "completed_at": tfStr("2026-11-21T10:05:00Z"),
			"on_conflict": tfStr("wait"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, true),
		},
		"backup_trigger (in progress)": {
			"id": tfStr(ruleBackup), "account_id": tfStr(ruleAccount), "backup_status": tfStr("running"),
			"triggered_at": tfStr("2026-11-21T10:00:00Z"),
			"on_conflict":  tfStr("wait"), "wait_for_completion": tftypes.NewValue(tftypes.Bool, false),
		},
	}
	for _, a := range ruleAnswers {
		for _, tokenStatus := range []int{200, 404, 503} {
			for what, attrs := range states {
				t.Run(fmt.Sprintf("%s/token %d/%s", a.name, tokenStatus, what), func(t *testing.T) {
					t.Parallel()
					srv, sch := configured(t, ruleService(t, a.status, a.contentType, a.body, tokenStatus))
					typeName, _, _ := strings.Cut(what, " ")
					schema := sch.ResourceSchemas[typeName]
					resp, err := srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
						TypeName: typeName, CurrentState: object(t, schema, attrs),
					})
					if err != nil {
						t.Fatal(err)
					}
					dropped := resp.NewState == nil
					if !dropped {
						v, err := resp.NewState.Unmarshal(schema.ValueType())
						if err != nil {
							t.Fatal(err)
						}
						dropped = v.IsNull()
					}
					wantDropped := a.proven && tokenStatus == 200 && typeName == "backup_trigger"
					if dropped != wantDropped {
						t.Fatalf("left the state: %t, want %t; diagnostics: %s", dropped, wantDropped, diagText(resp.Diagnostics))
					}
					// What stays is either an error (nothing proven) or, for
					// a guard of a proven-gone account, a warning.
					switch {
					case typeName == "backup_on_destroy" && a.proven && tokenStatus == 200:
						if w := diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning); !strings.Contains(w, "does not exist for this API key") {
							t.Errorf("no warning for the guard of a proven-gone account: %s", w)
						}
					case !wantDropped && diagText(resp.Diagnostics) == "":
						t.Errorf("no error for an answer that proves nothing: %s", diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning))
					}
				})
			}
		}
	}
}

// destroy_without_backup is refused at validate, before any request, with
// a message naming what is wrong: a reason without words, a malformed id.
func TestDestroyWithoutBackupValidation(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	release := func(reason string, ids ...string) tftypes.Value {
		typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"account_ids": tftypes.List{ElementType: tftypes.String}, "reason": tftypes.String}}
		return tftypes.NewValue(typ, map[string]tftypes.Value{"account_ids": strList(ids...), "reason": tfStr(reason)})
	}
	for _, tc := range []struct {
		name  string
		value tftypes.Value
		want  string
	}{
		{"a blank reason", release("  ", ruleAccount), "Missing reason for destroy_without_backup"},
		{"a reason of punctuation", release("--", ruleAccount), "Missing reason for destroy_without_backup"},
		{"a malformed id", release("OPS-1", "acc_short"), "must be an account id"},
		{"no ids", release("OPS-1"), "at least 1"},
		{"a good one", release("OPS-1: closed", ruleAccount), ""},
	} {
		resp, err := srv.ValidateProviderConfig(context.Background(), &tfprotov6.ValidateProviderConfigRequest{
			Config: object(t, sch.Provider, map[string]tftypes.Value{"destroy_without_backup": tc.value}),
		})
		if err != nil {
			t.Fatal(err)
		}
		got := diagText(resp.Diagnostics)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q; want an error saying %q", tc.name, got, tc.want)
		}
	}
}
