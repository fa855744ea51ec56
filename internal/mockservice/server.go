package mockservice

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Options configure a Server. Zero values take the defaults.
type Options struct {
	// Seed makes ids, keys and seeded data the same on every run. The
	// backup-mock command draws it at random unless -seed is given.
	Seed uint64
	// Accounts is the number of seeded backupable accounts (default 5; -1 for none).
	Accounts int
	// AuditLogs is the number of seeded audit records (default 0).
	AuditLogs int
	// RateLimit is each key's per-second allowance (default 10).
	RateLimit int
	// PendingFor and RunningFor are how long a new backup stays in each
	// state (defaults 1s and 2s).
	PendingFor time.Duration
	RunningFor time.Duration
	// Clock drives the backup state machine (default: the wall clock).
	Clock Clock
	// RateClock drives the one-second rate-limit windows (default: the
	// wall clock, since an allowance is per real second even when Clock
	// is stepped by hand). Tests of the windows set it.
	RateClock Clock
	// EchoKeyInErrors makes every error body quote the API key the request
	// presented, as a faulty deployment or a careless proxy might: clients
	// must never show it.
	EchoKeyInErrors bool
	// AdminToken is the token requests to the admin API (/_mock/*) must
	// carry; empty draws a random one (see Server.AdminToken).
	AdminToken string
	// AllowHosts lists host names, besides loopback ones (localhost,
	// 127.0.0.0/8, ::1), that the server answers to: requests with any
	// other Host header are refused (421), against DNS rebinding. Tests
	// that reach the mock by a name, through a proxy, add that name.
	AllowHosts []string
}

// Defaults of Options.
const (
	DefaultAccounts   = 5
	DefaultRateLimit  = 10
	DefaultPendingFor = time.Second
	DefaultRunningFor = 2 * time.Second
	// DemoKeyName is the name of the key every server is seeded with.
	DemoKeyName = "demo-key"
)

var platforms = []string{"google_workspace", "microsoft_365", "salesforce", "slack", "github"}

// Server is the mock Backup Service. It is an http.Handler.
type Server struct {
	mu    sync.Mutex
	clock Clock
	rng   *mrand.Rand
	seq   int

	org       organization
	keys      map[string]*apiKey
	demoKey   string
	accounts  map[string]*account
	logs      []*auditLog
	foreignID string
	listings  map[string][2]int // by request label: backups listings the service answered, and another history did

	rateLimit  int
	pendingFor time.Duration
	runningFor time.Duration
	windows    map[string]*window
	rateClock  Clock

	cursorKey []byte
	echoKey   bool
	faults    []*faultState
	stats     Stats
	inFlight  int

	adminToken string
	allowHosts []string

	// offset is how far the times the service shows run ahead of its
	// clock; listingLag hides new backups from the backups listing.
	offset     time.Duration
	listingLag time.Duration
	// backupLength, when set, says how long each new backup stays pending
	// and running (SetBackupLength).
	backupLength func() (pending, running time.Duration)

	// ctl holds what the admin API's controls switched on.
	ctl controls

	// replicas: each listing lags by up to listingLag, drawn anew;
	// shuffledTies: records of one second listed in any order.
	replicas, shuffledTies bool
	// pageCap, when set, is the most records a listing's page holds,
	// whatever limit asked: the contract promises no full pages.
	pageCap int
}

type window struct {
	second int64
	count  int
}

