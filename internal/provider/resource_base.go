package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// The resources keep their workflow.Record in private state, under workflow.Key.

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

// decode reads a configuration, plan or state into a model; false when it could not.
func decode[T any](ctx context.Context, from interface {
	Get(context.Context, any) diag.Diagnostics
}, diags *diag.Diagnostics,
) (T, bool) {
	var m T
	diags.Append(from.Get(ctx, &m)...)
	return m, !diags.HasError()
}

// privateGetter is the part of private state a record is read from.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is the part of private state a record is saved to.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// saveRecord stores the record under its key.
func saveRecord(ctx context.Context, private privateSetter, r workflow.Record, diags *diag.Diagnostics) {
	diags.Append(private.SetKey(ctx, workflow.Key, workflow.Encode(r))...)
}

// triggerRecord is the record of a trigger whose state holds m.
func triggerRecord(ctx context.Context, m *triggerModel, private privateGetter, diags *diag.Diagnostics) (workflow.Record, bool) {
	stored, ds := private.GetKey(ctx, workflow.Key)
	diags.Append(ds...)
	triggered, ds := timeOf(m.TriggeredAt)
	diags.Append(ds...)
	completed, ds := timeOf(m.CompletedAt)
	diags.Append(ds...)
	if diags.HasError() {
		return workflow.Record{}, false
	}
	r, err := workflow.FromTriggerState(workflow.Record{
		BackupID: m.ID.ValueString(), Status: m.BackupStatus.ValueString(), TriggeredAt: triggered, CompletedAt: completed,
		Reused: m.Reused.ValueBool(),
	}, stored)
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
}

// timeOf is a state's time; zero for null.
func timeOf(v timetypes.RFC3339) (time.Time, diag.Diagnostics) {
	if v.IsNull() || v.IsUnknown() {
		return time.Time{}, nil
	}
	return v.ValueRFC3339Time()
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// destroyRecord is the record a guard's stopped destroy left; an unreadable one is none (a new backup).
func destroyRecord(ctx context.Context, private privateGetter) workflow.Record {
	stored, _ := private.GetKey(ctx, workflow.Key)
	r, err := workflow.Decode(stored)
	if err != nil {
		return workflow.Record{}
	}
	return r
}
