package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// accountsDataSource is backup_accounts: every account of the organization, optionally filtered (here: the API has no filters).
type accountsDataSource struct{ dataSource }

type accountsModel struct {
	Order        types.String   `tfsdk:"order"`
	Platform     types.String   `tfsdk:"platform"`
	BackupStatus types.String   `tfsdk:"backup_status"`
	ServiceType  types.String   `tfsdk:"service_type"`
	Accounts     []accountModel `tfsdk:"accounts"`
	IDs          []types.String `tfsdk:"ids"`
}

func (d *accountsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists every account of the organization, paging through the API, optionally filtered by platform, backup status or service type.",
		Attributes: map[string]schema.Attribute{
			"order":         orderAttribute("the accounts' creation time"),
			"platform":      accountFilter("platform"),
			"backup_status": accountFilter("backup_status"),
			"service_type":  accountFilter("service_type"),
			"accounts":      objectList("The accounts, in the requested order.", accountAttributes()),
			"ids":           computedStrings("Ids of the accounts, in the same order as `accounts`; handy with `for_each = toset(...)`."),
		},
	}
}

func (d *accountsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *accountsModel) {
		m.Order = orDefault(m.Order, types.StringValue(string(client.OrderDesc)))
		m.Accounts, m.IDs = []accountModel{}, []types.String{}
		accounts, ok := newAccountFilters(m.Platform, m.BackupStatus, m.ServiceType).list(ctx, d.data.client, client.Order(m.Order.ValueString()),
			"backup_accounts", "So ids and accounts are empty, and anything built from them (for example a backup_trigger action's "+
				"account_ids) backs up nothing.", &resp.Diagnostics)
		if !ok {
			return
		}
		for _, a := range accounts {
			m.Accounts = append(m.Accounts, accountToModel(a))
			m.IDs = append(m.IDs, types.StringValue(a.ID))
		}
	})
}
