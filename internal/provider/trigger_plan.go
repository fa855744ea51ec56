package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// The plan rules of backup_trigger, each on the attribute it governs: a
// change of triggers replaces the trigger (triggersRequireReplace); what
// the next apply does with the recorded backup (workflow.Record.Next)
// makes the backup's attributes unknown, or replaces a trigger whose
// backup failed (followRecorded).

// triggersReplace is the rule for triggers: a change takes a new backup,
// compared as triggersKey compares (null entries dropped, no map the same
// as an empty one), except on an imported trigger's first apply, which
// adopts the configuration's triggers in place. An unknown value replaces.
func triggersReplace(rec workflow.Record, plan, state types.Map) bool {
	if plan.IsUnknown() {
		return true
	}
	return !rec.TakesConfigTriggers() && triggersKey(plan) != triggersKey(state)
}

// triggersRequireReplace applies triggersReplace in the schema, where a
// reader of triggers sees it.
type triggersRequireReplace struct{}

func (triggersRequireReplace) Description(context.Context) string {
	return "A change of triggers takes a new backup, except on an imported trigger's first apply."
}

func (m triggersRequireReplace) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (triggersRequireReplace) PlanModifyMap(ctx context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return // a create or a destroy
	}
	var state triggerModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, ok := triggerRecord(ctx, &state, req.Private, &resp.Diagnostics)
	resp.RequiresReplace = ok && triggersReplace(rec, req.PlanValue, req.StateValue)
}

// followRecorded plans one of the backup's attributes from the step the
// next apply takes with the recorded backup:
//   - identify (recorded without its backup id, and the refresh did not
//     find it): id and triggered_at too become unknown, since the update
//     looks for the backup (and waits for it) before any new trigger;
//   - settle (an import's first apply, a wait switched on, a wait that
//     was interrupted): backup_status and completed_at become unknown;
//   - retake (a waited trigger whose backup failed): backup_status
//     replaces the trigger, which takes a new backup.
type followRecorded struct{ attr string }

func (f followRecorded) Description(context.Context) string {
	switch f.attr {
	case "id", "triggered_at":
		return "Unknown while the next apply looks for a backup recorded without its id."
	case "backup_status":
		return "Unknown while the next apply follows the backup; a failed backup of a waited trigger replaces the trigger."
	}
	return "Unknown while the next apply follows the backup."
}

func (f followRecorded) MarkdownDescription(ctx context.Context) string { return f.Description(ctx) }

func (f followRecorded) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return // a create or a destroy
	}
	step, state, ok := nextStep(ctx, req.State, req.Plan, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	unknown := false
	switch f.attr {
	case "id", "triggered_at":
		unknown = step == workflow.Identify
	case "completed_at":
		unknown = step == workflow.Identify || step == workflow.Settle
	case "backup_status":
		unknown = step != workflow.Keep
		if step == workflow.Retake {
			resp.Diagnostics.AddWarning("The backup of this trigger did not succeed",
				fmt.Sprintf("Backup %s of account %s ended with status %q, and wait_for_completion is true: the trigger is "+
					"replaced to take a new backup.", state.ID.ValueString(), state.AccountID.ValueString(), state.BackupStatus.ValueString()))
			resp.RequiresReplace = true
		}
	}
	if unknown {
		resp.PlanValue = types.StringUnknown()
	}
}

// nextStep is the step of the next apply for the trigger planned from
// state to plan: Keep when its account changes (it is replaced).
func nextStep(ctx context.Context, st tfsdk.State, plan tfsdk.Plan, private privateGetter, diags *diag.Diagnostics) (workflow.Step, triggerModel, bool) {
	var state triggerModel
	var account types.String
	var waits types.Bool
	diags.Append(st.Get(ctx, &state)...)
	diags.Append(plan.GetAttribute(ctx, path.Root("account_id"), &account)...)
	diags.Append(plan.GetAttribute(ctx, path.Root("wait_for_completion"), &waits)...)
	if diags.HasError() {
		return workflow.Keep, state, false
	}
	rec, ok := triggerRecord(ctx, &state, private, diags)
	if !ok || !account.Equal(state.AccountID) {
		return workflow.Keep, state, false
	}
	return rec.Next(state.WaitForCompletion.ValueBool(), waits.ValueBool()), state, true
}
