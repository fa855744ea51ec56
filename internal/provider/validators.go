package provider

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// valueCheck validates a string (str) or a number (num) that is set and known: the function says what is wrong.
type valueCheck struct {
	desc string
	str  func(value string, at path.Path, diags *diag.Diagnostics)
	num  func(value *big.Float, at path.Path, diags *diag.Diagnostics)
}

func (c valueCheck) Description(context.Context) string         { return c.desc }
func (c valueCheck) MarkdownDescription(context.Context) string { return c.desc }

func (c valueCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if !req.ConfigValue.IsNull() && !req.ConfigValue.IsUnknown() {
		c.str(req.ConfigValue.ValueString(), req.Path, &resp.Diagnostics)
	}
}

func (c valueCheck) ValidateNumber(_ context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if !req.ConfigValue.IsNull() && !req.ConfigValue.IsUnknown() {
		c.num(req.ConfigValue.ValueBigFloat(), req.Path, &resp.Diagnostics)
	}
}

// accountIDValidator refuses, before any request, an id the service would answer with 422.
func accountIDValidator() validator.String {
	return idValidator(client.AccountIDFormat,
		"must be an account id: acc_ followed by exactly 16 letters or digits, for example acc_0123456789abcdef")
}

// organizationIDValidator refuses a value that no organization id has.
func organizationIDValidator() validator.String {
	return idValidator(client.OrganizationIDFormat,
		"must be an organization id: org_ followed by exactly 16 letters or digits, as the backup_token data source's organization_id shows")
}

// idValidator refuses a value that does not match pattern, quoting it so that a stray space or invisible character shows.
func idValidator(pattern *regexp.Regexp, must string) validator.String {
	return valueCheck{desc: "value " + must, str: func(v string, at path.Path, diags *diag.Diagnostics) {
		if !pattern.MatchString(v) {
			diags.AddAttributeError(at, "Invalid ID", fmt.Sprintf("%s %s; got %q.", at, must, v))
		}
	}}
}

// wholeNumber accepts a whole number from lo to hi: counts are Numbers with it, since the framework
// refuses `1.5` for an Int64 with an internal error users cannot act on.
func wholeNumber(lo, hi int64) validator.Number {
	must := fmt.Sprintf("must be a whole number from %d to %d", lo, hi)
	return valueCheck{desc: "value " + must, num: func(f *big.Float, at path.Path, diags *diag.Diagnostics) {
		if n, acc := f.Int64(); !f.IsInt() || acc != big.Exact || n < lo || n > hi {
			diags.AddAttributeError(at, "Invalid number", fmt.Sprintf("%s %s; got %s.", at, must, f.Text('g', -1)))
		}
	}}
}

// wholeValue is the value of a Number validated by wholeNumber.
func wholeValue(n types.Number) int64 {
	i, _ := n.ValueBigFloat().Int64()
	return i
}

// pemValidator refuses, at validate time, a PEM (or, with file, a PEM file) that holds no certificate.
func pemValidator(file bool) validator.String {
	desc := "PEM certificates"
	if file {
		desc = "a readable file of PEM certificates"
	}
	return valueCheck{desc: desc, str: func(v string, at path.Path, diags *diag.Diagnostics) {
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
