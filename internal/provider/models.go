package provider

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// accountModel is one account in state.
type accountModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	BackupStatus types.String `tfsdk:"backup_status"`
	Platform     types.String `tfsdk:"platform"`
	ServiceType  types.String `tfsdk:"service_type"`
}

func accountToModel(a client.Account) accountModel {
	return accountModel{
		ID:           types.StringValue(a.ID),
		Name:         types.StringValue(a.Name),
		BackupStatus: types.StringValue(a.BackupStatus),
		Platform:     types.StringValue(a.Platform),
		ServiceType:  types.StringValue(a.ServiceType),
	}
}

// backupModel is one backup in state.
type backupModel struct {
	ID          types.String `tfsdk:"id"`
	Status      types.String `tfsdk:"status"`
	CreatedAt   types.String `tfsdk:"created_at"`
	CompletedAt types.String `tfsdk:"completed_at"`
	Error       types.String `tfsdk:"error"`
}

func backupToModel(b client.Backup) backupModel {
	return backupModel{
		ID:          types.StringValue(b.ID),
		Status:      types.StringValue(b.Status),
		CreatedAt:   timeValue(b.CreatedAt),
		CompletedAt: timePtrValue(b.CompletedAt),
		Error:       types.StringPointerValue(b.Error),
	}
}

// auditLogModel is one audit log record in state.
type auditLogModel struct {
	ID           types.String `tfsdk:"id"`
	CreatedAt    types.String `tfsdk:"created_at"`
	Action       types.String `tfsdk:"action"`
	Actor        types.String `tfsdk:"actor"`
	ResourceType types.String `tfsdk:"resource_type"`
	ResourceID   types.String `tfsdk:"resource_id"`
}

func auditLogToModel(l client.AuditLog) auditLogModel {
	return auditLogModel{
		ID:           types.StringValue(l.ID),
		CreatedAt:    timeValue(l.CreatedAt),
		Action:       types.StringValue(l.Action),
		Actor:        types.StringValue(l.Actor),
		ResourceType: types.StringValue(l.ResourceType),
		ResourceID:   types.StringValue(l.ResourceID),
	}
}

// timeValue renders a timestamp as RFC 3339 in UTC, null when zero.
func timeValue(t time.Time) types.String {
	if t.IsZero() {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339))
}

func timePtrValue(t *time.Time) types.String {
	if t == nil {
		return types.StringNull()
	}
	return timeValue(*t)
}
