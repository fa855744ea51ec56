package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

// accountDataSource is backup_account: one account by id.
type accountDataSource struct{ dataSource }

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
