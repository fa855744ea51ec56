package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// These tests speak the plugin protocol to the provider in process, as
// Terraform would, without Terraform or a service: what the provider
// decides alone (schemas, validation, import ids, plans) is covered by
// make testunit. An unconfigured provider has no client, so any request a
// step tried to send would fail these tests.

func protocolServer(t *testing.T) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	srv, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if msg := diagText(sch.Diagnostics); msg != "" {
		t.Fatalf("provider schema: %s", msg)
	}
	return srv, sch
}

// object is a value of the schema's type: the attributes given, every
// other one null, as Terraform sends a configuration that leaves them out.
func object(t *testing.T, s *tfprotov6.Schema, set map[string]tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	typ := s.ValueType().(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("the schema has no attribute %q", name)
		}
		vals[name] = v
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func tfStr(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }

func strMap(kv map[string]string) tftypes.Value {
	vals := map[string]tftypes.Value{}
	for k, v := range kv {
		vals[k] = tfStr(v)
	}
	return tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, vals)
}

func strList(vs ...string) tftypes.Value {
	return stringValues(tftypes.List{ElementType: tftypes.String}, vs)
}

func strSet(vs ...string) tftypes.Value {
	return stringValues(tftypes.Set{ElementType: tftypes.String}, vs)
}

// stringValues is a list or set of strings.
func stringValues(typ tftypes.Type, vs []string) tftypes.Value {
	vals := make([]tftypes.Value, len(vs))
	for i, v := range vs {
		vals[i] = tfStr(v)
	}
	return tftypes.NewValue(typ, vals)
}

// diagText is every diagnostic of severity error, one per line.
func diagText(diags []*tfprotov6.Diagnostic) string {
	return diagsOf(diags, tfprotov6.DiagnosticSeverityError)
}

// diagsOf is every diagnostic of a severity, one per line.
func diagsOf(diags []*tfprotov6.Diagnostic, severity tfprotov6.DiagnosticSeverity) string {
	var b strings.Builder
	for _, d := range diags {
		if d.Severity == severity {
			b.WriteString(d.Summary + ": " + d.Detail + "\n")
		}
	}
	return b.String()
}

func TestProtocolSchemasNameEveryKind(t *testing.T) {
	t.Parallel()
	_, sch := protocolServer(t)
	for _, name := range []string{"backup_trigger", "backup_on_destroy"} {
		if sch.ResourceSchemas[name] == nil {
			t.Errorf("no resource %s", name)
		}
	}
	for _, name := range []string{"backup_token", "backup_account", "backup_accounts", "backup_audit_logs", "backup_account_backups", "backup_stale_accounts"} {
		if sch.DataSourceSchemas[name] == nil {
			t.Errorf("no data source %s", name)
		}
	}
	if sch.ActionSchemas["backup_trigger"] == nil {
		t.Error("no action backup_trigger")
	}
	if sch.ListResourceSchemas["backup_trigger"] == nil {
		t.Error("no list resource backup_trigger")
	}
	if sch.ResourceSchemas["backup_trigger"].Block.Attributes == nil || sch.Provider == nil {
		t.Error("empty schemas")
	}
	for _, a := range sch.Provider.Block.Attributes {
		if a.Name == "api_key" && !a.Sensitive {
			t.Error("api_key is not sensitive")
		}
	}
}

