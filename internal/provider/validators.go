package provider

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
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

// organizationIDValidator refuses a value that no organization id has.
func organizationIDValidator() validator.String {
	return stringvalidator.RegexMatches(ids.OrganizationPattern(),
		"must be an organization id: org_ followed by exactly 16 letters or digits, as the backup_token data source's organization_id shows")
}

// orderValidator allows the two orders the service knows (case-sensitive).
func orderValidator() validator.String {
	return stringvalidator.OneOf(string(client.OrderAsc), string(client.OrderDesc))
}

// wholeNumber accepts a whole number from lo to hi. Counts are Number
// attributes with it rather than Int64 ones: the framework converts
// `1.5` or `1e30` for an Int64 with an internal error ("This is always an
// error in the provider… %!s(*big.Float=1.5)"), not a message users can act on.
func wholeNumber(lo, hi int64) validator.Number { return wholeNumberValidator{lo: lo, hi: hi} }

type wholeNumberValidator struct{ lo, hi int64 }

func (v wholeNumberValidator) Description(context.Context) string {
	return fmt.Sprintf("value must be a whole number from %d to %d", v.lo, v.hi)
}

func (v wholeNumberValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v wholeNumberValidator) ValidateNumber(_ context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	f := req.ConfigValue.ValueBigFloat()
	n, acc := f.Int64()
	if !f.IsInt() || acc != big.Exact || n < v.lo || n > v.hi {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid number",
			fmt.Sprintf("%s must be a whole number from %d to %d; got %s.", req.Path, v.lo, v.hi, f.Text('g', -1)))
	}
}

// wholeValue is the value of a Number validated by wholeNumber.
func wholeValue(n types.Number) int64 {
	i, _ := n.ValueBigFloat().Int64()
	return i
}

// validateTimeoutsBlock refuses, at validate time, a duration of the
// timeouts block that is not positive: the timeouts package parses
// durations but accepts "0s" and "-1m", which fail later with a bare
// "context deadline exceeded". name is the block's attribute (create,
// delete, invoke).
func validateTimeoutsBlock(ctx context.Context, cfg tfsdk.Config, name string, diags *diag.Diagnostics) {
	at := path.Root("timeouts").AtName(name)
	var v types.String
	diags.Append(cfg.GetAttribute(ctx, at, &v)...)
	if diags.HasError() || v.IsNull() || v.IsUnknown() {
		return
	}
	if d, err := time.ParseDuration(v.ValueString()); err != nil || d <= 0 {
		diags.AddAttributeError(at, "Invalid timeout",
			fmt.Sprintf("timeouts.%s must be a positive duration such as 30m or 1h; got %q.", name, v.ValueString()))
	}
}

// pemValidator refuses a PEM (or, with file, the path of a PEM file) that
// holds no certificate, at validate time: a trusted CA that silently adds
// nothing would surface later as an untrusted certificate.
type pemValidator struct{ file bool }

func (v pemValidator) Description(context.Context) string {
	if v.file {
		return "a readable file of PEM certificates"
	}
	return "PEM certificates"
}

func (v pemValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v pemValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	pem := []byte(req.ConfigValue.ValueString())
	if v.file {
		b, err := os.ReadFile(req.ConfigValue.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(req.Path, "Unreadable CA certificate file", err.Error())
			return
		}
		pem = b
	}
	if _, err := client.CertPool(pem); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid CA certificates",
			fmt.Sprintf("%s holds no PEM certificate (a block starting with -----BEGIN CERTIFICATE-----).", req.Path))
	}
}

// caPEMs gathers the configured CA certificates.
func caPEMs(cfg providerModel, diags *diag.Diagnostics) [][]byte {
	var pems [][]byte
	if f := cfg.CACertFile.ValueString(); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			diags.AddAttributeError(path.Root("ca_cert_file"), "Unreadable CA certificate file", err.Error())
		}
		pems = append(pems, b)
	}
	if p := cfg.CACertPEM.ValueString(); p != "" {
		pems = append(pems, []byte(p))
	}
	return pems
}
