package provider

import (
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const defaultBackupsMax = 100

var (
	_ datasource.DataSourceWithConfigure      = (*accountBackupsDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*accountBackupsDataSource)(nil)
)

// accountBackupsDataSource is backup_account_backups: an account's backups,
// newest first.
type accountBackupsDataSource struct{ client *client.Client }

func newAccountBackupsDataSource() datasource.DataSource { return &accountBackupsDataSource{} }

type accountBackupsModel struct {
	AccountID     types.String      `tfsdk:"account_id"`
	MaxResults    types.Number      `tfsdk:"max_results"`
	Statuses      []types.String    `tfsdk:"statuses"`
	CreatedBefore timetypes.RFC3339 `tfsdk:"created_before"`
	CreatedAfter  timetypes.RFC3339 `tfsdk:"created_after"`
	Backups       []backupModel     `tfsdk:"backups"`
	Truncated     types.Bool        `tfsdk:"truncated"`
}

func (d *accountBackupsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_account_backups"
}

func (d *accountBackupsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists the backups of one account, newest first, up to `max_results`, optionally only those of some " +
			"statuses or created in a window. With `statuses = [\"success\"]`, `max_results = 1` and `created_before`, it " +
			"is the restore point: the last good backup before a time.",
		Attributes: map[string]schema.Attribute{
			"account_id": schema.StringAttribute{
				Required:    true,
				Description: "ID of the account: `acc_` followed by exactly 16 letters or digits.",
				Validators:  []validator.String{accountIDValidator()},
			},
			"max_results": maxResultsAttribute("backups", defaultBackupsMax),
			"statuses": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Keep only backups with one of these statuses: `pending`, `running`, `success`, `failed` " +
					"(applied by the provider while paging: the API has no filters).",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.OneOf(listableStatuses...)),
				},
			},
			"created_before": schema.StringAttribute{
				Optional: true, CustomType: timetypes.RFC3339Type{},
				Description: "Keep only backups created strictly before this time (RFC 3339, for example `2026-11-24T09:00:00Z`). " +
					"The newer backups are read and skipped: the listing is newest first and the API has no filters.",
			},
			"created_after": schema.StringAttribute{
				Optional: true, CustomType: timetypes.RFC3339Type{},
				Description: "Keep only backups created strictly after this time (RFC 3339). The listing stops at the first " +
					"backup created at or before it: no older page is read. It must be before `created_before`: an empty window " +
					"is refused at validate.",
			},
			"truncated": schema.BoolAttribute{
				Computed: true,
				Description: "Whether `max_results` cut the listing: true when backups were left unread after the last one " +
					"returned (which may or may not match `statuses`), false when `backups` holds every backup (of those " +
					"statuses, in the window) the account has.",
			},
			"backups": objectList("The backups, newest first.", map[string]schema.Attribute{
				"id":           computedString("Backup id (`bkp_...`)."),
				"status":       computedString("`pending`, `running`, `success` or `failed` (the service may add values; only `success` is a good backup)."),
				"created_at":   computedTime("When the backup was queued, RFC 3339 in UTC."),
				"completed_at": computedTime("When the backup ended, RFC 3339 in UTC; null while it is in progress."),
				"error":        computedString("Why the backup failed; null unless it failed."),
			}),
		},
	}
}

// ValidateConfig refuses, before any request, a window that holds no time.
func (d *accountBackupsDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var before, after timetypes.RFC3339
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("created_before"), &before)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("created_after"), &after)...)
	if resp.Diagnostics.HasError() || before.IsNull() || before.IsUnknown() || after.IsNull() || after.IsUnknown() {
		return
	}
	b, ds := before.ValueRFC3339Time()
	resp.Diagnostics.Append(ds...)
	a, ds := after.ValueRFC3339Time()
	resp.Diagnostics.Append(ds...)
	if !resp.Diagnostics.HasError() && !a.Before(b) {
		resp.Diagnostics.AddAttributeError(path.Root("created_after"), "Empty time window",
			fmt.Sprintf("created_after (%s) must be before created_before (%s): no backup can be created in between.",
				after.ValueString(), before.ValueString()))
	}
}

func (d *accountBackupsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *accountBackupsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m accountBackupsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.MaxResults.IsNull() {
		m.MaxResults = types.NumberValue(big.NewFloat(defaultBackupsMax))
	}
	m.Backups = []backupModel{}
	id := m.AccountID.ValueString()
	limit := int(wholeValue(m.MaxResults))
	statuses := make([]string, 0, len(m.Statuses))
	for _, st := range m.Statuses {
		statuses = append(statuses, st.ValueString())
	}
	before, ds := timeOf(m.CreatedBefore)
	resp.Diagnostics.Append(ds...)
	after, ds := timeOf(m.CreatedAfter)
	resp.Diagnostics.Append(ds...)
	if resp.Diagnostics.HasError() {
		return
	}
	complete, windowRead := false, false
	// The loop stops at the limit, or at the first backup older than the
	// window, so the listing reads only the pages up to there.
	for b, err := range d.client.Backups(ctx, id, client.ListOptions{
		Skipped: warnSkipped(&resp.Diagnostics, "backup_account_backups"),
		Ended:   func(c bool) { complete = c },
	}) {
		if err != nil {
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to list the backups of account %q for backup_account_backups", id), err)
			return
		}
		if !after.IsZero() && !b.CreatedAt.After(after) {
			windowRead = true // newest first: every backup of the window was read
			break
		}
		if !before.IsZero() && !b.CreatedAt.Before(before) || len(statuses) > 0 && !slices.Contains(statuses, b.Status) {
			continue
		}
		m.Backups = append(m.Backups, backupToModel(b))
		if len(m.Backups) >= limit {
			break
		}
	}
	m.Truncated = types.BoolValue(!complete && !windowRead)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
