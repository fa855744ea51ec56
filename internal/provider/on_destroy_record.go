package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// pendingAttrTypes are the fields of pending_destroy_backup, the record as
// users see it in the state and the plan.
var pendingAttrTypes = map[string]attr.Type{
	"backup_id":    types.StringType,
	"triggered_at": timetypes.RFC3339Type{},
	"counts_until": timetypes.RFC3339Type{},
}

func pendingNull() types.Object { return types.ObjectNull(pendingAttrTypes) }

// pendingObject is the record of a stopped destroy as the
// pending_destroy_backup attribute.
func pendingObject(d workflow.Record) types.Object {
	return types.ObjectValueMust(pendingAttrTypes, map[string]attr.Value{
		"backup_id":    stringOrNull(d.BackupID),
		"triggered_at": timeValue(d.TriggeredAt),
		"counts_until": timetypes.NewRFC3339TimeValue(d.CountsUntil.UTC()),
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
			"counts_until": timeField("Until when the backup stands for a destroy (RFC 3339): the interrupted or timed-out destroy plus its `resume_within`."),
		},
	}
}
