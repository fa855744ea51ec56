package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// accountDataSource is backup_account: one account by id.
type accountDataSource struct{ dataSource }

// accountModel is one account in state (backup_account, and each of backup_accounts).
type accountModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	BackupStatus types.String `tfsdk:"backup_status"`
	Platform     types.String `tfsdk:"platform"`
	ServiceType  types.String `tfsdk:"service_type"`
}

func accountToModel(a client.Account) accountModel {
	return accountModel{ID: types.StringValue(a.ID), Name: types.StringValue(a.Name), BackupStatus: types.StringValue(a.BackupStatus),
		Platform: types.StringValue(a.Platform), ServiceType: types.StringValue(a.ServiceType)}
}

// accountAttributes describe an account's computed attributes.
func accountAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":   computedString("Account id: `acc_` followed by 16 letters or digits."),
		"name": computedString("Display name of the account."),
		"backup_status": computedString("Status of the account's latest backup: `pending` or `running` while a backup is in progress, " +
			"`success` or `failed` when it ended. The service may add other values; only `success` means a good backup."),
		"platform":     computedString("Lower-case identifier of the platform whose data is backed up."),
		"service_type": computedString("Kind of service, for example `backup`."),
	}
}

func (d *accountDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := accountAttributes()
	attrs["id"] = accountIDArgument()
	resp.Schema = schema.Schema{
		Description: "Reads one account of the organization, including the status of its latest backup.",
		Attributes:  attrs,
	}
}

func (d *accountDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *accountModel) {
		id := m.ID.ValueString()
		acc, err := d.data.client.Account(ctx, id)
		if err != nil {
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup_account %q", id), err)
			return
		}
		*m = accountToModel(*acc)
	})
}
