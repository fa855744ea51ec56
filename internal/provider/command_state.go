package provider

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/lifecycle"
)

// directAccountReads is how many finished triggers a command refreshes
// with one request each (GET the account) before it lists every account
// once instead (⌈A/50⌉ requests, shared). So a refresh costs at most
// directAccountReads + ⌈A/50⌉ requests for finished triggers, whatever
// their number and the age of their backups, and one trigger alone costs 1.
const directAccountReads = 8

// commandState is what the operations of one provider process share.
// Terraform starts a provider process for each command it runs, and for
// each phase of one (the plan of `terraform apply` and its apply are two
// processes), so everything here lives for one phase of one command and is
// never written anywhere: a later command starts empty.
//
// It holds two things, each for one reason:
//   - for refresh: whether the accounts of finished triggers still exist,
//     asked once per account at most and shared (see directAccountReads);
//   - for replacement: the triggers Delete removed, so that the Create
//     that replaces one (same account, same triggers) adopts its backup
//     instead of queueing a second for the same change. That relies on
//     Terraform deleting before creating, in the same process, which holds
//     for a replacement unless the resource sets create_before_destroy:
//     then Create runs first, finds nothing, and takes a new backup (a
//     limit stated in the docs). Entries are taken by the first matching
//     Create, or dropped when the process ends.
type commandState struct {
	// accounts answers, for finished triggers past the first
	// directAccountReads, whether their account still exists.
	accounts    *client.AccountIndex
	directReads atomic.Int64

	// destroyNotice warns once per command, not once per trigger, that
	// destroying triggers keeps their backups.
	destroyNotice sync.Once

	mu sync.Mutex
	// replaced holds the backups of triggers deleted in this command, by
	// account id, several per account (triggers of one account replaced in
	// one apply), for the replacements to adopt (see above).
	replaced map[string][]replacedTrigger
}

// replacedTrigger is what Delete keeps of a trigger for its replacement.
type replacedTrigger struct {
	triggers string // triggersKey of its triggers
	lifecycle.Replaced
}

func newCommandState(c *client.Client) *commandState {
	return &commandState{replaced: map[string][]replacedTrigger{}, accounts: c.NewAccountIndex()}
}

// accountExists says whether a finished trigger's account still exists,
// by the cheaper of the two ways (see directAccountReads). When it fails,
// report says whether this caller should tell the user: a failed shared
// listing is told once, not once per trigger.
func (s *commandState) accountExists(ctx context.Context, c *client.Client, accountID string) (exists, report bool, err error) {
	if s.directReads.Add(1) <= directAccountReads {
		_, err := c.Account(ctx, accountID)
		if errors.Is(err, client.ErrNotFound) {
			return false, false, nil
		}
		return err == nil, true, err
	}
	a, report, err := s.accounts.Lookup(ctx, accountID)
	return a != nil, report, err
}

func (s *commandState) remember(accountID, triggers string, p lifecycle.Replaced) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaced[accountID] = append(s.replaced[accountID], replacedTrigger{triggers: triggers, Replaced: p})
}

// take returns and forgets a deleted trigger of the account with the same
// triggers, if any.
func (s *commandState) take(accountID, triggers string) (lifecycle.Replaced, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.replaced[accountID]
	for i, t := range list {
		if t.triggers == triggers {
			s.replaced[accountID] = append(list[:i:i], list[i+1:]...)
			return t.Replaced, true
		}
	}
	return lifecycle.Replaced{}, false
}
