package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

// durationValidator accepts a positive Go duration such as "30s".
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return "value must be a positive duration such as 30s or 2m"
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%q is not a positive duration such as 30s or 2m.", req.ConfigValue.ValueString()))
	}
}

// accountIDValidator refuses, before any request, an id the service would
// answer with 422.
func accountIDValidator() validator.String {
	return stringvalidator.RegexMatches(ids.AccountPattern(),
		"must be an account id: acc_ followed by exactly 16 letters or digits, for example acc_0123456789abcdef")
}

// orderValidator allows the two orders the service knows (case-sensitive).
func orderValidator() validator.String {
	return stringvalidator.OneOf(string(client.OrderAsc), string(client.OrderDesc))
}

// validateTimeout refuses a duration of a timeouts block that is not
// positive: the timeouts package parses durations but accepts "0s" and
// "-1m", which fail later with a bare "context deadline exceeded".
func validateTimeout(obj types.Object, name string, diags *diag.Diagnostics) {
	if obj.IsNull() || obj.IsUnknown() {
		return
	}
	v, ok := obj.Attributes()[name].(types.String)
	if !ok || v.IsNull() || v.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(v.ValueString()); err != nil || d <= 0 {
		diags.AddAttributeError(path.Root("timeouts").AtName(name), "Invalid timeout",
			fmt.Sprintf("timeouts.%s must be a positive duration such as 30m or 1h; got %q.", name, v.ValueString()))
	}
}
