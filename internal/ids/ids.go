// Package ids knows the identifier formats of the Backup Service: a prefix
// followed by exactly 16 ASCII letters or digits. The provider's validators,
// the client and the mock service all use it so that the three agree.
package ids

import "regexp"

// Prefixes of the service's identifiers.
const (
	AccountPrefix      = "acc_"
	BackupPrefix       = "bkp_"
	AuditLogPrefix     = "log_"
	OrganizationPrefix = "org_"
)

// SuffixLength is the number of letters or digits after the prefix.
const SuffixLength = 16

var (
	accountRE = regexp.MustCompile(`^acc_[A-Za-z0-9]{16}$`)
	backupRE  = regexp.MustCompile(`^bkp_[A-Za-z0-9]{16}$`)
	logRE     = regexp.MustCompile(`^log_[A-Za-z0-9]{16}$`)
	orgRE     = regexp.MustCompile(`^org_[A-Za-z0-9]{16}$`)
)

// IsAccountID reports whether s has the account id format.
func IsAccountID(s string) bool { return accountRE.MatchString(s) }

// IsBackupID reports whether s has the backup id format.
func IsBackupID(s string) bool { return backupRE.MatchString(s) }

// IsAuditLogID reports whether s has the audit log id format.
func IsAuditLogID(s string) bool { return logRE.MatchString(s) }

// IsOrganizationID reports whether s has the organization id format.
func IsOrganizationID(s string) bool { return orgRE.MatchString(s) }

// OrganizationPattern is the organization id format.
func OrganizationPattern() *regexp.Regexp { return orgRE }

// AccountPattern is the account id format, for validators that need a regexp.
func AccountPattern() *regexp.Regexp { return accountRE }
