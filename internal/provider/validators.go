package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

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
