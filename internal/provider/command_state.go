package provider

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// directAccountReads is how many accounts a command reads with one request
// each (GET the account) before it lists every account once instead
// (⌈A/50⌉ requests, shared). So refreshing finished triggers and guards
// costs at most directAccountReads + ⌈A/50⌉ requests, plus one direct read
// for each account the listing does not hold (a missing entry proves
// nothing until the service proves it: the client's absence rule), whatever
// their number and the age of their backups; one alone costs 1.
const directAccountReads = 8

// commandState is what the operations of one provider process share.
// Terraform starts a provider process for each command it runs, and for
// each phase of one (the plan of `terraform apply` and its apply are two
// processes), so everything here lives for one phase of one command and is
// never written anywhere: a later command starts empty.
//
// It holds two things, each for one reason:
//   - for refresh and the guards' preflight: the accounts of finished
//     triggers and guards, read once per account at most and shared (see
//     directAccountReads);
//   - for replacement: the triggers Delete removed, so that the Create
//     that replaces one (same account, same triggers) adopts its backup
//     instead of queueing a second for the same change. That relies on
//     Terraform deleting before creating, in the same process, which holds
//     for a replacement unless the resource sets create_before_destroy:
//     then Create runs first, finds nothing, and takes a new backup (a
//     limit stated in the docs). Entries are taken by the first matching
//     Create, or dropped when the process ends.
type commandState struct {
	// accounts answers, past the first directAccountReads, what the
	// listing holds of an account.
	accounts    *client.AccountIndex
	directReads atomic.Int64
	// seen is what this command learnt of each account it read: the
	// account, or the proof that it is gone. A guard planned for destroy
	// in the same process reads it instead of the service.
	seen sync.Map // account id -> accountSeen

	mu sync.Mutex
	// replaced holds the backups of triggers deleted in this command, by
	// account id, several per account (triggers of one account replaced in
	// one apply), for the replacements to adopt (see above).
	replaced map[string][]replacedTrigger
}

// replacedTrigger is what Delete keeps of a trigger for its replacement.
type replacedTrigger struct {
	triggers string // triggersKey of its triggers
	Record   workflow.Record
	wait     time.Duration // the timeouts.create it waited within; zero when it did not wait
}

// adoptable: it has a backup, known or looked for, to adopt; a refused
// replacement has none and only tells when its replaced change went ahead.
func (t replacedTrigger) adoptable() bool { return t.Record.Phase != workflow.PhaseNone }

func newCommandState(c *client.Client) *commandState {
	return &commandState{replaced: map[string][]replacedTrigger{}, accounts: c.NewAccountIndex()}
}

// accountSeen is what a command learnt of an account: the account, or
// the *client.GoneError that proved it gone.
type accountSeen struct {
	account *client.Account
	gone    error
}

// account reads an account once per command, by the cheaper of the two
// ways (see directAccountReads): a later caller (the refresh of another
// resource of the account, a guard's preflight, in whichever order
// Terraform runs them) gets what the first one learnt. An account the
// shared listing does not hold is read directly: only that read can prove
// it gone. When it fails, report says whether this caller should tell the
// user: a failed shared listing is told once, not once per resource. An
// error matching client.ErrGone is the only proof that the account does
// not exist for this key.
func (s *commandState) account(ctx context.Context, c *client.Client, accountID string) (a *client.Account, report bool, err error) {
	if seen, ok := s.seenAccount(accountID); ok {
		return seen.account, true, seen.gone
	}
	if s.directReads.Add(1) <= directAccountReads {
		a, err = c.Account(ctx, accountID)
		report = true
	} else if a, report, err = s.accounts.Lookup(ctx, accountID); err == nil && a == nil {
		a, err = c.Account(ctx, accountID)
		report = true
	}
	switch {
	case err == nil:
		s.seen.Store(accountID, accountSeen{account: a})
	case errors.Is(err, client.ErrGone):
		s.seen.Store(accountID, accountSeen{gone: err})
	}
	return a, report, err
}

// seenAccount is what this command already learnt of the account, if
// anything.
func (s *commandState) seenAccount(accountID string) (accountSeen, bool) {
	v, ok := s.seen.Load(accountID)
	if !ok {
		return accountSeen{}, false
	}
	seen, ok := v.(accountSeen)
	return seen, ok
}

func (s *commandState) remember(accountID, triggers string, rec workflow.Record, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaced[accountID] = append(s.replaced[accountID], replacedTrigger{triggers: triggers, Record: rec, wait: wait})
}

// after is the Rule.After of a trigger of the account created in this
// command: the latest moment a trigger of the account deleted before it,
// and not taken for its own change, went ahead (zero: none).
func (s *commandState) after(accountID string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t time.Time
	for _, r := range s.replaced[accountID] {
		if w := r.Record.WentAhead(); w.After(t) {
			t = w
		}
	}
	return t
}

// take returns and forgets a deleted trigger of the account with the same
// triggers, if any.
func (s *commandState) take(accountID, triggers string) (replacedTrigger, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.replaced[accountID]
	for i, t := range list {
		if t.triggers == triggers && t.adoptable() {
			s.replaced[accountID] = append(list[:i:i], list[i+1:]...)
			return t, true
		}
	}
	return replacedTrigger{}, false
}
