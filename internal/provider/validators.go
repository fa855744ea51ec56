package provider

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

// stringCheck validates a string that is set and known: check says what is wrong.
type stringCheck struct {
	desc  string
	check func(value string, at path.Path, diags *diag.Diagnostics)
}

func (c stringCheck) Description(context.Context) string         { return c.desc }
func (c stringCheck) MarkdownDescription(context.Context) string { return c.desc }

func (c stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if !req.ConfigValue.IsNull() && !req.ConfigValue.IsUnknown() {
		c.check(req.ConfigValue.ValueString(), req.Path, &resp.Diagnostics)
	}
}

// positiveDuration refuses a duration that is not positive; the attribute's
// type (timetypes.GoDuration) refuses one that does not parse.
var positiveDuration = stringCheck{"value must be a positive duration", func(v string, at path.Path, diags *diag.Diagnostics) {
	if d, err := time.ParseDuration(v); err == nil && d <= 0 {
		diags.AddAttributeError(at, "Invalid duration", fmt.Sprintf("%s must be positive; got %q. Write %s.", at, v, durationForm))
	}
}}

// reuseWithinDescription describes reuse_within, of the trigger, the guard
// and the action, from the point of view of the operation it serves.
func reuseWithinDescription(operation string) string {
	return "Let a backup of the account that started no more than this long before the " + operation + " count for it, " +
		"as a Go duration such as `15m`: a good one is taken as is, with no new backup, and one in progress is waited for " +
		"and counts only if it succeeds. The start is read on this machine's clock: when the service's clock is more than 10 s " +
		"from it, nothing is reused and a warning says so. Unset (the default), the " + operation + " takes its own backup. " +
		"See Sharing a backup."
}

// durationOf is a validated duration; zero when null or unknown.
func durationOf(v timetypes.GoDuration) time.Duration {
	d, diags := v.ValueGoDuration()
	if diags.HasError() || d <= 0 {
		return 0
	}
	return d
}

// accountIDValidator refuses, before any request, an id the service would
// answer with 422.
func accountIDValidator() validator.String {
	return idValidator(ids.AccountPattern(),
		"must be an account id: acc_ followed by exactly 16 letters or digits, for example acc_0123456789abcdef")
}

// organizationIDValidator refuses a value that no organization id has.
func organizationIDValidator() validator.String {
	return idValidator(ids.OrganizationPattern(),
		"must be an organization id: org_ followed by exactly 16 letters or digits, as the backup_token data source's organization_id shows")
}

// idValidator refuses a value that does not match pattern, quoting it, so
// that a stray space or an invisible character shows in the message.
func idValidator(pattern *regexp.Regexp, must string) validator.String {
	return stringCheck{"value " + must, func(v string, at path.Path, diags *diag.Diagnostics) {
		if !pattern.MatchString(v) {
			diags.AddAttributeError(at, "Invalid ID", fmt.Sprintf("%s %s; got %q.", at, must, v))
		}
	}}
}

// orderValidator allows the two orders the service knows (case-sensitive).
func orderValidator() validator.String {
	return stringvalidator.OneOf(string(client.OrderAsc), string(client.OrderDesc))
}

// wholeNumber accepts a whole number from lo to hi: counts are Numbers with it, since the framework
// refuses `1.5` for an Int64 with an internal error users cannot act on.
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

// durationForm is what a Go duration looks like, for messages.
const durationForm = `a number followed by a unit (ns, us, ms, s, m or h), such as "30m", "1h" or "1h30m"`

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

// pemValidator refuses, at validate time, a PEM (or, with file, a PEM file) that holds no certificate.
func pemValidator(file bool) validator.String {
	desc := "PEM certificates"
	if file {
		desc = "a readable file of PEM certificates"
	}
	return stringCheck{desc, func(v string, at path.Path, diags *diag.Diagnostics) {
		pem := []byte(v)
		if file {
			b, err := os.ReadFile(v)
			if err != nil {
				diags.AddAttributeError(at, "Unreadable CA certificate file", err.Error())
				return
			}
			pem = b
		}
		if _, err := client.CertPool(pem); err != nil {
			diags.AddAttributeError(at, "Invalid CA certificates",
				fmt.Sprintf("%s holds no PEM certificate (a block starting with -----BEGIN CERTIFICATE-----).", at))
		}
	}}
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
