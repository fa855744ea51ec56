package provider

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// privateDestroyBackup holds the backup a destroy began and did not see
// succeed (interrupted, timed out, or not yet identified), so that
// destroying again follows it instead of queueing a second one.
const privateDestroyBackup = "destroy_backup"

// destroyBackup is what a destroy that did not finish recorded. It stands
// for that destroy only until CountsUntil: the destroy that failed plus
// its timeouts.delete. A destroy after that, or after any apply that is
// not a destroy (the guarded data may have changed since), takes a new
// backup: a backup weeks old must not pass for this destroy's.
type destroyBackup struct {
	BackupID    string    `json:"backup_id,omitempty"`
	TriggeredAt time.Time `json:"triggered_at"`
	// Confirmed: the service accepted the trigger (see
	// client.UnidentifiedError.Queued).
	Confirmed bool `json:"confirmed"`
	// CountsUntil is zero in records written before it existed: they
	// count until TriggeredAt plus timeouts.delete, which is no later than
	// their own destroy plus timeouts.delete.
	CountsUntil time.Time `json:"counts_until,omitzero"`
}

// until is when the record stops standing for its destroy.
func (d destroyBackup) until(timeout time.Duration) time.Time {
	if !d.CountsUntil.IsZero() {
		return d.CountsUntil
	}
	return d.TriggeredAt.Add(timeout)
}

// readDestroyBackup reads the record from private state; an absent or
// unreadable one is none (the destroy then takes a new backup).
func readDestroyBackup(ctx context.Context, private interface {
	GetKey(context.Context, string) ([]byte, diag.Diagnostics)
},
) (destroyBackup, bool) {
	raw, _ := private.GetKey(ctx, privateDestroyBackup)
	var d destroyBackup
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil || (d.BackupID == "" && d.TriggeredAt.IsZero()) {
		return destroyBackup{}, false
	}
	return d, true
}

// pendingAttrTypes are the fields of pending_destroy_backup, the record as
// users see it in the state and the plan.
var pendingAttrTypes = map[string]attr.Type{
	"backup_id":    types.StringType,
	"triggered_at": timetypes.RFC3339Type{},
	"counts_until": timetypes.RFC3339Type{},
}

func pendingNull() types.Object { return types.ObjectNull(pendingAttrTypes) }

// pendingObject is the record as the pending_destroy_backup attribute.
func pendingObject(d destroyBackup, timeout time.Duration) types.Object {
	id := types.StringNull()
	if d.BackupID != "" {
		id = types.StringValue(d.BackupID)
	}
	triggered := timetypes.NewRFC3339Null()
	if !d.TriggeredAt.IsZero() {
		triggered = timetypes.NewRFC3339TimeValue(d.TriggeredAt.UTC())
	}
	return types.ObjectValueMust(pendingAttrTypes, map[string]attr.Value{
		"backup_id":    id,
		"triggered_at": triggered,
		"counts_until": timetypes.NewRFC3339TimeValue(d.until(timeout).UTC()),
	})
}

func pendingAttribute() schema.SingleNestedAttribute {
	field := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	timeField := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: desc}
	}
	return schema.SingleNestedAttribute{
		Computed: true,
		Description: "The backup a destroy of this resource began and did not see succeed (it was interrupted, timed out, or " +
			"could not identify its backup); null otherwise. A destroy before `counts_until` follows this backup instead of " +
			"queueing another, and goes ahead only if it succeeds; a later destroy takes a new backup. Any apply that plans " +
			"changes and is not a destroy clears it (the plan shows it going to null), because the data may have changed since; " +
			"a refresh (`-refresh-only`) keeps it.",
		Attributes: map[string]schema.Attribute{
			"backup_id":    field("ID of the backup; null when the destroy could not identify it (it is then looked for by `triggered_at`)."),
			"triggered_at": timeField("When the backup was triggered (RFC 3339)."),
			"counts_until": timeField("Until when the backup stands for a destroy (RFC 3339): the interrupted or timed-out destroy plus its `timeouts.delete`."),
		},
	}
}
