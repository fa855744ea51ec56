package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/ids"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// addImportNotFound explains why a backup_trigger cannot be imported when
// the service does not know its backup (err matches client.ErrNotFound):
// either the account has no such backup, or the account itself is unknown
// (or outside the key's organization, which the service does not tell
// apart).
func addImportNotFound(diags *diag.Diagnostics, accountID, backupID string, err error) {
	keyHint := "An account, and its backups, are visible only with an API key of the account's organization: check which key " +
		"the provider is given (api_key or " + EnvAPIKey + ")."
	var missing *client.BackupNotFoundError
	if errors.As(err, &missing) {
		diags.AddError(fmt.Sprintf("Cannot import backup %s of account %s: no such backup", backupID, accountID),
			fmt.Sprintf("Account %s has no backup %s, so there is nothing to import. Check the backup id: the "+
				"backup_account_backups data source lists the account's backups with their ids (account_id = %q). %s",
				accountID, backupID, accountID, keyHint))
		return
	}
	diags.AddError(fmt.Sprintf("Cannot import backup %s of account %s: no such account", backupID, accountID),
		describeError(err, fmt.Sprintf("The Backup Service does not know account %s, so backup %s cannot be imported. Check the "+
			"account id: the backup_accounts data source lists the accounts the key can see, and the backup_account_backups "+
			"data source an account's backup ids. %s", accountID, backupID, keyHint)))
}

// ImportState takes "acc_.../bkp_..." or, on Terraform and OpenTofu 1.12+,
// the identity { account_id, id }. The imported trigger adopts the
// configuration's triggers, wait_for_completion and on_conflict in place
// on its first apply, without a new backup.
func (r *triggerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var accountID, backupID string
	if req.ID != "" {
		var ok bool
		accountID, backupID, ok = strings.Cut(req.ID, "/")
		if !ok || !ids.IsAccountID(accountID) || !ids.IsBackupID(backupID) {
			resp.Diagnostics.AddError("Invalid import id",
				fmt.Sprintf("Expected <account id>/<backup id>, such as acc_0123456789abcdef/bkp_0123456789abcdef; got %q.", req.ID))
			return
		}
	} else {
		var id triggerIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...)
		if resp.Diagnostics.HasError() {
			return
		}
		accountID, backupID = id.AccountID.ValueString(), id.ID.ValueString()
		if !ids.IsAccountID(accountID) {
			resp.Diagnostics.AddAttributeError(path.Root("account_id"), "Invalid import identity",
				fmt.Sprintf("identity.account_id must be an account id such as acc_0123456789abcdef; got %q.", accountID))
		}
		if !ids.IsBackupID(backupID) {
			resp.Diagnostics.AddAttributeError(path.Root("id"), "Invalid import identity",
				fmt.Sprintf("identity.id must be a backup id such as bkp_0123456789abcdef; got %q.", backupID))
		}
		if resp.Diagnostics.HasError() {
			return
		}
	}
	setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	// Known after the first refresh reads the backup: status and times.
	m := importedModel(&client.Backup{ID: backupID, AccountID: accountID})
	m.BackupStatus, m.TriggeredAt, m.CompletedAt = types.StringNull(), timetypes.NewRFC3339Null(), timetypes.NewRFC3339Null()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	// Imported until its first update, which takes the configuration's
	// triggers in place.
	saveRecord(ctx, resp.Private, workflow.ImportedAs(backupID), &resp.Diagnostics)
}