// Bad input is refused at validate time, naming what is wrong; good input
// passes. (The acceptance suite checks the same through Terraform, and that
// no request leaves.)
func TestProtocolValidation(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	ctx := context.Background()
	const acc = "acc_0123456789abcdef"
	for _, tc := range []struct {
		name, kind, typ string
		attrs           map[string]tftypes.Value
		want            []string // in the errors; none wanted when empty
	}{
		{"trigger ok", "resource", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "triggers": strMap(map[string]string{"release": "v1"})}, nil},
		{"trigger malformed account", "resource", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr("acc_123")}, []string{"acc_123"}},
		{"trigger unknown on_conflict", "resource", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "on_conflict": tfStr("maybe")}, []string{"maybe"}},
		{"on_destroy malformed account", "resource", "backup_on_destroy", map[string]tftypes.Value{"account_id": tfStr("ACC_0123456789abcdef")}, []string{"ACC_0123456789abcdef"}},
		{"account malformed id", "data", "backup_account", map[string]tftypes.Value{"id": tfStr("nope")}, []string{"nope"}},
		// Quoted, so that a stray space shows.
		{"account id with a leading space", "data", "backup_account", map[string]tftypes.Value{"id": tfStr(" acc_0123456789abcdef")},
			[]string{`got " acc_0123456789abcdef"`}},
		{"accounts bad order", "data", "backup_accounts", map[string]tftypes.Value{"order": tfStr("sideways")}, []string{"sideways"}},
		{"accounts ok", "data", "backup_accounts", map[string]tftypes.Value{"order": tfStr("asc")}, nil},
		{"audit logs bad order", "data", "backup_audit_logs", map[string]tftypes.Value{"order": tfStr("up")}, []string{"up"}},
		{"account backups unknown status", "data", "backup_account_backups", map[string]tftypes.Value{"account_id": tfStr(acc), "statuses": strList("done")}, []string{"done"}},
		{"stale accounts bad max_age", "data", "backup_stale_accounts", map[string]tftypes.Value{"max_age": tfStr("a week")}, []string{"a week"}},
		{"stale accounts ok", "data", "backup_stale_accounts", map[string]tftypes.Value{"max_age": tfStr("24h")}, nil},
		{"trigger reuse_within not a duration", "resource", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "reuse_within": tfStr("2d")}, []string{`reuse_within must be a duration: a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m"; got "2d".`}},
		{"on_destroy resume_within in words", "resource", "backup_on_destroy", map[string]tftypes.Value{"account_id": tfStr(acc), "resume_within": tfStr("30 minutes")}, []string{`resume_within must be a duration`, `got "30 minutes".`}},
		{"action reuse_within in words", "action", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "reuse_within": tfStr("15 minutes")}, []string{`reuse_within must be a duration`, `got "15 minutes".`}},
		{"trigger reuse_within zero", "resource", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "reuse_within": tfStr("0s")}, []string{`reuse_within must be positive; got "0s"`}},
		{"on_destroy resume_within negative", "resource", "backup_on_destroy", map[string]tftypes.Value{"account_id": tfStr(acc), "resume_within": tfStr("-1m")}, []string{`resume_within must be positive; got "-1m"`}},
		{"action reuse_within ok", "action", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "reuse_within": tfStr("1h30m")}, nil},
		{"action both account_id and account_ids", "action", "backup_trigger", map[string]tftypes.Value{"account_id": tfStr(acc), "account_ids": strSet(acc)}, []string{"account_id"}},
		{"action neither", "action", "backup_trigger", nil, []string{"account_id"}},
		{"action ok", "action", "backup_trigger", map[string]tftypes.Value{"account_ids": strSet(acc, "acc_fedcba9876543210")}, nil},
		{"action malformed id in the set", "action", "backup_trigger", map[string]tftypes.Value{"account_ids": strSet(acc, "acc_x")}, []string{"acc_x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var diags []*tfprotov6.Diagnostic
			switch tc.kind {
			case "resource":
				resp, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: tc.typ, Config: object(t, sch.ResourceSchemas[tc.typ], tc.attrs)})
				if err != nil {
					t.Fatal(err)
				}
				diags = resp.Diagnostics
			case "data":
				resp, err := srv.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: tc.typ, Config: object(t, sch.DataSourceSchemas[tc.typ], tc.attrs)})
				if err != nil {
					t.Fatal(err)
				}
				diags = resp.Diagnostics
			case "action":
				actions, ok := srv.(tfprotov6.ActionServer)
				if !ok {
					t.Fatal("the provider server serves no actions")
				}
				resp, err := actions.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: tc.typ, Config: object(t, sch.ActionSchemas[tc.typ].Schema, tc.attrs)})
				if err != nil {
					t.Fatal(err)
				}
				diags = resp.Diagnostics
			}
			got := diagText(diags)
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("refused good input:\n%s", got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Fatal("accepted bad input")
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the error does not name %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "Given Value") {
				t.Errorf("a library's message beside the provider's (a literal \\n\\n, a negative example):\n%s", got)
			}
		})
	}
}

