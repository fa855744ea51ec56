package provider

import (
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const defaultBackupsMax = 100

var _ datasource.DataSourceWithConfigure = (*accountBackupsDataSource)(nil)

// accountBackupsDataSource is backup_account_backups: an account's backups,
// newest first.
type accountBackupsDataSource struct{ client *client.Client }

func newAccountBackupsDataSource() datasource.DataSource { return &accountBackupsDataSource{} }

type accountBackupsModel struct {
	AccountID  types.String   `tfsdk:"account_id"`
	MaxResults types.Number   `tfsdk:"max_results"`
	Statuses   []types.String `tfsdk:"statuses"`
	Backups    []backupModel  `tfsdk:"backups"`
	Truncated  types.Bool     `tfsdk:"truncated"`
}

func (d *accountBackupsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_account_backups"
}

func (d *accountBackupsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists the backups of one account, newest first, up to `max_results`, optionally only those of some " +
			"statuses. It reads 50 backups a request and stops as soon as it has `max_results`: " +
			"`statuses = [\"success\"]` with `max_results = 1` is the latest good backup, at the cost of the pages up to it.",
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
			"truncated": schema.BoolAttribute{
				Computed: true,
				Description: "Whether `max_results` cut the listing: true when backups were left unread after the last one " +
					"returned (which may or may not match `statuses`), false when `backups` holds every backup (of those " +
					"statuses) the account has.",
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
	complete := false
	// The loop stops at the limit, so the listing reads only the pages up
	// to the limit-th backup of those statuses.
	for b, err := range d.client.Backups(ctx, id, client.ListOptions{
		Skipped: warnSkipped(&resp.Diagnostics, "backup_account_backups"),
		Ended:   func(c bool) { complete = c },
	}) {
		if err != nil {
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to list the backups of account %q for backup_account_backups", id), err)
			return
		}
		if len(statuses) > 0 && !slices.Contains(statuses, b.Status) {
			continue
		}
		m.Backups = append(m.Backups, backupToModel(b))
		if len(m.Backups) >= limit {
			break
		}
	}
	m.Truncated = types.BoolValue(!complete)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
