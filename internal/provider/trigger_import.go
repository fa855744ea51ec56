package provider

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/backup-service/terraform-provider-backup/internal/client"
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
