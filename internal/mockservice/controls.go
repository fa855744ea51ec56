package mockservice

import (
	"net/http"
	"strconv"
	"time"
)

// controls are the failures the admin API switched on (admin_controls.go),
// kept apart from the seeded data so that POST /_mock/reset undoes them and
// nothing else. The Server's mu guards them.
type controls struct {
	// states holds, per account, its state before the admin API first set one.
	states map[string]AccountState
	// failures make the account's next backups fail.
	failures map[string]*failureControl
	// holds is how long the account's next backup stays running.
	holds map[string]time.Duration
	// held holds, per backup the admin API held, its runningFor before.
	held map[*backup]time.Duration
	// lost loses the answers of the account's next triggers.
	lost map[string]*lostControl
	// answers stand in for the service's next answers, oldest first.
	answers []*answerControl
	// quirks holds, per account, its record quirk before the admin API
	// first set one.
	quirks map[string]RecordQuirk
	// offsetBefore and lagBefore are the clock offset and the listing lag
	// before the admin API first set them.
	offsetSet    bool
	offsetBefore time.Duration
	lagSet       bool
	lagBefore    time.Duration
}

// failureControl makes remaining backups fail with text (remaining < 0:
// every backup, until a reset).
type failureControl struct {
	remaining int
	text      string
}

// lostHow is how a trigger's answer is lost once the trigger is processed.
type lostHow string

const (
	lostAsError lostHow = "error" // a 500, as FaultAcceptThenError answers
	lostAsDrop  lostHow = "drop"  // the connection closes without an answer
)

type lostControl struct {
	remaining int
	how       lostHow
}

// answerControl answers remaining requests (of route and account, when
// set) with a problem document of status, without processing them.
type answerControl struct {
	remaining  int
	status     int
	route      Route
	accountID  string
	detail     string
	retryAfter time.Duration
}

// maxAnswerControls bounds the answers waiting to be given: each POST adds
// one, and a loop of POSTs must not grow the mock without bound.
const maxAnswerControls = 100

// setAccountState sets an account's state, remembering the one a reset
// restores. The caller holds s.mu.
func (c *controls) setAccountState(acc *account, st AccountState) {
	if c.states == nil {
		c.states = map[string]AccountState{}
	}
	if _, ok := c.states[acc.id]; !ok {
		c.states[acc.id] = acc.state
	}
	acc.state = st
}

// failBackups makes the account's next n backups fail with text (n < 0:
// all of them, until a reset; n == 0: none). The caller holds s.mu.
func (c *controls) failBackups(accountID string, n int, text string) {
	if n == 0 {
		delete(c.failures, accountID)
		return
	}
	if c.failures == nil {
		c.failures = map[string]*failureControl{}
	}
	c.failures[accountID] = &failureControl{remaining: n, text: text}
}

// hold keeps the account's backup in progress running until at least
// now+d, or, with none in progress, makes its next backup run for d. The
// caller holds s.mu.
func (c *controls) hold(acc *account, now time.Time, d time.Duration) {
	if n := len(acc.backups); n > 0 {
		if b := acc.backups[n-1]; now.Before(b.end()) {
			c.remember(b)
			// Pending first if it still is, then running until now+d.
			b.runningFor = max(b.runningFor, now.Add(d).Sub(b.createdAt.Add(b.pendingFor)))
			return
		}
	}
	if c.holds == nil {
		c.holds = map[string]time.Duration{}
	}
	c.holds[acc.id] = d
}

func (c *controls) remember(b *backup) {
	if c.held == nil {
		c.held = map[*backup]time.Duration{}
	}
	if _, ok := c.held[b]; !ok {
		c.held[b] = b.runningFor
	}
}

// shape gives a backup the account's controls as it is queued: a failure,
// a hold. The caller holds s.mu.
func (c *controls) shape(b *backup) {
	if f := c.failures[b.accountID]; f != nil {
		b.failWith = f.text
		if f.remaining > 0 {
			if f.remaining--; f.remaining == 0 {
				delete(c.failures, b.accountID)
			}
		}
	}
	if d, ok := c.holds[b.accountID]; ok {
		c.remember(b)
		b.runningFor = d
		delete(c.holds, b.accountID)
	}
}

// loseTriggerAnswers loses the answers of the account's next n triggers.
// The caller holds s.mu.
func (c *controls) loseTriggerAnswers(accountID string, n int, how lostHow) {
	if c.lost == nil {
		c.lost = map[string]*lostControl{}
	}
	c.lost[accountID] = &lostControl{remaining: n, how: how}
}