// New builds a seeded Server.
func New(opts Options) *Server {
	if opts.Accounts == 0 {
		opts.Accounts = DefaultAccounts
	}
	if opts.RateLimit <= 0 {
		opts.RateLimit = DefaultRateLimit
	}
	if opts.PendingFor <= 0 {
		opts.PendingFor = DefaultPendingFor
	}
	if opts.RunningFor <= 0 {
		opts.RunningFor = DefaultRunningFor
	}
	if opts.Clock == nil {
		opts.Clock = clock.Wall{}
	}
	if opts.RateClock == nil {
		opts.RateClock = clock.Wall{}
	}
	if opts.AdminToken == "" {
		opts.AdminToken = NewAdminToken()
	}
	s := &Server{
		clock:      opts.Clock,
		rng:        mrand.New(mrand.NewPCG(opts.Seed, opts.Seed^0x5eed5eed5eed5eed)),
		keys:       map[string]*apiKey{},
		accounts:   map[string]*account{},
		windows:    map[string]*window{},
		rateClock:  opts.RateClock,
		rateLimit:  opts.RateLimit,
		pendingFor: opts.PendingFor,
		runningFor: opts.RunningFor,
		cursorKey:  make([]byte, 32),
		echoKey:    opts.EchoKeyInErrors,
		stats:      newStats(),
		adminToken: opts.AdminToken,
		allowHosts: slices.Clone(opts.AllowHosts),
	}
	_, _ = rand.Read(s.cursorKey)
	s.org = organization{ID: newID(organizationPrefix, s.rng.IntN), Name: "Example Org"}
	s.demoKey = s.addKeyLocked(KeySpec{Name: DemoKeyName, ExpiresAt: s.clock.Now().Add(90 * 24 * time.Hour)})

	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range max(opts.Accounts, 0) {
		p := platforms[i%len(platforms)]
		s.addAccountLocked(AccountSpec{
			Name:      fmt.Sprintf("%s account %d", p, i+1),
			Platform:  p,
			CreatedAt: base.Add(time.Duration(i) * 37 * time.Hour),
		})
	}
	foreign := s.addAccountLocked(AccountSpec{Name: "another organization's account", Platform: "slack", CreatedAt: base})
	s.accounts[foreign].orgID = newID(organizationPrefix, s.rng.IntN)
	s.foreignID = foreign

	actions := []string{"key.created", "account.connected", "backup.triggered", "account.updated"}
	for i := range opts.AuditLogs {
		s.seq++
		s.logs = append(s.logs, &auditLog{
			id: newID(auditLogPrefix, s.rng.IntN), orgID: s.org.ID,
			createdAt: base.Add(time.Duration(i) * time.Hour), seq: s.seq,
			action: actions[i%len(actions)], actor: "user:owner@example.com",
			resourceType: "account", resourceID: s.sortedAccountIDs()[i%max(opts.Accounts, 1)],
		})
	}
	return s
}

// KeySpec describes an API key to add.
type KeySpec struct {
	Name      string
	ExpiresAt time.Time // zero: 90 days from now
	// OtherOrganization makes a key of another organization (401 here).
	OtherOrganization bool
	// OwnerRevoked: the user who created the key lost access (401).
	OwnerRevoked bool
	// ReadOnly keys may not trigger backups (403).
	ReadOnly bool
	// Restricted accounts are off limits to this key (403).
	Restricted []string
}

// AddKey adds an API key and returns its secret.
func (s *Server) AddKey(k KeySpec) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addKeyLocked(k)
}

func (s *Server) addKeyLocked(k KeySpec) string {
	secret := "bks_" + newID("", s.rng.IntN) + newID("", s.rng.IntN)
	if k.ExpiresAt.IsZero() {
		k.ExpiresAt = s.clock.Now().Add(90 * 24 * time.Hour)
	}
	if k.Name == "" {
		k.Name = "key-" + secret[4:10]
	}
	key := &apiKey{secret: secret, name: k.Name, orgID: s.org.ID, expiresAt: k.ExpiresAt.UTC().Truncate(time.Second),
		ownerRevoked: k.OwnerRevoked, readOnly: k.ReadOnly, restricted: map[string]bool{}}
	if k.OtherOrganization {
		key.orgID = newID(organizationPrefix, s.rng.IntN)
	}
	for _, id := range k.Restricted {
		key.restricted[id] = true
	}
	s.keys[secret] = key
	return secret
}

// AccountSpec describes an account to add.
type AccountSpec struct {
	// ID is the account's id; empty generates one from the seed.
	ID          string
	Name        string
	Platform    string       // default "google_workspace"
	ServiceType string       // default "backup"
	State       AccountState // default StateActive
	// BackupStatus is the status before any backup is triggered (default "success").
	BackupStatus string
	// FailWith makes every backup of the account fail with this error text.
	FailWith  string
	CreatedAt time.Time // default: the clock's now
}

