package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Each bad duration of a timeouts block gets exactly one error, at validate
// time, naming the setting and the value; a good one gets none. (The
// timeouts library's own validator once added a second, different error.)
func TestProtocolTimeoutsOneErrorEach(t *testing.T) {
	t.Parallel()
	srv, sch := protocolServer(t)
	actions, ok := srv.(tfprotov6.ActionServer)
	if !ok {
		t.Fatal("the provider server serves no actions")
	}
	ctx := context.Background()
	const acc = "acc_0123456789abcdef"
	validate := func(t *testing.T, kind, typ, name, value string) []*tfprotov6.Diagnostic {
		t.Helper()
		s := sch.ResourceSchemas[typ]
		if kind == "action" {
			s = sch.ActionSchemas[typ].Schema
		}
		tt := s.ValueType().(tftypes.Object).AttributeTypes["timeouts"]
		config := object(t, s, map[string]tftypes.Value{
			"account_id": tfStr(acc),
			"timeouts":   tftypes.NewValue(tt, map[string]tftypes.Value{name: tfStr(value)}),
		})
		if kind == "action" {
			resp, err := actions.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: typ, Config: config})
			if err != nil {
				t.Fatal(err)
			}
			return resp.Diagnostics
		}
		resp, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typ, Config: config})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Diagnostics
	}
	for _, block := range []struct{ kind, typ, name string }{
		{"resource", "backup_trigger", "create"},
		{"resource", "backup_on_destroy", "delete"},
		{"action", "backup_trigger", "invoke"},
	} {
		for _, tc := range []struct{ value, want string }{
			{"30m", ""},
			{"1h30m", ""},
			{"1d", `timeouts.` + block.name + ` must be a duration: a number followed by a unit (ns, us, ms, s, m or h), ` +
				`such as "30m", "1h" or "1h30m"; got "1d".`},
			{"0s", `timeouts.` + block.name + ` must be positive; got "0s". Write a number followed by a unit (ns, us, ms, s, m or h), ` +
				`such as "30m", "1h" or "1h30m".`},
			{"-5m", `timeouts.` + block.name + ` must be positive; got "-5m".`},
			{"soon", `timeouts.` + block.name + ` must be a duration: a number followed by a unit (ns, us, ms, s, m or h), ` +
				`such as "30m", "1h" or "1h30m"; got "soon".`},
		} {
			t.Run(block.kind+" "+block.typ+" "+tc.value, func(t *testing.T) {
				t.Parallel()
				diags := validate(t, block.kind, block.typ, block.name, tc.value)
				if tc.want == "" {
					if len(diags) != 0 {
						t.Fatalf("refused %q:\n%s", tc.value, diagText(diags))
					}
					return
				}
				if len(diags) != 1 {
					t.Fatalf("%d diagnostics for %q, want exactly one:\n%s", len(diags), tc.value, diagText(diags))
				}
				d := diags[0]
				wantPath := tftypes.NewAttributePath().WithAttributeName("timeouts").WithAttributeName(block.name)
				if d.Severity != tfprotov6.DiagnosticSeverityError || d.Summary != "Invalid timeout" ||
					d.Attribute == nil || !d.Attribute.Equal(wantPath) || !strings.HasPrefix(d.Detail, tc.want) {
					t.Errorf("got %v %q at %v:\n%s\nwant an error \"Invalid timeout\" at %v beginning:\n%s",
						d.Severity, d.Summary, d.Attribute, d.Detail, wantPath, tc.want)
				}
			})
		}
	}
}

// The message says what is wrong with the value and how to write one.
func TestTimeoutProblem(t *testing.T) {
	t.Parallel()
	const form = `timeouts.create must be a duration: a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m"; got `
	const positive = `. Write a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m".`
	for _, tc := range []struct{ value, want string }{
		{"30m", ""},
		{"1h30m", ""},
		{"250ms", ""},
		{"0s", `timeouts.create must be positive; got "0s"` + positive},
		{"0", `timeouts.create must be positive; got "0"` + positive},
		{"-5m", `timeouts.create must be positive; got "-5m"` + positive},
		{"soon", form + `"soon".`},
		{"", form + `"".`},
		{"1d", form + `"1d".`},
		{"1.5d", form + `"1.5d".`},
		{"1d12h", form + `"1d12h".`},
		{"1d30m", form + `"1d30m".`},
		{"2w", form + `"2w".`},
		{"1 day", form + `"1 day".`},
		{"-1d", form + `"-1d".`},
		{"30", form + `"30".`},
		{"5min", form + `"5min".`},
		{"1H", form + `"1H".`},
		{"30 m", form + `"30 m".`},
		{"9999999h", form + `"9999999h".`},
	} {
		if got := durationProblem("timeouts.create", tc.value); got != tc.want {
			t.Errorf("durationProblem(%q):\n got %s\nwant %s", tc.value, got, tc.want)
		}
	}
}
