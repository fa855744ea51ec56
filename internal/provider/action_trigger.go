package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/action/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

var (
	_ action.ActionWithConfigure      = (*triggerAction)(nil)
	_ action.ActionWithValidateConfig = (*triggerAction)(nil)
	_ action.ActionWithModifyPlan     = (*triggerAction)(nil)
)

// triggerAction is the action backup_trigger (Terraform 1.14+): one backup per invocation; it records nothing.
type triggerAction struct{ data *providerData }

type triggerActionModel struct {
	AccountID         types.String   `tfsdk:"account_id"`
	AccountIDs        types.Set      `tfsdk:"account_ids"`
	WaitForCompletion types.Bool     `tfsdk:"wait_for_completion"`
	OnConflict        types.String   `tfsdk:"on_conflict"`
	ReuseWithin       duration       `tfsdk:"reuse_within"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func (a *triggerAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
}

func (a *triggerAction) Schema(ctx context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Takes one on-demand backup of an account (or of several, with `account_ids`) each time it is invoked: " +
			"before a resource's change (`action_trigger`) or with `terraform apply -invoke`. By default it waits, and fails " +
			"unless the backup succeeded, so that the change it guards does not go ahead without one.",
		Attributes: map[string]schema.Attribute{
			"account_id": schema.StringAttribute{Optional: true,
				Description: "ID of the account to back up: `acc_` followed by exactly 16 letters or digits. Exactly one of `account_id` and `account_ids` is set.",
				Validators: []validator.String{accountIDValidator(),
					stringvalidator.ExactlyOneOf(path.MatchRoot("account_id"), path.MatchRoot("account_ids"))}},
			"account_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType,
				Description: "IDs of several accounts to back up at once, instead of `account_id`: all are triggered and waited for " +
					"concurrently, and the invocation fails naming every account without a good backup. An empty set fails too " +
					"(see Several accounts).",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.NoNullValues(), setvalidator.ValueStringsAre(accountIDValidator())}},
			"wait_for_completion": schema.BoolAttribute{Optional: true,
				Description: "Wait, within `timeouts.invoke`, until the backup has finished, and fail unless it succeeded. " +
					"Defaults to `true`: an action that guards a change waits for its backup."},
			"reuse_within": schema.StringAttribute{Optional: true, CustomType: durationType{}, Validators: []validator.String{positiveDuration},
				Description: reuseWithinDescription("invocation") + " With `account_ids`, each account on its own."},
			"on_conflict": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)},
				Description: "What to do when a backup of the account is already in progress: `wait` (the default) waits for it, " +
					"then queues a new one; `fail` fails the invocation."},
		},
		Blocks: map[string]schema.Block{
			"timeouts": actionTimeoutsBlock(
				"How long an invocation may take, waits included, as a positive duration such as `30m`. Defaults to `30m`."),
		},
	}
}

func (a *triggerAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *triggerAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, "invoke", &resp.Diagnostics)
}

// ModifyPlan refuses at plan a known empty account_ids and a key of another organization than organization_id.
func (a *triggerAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var ids types.Set
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("account_ids"), &ids)...)
	if !ids.IsNull() && !ids.IsUnknown() && len(ids.Elements()) == 0 {
		addNoAccountsError(&resp.Diagnostics)
		return
	}
	if a.data != nil {
		if err := a.data.client.CheckOrganization(ctx); err != nil {
			addOrganizationError(&resp.Diagnostics, "the backup_trigger action", err)
		}
	}
}

func (a *triggerAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	m, ok := decode[triggerActionModel](ctx, req.Config, &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, diags := m.Timeouts.Invoke(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var sayMu sync.Mutex // progress comes from every account's wait
	say := func(format string, args ...any) {
		// Once cancelled, Terraform (1.14 to 1.16) stops reading progress and crashes on one more event.
		if resp.SendProgress != nil && ctx.Err() == nil {
			sayMu.Lock()
			defer sayMu.Unlock()
			resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf(format, args...)})
		}
	}
	opts := workflow.RunOptions{
		WaitOnConflict:    m.OnConflict.IsNull() || m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.IsNull() || m.WaitForCompletion.ValueBool(),
		ReuseWithin:       durationOf(m.ReuseWithin),
		Unrecorded:        true, // an invocation keeps no record of the previous change
	}
	ids := []string{m.AccountID.ValueString()}
	if !m.AccountIDs.IsNull() {
		resp.Diagnostics.Append(m.AccountIDs.ElementsAs(ctx, &ids, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
		slices.Sort(ids)
	}
	ctx, cancel := clock.WithTimeout(ctx, a.data.clock, timeout)
	defer cancel()
	a.invoke(ctx, ids, !m.AccountIDs.IsNull(), opts, timeout, say, &resp.Diagnostics)
}

// reportInvocation says what one account's run means for the guarded change: only a good outcome passes.
func reportInvocation(diags *diag.Diagnostics, o workflow.Outcome, waits bool, timeout time.Duration, say func(string, ...any)) {
	if o.Kind == workflow.NotWaited {
		say("Backup %s of account %s is queued (%s); not waiting for it (wait_for_completion = false).", o.Backup.ID, o.AccountID, o.Backup.Status)
	}
	report(diags, invokeCaller, timeout, o)
	if diags.HasError() || o.Good(waits) {
		return
	}
	what := fmt.Sprintf("No backup of account %s is known, which", o.AccountID)
	if o.Backup != nil {
		what = fmt.Sprintf("Backup %s of account %s is %s, which", o.Backup.ID, o.AccountID, o.Backup.Status)
	}
	diags.AddError("No good backup from this invocation", what+" does not let the change this action guards go ahead.")
}

// invoke backs up the accounts at once; for account_ids, one error names each account without a good backup.
func (a *triggerAction) invoke(ctx context.Context, ids []string, many bool, opts workflow.RunOptions, timeout time.Duration,
	say func(string, ...any), diags *diag.Diagnostics,
) {
	if len(ids) == 0 {
		// Computed empty (a literal one fails validation): backing up nothing must not read as success.
		addNoAccountsError(diags)
		return
	}
	if many {
		say("Backing up %s at once.", plural(len(ids), "account"))
	}
	bad := 0
	outcomes := a.data.runner.RunMany(ctx, ids, opts,
		func(accountID string, ev workflow.Event) { progress(ctx, say, accountID)(ev) },
		func(o workflow.Outcome, finished int) {
			if !o.Good(opts.WaitForCompletion) {
				bad++
			}
			if many {
				say("%d of %d accounts done (%d without a good backup).", finished, len(ids), bad)
			}
		})
	if !many {
		reportInvocation(diags, outcomes[0], opts.WaitForCompletion, timeout, say)
		return
	}
	var lines []string
	for _, o := range outcomes {
		var one diag.Diagnostics
		reportInvocation(&one, o, opts.WaitForCompletion, timeout, say)
		diags.Append(one.Warnings()...) // a warning does not fail the account
		if errs := one.Errors(); len(errs) > 0 {
			lines = append(lines, fmt.Sprintf("- %s: %s", o.AccountID, oneLine(errs[0])))
		}
	}
	if len(lines) == 0 {
		if len(ids) == 1 {
			say("The account has its backup.")
		} else {
			say("All %d accounts have their backup.", len(ids))
		}
		return
	}
	have := "have"
	if len(lines) == 1 {
		have = "has"
	}
	diags.AddError(fmt.Sprintf("%d of %d accounts %s no good backup from this invocation", len(lines), len(ids), have),
		fmt.Sprintf("%s ended with a good backup. These did not, each with its reason:\n%s",
			plural(len(ids)-len(lines), "account"), listSome(lines, 50, "\n")))
}

// oneLine is a diagnostic in one bounded line, so that each account of a fleet is named once with its reason.
func oneLine(d diag.Diagnostic) string {
	var parts []string
	for _, p := range strings.Split(d.Detail(), "\n\n") {
		p = strings.Join(strings.Fields(p), " ")
		if p == "" {
			continue
		}
		if !strings.ContainsAny(p[len(p)-1:], ".!?:)") {
			p += "." // paragraphs in one line stay sentences
		}
		parts = append(parts, p)
	}
	line := d.Summary() + ": " + strings.Join(parts, " ")
	if i := strings.LastIndex(line, "Request ID: "); i >= 0 && utf8.RuneCountInString(line) > oneLineMax {
		// Cut before the request id, the one thing a user can quote to support.
		tail := cut(line[i:], oneLineMax/4)
		return cut(line[:i], oneLineMax-utf8.RuneCountInString(tail)-1) + " " + tail
	}
	return cut(line, oneLineMax)
}

// oneLineMax bounds one account's reason in a fleet's error.
const oneLineMax = 600

// addNoAccountsError refuses an empty account_ids: backing up nothing must not let the guarded change go ahead as if backed up.
func addNoAccountsError(diags *diag.Diagnostics) {
	diags.AddAttributeError(path.Root("account_ids"), "No account to back up",
		"account_ids is empty, so this invocation would take no backup and the change it guards would go ahead without one. "+
			"It was probably computed from a data source whose filters matched no account (backup_accounts warns when they do); "+
			"check the filters, or remove the action if there is nothing to back up.")
}
