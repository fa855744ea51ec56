package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// tokenDataSource is backup_token: the provider's API key as the service knows it; users check expires_at in checks and postconditions.
type tokenDataSource struct{ dataSource }

type tokenModel struct {
	Name             types.String      `tfsdk:"name"`
	ExpiresAt        timetypes.RFC3339 `tfsdk:"expires_at"`
	OrganizationID   types.String      `tfsdk:"organization_id"`
	OrganizationName types.String      `tfsdk:"organization_name"`
}

func (d *tokenDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Validates the provider's API key and tells its name, expiry and organization. " +
			"Use it in `check` blocks or postconditions to warn or fail a plan when the key is about to expire.",
		Attributes: map[string]schema.Attribute{
			"name":              schema.StringAttribute{Computed: true, Description: "Name given to the key when it was created."},
			"expires_at":        schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: "Expiry of the key, RFC 3339 in UTC, for example `2027-02-19T00:00:00Z`; compare it with `timecmp`."},
			"organization_id":   schema.StringAttribute{Computed: true, Description: "ID of the organization the key belongs to (`org_...`)."},
			"organization_name": schema.StringAttribute{Computed: true, Description: "Name of the organization the key belongs to."},
		},
	}
}

func (d *tokenDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	tok, err := d.data.client.Token(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Unable to read backup_token (validating the API key)", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, tokenToModel(*tok))...)
}

func tokenToModel(t client.Token) tokenModel {
	return tokenModel{Name: types.StringValue(t.Name), ExpiresAt: timeValue(t.ExpiresAt),
		OrganizationID: types.StringValue(t.Organization.ID), OrganizationName: types.StringValue(t.Organization.Name)}
}
