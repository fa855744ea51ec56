package mockservice

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"
)

// Knobs and ground truth for simulations: which client queued each backup,
// when it truly began and ended, and the service's misbehaviours that are
// not per-request faults (a clock that runs off, a lagging listing,
// records that contradict themselves).

type queuedByKey struct{}

// WithQueuedBy labels a request's context: a backup the request queues
// records the label (see Truth). An in-memory transport sets it.
func WithQueuedBy(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, queuedByKey{}, label)
}

func queuedByFrom(ctx context.Context) string {
	s, _ := ctx.Value(queuedByKey{}).(string)
	return s
}

// SetClockOffset makes the times the service shows (the records of backups
// created from now on, the Date header) run d ahead of its clock (behind
// when negative), as a deployment whose clock is off does: a record keeps
// the times its clock stamped. Backups still run on the clock.
func (s *Server) SetClockOffset(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset = d
}

// shownNow is the service's time as its answers show it.
func (s *Server) shownNow() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Now().Add(s.offset)
}

// SetBackupLength makes each backup queued from now on stay pending and
// running as long as f says (nil: Options.PendingFor and RunningFor), so
// that backups of one account vary in length. f is called with the
// server's lock held, once per backup, in the order they are queued.
func (s *Server) SetBackupLength(f func() (pending, running time.Duration)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backupLength = f
}

// newBackupLength is how long a backup queued now lasts. The caller holds s.mu.
func (s *Server) newBackupLength() (pending, running time.Duration) {
	if s.backupLength == nil {
		return s.pendingFor, s.runningFor
	}
	return s.backupLength()
}

// SetListingLag hides each backup from the backups listing for d after it
// was queued, as a read replica behind its primary does.
func (s *Server) SetListingLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listingLag = d
}

// SetListingReplicas answers each backups listing from one of several
// replicas, each behind by up to the listing lag: a read may miss what an
// earlier one showed.
func (s *Server) SetListingReplicas(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas = on
}

// SetShuffledTies lists the backups created in one second in any order,
// which the contract does not fix.
func (s *Server) SetShuffledTies(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shuffledTies = on
}

// SetPageCap makes every listing's pages hold at most n records (0: as
// many as asked), with a next page as usual: the contract promises no
// full pages, and a client must read on.
func (s *Server) SetPageCap(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageCap = max(n, 0)
}

// listBackups answers the account's backups listing, without the backups
// the listing lag still hides. The caller holds s.mu.
func (s *Server) listBackups(r *http.Request, acc *account, requestID string) *reply {
	now := s.clock.Now()
	lag := s.listingLag
	if s.replicas && lag > 0 {
		lag = time.Duration(s.rng.Int64N(int64(lag) + 1))
	}
	items := make([]*backup, 0, len(acc.backups))
	for _, b := range acc.backups {
		if lag <= 0 || !now.Before(b.createdAt.Add(lag)) {
			items = append(items, b)
		}
	}
	return listReply(s, r, requestID, "backups:"+acc.id, items, false, s.backupJSON)
}

// disorderPage reverses a listing page's items or repeats its first one.
func disorderPage(kind FaultKind, rep *reply) *reply {
	if rep.status >= 300 {
		return rep
	}
	var page map[string]json.RawMessage
	var data []json.RawMessage
	if json.Unmarshal(rep.body, &page) != nil || json.Unmarshal(page["data"], &data) != nil || len(data) == 0 {
		return rep
	}
	if kind == FaultShuffledPage {
		slices.Reverse(data)
	} else {
		data = append(data, data[0])
	}
	page["data"], _ = json.Marshal(data)
	out := *rep
	out.body, _ = json.Marshal(page)
	return &out
}

// foreignItem puts the newest backup of another account than accountID at
// the top of a listing's page.
func (s *Server) foreignItem(rep *reply, accountID string) *reply {
	if rep.status >= 300 {
		return rep
	}
	s.mu.Lock()
	var other *backup
	for _, id := range s.sortedAccountIDs() {
		if acc := s.accounts[id]; id != accountID && len(acc.backups) > 0 {
			other = acc.backups[len(acc.backups)-1]
			break
		}
	}
	var item []byte
	if other != nil {
		item, _ = json.Marshal(s.backupJSON(other))
	}
	s.mu.Unlock()
	var page map[string]json.RawMessage
	var data []json.RawMessage
	if other == nil || json.Unmarshal(rep.body, &page) != nil || json.Unmarshal(page["data"], &data) != nil {
		return rep
	}
	page["data"], _ = json.Marshal(append([]json.RawMessage{item}, data...))
	out := *rep
	out.body, _ = json.Marshal(page)
	return &out
}

