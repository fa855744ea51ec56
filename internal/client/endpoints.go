package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/fleet"
)

func accountPath(accountID string) string { return "/api/v1/accounts/" + url.PathEscape(accountID) }

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
		return nil, &decodeError{Method: cl.method, Path: c.base.EscapedPath() + cl.path, StatusCode: 200,
			Err: fmt.Errorf("%w: asked for %s, the answer is for %s", errOtherAccount, accountID, a.ID)}
	}
	return &a, nil
}

var errOtherAccount = errors.New("the answer names another account than the one asked for")

// Accounts iterates over the organization's accounts.
func (c *Client) Accounts(ctx context.Context, opts ListOptions) iter.Seq2[Account, error] {
	return listing(ctx, c, "/api/v1/accounts", opts, func(a *Account) string { return a.ID }, func(a *Account) bool { return AccountIDFormat.MatchString(a.ID) }, nil)
}

// Backups iterates over an account's backups, newest first (opts.Order is
// ignored), leaving out records of other accounts as malformed.
func (c *Client) Backups(ctx context.Context, accountID string, opts ListOptions) iter.Seq2[Backup, error] {
	opts.Order = ""
	backups := listing(ctx, c, accountPath(accountID)+"/backups", opts, func(b *Backup) string { return b.ID }, func(b *Backup) bool {
		if b.AccountID == "" {
			b.AccountID = accountID
		}
		return BackupIDFormat.MatchString(b.ID) && b.AccountID == accountID
	}, func() seenRecords[Backup] { return newBackupsChecked() })
	return func(yield func(Backup, error) bool) {
		for b, err := range backups {
			if !yield(b, c.judgeAbsence(ctx, accountID, err)) {
				return
			}
		}
	}
}

// BackupsPage is the first page of an account's backups listing, checked whole as any such page is.
type BackupsPage struct {
	Backups []Backup
	More    bool       // the listing goes on past this page
	At      AnswerTime // when its answer came
	next    string     // its next page's cursor, when More
}

// FirstBackupsPage reads the first page of an account's backups listing: one request.
func (c *Client) FirstBackupsPage(ctx context.Context, accountID string) (BackupsPage, error) {
	var p BackupsPage
	opts := ListOptions{Pages: 1, Ended: func(complete bool) { p.More = !complete }, answered: func(at AnswerTime) { p.At = at },
		next: func(cursor string) { p.next = cursor }}
	var err error
	if p.Backups, err = Collect(c.Backups(ctx, accountID, opts)); err != nil {
		return BackupsPage{}, err
	}
	return p, nil
}

// AuditLogs iterates over the organization's audit logs.
func (c *Client) AuditLogs(ctx context.Context, opts ListOptions) iter.Seq2[AuditLog, error] {
	return listing(ctx, c, "/api/v1/audit-logs", opts, func(l *AuditLog) string { return l.ID }, func(l *AuditLog) bool { return auditLogIDFormat.MatchString(l.ID) }, nil)
}

// FindBackup looks for one backup of an account, paging as far as needed:
// a *BackupNotFoundError when it is not listed (which proves nothing).
func (c *Client) FindBackup(ctx context.Context, accountID, backupID string) (*Backup, error) {
	return findBackup(c.Backups(ctx, accountID, ListOptions{}), accountID, backupID)
}

// FindBackupAfter looks for one backup of an account past first, a first
// page read before, in one unbroken pass from that page's cursor: never
// from a first page again, which could be another listing's (a wrong host
// answering some reads) and join it to this one. A *BackupNotFoundError
// when the pass ends without it (which proves nothing).
func (c *Client) FindBackupAfter(ctx context.Context, accountID, backupID string, first BackupsPage) (*Backup, error) {
	return findBackup(c.BackupsAfter(ctx, accountID, first, 0), accountID, backupID)
}

// BackupsAfter reads on from first, a first page, in one pass (a refused
// cursor ends it), at most pages pages: the backups listed below it.
func (c *Client) BackupsAfter(ctx context.Context, accountID string, first BackupsPage, pages int) iter.Seq2[Backup, error] {
	if !first.More || first.next == "" {
		return func(func(Backup, error) bool) {}
	}
	return c.Backups(ctx, accountID, ListOptions{Unbroken: true, Pages: pages, from: first.next})
}

// findBackup is backupID's record in backups, or a *BackupNotFoundError.
func findBackup(backups iter.Seq2[Backup, error], accountID, backupID string) (*Backup, error) {
	b, err := firstBackup(backups, func(b *Backup) bool { return b.ID == backupID })
	if b == nil && err == nil {
		return nil, &BackupNotFoundError{AccountID: accountID, BackupID: backupID}
	}
	return b, err
}

