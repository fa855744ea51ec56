package provider

import (
	"context"
	"fmt"
	"time"

	actiontimeouts "github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	actionschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// defaultTimeout bounds a create, a destroy or an invocation, waits included, unless timeouts says otherwise.
const defaultTimeout = 30 * time.Minute

// The timeouts blocks are built here, not by timeouts.Block, whose validators disagree with
// validateTimeoutsBlock (it accepts "-1.5h"); names and types are the library's.

// resourceTimeoutsBlock is a resource's timeouts block with the one
// optional duration name (create, delete).
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
	if msg := timeoutProblem("timeouts."+name, v.ValueString()); msg != "" {
		diags.AddAttributeError(at, "Invalid timeout", msg)
	}
}

// timeoutProblem says what is wrong with value as the duration setting
// (timeouts.create...), or "" when it is a positive Go duration.
func timeoutProblem(setting, value string) string {
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return fmt.Sprintf("%s must be a duration: %s; got %q.", setting, durationForm, value)
	case d <= 0:
		return fmt.Sprintf("%s must be positive; got %q. Write %s.", setting, value, durationForm)
	}
	return ""
}
