package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// providerData is what Configure hands to everything: it lives for one process, one Terraform command.
type providerData struct {
	client *client.Client
	// runner takes backups through client, and keeps what this process's trigger deletes leave their replacements;
	// clock is theirs: the wall clock, or a test's.
	runner *workflow.Runner
	clock  clock.Clock
	// release is destroy_without_backup; nil when unset.
	release *guardRelease
}

// dataFrom takes what Configure handed over; nil (before configuration, as in validation) is no error.
func dataFrom(raw any, diags *diag.Diagnostics) *providerData {
	d, ok := raw.(*providerData)
	if !ok && raw != nil {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", raw))
	}
	return d
}

// dataSource is what every data source shares: its name after the provider's, and the provider's data.
type dataSource struct {
	name string
	data *providerData
}

func (d *dataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.name
}

func (d *dataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// readModel decodes a data source's configuration, has read complete the model and, unless it reported an error, saves it.
func readModel[M any](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse, read func(*M)) {
	if m, ok := decode[M](ctx, req.Config, &resp.Diagnostics); ok {
		read(&m)
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		}
	}
}

// backupResource is what the trigger and the guard share; timeout names the timeouts setting of their waits.
type backupResource struct {
	data    *providerData
	timeout string
}

func (r *backupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses a timeout that could never let a wait succeed.
func (r *backupResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, r.timeout, &resp.Diagnostics)
}
