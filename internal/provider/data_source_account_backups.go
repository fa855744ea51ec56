package provider

import (
	"context"
	"fmt"
	"math/big"

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
	AccountID  types.String  `tfsdk:"account_id"`
	MaxResults types.Number  `tfsdk:"max_results"`
	Backups    []backupModel `tfsdk:"backups"`
}

func (d *accountBackupsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_account_backups"
}

func (d *accountBackupsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attr := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "Lists the backups of one account, newest first, up to `max_results`.",
		Attributes: map[string]schema.Attribute{
			"account_id": schema.StringAttribute{
				Required:    true,
				Description: "ID of the account: `acc_` followed by exactly 16 letters or digits.",
				Validators:  []validator.String{accountIDValidator()},
			},
			"max_results": maxResultsAttribute("backups", defaultBackupsMax),
			"backups": objectList("The backups, newest first.", map[string]schema.Attribute{
				"id":           attr("Backup id (`bkp_...`)."),
				"status":       attr("`pending`, `running`, `success` or `failed` (the service may add values; only `success` is a good backup)."),
				"created_at":   attr("When the backup was queued, RFC 3339 in UTC."),
				"completed_at": attr("When the backup ended, RFC 3339 in UTC; null while it is in progress."),
				"error":        attr("Why the backup failed; null unless it failed."),
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
	for b, err := range d.client.Backups(ctx, id, client.ListOptions{
		Max: int(wholeValue(m.MaxResults)), Skipped: warnSkipped(&resp.Diagnostics, "backup_account_backups"),
	}) {
		if err != nil {
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to list the backups of account %q for backup_account_backups", id), err)
			return
		}
		m.Backups = append(m.Backups, backupToModel(b))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
