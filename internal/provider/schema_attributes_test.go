package provider

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Every data source's model must fit its schema: setting a filled model
// into state succeeds, and reading it back gives the same model.
func TestDataSourceSchemasMatchModels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	errText := "boom"
	models := map[string]any{
		"backup_token":   tokenToModel(client.Token{Name: "n", ExpiresAt: now, Organization: client.Organization{ID: "org_1", Name: "o"}}),
		"backup_account": accountToModel(client.Account{ID: "acc_1", Name: "n", BackupStatus: "success", Platform: "p", ServiceType: "backup"}),
		"backup_accounts": accountsModel{Order: types.StringValue("asc"), Platform: types.StringNull(), BackupStatus: types.StringNull(),
			ServiceType: types.StringValue("backup"), Accounts: []accountModel{accountToModel(client.Account{ID: "acc_1"})}, IDs: []types.String{types.StringValue("acc_1")}},
		"backup_audit_logs": auditLogsModel{Order: types.StringValue("desc"), MaxResults: types.NumberValue(big.NewFloat(5)),
			AuditLogs: []auditLogModel{auditLogToModel(client.AuditLog{ID: "log_1", CreatedAt: now})}},
		"backup_account_backups": accountBackupsModel{AccountID: types.StringValue("acc_1"), MaxResults: types.NumberValue(big.NewFloat(5)),
			Statuses: []types.String{types.StringValue("success")}, Truncated: types.BoolValue(true),
			Backups: []backupModel{backupToModel(client.Backup{ID: "bkp_1", CreatedAt: now, CompletedAt: &now, Error: &errText})}},
		"backup_stale_accounts": staleAccountsModel{MaxAge: duration{timetypes.NewGoDurationValueFromStringMust("24h")}, Platform: types.StringNull(), BackupStatus: types.StringNull(),
			ServiceType: types.StringNull(), Checked: types.Int64Value(2), IDs: []types.String{types.StringValue("acc_1")},
			Accounts: []staleAccountModel{{ID: types.StringValue("acc_1"), Name: types.StringValue("n"), Platform: types.StringValue("p"),
				BackupStatus: types.StringValue("failed"), LastSuccessAt: timetypes.NewRFC3339Null(), Reason: types.StringValue(staleNever)}}},
	}
	p := New("test")()
	for _, newDS := range p.DataSources(ctx) {
		ds := newDS()
		var meta datasource.MetadataResponse
		ds.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "backup"}, &meta)
		model, ok := models[meta.TypeName]
		if !ok {
			t.Errorf("no model test for %s", meta.TypeName)
			continue
		}
		delete(models, meta.TypeName)
		var sch datasource.SchemaResponse
		ds.Schema(ctx, datasource.SchemaRequest{}, &sch)
		if sch.Diagnostics.HasError() {
			t.Fatalf("%s schema: %v", meta.TypeName, sch.Diagnostics)
		}
		if diags := sch.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s schema: %v", meta.TypeName, diags)
		}
		for name, attr := range sch.Schema.Attributes {
			if attr.GetDescription() == "" {
				t.Errorf("%s.%s has no description", meta.TypeName, name)
			}
		}
		state := tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(sch.Schema.Type().TerraformType(ctx), nil)}
		if diags := state.Set(ctx, model); diags.HasError() {
			t.Errorf("%s: model does not fit schema: %v", meta.TypeName, diags)
		}
	}
	for name := range models {
		t.Errorf("data source %s is not registered", name)
	}
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	if !ps.Schema.Attributes["api_key"].IsSensitive() {
		t.Error("api_key is not sensitive")
	}
}

func TestMappingToState(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 21, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	b := backupToModel(client.Backup{ID: "bkp_1", Status: "running", CreatedAt: created})
	if b.CreatedAt.ValueString() != "2026-11-21T09:00:00Z" || !b.CompletedAt.IsNull() || !b.Error.IsNull() || b.Status.ValueString() != "running" {
		t.Errorf("running backup: %+v", b)
	}
	done := created.Add(time.Minute)
	e := "disk full"
	b = backupToModel(client.Backup{ID: "bkp_1", Status: "failed", CreatedAt: created, CompletedAt: &done, Error: &e})
	if b.CompletedAt.ValueString() != "2026-11-21T09:01:00Z" || b.Error.ValueString() != "disk full" {
		t.Errorf("failed backup: %+v", b)
	}
	a := accountToModel(client.Account{ID: "acc_1", Name: "n", BackupStatus: "archived", Platform: "slack", ServiceType: "backup"})
	if a.BackupStatus.ValueString() != "archived" || a.Platform.ValueString() != "slack" || a.Name.ValueString() != "n" || a.ServiceType.ValueString() != "backup" {
		t.Errorf("account: %+v", a)
	}
	tok := tokenToModel(client.Token{Name: "ci", ExpiresAt: created, Organization: client.Organization{ID: "org_1", Name: "Org"}})
	if tok.ExpiresAt.ValueString() != "2026-11-21T09:00:00Z" || tok.OrganizationID.ValueString() != "org_1" || tok.OrganizationName.ValueString() != "Org" {
		t.Errorf("token: %+v", tok)
	}
	if !tokenToModel(client.Token{}).ExpiresAt.IsNull() {
		t.Error("a missing expiry is not null")
	}
	l := auditLogToModel(client.AuditLog{ID: "log_1", CreatedAt: created, Action: "a", Actor: "b", ResourceType: "c", ResourceID: "d"})
	if l.CreatedAt.ValueString() != "2026-11-21T09:00:00Z" || l.Action.ValueString() != "a" || l.Actor.ValueString() != "b" || l.ResourceType.ValueString() != "c" || l.ResourceID.ValueString() != "d" {
		t.Errorf("audit log: %+v", l)
	}
}
