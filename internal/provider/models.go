package provider

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
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

// objectList is a computed list of objects with the given fields. It is a
// list attribute of an object type, not a list nested attribute: terraform
// test (Terraform up to 1.16 at least; hashicorp/terraform issue 38369)
// refuses mock_data and override_data values for nested list attributes,
// so module authors could not mock these lists. The fields' descriptions
// go into the attribute's.
func objectList(description string, fields map[string]schema.Attribute) schema.ListAttribute {
	names := slices.Sorted(maps.Keys(fields))
	attrTypes := make(map[string]attr.Type, len(fields))
	parts := make([]string, len(names))
	for i, n := range names {
		attrTypes[n] = fields[n].GetType()
		parts[i] = "`" + n + "` (" + strings.TrimSuffix(fields[n].GetDescription(), ".") + ")"
	}
	return schema.ListAttribute{
		Computed:    true,
		ElementType: basetypes.ObjectType{AttrTypes: attrTypes},
		Description: description + " Each has " + strings.Join(parts, ", ") + ".",
	}
}

// accountAttributes describe an account's computed attributes.
func accountAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":            schema.StringAttribute{Computed: true, Description: "Account id: `acc_` followed by 16 letters or digits."},
		"name":          schema.StringAttribute{Computed: true, Description: "Display name of the account."},
		"backup_status": schema.StringAttribute{Computed: true, Description: backupStatusDescription},
		"platform":      schema.StringAttribute{Computed: true, Description: "Lower-case identifier of the platform whose data is backed up."},
		"service_type":  schema.StringAttribute{Computed: true, Description: "Kind of service, for example `backup`."},
	}
}

const backupStatusDescription = "Status of the account's latest backup: `pending` or `running` while a backup is in progress, " +
	"`success` or `failed` when it ended. The service may add other values; only `success` means a good backup."

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
