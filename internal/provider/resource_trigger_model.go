package provider

// The trigger's model, and the mapping between it and the workflow's record.

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

type triggerModel struct {
	ID                types.String      `tfsdk:"id"`
	AccountID         types.String      `tfsdk:"account_id"`
	Triggers          types.Map         `tfsdk:"triggers"`
	WaitForCompletion types.Bool        `tfsdk:"wait_for_completion"`
	OnConflict        types.String      `tfsdk:"on_conflict"`
	BackupStatus      types.String      `tfsdk:"backup_status"`
	TriggeredAt       timetypes.RFC3339 `tfsdk:"triggered_at"`
	CompletedAt       timetypes.RFC3339 `tfsdk:"completed_at"`
	ReuseWithin       duration          `tfsdk:"reuse_within"`
	Reused            types.Bool        `tfsdk:"reused"`
	PriorBackupIDs    types.String      `tfsdk:"prior_backup_ids"`
	TriggerAccepted   types.Bool        `tfsdk:"trigger_accepted"`
	Timeouts          timeouts.Value    `tfsdk:"timeouts"`
}

// triggerIdentity identifies a trigger by its backup (Terraform and OpenTofu 1.12+ import by it).
type triggerIdentity struct {
	AccountID types.String `tfsdk:"account_id"`
	ID        types.String `tfsdk:"id"`
}

// setIdentity records the identity where Terraform supports them (identity is nil before 1.12).
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, accountID, backupID string, diags *diag.Diagnostics) {
	if identity == nil || accountID == "" {
		return
	}
	diags.Append(identity.Set(ctx, triggerIdentity{AccountID: types.StringValue(accountID), ID: stringOrNull(backupID)})...)
}

// createTimeout is timeouts.create, or the default.
func (m *triggerModel) createTimeout(ctx context.Context, diags *diag.Diagnostics) time.Duration {
	d, ds := m.Timeouts.Create(ctx, defaultTimeout)
	diags.Append(ds...)
	return d
}

// triggersKey is a canonical text of triggers: null values dropped, keys sorted, no map the same as an empty one.
func triggersKey(m types.Map) string {
	vals := map[string]string{}
	for k, v := range m.Elements() {
		s, ok := v.(types.String)
		if !ok || s.IsNull() || s.IsUnknown() {
			continue
		}
		vals[k] = s.ValueString()
	}
	if len(vals) == 0 {
		return ""
	}
	key, _ := json.Marshal(vals) // keys sorted
	return string(key)
}

// importedModel is a trigger as an import (or a list query) records it: the backup, and the default settings until the
// first apply adopts the configuration's.
func importedModel(b *client.Backup) triggerModel {
	m := triggerModel{
		AccountID:         types.StringValue(b.AccountID),
		Triggers:          types.MapNull(types.StringType),
		WaitForCompletion: types.BoolValue(false),
		OnConflict:        types.StringValue(onConflictWait),
		ReuseWithin:       duration{timetypes.NewGoDurationNull()},
		Timeouts:          timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{"create": types.StringType})},
	}
	m.setRecord(workflow.Record{}.Observe(*b))
	return m
}

// triggerRecord is the record of a trigger whose state holds m.
func triggerRecord(ctx context.Context, m *triggerModel, private privateGetter, diags *diag.Diagnostics) (workflow.Record, bool) {
	stored, ds := private.GetKey(ctx, workflow.Key)
	diags.Append(ds...)
	shown := workflow.Record{
		BackupID: m.ID.ValueString(), Status: m.BackupStatus.ValueString(),
		TriggeredAt: timeOf(m.TriggeredAt, diags), CompletedAt: timeOf(m.CompletedAt, diags), Reused: m.Reused.ValueBool(),
		Prior: markOf(m.PriorBackupIDs), Confirmed: m.TriggerAccepted.ValueBool(),
	}
	if diags.HasError() {
		return workflow.Record{}, false
	}
	r, err := workflow.FromTriggerState(shown, stored)
	if err != nil {
		diags.AddError("Unreadable backup_trigger state",
			"The trigger of account "+m.AccountID.ValueString()+" has a record this release cannot read: "+err.Error()+".")
		return workflow.Record{}, false
	}
	return r, true
}

// setRecord shows the record in the trigger's attributes.
func (m *triggerModel) setRecord(r workflow.Record) {
	m.ID, m.BackupStatus = stringOrNull(r.BackupID), stringOrNull(r.Status)
	m.TriggeredAt, m.CompletedAt = timeValue(r.TriggeredAt), timeValue(r.CompletedAt)
	m.Reused = types.BoolValue(r.Reused)
	m.TriggerAccepted = types.BoolNull()
	if r.Unidentified() {
		m.TriggerAccepted = types.BoolValue(r.Confirmed)
	}
	m.PriorBackupIDs = types.StringNull()
	if r.Prior != nil {
		m.PriorBackupIDs = types.StringValue(strings.Join(r.Prior.IDs, ","))
	}
}

// markOf is prior_backup_ids as a mark; nil when null (or unknown).
func markOf(v types.String) *workflow.Mark {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	m := &workflow.Mark{IDs: []string{}}
	if v.ValueString() != "" {
		m.IDs = strings.Split(v.ValueString(), ",")
	}
	return m
}