// takeLost says how the answer to a processed request is lost, or "".
// The caller holds s.mu.
func (c *controls) takeLost(route Route, accountID string) lostHow {
	l := c.lost[accountID]
	if route != RouteTrigger || l == nil {
		return ""
	}
	if l.remaining--; l.remaining == 0 {
		delete(c.lost, accountID)
	}
	return l.how
}

// takeLost says how the answer to a processed request is lost, or "".
func (s *Server) takeLost(route Route, accountID string) lostHow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctl.takeLost(route, accountID)
}

// dropConnection closes the request's connection without an answer, as a
// proxy that lost its upstream, or a network that failed, does.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not an HTTP/1 connection (an in-memory transport): net/http's own
		// way to abort an answer.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// addAnswer queues an answer; false when maxAnswerControls are waiting.
// The caller holds s.mu.
func (c *controls) addAnswer(a *answerControl) bool {
	if len(c.answers) >= maxAnswerControls {
		return false
	}
	c.answers = append(c.answers, a)
	return true
}

// takeAnswer is the oldest answer waiting for this request, or nil. The
// caller holds s.mu.
func (c *controls) takeAnswer(route Route, accountID string) *answerControl {
	for i, a := range c.answers {
		if (a.route != "" && a.route != route) || (a.accountID != "" && a.accountID != accountID) {
			continue
		}
		if a.remaining--; a.remaining == 0 {
			c.answers = append(c.answers[:i:i], c.answers[i+1:]...)
		}
		return a
	}
	return nil
}

// reply is the problem document the answer gives.
func (a *answerControl) reply(r *http.Request, requestID string) *reply {
	rep := problemReply(a.status, problemTitle(a.status), a.detail, r, requestID)
	if a.retryAfter > 0 {
		rep.header.Set("Retry-After", strconv.Itoa(int(a.retryAfter/time.Second)))
	}
	return rep
}

// problemTitle is the title the service gives a status: the document's
// where it shows one, else the status text.
func problemTitle(status int) string {
	switch status {
	case http.StatusBadRequest:
		return titleBadRequest
	case http.StatusUnauthorized:
		return titleUnauth
	case http.StatusForbidden:
		return titleForbidden
	case http.StatusNotFound:
		return titleNotFound
	case http.StatusConflict:
		return titleConflict
	case http.StatusUnprocessableEntity:
		return titleUnprocessable
	case http.StatusTooManyRequests:
		return titleTooMany
	case http.StatusInternalServerError:
		return titleInternal
	}
	return http.StatusText(status)
}

// setClockOffset sets the service's clock offset, remembering the one a
// reset restores. The caller holds s.mu.
func (c *controls) setClockOffset(s *Server, d time.Duration) {
	if !c.offsetSet {
		c.offsetSet, c.offsetBefore = true, s.offset
	}
	s.offset = d
}

// setRecordQuirk sets the quirk of the account's next backups' records,
// remembering the one a reset restores. The caller holds s.mu.
func (c *controls) setRecordQuirk(acc *account, q RecordQuirk) {
	if c.quirks == nil {
		c.quirks = map[string]RecordQuirk{}
	}
	if _, ok := c.quirks[acc.id]; !ok {
		c.quirks[acc.id] = acc.quirk
	}
	acc.quirk = q
}

// setListingLag sets the backups listing's lag, remembering the one a
// reset restores. The caller holds s.mu.
func (c *controls) setListingLag(s *Server, d time.Duration) {
	if !c.lagSet {
		c.lagSet, c.lagBefore = true, s.listingLag
	}
	s.listingLag = d
}

// reset undoes every control: states, record quirks, the clock offset and
// the listing lag as they were,
// held backups released (a backup still running ends now, or when it
// would have ended unheld, whichever is later: a backup seen running
// never shows an earlier completed_at), nothing more to fail, lose or
// answer. The caller holds s.mu.
func (c *controls) reset(s *Server) {
	for id, st := range c.states {
		if acc := s.accounts[id]; acc != nil {
			acc.state = st
		}
	}
	now := s.clock.Now()
	for b, runningFor := range c.held {
		if now.Before(b.end()) {
			b.runningFor = max(runningFor, now.Sub(b.createdAt.Add(b.pendingFor)))
		}
	}
	for id, q := range c.quirks {
		if acc := s.accounts[id]; acc != nil {
			acc.quirk = q
		}
	}
	if c.offsetSet {
		s.offset = c.offsetBefore
	}
	if c.lagSet {
		s.listingLag = c.lagBefore
	}
	*c = controls{}
}

// resetControls undoes what the admin API's controls switched on.
func (s *Server) resetControls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctl.reset(s)
}

// end is when the backup stops being in progress.
func (b *backup) end() time.Time { return b.createdAt.Add(b.pendingFor + b.runningFor) }
