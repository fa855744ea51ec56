package workflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// directAccountReads: accounts a command reads with a GET each before one
// shared listing serves the rest (A accounts: at most this plus ⌈A/50⌉ requests).
const directAccountReads = 8

// accountReads is what a command (one provider process) learnt of accounts.
type accountReads struct {
	index  *client.AccountIndex
	direct atomic.Int64
	seen   sync.Map // account id -> accountSeen
}

// accountSeen is an account, or the error (client.ErrGone) that proved it gone.
type accountSeen struct {
	account *client.Account
	gone    error
}

// Verdict is what a refresh, or the check before a guard's destroy, learnt.
type Verdict int

// The verdicts.
const (
	Current     Verdict = iota // Check.Record is the record as the service shows it: its backup, when read (Check.Backup), is in it
	Gone                       // the service proved the account gone (Err)
	NotImported                // an import's first read: no such backup, or no such account (Err)
	Unread                     // the read failed (Err): a *client.BackupNotFoundError when a living account's listing lacks the backup; Report: this caller tells it
	Busy                       // a backup is in progress (Check.Account) and the destroy would not wait for it
)

// Check is what a refresh or a guard's check learnt.
type Check struct {
	Verdict Verdict
	Record  Record // the record as the refresh leaves it
	Backup  *client.Backup
	Account *client.Account
	Err     error
	Report  bool // for Unread: false when another resource tells the same shared failure
}

// Refresh reads what became of a record's backup by the cheapest read that can change it: a finished backup never
// changes, so only its account is checked.
func (w *Runner) Refresh(ctx context.Context, accountID string, r Record, waits bool) Check {
	var b *client.Backup
	var page *client.BackupsPage
	var err error
	switch {
	case r.Phase == phaseNone, r.Phase == phaseUnidentified && waits:
		// The next apply looks for it above prior_backup_ids, which must be kept.
		return Check{Record: r}
	case r.Phase == phaseUnidentified:
		b, page, err = w.findTriggered(ctx, accountID, r) // a listing: never a BackupNotFoundError
	case r.Finished():
		c := w.CheckAccount(ctx, accountID)
		c.Record = r
		return c
	default:
		b, err = w.c.FindBackup(ctx, accountID, r.BackupID)
	}
	var missing *client.BackupNotFoundError
	switch {
	case err == nil && b == nil: // not listed yet
		return Check{Record: r}
	case err == nil && r.Phase == phaseUnidentified:
		return Check{Record: r.identified(*b, page), Backup: b}
	case err == nil:
		return Check{Record: r.Observe(*b), Backup: b}
	case r.Phase == phaseImported && r.Status == "" && (errors.Is(err, client.ErrGone) || errors.As(err, &missing)):
		return Check{Verdict: NotImported, Record: r, Err: err}
	}
	// A backup the listing lacks was never deleted while the account lives: the listing lags, or is not the service's.
	return unread(r, err, true)
}

func unread(r Record, err error, report bool) Check {
	if errors.Is(err, client.ErrGone) {
		return Check{Verdict: Gone, Record: r, Err: err}
	}
	return Check{Verdict: Unread, Record: r, Err: err, Report: report}
}

// CheckAccount reads the account of a finished trigger or of a guard.
func (w *Runner) CheckAccount(ctx context.Context, accountID string) Check {
	a, report, err := w.account(ctx, accountID)
	if err != nil {
		return unread(Record{}, err, report)
	}
	return Check{Account: a}
}

// CheckDestroy is what a guard's destroy would meet at its account, read at its plan (after the key's organization check).
func (w *Runner) CheckDestroy(ctx context.Context, accountID string, waitOnConflict bool) Check {
	c := w.CheckAccount(ctx, accountID)
	switch {
	case c.Verdict == Unread:
		c.Report = true // a destroy's own check
	case c.Verdict == Current && client.InProgress(c.Account.BackupStatus) && !waitOnConflict:
		c.Verdict = Busy
	}
	return c
}

// account reads an account once per command; one the shared listing lacks
// is read directly, since only that proves it gone. report: this caller tells a failure.
func (w *Runner) account(ctx context.Context, accountID string) (a *client.Account, report bool, err error) {
	if v, ok := w.accounts.seen.Load(accountID); ok {
		seen, _ := v.(accountSeen)
		return seen.account, true, seen.gone
	}
	if w.accounts.direct.Add(1) > directAccountReads {
		a, report, err = w.accounts.index.Lookup(ctx, accountID)
	}
	if a == nil && err == nil {
		a, err = w.c.Account(ctx, accountID)
		report = true
	}
	if err == nil || errors.Is(err, client.ErrGone) {
		w.accounts.seen.Store(accountID, accountSeen{account: a, gone: err}) // a is nil with an error
	}
	return a, report, err
}
