package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestAccAccountDataSource(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 201})
	id := e.srv.AddAccount(mockservice.AccountSpec{Name: "Finance Slack", Platform: "slack", ServiceType: "archive", BackupStatus: "failed"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`data "backup_account" "this" { id = %q }`, id)),
			ConfigStateChecks: []statecheck.StateCheck{
				str("data.backup_account.this", "id", id),
				str("data.backup_account.this", "name", "Finance Slack"),
				str("data.backup_account.this", "backup_status", "failed"),
				str("data.backup_account.this", "platform", "slack"),
				str("data.backup_account.this", "service_type", "archive"),
			},
		}},
	})
}

func TestAccAccountDataSourceErrors(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 202})
	id := e.srv.AccountIDs()[0]
	restricted := e.srv.AddKey(mockservice.KeySpec{Restricted: []string{id}})
	cfg := func(id string) string { return fmt.Sprintf(`data "backup_account" "this" { id = %q }`, id) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(cfg("acc_0000000000000000")),
				ExpectError: errorWithRequestID(`Unable to read backup_account "acc_0000000000000000"`, 404, "Resource not found."),
			},
			{
				Config:      e.config(cfg("acc_0000000000000000")),
				ExpectError: expectError("No account acc_0000000000000000."),
			},
			{
				Config:      e.config(cfg(e.srv.ForeignAccountID())),
				ExpectError: errorWithRequestID("Unable to read backup_account", 403, "You are not authorized to perform this action."),
			},
			{
				Config:      e.configWithKey(restricted, cfg(id)),
				ExpectError: expectError("The key may not access account "+id+".", "lacks permission"),
			},
		},
	})
}

func TestAccAccountDataSourceValidatesID(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 203})
	var steps []resource.TestStep
	for _, bad := range []string{"acc_123", "ACC_0123456789abcdef", "acc_0123456789abcde!", "0123456789abcdef", "acc_0123456789abcdef0"} {
		steps = append(steps, resource.TestStep{
			Config:      e.config(fmt.Sprintf(`data "backup_account" "this" { id = %q }`, bad)),
			ExpectError: expectError("must be an account id: acc_ followed by exactly 16 letters or digits"),
			PlanOnly:    true,
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: e.factories(), Steps: steps})
	e.noRequests()
}
