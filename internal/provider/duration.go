package provider

// Durations as users write them: the type of the duration attributes, and the timeouts blocks.

import (
	"context"
	"fmt"
	"time"

	actiontimeouts "github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// durationType is timetypes.GoDurationType whose values refuse a string that does not parse in this provider's words, as
// timeouts do: the library's message shows a literal `\n\n` and offers "-1.5h" as an example.
type durationType struct{ timetypes.GoDurationType }

func (t durationType) String() string                       { return "provider.durationType" }
func (t durationType) Equal(o attr.Type) bool               { _, ok := o.(durationType); return ok }
func (t durationType) ValueType(context.Context) attr.Value { return duration{} }

func (t durationType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return duration{timetypes.GoDuration{StringValue: in}}, nil
}

func (t durationType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return duration{timetypes.GoDuration{StringValue: s}}, nil
}

// duration is a value of durationType.
type duration struct{ timetypes.GoDuration }

func (d duration) Type(context.Context) attr.Type { return durationType{} }

func (d duration) Equal(o attr.Value) bool {
	other, ok := o.(duration)
	return ok && d.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals is timetypes' check, which takes only its own values.
func (d duration) StringSemanticEquals(ctx context.Context, n basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, ok := n.(duration)
	if !ok {
		return false, nil
	}
	return d.GoDuration.StringSemanticEquals(ctx, other.GoDuration)
}

func (d duration) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if d.IsNull() || d.IsUnknown() {
		return
	}
	if _, err := time.ParseDuration(d.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration", durationProblem(req.Path.String(), d.ValueString()))
	}
}

// positiveDuration refuses a duration that is not positive; the attribute's type (duration) refuses one that does not parse.
var positiveDuration = valueCheck{desc: "value must be a positive duration", str: func(v string, at path.Path, diags *diag.Diagnostics) {
	if d, err := time.ParseDuration(v); err == nil && d <= 0 {
		diags.AddAttributeError(at, "Invalid duration", durationProblem(at.String(), v))
	}
}}

// durationOf is a validated duration; zero when null or unknown (ValueGoDuration's answer then).
func durationOf(v duration) time.Duration {
	d, _ := v.ValueGoDuration()
	return max(d, 0)
}

// durationForm is what a Go duration looks like, for messages.
const durationForm = `a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m"`

// durationProblem says what is wrong with value as the setting (timeouts.create...); "" for a positive Go duration.
func durationProblem(setting, value string) string {
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return fmt.Sprintf("%s must be a duration: %s; got %q.", setting, durationForm, value)
	case d <= 0:
		return fmt.Sprintf("%s must be positive; got %q. Write %s.", setting, value, durationForm)
	}
	return ""
}

// defaultTimeout bounds a create, a destroy or an invocation, waits included, unless timeouts says otherwise.
const defaultTimeout = 30 * time.Minute

// The timeouts blocks are built here, not by timeouts.Block, whose validators disagree with
// validateTimeoutsBlock (it accepts "-1.5h"); names and types are the library's.

// resourceTimeoutsBlock is a resource's timeouts block with the one optional duration name (create, delete).
func resourceTimeoutsBlock(name, description string) schema.Block {
	return schema.SingleNestedBlock{
		Attributes: map[string]schema.Attribute{
			name: schema.StringAttribute{Optional: true, Description: description},
		},
		CustomType: timeouts.Type{ObjectType: types.ObjectType{AttrTypes: map[string]attr.Type{name: types.StringType}}},
	}
}

// actionTimeoutsBlock is an action's timeouts block: invoke.
func actionTimeoutsBlock(description string) actionschema.Block {
	return actionschema.SingleNestedBlock{
		Attributes: map[string]actionschema.Attribute{
			"invoke": actionschema.StringAttribute{Optional: true, Description: description},
		},
		CustomType: actiontimeouts.Type{ObjectType: types.ObjectType{AttrTypes: map[string]attr.Type{"invoke": types.StringType}}},
	}
}

// validateTimeoutsBlock refuses a timeouts duration (name: create, delete, invoke) that does not parse
// or is not positive; the library accepts "0s" and "-1m", which fail later as a bare deadline.
func validateTimeoutsBlock(ctx context.Context, cfg tfsdk.Config, name string, diags *diag.Diagnostics) {
	at := path.Root("timeouts").AtName(name)
	var v types.String
	diags.Append(cfg.GetAttribute(ctx, at, &v)...)
	if diags.HasError() || v.IsNull() || v.IsUnknown() {
		return
	}
	if msg := durationProblem("timeouts."+name, v.ValueString()); msg != "" {
		diags.AddAttributeError(at, "Invalid timeout", msg)
	}
}
