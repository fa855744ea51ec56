package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// accountDataSource is backup_account: one account by id.
type accountDataSource struct{ dataSource }

func newAccountDataSource() datasource.DataSource {
	return &accountDataSource{dataSource{name: "_account"}}
}

func (d *accountDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := accountAttributes()
	attrs["id"] = schema.StringAttribute{
		Required:    true,
		Description: "ID of the account: `acc_` followed by exactly 16 letters or digits.",
		Validators:  []validator.String{accountIDValidator()},
	}
	resp.Schema = schema.Schema{
		Description: "Reads one account of the organization, including the status of its latest backup.",
		Attributes:  attrs,
	}
}

func (d *accountDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	cfg, ok := decode[accountModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	id := cfg.ID.ValueString()
	acc, err := d.data.client.Account(ctx, id)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup_account %q", id), err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, accountToModel(*acc))...)
}

// accountModel is one account in state.
type accountModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	BackupStatus types.String `tfsdk:"backup_status"`
	Platform     types.String `tfsdk:"platform"`
	ServiceType  types.String `tfsdk:"service_type"`
}

func accountToModel(a client.Account) accountModel {
	return accountModel{
		ID:           types.StringValue(a.ID),
		Name:         types.StringValue(a.Name),
		BackupStatus: types.StringValue(a.BackupStatus),
		Platform:     types.StringValue(a.Platform),
		ServiceType:  types.StringValue(a.ServiceType),
	}
}
