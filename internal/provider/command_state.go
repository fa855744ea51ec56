package provider

import (
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// directAccountReads: see workflow.DirectAccountReads.
const directAccountReads = workflow.DirectAccountReads

// commandState holds, for one provider process (one phase of one command),
// the triggers Delete removed, so that the Create replacing one (same
// account, same triggers) adopts its backup instead of queueing a second.
// That relies on Terraform deleting before creating in the same process:
// with create_before_destroy the replacement takes a new backup (see docs).
type commandState struct {
	mu       sync.Mutex
	replaced map[string][]replacedTrigger // by account id
}

// replacedTrigger is what Delete keeps of a trigger for its replacement.
type replacedTrigger struct {
	triggers string // triggersKey of its triggers
	Record   workflow.Record
	wait     time.Duration // the timeouts.create it waited within; zero when it did not wait
}

func newCommandState() *commandState {
	return &commandState{replaced: map[string][]replacedTrigger{}}
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
// triggers and a backup to adopt (a refused replacement has none), if any.
func (s *commandState) take(accountID, triggers string) (replacedTrigger, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.replaced[accountID]
	for i, t := range list {
		if t.triggers == triggers && t.Record.Phase != workflow.PhaseNone {
			s.replaced[accountID] = append(list[:i:i], list[i+1:]...)
			return t, true
		}
	}
	return replacedTrigger{}, false
}