// An import id is checked before anything is read: a good one gives the
// trigger's ids (its status comes with the first refresh), a bad one says
// what is expected.
func TestProtocolImportTrigger(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	typ := sch.ResourceSchemas["backup_trigger"].ValueType()
	for _, tc := range []struct{ id, want string }{
		{id: "acc_0123456789abcdef/bkp_0123456789abcdef"},
		{id: "acc_0123456789abcdef", want: "Expected <account id>/<backup id>"},
		{id: "bkp_0123456789abcdef/acc_0123456789abcdef", want: "Expected <account id>/<backup id>"},
		{id: "acc_0123456789abcdef/bkp_short", want: `got "acc_0123456789abcdef/bkp_short"`},
	} {
		resp, err := srv.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "backup_trigger", ID: tc.id})
		if err != nil {
			t.Fatal(err)
		}
		got := diagText(resp.Diagnostics)
		if tc.want != "" {
			if !strings.Contains(got, tc.want) || len(resp.ImportedResources) != 0 {
				t.Errorf("import %q: errors %q, want %q and nothing imported", tc.id, got, tc.want)
			}
			continue
		}
		if got != "" || len(resp.ImportedResources) != 1 {
			t.Fatalf("import %q: %s", tc.id, got)
		}
		state := map[string]tftypes.Value{}
		v, err := resp.ImportedResources[0].State.Unmarshal(typ)
		if err == nil {
			err = v.As(&state)
		}
		if err != nil {
			t.Fatal(err)
		}
		var id, account string
		_ = state["id"].As(&id)
		_ = state["account_id"].As(&account)
		if id != "bkp_0123456789abcdef" || account != "acc_0123456789abcdef" || !state["backup_status"].IsNull() {
			t.Errorf("imported state %v", state)
		}
	}
}

// Changed triggers replace the trigger (a new backup); the same triggers,
// or null for an empty map, plan no replacement; an imported trigger's
// first plan adopts changed triggers in place.
func TestProtocolPlanTriggersReplace(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	s := sch.ResourceSchemas["backup_trigger"]
	const acc = "acc_0123456789abcdef"
	state := func(triggers tftypes.Value) map[string]tftypes.Value {
		return map[string]tftypes.Value{
			"id": tfStr("bkp_0123456789abcdef"), "account_id": tfStr(acc), "triggers": triggers,
			"wait_for_completion": tftypes.NewValue(tftypes.Bool, false), "on_conflict": tfStr("wait"),
			"backup_status": tfStr("success"), "triggered_at": tfStr("2026-11-23T09:00:00Z"), "completed_at": tfStr("2026-11-23T09:03:00Z"),
		}
	}
	nullMap := tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, nil)
	imported, err := srv.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "backup_trigger", ID: acc + "/bkp_0123456789abcdef"})
	if err != nil || len(imported.ImportedResources) != 1 {
		t.Fatalf("import: %v %s", err, diagText(imported.Diagnostics))
	}
	for _, tc := range []struct {
		name        string
		prior, next tftypes.Value
		private     []byte
		replace     bool
	}{
		{"changed", strMap(map[string]string{"release": "v1"}), strMap(map[string]string{"release": "v2"}), nil, true},
		{"added", strMap(map[string]string{"release": "v1"}), strMap(map[string]string{"release": "v1", "schema": "7"}), nil, true},
		{"same", strMap(map[string]string{"release": "v1"}), strMap(map[string]string{"release": "v1"}), nil, false},
		{"null to empty", nullMap, strMap(nil), nil, false},
		{"changed on an imported trigger", nullMap, strMap(map[string]string{"release": "v2"}), imported.ImportedResources[0].Private, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			config := map[string]tftypes.Value{"account_id": tfStr(acc), "triggers": tc.next}
			proposed := state(tc.next)
			resp, err := srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
				TypeName:         "backup_trigger",
				PriorState:       object(t, s, state(tc.prior)),
				ProposedNewState: object(t, s, proposed),
				Config:           object(t, s, config),
				PriorPrivate:     tc.private,
			})
			if err != nil {
				t.Fatal(err)
			}
			if msg := diagText(resp.Diagnostics); msg != "" {
				t.Fatal(msg)
			}
			replaced := false
			for _, p := range resp.RequiresReplace {
				if p.String() == tftypes.NewAttributePath().WithAttributeName("triggers").String() {
					replaced = true
				}
			}
			if replaced != tc.replace {
				t.Errorf("replace = %t (paths %v), want %t", replaced, resp.RequiresReplace, tc.replace)
			}
		})
	}
}
