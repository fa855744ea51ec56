package provider

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// The schema pieces several data sources, or resources, share, and the validators of their values.

// The values of on_conflict (backup_trigger, backup_on_destroy, the action).
const (
	onConflictWait = "wait"
	onConflictFail = "fail"
)

// computedString is a computed string attribute.
func computedString(description string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, Description: description}
}

// computedStrings is a computed list of strings.
func computedStrings(description string) schema.ListAttribute {
	return schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: description}
}

// computedTime is a computed timestamp attribute: a string in Terraform, RFC 3339 in UTC.
func computedTime(description string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: description}
}

// optionalTime is an optional timestamp argument, RFC 3339.
func optionalTime(description string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, CustomType: timetypes.RFC3339Type{}, Description: description}
}

// objectList is a computed list of objects, not a nested attribute, which terraform test cannot mock
// (hashicorp/terraform issue 38369); the fields' descriptions go into the attribute's.
func objectList(description string, fields map[string]schema.Attribute) schema.ListAttribute {
	names := slices.Sorted(maps.Keys(fields))
	attrTypes := make(map[string]attr.Type, len(fields))
	parts := make([]string, len(names))
	for i, n := range names {
		attrTypes[n] = fields[n].GetType()
		parts[i] = "`" + n + "` (" + strings.TrimSuffix(fields[n].GetDescription(), ".") + ")"
	}
	return schema.ListAttribute{Computed: true, ElementType: basetypes.ObjectType{AttrTypes: attrTypes},
		Description: description + " Each has " + strings.Join(parts, ", ") + "."}
}

// accountIDArgument is the account id a data source reads.
func accountIDArgument() schema.StringAttribute {
	return schema.StringAttribute{Required: true, Validators: []validator.String{accountIDValidator()},
		Description: "ID of the account: `acc_` followed by exactly 16 letters or digits."}
}

// accountFilter is the schema of an optional filter on an account field, applied by the provider (the API has none).
func accountFilter(what string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true,
		Description: "Keep only accounts whose `" + what + "` equals this value, ignoring case but not surrounding spaces " +
			"(applied by the provider: the API has no filters). When the filters match no account, the data source warns, " +
			"naming the values the accounts have. Must not be empty: an empty filter would match no account.",
		// An empty filter silently matched nothing, so a for_each over the ids backed up nothing.
		Validators: []validator.String{stringvalidator.LengthAtLeast(1)}}
}

// orderAttribute is the optional `order` argument of a listing: the two orders the service knows (case-sensitive).
func orderAttribute(timestamp string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true,
		Validators:  []validator.String{stringvalidator.OneOf(string(client.OrderAsc), string(client.OrderDesc))},
		Description: "Order by " + timestamp + ": `asc` (oldest first) or `desc` (newest first, the default)."}
}

// maxResultsAttribute is the optional cap on a listing's length.
func maxResultsAttribute(what string, def int64) schema.NumberAttribute {
	return schema.NumberAttribute{Optional: true, Computed: true, Validators: []validator.Number{wholeNumber(1, math.MaxInt32)},
		Description: "Read at most this many " + what + " (at least 1). Defaults to " + strconv.FormatInt(def, 10) + "."}
}

// orDefault is v, or def when v is null: the default of an optional, computed argument of a data source.
func orDefault[T interface{ IsNull() bool }](v, def T) T {
	if v.IsNull() {
		return def
	}
	return v
}

// reuseWithinDescription describes reuse_within (trigger, guard, action) from the point of view of the operation it serves.
func reuseWithinDescription(operation string) string {
	since := ""
	if operation == "create" {
		since = "It must also be listed since the replaced trigger's change went ahead (above its `prior_backup_ids`): a " +
			"create that replaced no trigger in the same command takes its own, and so does one whose replaced trigger's " +
			"`prior_backup_ids` is empty or starts with an empty entry (a listing that showed no backup proves nothing later). "
	}
	// A reuse is what this setting asks for: it shows where the backup's id does, never as a warning of its own.
	shows := map[string]string{
		"create": "A reuse shows in `reused` (true) beside the backup's `id`, and in an INFO log line naming it. ",
		"destroy": "A reuse shows in the warning that names the destroy's backup (the guard's state is gone by then), " +
			"and in an INFO log line. ",
		"invocation": "A reuse shows in the invocation's progress, naming the backup. ",
	}[operation]
	return "Let a backup of the account that started no more than this long before the " + operation + " count for it, " +
		"as a Go duration such as `15m`: a good one is taken as is, with no new backup, and one in progress is waited for " +
		"and counts only if it succeeds (when it fails, a good one older in the window counts instead, its age read again " +
		"on a listing read then). " + since + "Its age is read on this machine's clock and on the service's (the `Date` " +
		"of the listing's answer), the older counting: when the two are more than 10 s apart, nothing is reused and a warning " +
		"says so. " + shows + "Unset (the default), the " + operation + " takes its own backup. See Sharing a backup."
}

// reuseWithinArgument is reuse_within of a resource whose operation (create, destroy) it serves.
func reuseWithinArgument(operation string) rschema.StringAttribute {
	return rschema.StringAttribute{Optional: true, Description: reuseWithinDescription(operation),
		CustomType: durationType{}, Validators: []validator.String{positiveDuration}}
}

// replacingAccountID is account_id of a resource: changing it replaces the resource.
func replacingAccountID(description string) rschema.StringAttribute {
	return rschema.StringAttribute{Required: true, Description: description, Validators: []validator.String{accountIDValidator()},
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
}

// onConflictArgument is on_conflict of a resource: `wait` (the default) or `fail`.
func onConflictArgument(description string) rschema.StringAttribute {
	return rschema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(onConflictWait), Description: description,
		Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)}}
}

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