// otherHistory answers a listing's page with another account's newest
// backups (as many as the page holds), under accountID, and no next page.
func (s *Server) otherHistory(rep *reply, accountID string) *reply {
	var page struct {
		Data       []json.RawMessage `json:"data"`
		Pagination struct {
			Limit      int     `json:"limit"`
			NextCursor *string `json:"next_cursor"`
		} `json:"pagination"`
	}
	if rep.status >= 300 || json.Unmarshal(rep.body, &page) != nil {
		return rep
	}
	s.mu.Lock()
	var data []json.RawMessage
	if acc := s.accounts[s.otherHistoryLocked(accountID)]; acc != nil {
		newest := slices.Clone(acc.backups)
		sort.Slice(newest, func(i, j int) bool { // newest first, as the service lists
			ti, qi := newest[i].sortKey()
			tj, qj := newest[j].sortKey()
			return less(tj, qj, ti, qi)
		})
		for _, b := range newest[:min(len(newest), page.Pagination.Limit)] {
			b := s.backupJSON(b)
			b.AccountID = accountID
			item, _ := json.Marshal(b)
			data = append(data, item)
		}
	}
	s.mu.Unlock()
	if len(data) == 0 {
		return rep
	}
	page.Data, page.Pagination.NextCursor = data, nil
	out := *rep
	out.body, _ = json.Marshal(page)
	return &out
}

// otherDeployment answers a listing's page as another deployment whose
// history of accountID is OtherHistoryOf's, paged as the service pages its
// own, under a scope of its own: its cursors read on, no other's does.
func (s *Server) otherDeployment(rep *reply, r *http.Request, requestID, accountID string) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[s.otherHistoryLocked(accountID)]
	if acc == nil {
		return rep
	}
	return listReply(s, r, requestID, "backups:elsewhere:"+acc.id, acc.backups, false, func(b *backup) backupJSON {
		out := s.backupJSON(b)
		out.AccountID = accountID
		return out
	})
}

// OtherHistoryOf is the account whose history FaultOtherHistory lists under accountID ("": none has backups).
func (s *Server) OtherHistoryOf(accountID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.otherHistoryLocked(accountID)
}

func (s *Server) otherHistoryLocked(accountID string) string {
	for _, id := range s.sortedAccountIDs() {
		if id != accountID && len(s.accounts[id].backups) > 0 {
			return id
		}
	}
	return ""
}

// noteListing counts a backups listing answered under label: by the
// service itself, or by another history (FaultOtherHistory,
// FaultEmptyHistory).
func (s *Server) noteListing(label string, faults []Fault) {
	if label == "" {
		return
	}
	other := slices.ContainsFunc(faults, func(f Fault) bool { return f.Kind == FaultOtherHistory || f.Kind == FaultEmptyHistory })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listings == nil {
		s.listings = map[string][2]int{}
	}
	n := s.listings[label]
	if other {
		n[1]++
	} else {
		n[0]++
	}
	s.listings[label] = n
}

// ListingsAnswered says how many backups listings requested under label
// (WithQueuedBy) the service answered itself (own), and how many another
// history answered (other).
func (s *Server) ListingsAnswered(label string) (own, other int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.listings[label]
	return n[0], n[1]
}

// emptyHistory is rep, a page of an account's backups, as a listing that
// holds none: empty, and ending.
func emptyHistory(rep *reply) *reply {
	var page struct {
		Pagination struct {
			Limit int `json:"limit"`
		} `json:"pagination"`
	}
	if rep.status >= 300 || json.Unmarshal(rep.body, &page) != nil {
		return rep
	}
	out := *rep
	out.body = fmt.Appendf(nil, `{"data":[],"pagination":{"limit":%d,"next_cursor":null}}`, page.Pagination.Limit)
	return &out
}

