package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

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
	AccountIDs        types.Set      `tfsdk:"account_ids"`
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
				Optional:    true,
				Description: "ID of the account to back up: `acc_` followed by exactly 16 letters or digits. Exactly one of `account_id` and `account_ids` is set.",
				Validators: []validator.String{accountIDValidator(),
					stringvalidator.ExactlyOneOf(path.MatchRoot("account_id"), path.MatchRoot("account_ids"))},
			},
			"account_ids": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "IDs of several accounts to back up at once, instead of `account_id`: every account is triggered and " +
					"waited for concurrently, within the key's allowance, so that the invocation takes about one backup's time plus " +
					"the requests over the allowance. One account failing does not stop the others; the invocation then fails " +
					"naming every account whose backup failed or was refused, with the reason.",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(accountIDValidator())},
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
	var sayMu sync.Mutex // progress comes from every account's wait
	say := func(format string, args ...any) {
		// Once the invocation is cancelled (Ctrl-C), Terraform has stopped
		// reading progress, and one more event crashes it (1.14 to 1.16:
		// "range function continued iteration after function for loop
		// body returned false").
		if resp.SendProgress != nil && ctx.Err() == nil {
			sayMu.Lock()
			defer sayMu.Unlock()
			resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf(format, args...)})
		}
	}
	opts := client.RunOptions{
		WaitOnConflict:    m.OnConflict.IsNull() || m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.IsNull() || m.WaitForCompletion.ValueBool(),
		Poll:              a.data.poll,
	}
	if !m.AccountIDs.IsNull() {
		var ids []string
		resp.Diagnostics.Append(m.AccountIDs.ElementsAs(ctx, &ids, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
		slices.Sort(ids)
		ctx, cancel := a.data.client.WithTimeout(ctx, timeout)
		defer cancel()
		a.invokeMany(ctx, ids, opts, timeout, say, &resp.Diagnostics)
		return
	}
	accountID := m.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, a.data.client, timeout, accountID)
	defer cancel()
	opts.Progress = func(ev client.Event) {
		logProgress(ctx)(ev)
		reportProgress(say, accountID, ev)
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

// maxDetailedAccounts is how many failed accounts of a many-account
// invocation get their full diagnostic; every one is named in the summary.
const maxDetailedAccounts = 10

// invokeMany backs up several accounts at once and reports, per account,
// what the single-account invocation would: the summary error names every
// account that did not end with a good backup, and the reason.
func (a *triggerAction) invokeMany(ctx context.Context, ids []string, opts client.RunOptions, timeout time.Duration,
	say func(string, ...any), diags *diag.Diagnostics,
) {
	say("Backing up %d accounts at once.", len(ids))
	bad := 0
	outcomes := a.data.client.RunBackups(ctx, ids, opts,
		func(accountID string, ev client.Event) {
			logProgress(tflog.SetField(ctx, "account_id", accountID))(ev)
			reportProgress(say, accountID, ev)
		},
		func(o client.AccountOutcome, finished int) {
			if o.Err != nil {
				bad++
			}
			say("%d of %d accounts done (%d without a good backup).", finished, len(ids), bad)
		})
	var lines []string
	var details diag.Diagnostics
	failed := 0
	for _, o := range outcomes {
		var one diag.Diagnostics
		if o.Backup == nil {
			addTriggerError(&one, invokeCaller, o.AccountID, timeout, o.Err)
		} else {
			if !opts.WaitForCompletion {
				say("Backup %s of account %s is queued (%s); not waiting for it (wait_for_completion = false).", o.Backup.ID, o.AccountID, o.Backup.Status)
			}
			reportWait(&one, invokeCaller, o.AccountID, timeout, o.Err)
		}
		if len(one) == 0 {
			continue
		}
		failed++
		lines = append(lines, fmt.Sprintf("- %s: %s", o.AccountID, firstLine(one[0])))
		if failed <= maxDetailedAccounts {
			for _, d := range one {
				// Without the attribute path: the single-account message
				// points at account_id, which is not set here.
				if d.Severity() == diag.SeverityError {
					details.AddError(d.Summary(), d.Detail())
				} else {
					details.AddWarning(d.Summary(), d.Detail())
				}
			}
		}
	}
	if failed == 0 {
		say("All %d accounts have their backup.", len(ids))
		return
	}
	summary := fmt.Sprintf("%d of %d accounts have no good backup from this invocation", failed, len(ids))
	detail := fmt.Sprintf("%d account(s) ended with a good backup. These did not:\n%s", len(ids)-failed, listSome(lines, 50, "\n"))
	if details.HasError() {
		diags.AddError(summary, detail)
	} else {
		diags.AddWarning(summary, detail) // interrupted: nothing failed yet
	}
	diags.Append(details...)
}

// firstLine is a diagnostic in one line: its summary and the first line
// of its detail, cut.
func firstLine(d diag.Diagnostic) string {
	detail, _, _ := strings.Cut(d.Detail(), "\n")
	const limit = 240
	if r := []rune(detail); len(r) > limit {
		detail = string(r[:limit]) + "…"
	}
	return d.Summary() + ": " + detail
}
