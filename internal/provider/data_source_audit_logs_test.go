package provider

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestAccAuditLogsDataSource(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 401, AuditLogs: 120})
	// A trigger writes the newest record.
	id := e.srv.AccountIDs()[0]
	e.outsideBackup(t, id)
	logs, err := client.Collect(e.rawClient(t).AuditLogs(context.Background(), client.ListOptions{Order: client.OrderAsc}))
	if err != nil || len(logs) != 121 {
		t.Fatalf("%d %v", len(logs), err)
	}
	newest, oldest := logs[120], logs[0]
	at := func(i int, attr string) tfjsonpath.Path {
		return tfjsonpath.New("audit_logs").AtSliceIndex(i).AtMapKey(attr)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(`
data "backup_audit_logs" "all" {}
data "backup_audit_logs" "first_60" {
  order       = "asc"
  max_results = 60
}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", tfjsonpath.New("audit_logs"), knownvalue.ListSizeExact(121)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", tfjsonpath.New("max_results"), knownvalue.Int64Exact(1000)),
				str("data.backup_audit_logs.all", "order", "desc"),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "id"), knownvalue.StringExact(newest.ID)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "created_at"), knownvalue.StringExact(newest.CreatedAt.UTC().Format(time.RFC3339))),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "action"), knownvalue.StringExact("backup.triggered")),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "actor"), knownvalue.StringExact("api_key:"+mockservice.DemoKeyName)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "resource_type"), knownvalue.StringExact("account")),
				statecheck.ExpectKnownValue("data.backup_audit_logs.all", at(0, "resource_id"), knownvalue.StringExact(id)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.first_60", tfjsonpath.New("audit_logs"), knownvalue.ListSizeExact(60)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.first_60", at(0, "id"), knownvalue.StringExact(oldest.ID)),
				statecheck.ExpectKnownValue("data.backup_audit_logs.first_60", at(59, "id"), knownvalue.StringExact(logs[59].ID)),
			},
		}},
	})
}

func TestAccAuditLogsDataSourceValidation(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 402})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "backup_audit_logs" "x" { max_results = 0 }`),
				ExpectError: expectError("max_results must be a whole number from 1 to 2147483647; got 0."),
				PlanOnly:    true,
			},
			{
				Config:      e.config(`data "backup_audit_logs" "x" { order = "newest" }`),
				ExpectError: expectError("value must be one of"),
				PlanOnly:    true,
			},
		},
	})
	e.noRequests()
}

func TestAccAuditLogsDataSourceRetriesServerError(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 403})
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteAuditLogs, Times: 1})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			// One 500 is retried away.
			Config: e.config(`data "backup_audit_logs" "x" {}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_audit_logs.x", tfjsonpath.New("audit_logs"), knownvalue.ListSizeExact(0)),
			},
		}},
	})
}
