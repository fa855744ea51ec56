package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// The plan of an update of a backup_trigger, decided once per resource
// from its record (see planUpdate): a change of triggers replaces the
// trigger (triggersReplace), and what the next apply does with the
// recorded backup (workflow.Record.Next) makes the backup's attributes
// unknown, or replaces a trigger whose backup failed.

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

// planUpdate plans an update of a trigger: it reads only the attributes
// the record and the rules need, and the private record, once.
//   - triggers: replaced by triggersReplace;
//   - identify (recorded without its backup id, and the refresh did not
//     find it): every backup attribute becomes unknown, since the update
//     looks for the backup (and waits for it) before any new trigger;
//   - settle (an import's first apply, a wait switched on, a wait that
//     was interrupted): backup_status and completed_at become unknown;
//   - retake (a waited trigger whose backup failed, or one whose change
//     never went ahead): backup_status replaces the trigger, which takes a
//     new backup.
//
// A change of account_id replaces the trigger (its schema says so), and
// then nothing else is planned here.
func (r *triggerResource) planUpdate(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state triggerModel
	var planAccount types.String
	var stateWaits, planWaits types.Bool
	var stateTriggers, planTriggers types.Map
	for _, a := range []struct {
		from interface {
			GetAttribute(context.Context, path.Path, any) diag.Diagnostics
		}
		name string
		to   any
	}{
		{req.State, "id", &state.ID}, {req.State, "account_id", &state.AccountID}, {req.State, "backup_status", &state.BackupStatus},
		{req.State, "triggered_at", &state.TriggeredAt}, {req.State, "completed_at", &state.CompletedAt},
		{req.State, "wait_for_completion", &stateWaits}, {req.State, "triggers", &stateTriggers},
		{req.Plan, "account_id", &planAccount}, {req.Plan, "wait_for_completion", &planWaits}, {req.Plan, "triggers", &planTriggers},
	} {
		resp.Diagnostics.Append(a.from.GetAttribute(ctx, path.Root(a.name), a.to)...)
	}
	if resp.Diagnostics.HasError() || !planAccount.Equal(state.AccountID) {
		return
	}
	rec, ok := triggerRecord(ctx, &state, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	if triggersReplace(rec, planTriggers, stateTriggers) {
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("triggers"))
	}
	var unknown []string
	switch rec.Next(stateWaits.ValueBool(), planWaits.ValueBool()) {
	case workflow.Identify:
		unknown = []string{"id", "triggered_at", "backup_status", "completed_at"}
	case workflow.Settle:
		unknown = []string{"backup_status", "completed_at"}
	case workflow.Retake:
		unknown = []string{"backup_status"}
		why := "wait_for_completion is true"
		if !stateWaits.ValueBool() || !planWaits.ValueBool() {
			why = "the change it was taken for never went ahead (its wait was interrupted or ran out)"
		}
		resp.Diagnostics.AddWarning("The backup of this trigger did not succeed",
			fmt.Sprintf("Backup %s of account %s ended with status %q and is not a good backup, and %s: the trigger is "+
				"replaced to take a new backup.", state.ID.ValueString(), state.AccountID.ValueString(), state.BackupStatus.ValueString(), why))
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("backup_status"))
	}
	for _, name := range unknown {
		var v attr.Value = types.StringUnknown()
		if name == "triggered_at" || name == "completed_at" {
			v = timetypes.NewRFC3339Unknown()
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(name), v)...)
	}
}
