package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"

	"github.com/backup-service/terraform-provider-backup/internal/ids"
)

func accountPath(accountID string) string {
	return "/api/v1/accounts/" + url.PathEscape(accountID)
}

// Token returns what the service knows of the presented key.
func (c *Client) Token(ctx context.Context) (*Token, error) {
	var t Token
	if err := c.do(ctx, call{method: "GET", path: "/api/v1/token", idempotent: true}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// Account reads one account. An answer for another account than accountID
// is a *DecodeError matching ErrOtherAccount; a 404 is judged by the
// absence rule (judgeAbsence): a *GoneError only when it proves the
// account gone. It is also how an id missing from a listing is confirmed.
func (c *Client) Account(ctx context.Context, accountID string) (*Account, error) {
	var a Account
	cl := call{method: "GET", path: accountPath(accountID), idempotent: true}
	if err := c.do(ctx, cl, &a); err != nil {
		return nil, c.judgeAbsence(ctx, accountID, err)
	}
	if a.ID != accountID {
		return nil, &DecodeError{Method: cl.method, Path: c.base.EscapedPath() + cl.path, StatusCode: 200,
			Err: fmt.Errorf("%w: asked for %s, the answer is for %s", ErrOtherAccount, accountID, a.ID)}
	}
	return &a, nil
}

// ErrOtherAccount: an answer names another account than the one asked for.
// A service (or a proxy) does not choose which account a record stands for.
var ErrOtherAccount = errors.New("the answer names another account than the one asked for")

// Accounts iterates over the organization's accounts.
func (c *Client) Accounts(ctx context.Context, opts ListOptions) iter.Seq2[Account, error] {
	return listing(ctx, c, "/api/v1/accounts", opts, func(a *Account) string { return a.ID }, func(a *Account) bool { return ids.IsAccountID(a.ID) }, nil)
}

// ListAccounts returns the accounts of Accounts as a slice.
func (c *Client) ListAccounts(ctx context.Context, opts ListOptions) ([]Account, error) {
	return Collect(c.Accounts(ctx, opts))
}

// Backups iterates over an account's backups, newest first (the listing has
// no order; opts.Order is ignored). Every backup it yields is accountID's:
// a record naming another account is left out like a malformed one (the
// service does not choose which account a backup stands for), and one
// naming none is given accountID. The pages it reads are checked, at no
// request of their own: a backup newer than one listed before it (by more
// than ListingClockAllowance), or an id listed twice with different
// contents, stops it with a *ListingError matching ErrInconsistentListing
// (see InconsistentListingError); an id listed again as it was is dropped.
func (c *Client) Backups(ctx context.Context, accountID string, opts ListOptions) iter.Seq2[Backup, error] {
	opts.Order = ""
	backups := listing(ctx, c, accountPath(accountID)+"/backups", opts, func(b *Backup) string { return b.ID }, func(b *Backup) bool {
		if b.AccountID == "" {
			b.AccountID = accountID
		}
		return ids.IsBackupID(b.ID) && b.AccountID == accountID
	}, func() seenRecords[Backup] { return newBackupsChecked() })
	// A 404 is judged by the absence rule, for every reader of backups.
	return func(yield func(Backup, error) bool) {
		for b, err := range backups {
			if !yield(b, c.judgeAbsence(ctx, accountID, err)) {
				return
			}
		}
	}
}

// AuditLogs iterates over the organization's audit logs.
func (c *Client) AuditLogs(ctx context.Context, opts ListOptions) iter.Seq2[AuditLog, error] {
	return listing(ctx, c, "/api/v1/audit-logs", opts, func(l *AuditLog) string { return l.ID }, func(l *AuditLog) bool { return ids.IsAuditLogID(l.ID) }, nil)
}

// FindBackup looks for one backup of an account, paging as far as needed.
// It returns a *BackupNotFoundError when the account's listing has no such
// backup, and a *GoneError when the account is proven gone (judgeAbsence).
// A missing entry proves nothing: records are never deleted while their
// account lives, so it means a listing that lags or is not the service's.
func (c *Client) FindBackup(ctx context.Context, accountID, backupID string) (*Backup, error) {
	for b, err := range c.Backups(ctx, accountID, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		if b.ID == backupID {
			return &b, nil
		}
	}
	return nil, &BackupNotFoundError{AccountID: accountID, BackupID: backupID}
}

// BackupNotFoundError says an account's backups listing has no such backup.
type BackupNotFoundError struct {
	AccountID, BackupID string
}

func (e *BackupNotFoundError) Error() string {
	return "account " + e.AccountID + " has no backup " + e.BackupID
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *BackupNotFoundError) Is(target error) bool { return target == ErrNotFound }
