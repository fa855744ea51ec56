package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

var (
	_ action.ActionWithConfigure      = (*triggerAction)(nil)
	_ action.ActionWithValidateConfig = (*triggerAction)(nil)
)

// defaultInvokeTimeout bounds an invocation, waits included.
const defaultInvokeTimeout = 30 * time.Minute

// triggerAction is the action backup_trigger (Terraform 1.14+): one backup
// per invocation, on a lifecycle event or on demand with -invoke. It runs
// the same engine as the resource; it records nothing in state.
type triggerAction struct{ data *providerData }

func newTriggerAction() action.Action { return &triggerAction{} }

type triggerActionModel struct {
	AccountID         types.String   `tfsdk:"account_id"`
	WaitForCompletion types.Bool     `tfsdk:"wait_for_completion"`
	OnConflict        types.String   `tfsdk:"on_conflict"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func (a *triggerAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
}

func (a *triggerAction) Schema(ctx context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Queues one on-demand backup of an account each time it is invoked: on a lifecycle event of a resource " +
			"(`action_trigger`, for example before an update or, on Terraform 1.16, before a destroy), or on demand with " +
			"`terraform apply -invoke=action.backup_trigger.NAME`. By default it waits for the backup and fails unless it " +
			"succeeded, so the change it guards does not happen without a good backup. It records nothing in the state.",
		Attributes: map[string]schema.Attribute{
			"account_id": schema.StringAttribute{
				Required:    true,
				Description: "ID of the account to back up: `acc_` followed by exactly 16 letters or digits.",
				Validators:  []validator.String{accountIDValidator()},
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional: true,
				Description: "Wait, within `timeouts.invoke`, until the backup has finished, and fail unless it succeeded. " +
					"Defaults to `true`: an action that guards a change waits for its backup.",
			},
			"on_conflict": schema.StringAttribute{
				Optional: true,
				Description: "What to do when a backup of the account is already in progress: `wait` (the default) waits for it, " +
					"then queues a new one; `fail` fails the invocation.",
				Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.BlockWithOpts(ctx, timeouts.Opts{
				InvokeDescription: "How long an invocation may take, waits included, as a positive duration such as `30m`. Defaults to `30m`.",
			}),
		},
	}
}

func (a *triggerAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *triggerAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, "invoke", &resp.Diagnostics)
}

func (a *triggerAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m triggerActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := m.Timeouts.Invoke(ctx, defaultInvokeTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := m.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, timeout, accountID)
	defer cancel()
	say := func(format string, args ...any) {
		if resp.SendProgress != nil {
			resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf(format, args...)})
		}
	}
	opts := client.RunOptions{
		WaitOnConflict:    m.OnConflict.IsNull() || m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.IsNull() || m.WaitForCompletion.ValueBool(),
		Poll:              a.data.poll,
		Progress: func(ev client.Event) {
			logProgress(ctx)(ev)
			reportProgress(say, accountID, ev)
		},
	}
	b, err := a.data.client.RunBackup(ctx, accountID, opts)
	if b == nil {
		addTriggerError(&resp.Diagnostics, invokeCaller, accountID, timeout, err)
		return
	}
	if !opts.WaitForCompletion {
		say("Backup %s of account %s is queued (%s); not waiting for it (wait_for_completion = false).", b.ID, accountID, b.Status)
	}
	reportWait(&resp.Diagnostics, invokeCaller, accountID, timeout, err)
}
