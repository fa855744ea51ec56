package provider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

var _ list.ListResourceWithConfigure = (*triggerList)(nil)

// triggerList is the list resource backup_trigger (Terraform 1.14+): an account's backups as importable triggers.
type triggerList struct{ data *providerData }

type triggerListConfig struct {
	AccountID types.String `tfsdk:"account_id"`
	Statuses  types.List   `tfsdk:"statuses"`
}

// statusesValidators refuse an empty statuses filter, and a status other than those the service is known to use.
var statusesValidators = []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(
	stringvalidator.OneOf(client.StatusPending, client.StatusRunning, client.StatusSuccess, client.StatusFailed))}

func (l *triggerList) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
}

func (l *triggerList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		Description: "Lists an account's backups, newest first, as `backup_trigger` resources that `terraform query " +
			"-generate-config-out` can turn into import blocks. Pages at 50 backups per request and stops at the `limit`.",
		Attributes: map[string]listschema.Attribute{
			"account_id": listschema.StringAttribute{Required: true, Validators: []validator.String{accountIDValidator()},
				Description: "ID of the account whose backups to list: `acc_` followed by exactly 16 letters or digits."},
			"statuses": listschema.ListAttribute{Optional: true, ElementType: types.StringType, Validators: statusesValidators,
				Description: "Keep only backups with one of these statuses: `pending`, `running`, `success`, `failed`."},
		},
	}
}

func (l *triggerList) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (l *triggerList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg triggerListConfig
	if diags := req.Config.Get(ctx, &cfg); diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	var statuses []string
	// A null list leaves statuses nil.
	if diags := cfg.Statuses.ElementsAs(ctx, &statuses, false); diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	accountID := cfg.AccountID.ValueString()
	stream.Results = func(push func(list.ListResult) bool) {
		var sent int64
		// The listing pages at 50 and stops with the loop: at the limit, ⌈limit/50⌉ requests when nothing is filtered out.
		for b, err := range l.data.client.Backups(ctx, accountID, client.ListOptions{}) {
			if err != nil {
				var diags diag.Diagnostics
				addAPIError(&diags, fmt.Sprintf("Unable to list the backups of account %s for list backup_trigger", accountID), err)
				push(list.ListResult{Diagnostics: diags})
				return
			}
			if len(statuses) > 0 && !slices.Contains(statuses, b.Status) {
				continue
			}
			// The backup as a list result: identity, display name, and the resource as imported.
			r := req.NewListResult(ctx)
			r.DisplayName = fmt.Sprintf("%s (%s, %s)", b.ID, b.Status, b.CreatedAt.UTC().Format(time.RFC3339))
			r.Diagnostics.Append(r.Identity.Set(ctx, triggerIdentity{AccountID: types.StringValue(b.AccountID), ID: types.StringValue(b.ID)})...)
			if req.IncludeResource {
				m := importedModel(&b)
				r.Diagnostics.Append(r.Resource.Set(ctx, &m)...)
			}
			if !push(r) {
				return
			}
			if sent++; req.Limit > 0 && sent >= req.Limit {
				return
			}
		}
	}
}
