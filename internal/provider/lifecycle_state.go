package provider

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/lifecycle"
)

// The resources keep their lifecycle.Record in private state, under
// lifecycle.Key; this file moves records between that, the typed models
// and the state. The decisions are lifecycle's.

// backupResource is what the two resources that take backups share: the
// provider's data, and the one setting of their timeouts block that bounds
// their waits (create for a trigger, delete for a guard).
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

// decode reads a plan or a state into a model; false when it could not
// (the diagnostics say why).
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
func saveRecord(ctx context.Context, private privateSetter, r lifecycle.Record, diags *diag.Diagnostics) {
	diags.Append(private.SetKey(ctx, lifecycle.Key, lifecycle.Encode(r))...)
}

// triggerRecord is the record of a trigger whose state holds m.
func triggerRecord(ctx context.Context, m *triggerModel, private privateGetter, diags *diag.Diagnostics) (lifecycle.Record, bool) {
	stored, ds := private.GetKey(ctx, lifecycle.Key)
	diags.Append(ds...)
	r, err := lifecycle.FromTriggerState(lifecycle.TriggerState{
		BackupID: m.ID.ValueString(), Status: m.BackupStatus.ValueString(),
		TriggeredAt: m.TriggeredAt.ValueString(), CompletedAt: m.CompletedAt.ValueString(),
	}, stored)
	if err != nil {
		diags.AddError("Unreadable backup_trigger state",
			"The trigger of account "+m.AccountID.ValueString()+" has a record this release cannot read: "+err.Error()+".")
		return lifecycle.Record{}, false
	}
	return r, true
}

// setRecord shows the record in the trigger's attributes.
func (m *triggerModel) setRecord(r lifecycle.Record) {
	s := r.State()
	m.ID, m.BackupStatus = stringOrNull(s.BackupID), stringOrNull(s.Status)
	m.TriggeredAt, m.CompletedAt = timeOrNull(r.TriggeredAt), timeOrNull(r.CompletedAt)
}

func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func timeOrNull(t time.Time) timetypes.RFC3339 {
	if t.IsZero() {
		return timetypes.NewRFC3339Null()
	}
	return timetypes.NewRFC3339TimeValue(t.UTC())
}

// destroyRecord is the record a backup_on_destroy's stopped destroy left;
// an unreadable one is none (the destroy then takes a new backup, which is
// never wrong).
func destroyRecord(ctx context.Context, private privateGetter) lifecycle.Record {
	stored, _ := private.GetKey(ctx, lifecycle.Key)
	r, err := lifecycle.Decode(stored)
	if err != nil {
		return lifecycle.Record{}
	}
	return r
}
