package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/fleet"
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

// Account reads one account; a 404 is judged by the absence rule.
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
var ErrOtherAccount = errors.New("the answer names another account than the one asked for")

// Accounts iterates over the organization's accounts.
func (c *Client) Accounts(ctx context.Context, opts ListOptions) iter.Seq2[Account, error] {
	return listing(ctx, c, "/api/v1/accounts", opts, func(a *Account) string { return a.ID }, func(a *Account) bool { return ids.IsAccountID(a.ID) }, nil)
}

// ListAccounts returns the accounts of Accounts as a slice.
func (c *Client) ListAccounts(ctx context.Context, opts ListOptions) ([]Account, error) {
	return Collect(c.Accounts(ctx, opts))
}

// Backups iterates over an account's backups, newest first (opts.Order is
// ignored), leaving out records of other accounts as malformed.
func (c *Client) Backups(ctx context.Context, accountID string, opts ListOptions) iter.Seq2[Backup, error] {
	opts.Order = ""
	backups := listing(ctx, c, accountPath(accountID)+"/backups", opts, func(b *Backup) string { return b.ID }, func(b *Backup) bool {
		if b.AccountID == "" {
			b.AccountID = accountID
		}
		return ids.IsBackupID(b.ID) && b.AccountID == accountID
	}, func() seenRecords[Backup] { return newBackupsChecked() })
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

// FindBackup looks for one backup of an account, paging as far as needed:
// a *BackupNotFoundError when it is not listed (which proves nothing).
func (c *Client) FindBackup(ctx context.Context, accountID, backupID string) (*Backup, error) {
	b, err := c.firstBackup(ctx, accountID, func(b *Backup) bool { return b.ID == backupID })
	if b == nil && err == nil {
		return nil, &BackupNotFoundError{AccountID: accountID, BackupID: backupID}
	}
	return b, err
}

// firstBackup is the newest of an account's backups that match, or nil.
func (c *Client) firstBackup(ctx context.Context, accountID string, match func(*Backup) bool) (*Backup, error) {
	for b, err := range c.Backups(ctx, accountID, ListOptions{}) {
		if err != nil {
			return nil, err
		}
		if match(&b) {
			return &b, nil
		}
	}
	return nil, nil
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

// LatestSuccessesInFlight bounds the accounts LatestSuccesses reads at
// once: enough that latency does not slow the limiter's pace.
const LatestSuccessesInFlight = 16

// SuccessOutcome is one account's outcome of LatestSuccesses.
type SuccessOutcome struct {
	Latest *Backup // nil: no successful backup (or Err)
	Err    error
}

// LatestSuccess returns the account's newest successful backup, or nil.
func (c *Client) LatestSuccess(ctx context.Context, accountID string) (*Backup, error) {
	return c.firstBackup(ctx, accountID, func(b *Backup) bool { return b.Status == StatusSuccess })
}

// SuccessTime is when a successful backup ended: completed_at, or
// created_at when the service left completed_at out.
func SuccessTime(b *Backup) time.Time {
	if b.CompletedAt != nil {
		return *b.CompletedAt
	}
	return b.CreatedAt
}

// LatestSuccesses runs LatestSuccess for every account, several at once;
// done, when set, is called (never at once) as each read ends.
func (c *Client) LatestSuccesses(ctx context.Context, accountIDs []string, done func(finished int)) []SuccessOutcome {
	outcomes := make([]SuccessOutcome, len(accountIDs))
	read := make([]bool, len(accountIDs))
	fleet.Each(ctx, len(accountIDs), LatestSuccessesInFlight, func(ctx context.Context, i int) {
		b, err := c.LatestSuccess(ctx, accountIDs[i])
		outcomes[i], read[i] = SuccessOutcome{Latest: b, Err: err}, true
	}, func(_, finished int) {
		if done != nil {
			done(finished)
		}
	})
	for i := range outcomes {
		if !read[i] {
			outcomes[i].Err = context.Cause(ctx)
		}
	}
	return outcomes
}