// firstBackup is the first of backups that matches, or nil.
func firstBackup(backups iter.Seq2[Backup, error], match func(*Backup) bool) (*Backup, error) {
	for b, err := range backups {
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
type BackupNotFoundError struct{ AccountID, BackupID string }

func (e *BackupNotFoundError) Error() string {
	return "the backups listing of account " + e.AccountID + " does not hold backup " + e.BackupID
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

// SuccessTime is when a successful backup ended: completed_at, or created_at when it is absent.
func SuccessTime(b *Backup) time.Time {
	if b.CompletedAt != nil {
		return *b.CompletedAt
	}
	return b.CreatedAt
}

// LatestSuccesses reads every account's newest good backup (Backup.Good), several at once;
// done, when set, is called (never at once) as each read ends.
func (c *Client) LatestSuccesses(ctx context.Context, accountIDs []string, done func(finished int)) []SuccessOutcome {
	outcomes := make([]SuccessOutcome, len(accountIDs))
	read := make([]bool, len(accountIDs))
	fleet.Each(ctx, len(accountIDs), LatestSuccessesInFlight, func(ctx context.Context, i int) {
		b, err := firstBackup(c.Backups(ctx, accountIDs[i], ListOptions{}), func(b *Backup) bool { return b.Good() })
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

// Trigger is one backup trigger of an account. Its POST is not idempotent:
// the client resends it by itself only when it certainly did not arrive.
type Trigger struct {
	c         *Client
	accountID string
	sent      bool
	resends   int
	waited    time.Duration
	sendBy    time.Time
}

// SendBy bounds when t's POST may start (zero: any time): an attempt the rate limit's waits or retries would start later is
// not sent, and Post returns ErrNotSentInTime.
func (t *Trigger) SendBy(at time.Time) { t.sendBy = at }

// Trigger prepares a trigger of one backup of the account; it sends nothing.
func (c *Client) Trigger(accountID string) *Trigger { return &Trigger{c: c, accountID: accountID} }

// UnsureError is a failed trigger that the service may have processed all
// the same: a server error, or no answer to a request that reached it.
type UnsureError struct {
	// Answered: a server error came back; else no answer came, and the service may still be at work.
	Answered bool
	Err      error
}

func (e *UnsureError) Error() string { return e.Err.Error() }
func (e *UnsureError) Unwrap() error { return e.Err }

// Post checks the organization, sends the trigger and returns the account
// as answered: nil, with no error, when the answer could not be read.
func (t *Trigger) Post(ctx context.Context) (*Account, error) {
	c := t.c
	if err := c.CheckOrganization(ctx); err != nil {
		return nil, err
	}
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) }})
	cl := t.call()
	cl.attempted = func(err error) {
		// Answered 4xx (a 429 too), an attempt queued nothing: a Ctrl-C in the wait after it leaves no backup to look for.
		var apiErr *APIError
		refused := errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500
		t.sent = wrote.Swap(false) && !refused || t.sent
	}
	var a Account
	err := c.do(ctx, cl, &a)
	switch {
	case errors.As(err, new(*decodeError)):
		t.sent = true
		c.opts.Logger.Warn(ctx, "the answer to a backup trigger could not be read; the service accepted it all the same",
			map[string]any{"account_id": t.accountID, "error": err.Error()})
		return nil, nil
	case err == nil:
		t.sent = true
		return &a, nil
	}
	err = c.judgeAbsence(ctx, t.accountID, err)
	var tErr *transportError
	if noAnswer := errors.As(err, &tErr); noAnswer && tErr.Sent || !noAnswer && errors.Is(err, errServer) {
		return nil, &UnsureError{Answered: !noAnswer, Err: err}
	}
	return nil, err
}

// Sent says whether a POST of t reached the wire and was not refused with a 4xx: even if ctx ended, a backup may be queued.
func (t *Trigger) Sent() bool { return t.sent }

// Wait waits before t is sent again after the failure last, as the client's
// own retries would, or returns the *RetryError that stops it.
func (t *Trigger) Wait(ctx context.Context, last error) error {
	n := t.resends
	t.resends++
	delay := t.c.backoff(n)
	if err := t.c.mayRetry(ctx, n, n, false, delay, t.waited, last); err != nil {
		return err
	}
	return t.c.retryAfter(ctx, t.call(), n, delay, &t.waited, last)
}

func (t *Trigger) call() call {
	return call{method: "POST", path: accountPath(t.accountID) + "/backup", sendBy: t.sendBy}
}

// ErrWrongOrganization matches an *organizationMismatchError.
var ErrWrongOrganization = errors.New("the API key belongs to another organization")

// organizationMismatchError: the key belongs to another organization than Options.Organization.
type organizationMismatchError struct {
	Expected string
	Actual   Organization
}

func (e *organizationMismatchError) Error() string {
	return fmt.Sprintf("the API key belongs to organization %s (%q), not to the expected %s; nothing was changed",
		e.Actual.ID, e.Actual.Name, e.Expected)
}

func (e *organizationMismatchError) Is(target error) bool { return target == ErrWrongOrganization }

// remembered is one read shared by a Client's callers; one that keep refuses, the next caller reads again.
type remembered[T any] struct {
	mu   sync.Mutex
	done bool
	val  T
	err  error
}

func (r *remembered[T]) get(read func() (val T, err error, keep bool)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return r.val, r.err
	}
	val, err, keep := read()
	if keep {
		r.done, r.val, r.err = true, val, err
	}
	return val, err
}

// KeyToken is the key's token, read once per Client and shared; a failed
// read, or one that names no organization, is not remembered.
func (c *Client) KeyToken(ctx context.Context) (*Token, error) {
	return c.tok.get(func() (*Token, error, bool) {
		tok, err := c.Token(ctx)
		if err != nil {
			return nil, err, false
		}
		_, _ = c.proof.get(func() (struct{}, error, bool) { return struct{}{}, nil, true }) // base_url is proven too
		return tok, nil, tok.Organization.ID != ""
	})
}

// CheckOrganization returns nil when Options.Organization is unset or is the key's organization;
// a failed read is asked again, and KeyToken remembers the token whenever this answer is final.
func (c *Client) CheckOrganization(ctx context.Context) error {
	if c.opts.Organization == "" {
		return nil
	}
	tok, err := c.KeyToken(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("reading the API key's organization (organization_id is set): %w", err)
	case tok.Organization.ID == "": // it cannot vouch for the key
		return &decodeError{Method: "GET", Path: c.base.EscapedPath() + "/api/v1/token", StatusCode: 200,
			Err: errors.New("it names no organization, so organization_id cannot be checked; nothing was changed")}
	case tok.Organization.ID != c.opts.Organization:
		return &organizationMismatchError{Expected: c.opts.Organization,
			Actual: Organization{ID: c.guard.text(tok.Organization.ID), Name: c.guard.text(tok.Organization.Name)}}
	}
	return nil
}

// ErrGone matches a *goneError. A proxy or a wrong base_url answers 404 too: a 404 proves an
// account gone only as the service's own answer from a base_url whose token endpoint answered.
var ErrGone = errors.New("the Backup Service proved the account does not exist for this key")

// goneError: the service proved that the account does not exist for this
// key (deleted, or in another organization: the API does not tell which).
type goneError struct {
	AccountID string
	Answer    *APIError // the 404 that proved it
}

func (e *goneError) Error() string {
	return fmt.Sprintf("account %s does not exist for this API key (deleted, or outside the key's organization): %v", e.AccountID, e.Answer)
}

// Is makes errors.Is(err, ErrGone) true; a look-alike 404 matches ErrNotFound only.
func (e *goneError) Is(target error) bool { return target == ErrGone }

// Unwrap gives the 404 itself, for errors.As(err, **APIError).
func (e *goneError) Unwrap() error { return e.Answer }

// UnprovenAbsenceError: an answer that looked like absence but does not prove it.
type UnprovenAbsenceError struct {
	AccountID string
	Why       string // what the proof lacked
	Err       error
}

func (e *UnprovenAbsenceError) Error() string {
	return fmt.Sprintf("%v; this does not prove that account %s is gone: %s", e.Err, e.AccountID, e.Why)
}

func (e *UnprovenAbsenceError) Unwrap() error { return e.Err }

// proveBase is nil when the token endpoint answered for this key; remembered
// (unless the caller's own context ended), so that many 404s cost one read.
func (c *Client) proveBase(ctx context.Context) error {
	_, err := c.proof.get(func() (struct{}, error, bool) {
		_, err := c.Token(ctx)
		return struct{}{}, err, err == nil || ctx.Err() == nil
	})
	return err
}

// notFromService says why e is not the service's own problem document (a proxy's, a look-alike), or "".
func (e *APIError) notFromService() string {
	switch {
	case e.NotProblem:
		return "the answer is not a problem document (a proxy, a load balancer or another service answers like this)"
	case e.problemStatus != e.StatusCode:
		return fmt.Sprintf("the problem document's status is %d, not %d", e.problemStatus, e.StatusCode)
	case e.Title == "":
		return "the problem document has no title"
	case !uuidRE.MatchString(e.problemRequestID):
		return "the problem document carries no request id of the service's form"
	}
	return ""
}

// judgeAbsence applies the absence rule to err (from c.do or a listing on accountID's paths, never
// judged before): a *goneError, an *UnprovenAbsenceError, or err itself.
func (c *Client) judgeAbsence(ctx context.Context, accountID string, err error) error {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || (apiErr.StatusCode != http.StatusNotFound && apiErr.StatusCode != http.StatusGone) {
		return err
	}
	why := apiErr.notFromService()
	if apiErr.StatusCode != http.StatusNotFound {
		why = fmt.Sprintf("only a 404 can, and this is HTTP %d", apiErr.StatusCode)
	}
	if why != "" {
		return &UnprovenAbsenceError{AccountID: accountID, Why: why, Err: err}
	}
	if perr := c.proveBase(ctx); perr != nil {
		return &UnprovenAbsenceError{AccountID: accountID, Err: err, Why: "the same base URL did not prove itself: its token endpoint " +
			"did not answer 200 for this key (" + strings.TrimSpace(perr.Error()) + ")"}
	}
	return &goneError{AccountID: accountID, Answer: apiErr}
}
