package client

import (
	"errors"
	"fmt"

	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

// errMissing: a field the API contract requires is absent or empty, so
// that `{}` from a proxy does not pass as "no backups".
var errMissing = errors.New("a field the API contract requires is missing")

// errMalformedID: an id without the documented format.
var errMalformedID = errors.New("an id does not have the documented format")

// checker is implemented by decoded answers that carry required fields.
type checker interface{ check() error }

func missing(what string) error { return fmt.Errorf("%w: %s", errMissing, what) }

func (t *Token) check() error {
	switch {
	case t.Name == "":
		return missing("token name")
	case t.ExpiresAt.IsZero():
		return missing("token expires_at")
	case t.Organization.ID != "" && !ids.IsOrganizationID(t.Organization.ID): // absent: see CheckOrganization
		return fmt.Errorf("%w: organization id %q", errMalformedID, t.Organization.ID)
	}
	return nil
}

func (a *Account) check() error {
	switch {
	case a.ID == "":
		return missing("account id")
	case !ids.IsAccountID(a.ID):
		return fmt.Errorf("%w: account id %q", errMalformedID, a.ID)
	}
	return nil
}

func (b *Backup) check() error {
	switch {
	case b.ID == "":
		return missing("backup id")
	case !ids.IsBackupID(b.ID):
		return fmt.Errorf("%w: backup id %q", errMalformedID, b.ID)
	case b.AccountID != "" && !ids.IsAccountID(b.AccountID):
		return fmt.Errorf("%w: account id %q of backup %s", errMalformedID, b.AccountID, b.ID)
	case b.Status == "":
		return missing("backup status of " + b.ID)
	case b.CreatedAt.IsZero():
		return missing("backup created_at of " + b.ID)
	}
	return nil
}

func (l *AuditLog) check() error {
	if l.ID == "" {
		return missing("audit log id")
	}
	return nil
}
