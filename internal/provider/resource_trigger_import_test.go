package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// missingBackup is a well-formed backup id no mock account has.
const missingBackup = "bkp_0000000000000000"

// unknownAccount is a well-formed account id the mock does not know.
const unknownAccount = "acc_0000000000000000"

// importMissing is the error of importing a backup the account lacks.
func importMissing(accountID, backupID string) []string {
	return []string{
		fmt.Sprintf("Cannot import backup %s of account %s: no such backup", backupID, accountID),
		fmt.Sprintf("Account %s has no backup %s", accountID, backupID),
		"the backup_account_backups data source lists the account's backups with their ids",
		"visible only with an API key of the account's organization",
	}
}

// importNoAccount is the error of importing a backup of an unknown account.
func importNoAccount(accountID, backupID string) []string {
	return []string{
		fmt.Sprintf("Cannot import backup %s of account %s: no such account", backupID, accountID),
		"HTTP 404", "No account " + accountID,
		fmt.Sprintf("The Backup Service does not know account %s, so backup %s cannot be imported", accountID, backupID),
		"backup_accounts data source", "backup_account_backups",
		"visible only with an API key of the account's organization",
	}
}

// TestAccTriggerImportUnknownBackup: importing a backup the service does
// not know fails naming the account and the backup, and says where the
// ids are listed, rather than Terraform's generic "non-existent remote
// object"; for an account it does not know too.
func TestAccTriggerImportUnknownBackup(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2851})
	id := e.srv.AccountIDs()[0]
	e.srv.AddBackups(id, 3, 0, "") // a listing to look through, without the one asked for
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStateId: id + "/" + missingBackup,
				ExpectError: expectError(importMissing(id, missingBackup)...),
			},
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStateId: unknownAccount + "/" + missingBackup,
				ExpectError: expectError(importNoAccount(unknownAccount, missingBackup)...),
			},
			{
				// An import block (plan-time import) reads the same way.
				Config: e.config(fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n\n", addr, id+"/"+missingBackup) +
					triggerConfig(id, "")),
				ExpectError: expectError(importMissing(id, missingBackup)...),
			},
		},
	})
	if n := e.srv.BackupsQueued(id); n != 0 {
		t.Errorf("%d backups queued by a failed import, want 0", n)
	}
}

// TestAccTriggerImportUnknownBackupByIdentity: the same through an import
// block with an identity (Terraform 1.12+).
func TestAccTriggerImportUnknownBackupByIdentity(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2852})
	id := e.srv.AccountIDs()[0]
	byIdentity := func(accountID string) string {
		return e.config(fmt.Sprintf("import {\n  to = %s\n  identity = {\n    account_id = %q\n    id         = %q\n  }\n}\n\n",
			addr, accountID, missingBackup) + triggerConfig(accountID, ""))
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   needsIdentity,
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: byIdentity(id), ExpectError: expectError(importMissing(id, missingBackup)...)},
			{Config: byIdentity(unknownAccount), ExpectError: expectError(importNoAccount(unknownAccount, missingBackup)...)},
		},
	})
}

// TestAccTriggerImportedThenAccountDeleted: only the import's own read
// fails on a missing backup. A refresh of a trigger already imported (the
// mark stays until its first apply) still removes it with a warning, as
// for any trigger whose account went away.
func TestAccTriggerImportedThenAccountDeleted(t *testing.T) {
	// Still pending when refreshed: the refresh reads the backup itself.
	e := newTestEnv(t, mockservice.Options{Seed: 2853, PendingFor: time.Hour, RunningFor: time.Hour})
	id := e.srv.AccountIDs()[0]
	b := e.outsideBackup(t, id)
	cfg := e.config(triggerConfig(id, ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config: cfg, ResourceName: addr, ImportState: true, ImportStatePersist: true,
				ImportStateId: id + "/" + b.ID,
			},
			{
				PreConfig:          func() { e.srv.DeleteAccount(id) },
				RefreshState:       true,
				ExpectNonEmptyPlan: true, // the configuration's trigger is to be created again
				Check: func(s *terraform.State) error {
					if _, ok := s.RootModule().Resources[addr]; ok {
						return fmt.Errorf("%s is still in the state after its account was deleted", addr)
					}
					return nil
				},
			},
		},
	})
}
