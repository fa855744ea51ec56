package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// The service's records as the data sources show them.

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
	ID          types.String      `tfsdk:"id"`
	Status      types.String      `tfsdk:"status"`
	CreatedAt   timetypes.RFC3339 `tfsdk:"created_at"`
	CompletedAt timetypes.RFC3339 `tfsdk:"completed_at"`
	Error       types.String      `tfsdk:"error"`
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
	ID           types.String      `tfsdk:"id"`
	CreatedAt    timetypes.RFC3339 `tfsdk:"created_at"`
	Action       types.String      `tfsdk:"action"`
	Actor        types.String      `tfsdk:"actor"`
	ResourceType types.String      `tfsdk:"resource_type"`
	ResourceID   types.String      `tfsdk:"resource_id"`
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
