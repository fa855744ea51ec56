package provider

import (
	"context"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const defaultAuditLogMax = 1000

// auditLogsDataSource is backup_audit_logs: the organization's audit trail.
type auditLogsDataSource struct{ dataSource }

type auditLogsModel struct {
	Order      types.String    `tfsdk:"order"`
	MaxResults types.Number    `tfsdk:"max_results"`
	AuditLogs  []auditLogModel `tfsdk:"audit_logs"`
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
	return auditLogModel{ID: types.StringValue(l.ID), CreatedAt: timeValue(l.CreatedAt), Action: types.StringValue(l.Action),
		Actor: types.StringValue(l.Actor), ResourceType: types.StringValue(l.ResourceType), ResourceID: types.StringValue(l.ResourceID)}
}

func (d *auditLogsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reads the organization's audit log records, paging through the API up to `max_results`.",
		Attributes: map[string]schema.Attribute{
			"order":       orderAttribute("the records' creation time"),
			"max_results": maxResultsAttribute("records", defaultAuditLogMax),
			"audit_logs": objectList("The records, in the requested order.", map[string]schema.Attribute{
				"id":            computedString("Record id (`log_...`)."),
				"created_at":    computedTime("When the action happened, RFC 3339 in UTC."),
				"action":        computedString("What happened, for example `backup.triggered`."),
				"actor":         computedString("Who did it, for example `api_key:ci-key`."),
				"resource_type": computedString("Kind of the resource acted on, for example `account`."),
				"resource_id":   computedString("ID of the resource acted on."),
			}),
		},
	}
}

func (d *auditLogsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *auditLogsModel) {
		m.Order = orDefault(m.Order, types.StringValue(string(client.OrderDesc)))
		m.MaxResults = orDefault(m.MaxResults, types.NumberValue(big.NewFloat(defaultAuditLogMax)))
		m.AuditLogs = []auditLogModel{}
		for l, err := range d.data.client.AuditLogs(ctx, client.ListOptions{
			Order: client.Order(m.Order.ValueString()), Max: int(wholeValue(m.MaxResults)),
			Skipped: warnSkipped(&resp.Diagnostics, "backup_audit_logs"),
		}) {
			if err != nil {
				addAPIError(&resp.Diagnostics, "Unable to list audit logs for backup_audit_logs", err)
				return
			}
			m.AuditLogs = append(m.AuditLogs, auditLogToModel(l))
		}
	})
}