// AddAccount adds an account to the organization and returns its id.
func (s *Server) AddAccount(a AccountSpec) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addAccountLocked(a)
}

func (s *Server) addAccountLocked(a AccountSpec) string {
	if a.Platform == "" {
		a.Platform = "google_workspace"
	}
	if a.ServiceType == "" {
		a.ServiceType = "backup"
	}
	if a.State == "" {
		a.State = StateActive
	}
	if a.BackupStatus == "" {
		a.BackupStatus = "success"
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.clock.Now()
	}
	if a.Name == "" {
		a.Name = a.Platform + " account"
	}
	if a.ID == "" {
		a.ID = newID(accountPrefix, s.rng.IntN)
	}
	s.seq++
	acc := &account{
		id: a.ID, orgID: s.org.ID, name: a.Name,
		platform: a.Platform, serviceType: a.ServiceType, createdAt: a.CreatedAt.UTC(), seq: s.seq,
		state: a.State, initialStatus: a.BackupStatus, failWith: a.FailWith,
	}
	s.accounts[acc.id] = acc
	return acc.id
}

// KeySecrets lists the secret of every key this server knows.
func (s *Server) KeySecrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, k)
	}
	return out
}

// DemoKey is the secret of the seeded key, valid for 90 days.
func (s *Server) DemoKey() string { return s.demoKey }

// OrganizationID is the id of the served organization.
func (s *Server) OrganizationID() string { return s.org.ID }

// ForeignAccountID is the id of an account of another organization (403).
func (s *Server) ForeignAccountID() string { return s.foreignID }

// AccountIDs lists the organization's accounts, oldest first.
func (s *Server) AccountIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedAccountIDs()
}

func (s *Server) sortedAccountIDs() []string {
	var out []*account
	for _, a := range s.accounts {
		if a.orgID == s.org.ID && !a.deleted {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i].createdAt, out[i].seq, out[j].createdAt, out[j].seq) })
	idsOut := make([]string, len(out))
	for i, a := range out {
		idsOut[i] = a.id
	}
	return idsOut
}

// DeleteAccount removes an account, as if disconnected out of band.
func (s *Server) DeleteAccount(id string) { s.deleteAccount(id) }

// deleteAccount deletes the account, and says whether there was one to
// delete.
func (s *Server) deleteAccount(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[id]
	if a == nil || a.deleted {
		return false
	}
	a.deleted = true
	return true
}

// SetAccountFailure makes the account's next backups fail with errText
// ("" for success).
func (s *Server) SetAccountFailure(id, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[id]; a != nil {
		a.failWith = errText
	}
}

// SetRateLimit changes every key's per-second allowance.
func (s *Server) SetRateLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit = max(n, 1)
}

// RotateCursorKey invalidates every cursor handed out so far, as a service
// restart or a key rotation would.
func (s *Server) RotateCursorKey() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = rand.Read(s.cursorKey)
}

// BackupStatus is the current backup_status of an account, as the API would
// report it.
func (s *Server) BackupStatus(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[id]; a != nil {
		return s.accountStatus(a)
	}
	return ""
}

func (s *Server) accountStatus(a *account) string {
	if n := len(a.backups); n > 0 {
		st, _, _ := a.backups[n-1].status(s.clock.Now())
		return st
	}
	return a.initialStatus
}

func less(ta time.Time, sa int, tb time.Time, sb int) bool {
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return sa < sb
}

// AddBackups records n finished backups of an account, an hour apart and
// ending before the clock's now, as if taken before this server started.
// Every failEvery-th one failed (0: none), with errText.
func (s *Server) AddBackups(accountID string, n, failEvery int, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[accountID]
	if acc == nil {
		return
	}
	start := s.clock.Now().Add(-time.Duration(n+1) * time.Hour)
	var old []*backup
	for i := range n {
		s.seq++
		b := &backup{shownOffset: s.offset, id: newID(backupPrefix, s.rng.IntN), accountID: acc.id,
			createdAt: start.Add(time.Duration(i) * time.Hour), seq: s.seq, pendingFor: time.Minute, runningFor: 10 * time.Minute}
		if failEvery > 0 && (i+1)%failEvery == 0 {
			b.failWith = errText
		}
		old = append(old, b)
	}
	acc.backups = append(old, acc.backups...)
}