// RecordQuirk is how a successful backup's record contradicts itself.
type RecordQuirk int

// Record quirks.
const (
	QuirkNone RecordQuirk = iota
	// QuirkNoCompletedAt: status success with a null completed_at.
	QuirkNoCompletedAt
	// QuirkCompletedBeforeCreated: completed_at an hour before created_at.
	QuirkCompletedBeforeCreated
	// QuirkErrorSet: status success with an error text.
	QuirkErrorSet
	// QuirkFutureDated: once it succeeds, its times are shown 30 days
	// late, beyond any clock offset: a record dated in the future.
	QuirkFutureDated
	// QuirkOtherAccount: at every status, the record's account_id names
	// another account than the one whose listing shows it.
	QuirkOtherAccount
)

// otherAccountID is the account a QuirkOtherAccount record names: well
// formed, and never the account that lists it.
func otherAccountID(listedUnder string) string {
	if other := "acc_0therAccount0000"; other != listedUnder {
		return other
	}
	return "acc_0therAccount0001"
}

// SetRecordQuirk gives the account's backups queued from now on a record
// that contradicts itself once it succeeds, or names another account
// (QuirkNone: none).
func (s *Server) SetRecordQuirk(accountID string, q RecordQuirk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[accountID]; a != nil {
		a.quirk = q
	}
}

func quirkRecord(b *backup, out *backupJSON) {
	switch b.quirk {
	case QuirkNoCompletedAt:
		out.CompletedAt = nil
	case QuirkCompletedBeforeCreated:
		created, _ := time.Parse(time.RFC3339, out.CreatedAt)
		v := rfc3339(created.Add(-time.Hour))
		out.CompletedAt = &v
	case QuirkErrorSet:
		e := "partially failed"
		out.Error = &e
	case QuirkFutureDated:
		created, _ := time.Parse(time.RFC3339, out.CreatedAt)
		completed, _ := time.Parse(time.RFC3339, *out.CompletedAt)
		out.CreatedAt, *out.CompletedAt = rfc3339(created.Add(30*24*time.Hour)), rfc3339(completed.Add(30*24*time.Hour))
	}
}

// SetAccountState makes an account backupable (StateActive) or not (a 422).
func (s *Server) SetAccountState(id string, st AccountState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[id]; a != nil {
		a.state = st
	}
}

// BackupTruth is what truly became of one backup, on the service's clock
// without its offset: the ground truth a simulation judges by.
type BackupTruth struct {
	ID        string
	AccountID string
	// CreatedAt and CompletedAt are true times; CompletedAt is when it
	// ends (it may lie ahead: see Done).
	CreatedAt   time.Time
	CompletedAt time.Time
	// Status is its final status (success or failed); Done says whether
	// it has ended by now.
	Status string
	Done   bool
	// Consistent is false when its record contradicts itself.
	Consistent bool
	// QueuedBy is the label of the request that queued it ("" for
	// history and backups queued without one).
	QueuedBy string
	// StampOffset is the service's clock offset when its record was stamped.
	StampOffset time.Duration
	// Quirk is how its record contradicts itself once it succeeds.
	Quirk RecordQuirk
}

// Truth lists the account's backups, oldest first.
func (s *Server) Truth(accountID string) []BackupTruth {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[accountID]
	if acc == nil {
		return nil
	}
	now := s.clock.Now()
	out := make([]BackupTruth, 0, len(acc.backups))
	for _, b := range acc.backups {
		done := b.createdAt.Add(b.pendingFor + b.runningFor)
		st := "success"
		if b.failWith != "" {
			st = "failed"
		}
		out = append(out, BackupTruth{ID: b.id, AccountID: accountID, CreatedAt: b.createdAt, CompletedAt: done, Status: st,
			Done: !now.Before(done), Consistent: b.quirk == QuirkNone || b.quirk == QuirkFutureDated, QueuedBy: b.queuedBy, StampOffset: b.shownOffset, Quirk: b.quirk})
	}
	return out
}

// AccountTruth says whether the account was deleted and whether it is
// backupable.
func (s *Server) AccountTruth(id string) (deleted bool, state AccountState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[id]; a != nil {
		return a.deleted, a.state
	}
	return true, ""
}