// BackupSpec is one finished backup of an account's history.
type BackupSpec struct {
	// ID is the backup's id; empty generates one from the seed.
	ID        string
	CreatedAt time.Time
	// Error, when set, makes it a failed backup.
	Error string
}

// AddHistory records finished backups of an account at the given times
// (each took 11 minutes and ended before the clock's now), so that tests
// build histories of known shape: a latest success of known age, or
// failures past a page.
func (s *Server) AddHistory(accountID string, backups ...BackupSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if acc := s.accounts[accountID]; acc != nil {
		s.addHistoryLocked(acc, backups...)
	}
}

// AddConnectionBackups gives each of the organization's accounts without a backup, whose backup_status reads success,
// the successful backup that status stands for, taken an hour after the account was connected: the command's accounts
// then list what their status says.
func (s *Server) AddConnectionBackups() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.sortedAccountIDs() {
		if acc := s.accounts[id]; len(acc.backups) == 0 && acc.initialStatus == "success" {
			s.addHistoryLocked(acc, BackupSpec{CreatedAt: acc.createdAt.Add(time.Hour)})
		}
	}
}

func (s *Server) addHistoryLocked(acc *account, backups ...BackupSpec) {
	for _, spec := range backups {
		s.seq++
		id := spec.ID
		if id == "" {
			id = newID(backupPrefix, s.rng.IntN)
		}
		acc.backups = append(acc.backups, &backup{shownOffset: s.offset, id: id, accountID: acc.id,
			createdAt: spec.CreatedAt.UTC().Truncate(time.Second), seq: s.seq, pendingFor: time.Minute, runningFor: 10 * time.Minute,
			failWith: spec.Error})
	}
	slices.SortStableFunc(acc.backups, func(a, b *backup) int { return a.createdAt.Compare(b.createdAt) })
}

// ExampleAccountID and ExampleBackupID are the ids the provider's
// documentation examples use; the backup-mock command serves them (see
// AddExamples), so that the examples, imports included, run as written.
const (
	ExampleAccountID = "acc_0123456789abcdef"
	ExampleBackupID  = "bkp_0123456789abcdef"
)

// AddExamples adds the account the documentation examples name and, a
// day old, its successful backup ExampleBackupID.
func (s *Server) AddExamples() {
	s.AddAccount(AccountSpec{ID: ExampleAccountID, Name: "Example CRM (docs)", Platform: "salesforce"})
	s.AddHistory(ExampleAccountID, BackupSpec{ID: ExampleBackupID, CreatedAt: s.clock.Now().Add(-24 * time.Hour)})
}

// AddRecentBackups records n finished backups of an account taken after
// its newest one and ended by the clock's now, as scheduled backups that
// piled up since: they push the account's earlier backups down its listing.
func (s *Server) AddRecentBackups(accountID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[accountID]
	if acc == nil || n <= 0 {
		return
	}
	now := s.clock.Now()
	from := now.Add(-time.Duration(n+1) * time.Minute)
	if k := len(acc.backups); k > 0 {
		last := acc.backups[k-1]
		if end := last.createdAt.Add(last.pendingFor + last.runningFor); end.After(from) {
			from = end
		}
	}
	step := now.Sub(from) / time.Duration(n+1)
	for i := range n {
		s.seq++
		acc.backups = append(acc.backups, &backup{shownOffset: s.offset, id: newID(backupPrefix, s.rng.IntN), accountID: acc.id,
			createdAt: from.Add(time.Duration(i+1) * step).Truncate(time.Second), seq: s.seq})
	}
}

// NewestBackupID is the id of the account's newest backup, or "".
func (s *Server) NewestBackupID(accountID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	acc := s.accounts[accountID]
	if acc == nil || len(acc.backups) == 0 {
		return ""
	}
	return acc.backups[len(acc.backups)-1].id
}
