package mockservice

import (
	"time"
)

// AccountState says whether an account can be backed up, and if not, why.
type AccountState string

// Account states. Only StateActive is backupable.
const (
	StateActive               AccountState = "active"
	StatePaused               AccountState = "paused"
	StateSubscriptionLapsed   AccountState = "subscription_lapsed"
	StateNeedsReauthorization AccountState = "needs_reauthorization"
)

// reason is the text the service gives in its 422 detail.
func (s AccountState) reason() string {
	switch s {
	case StatePaused:
		return "paused"
	case StateSubscriptionLapsed:
		return "subscription lapsed"
	case StateNeedsReauthorization:
		return "connection needs re-authorization"
	}
	return string(s)
}

type organization struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type apiKey struct {
	secret       string
	name         string
	orgID        string
	expiresAt    time.Time
	ownerRevoked bool
	readOnly     bool
	restricted   map[string]bool
}

type account struct {
	id          string
	orgID       string
	name        string
	platform    string
	serviceType string
	createdAt   time.Time
	seq         int
	state       AccountState
	// initialStatus is the backup_status before any backup of this server.
	initialStatus string
	// failWith makes the account's next backups fail with this error.
	failWith string
	backups  []*backup // oldest first
	deleted  bool
	// quirk is given to the backups queued from now on.
	quirk RecordQuirk
}

type backup struct {
	id         string
	accountID  string
	createdAt  time.Time
	seq        int
	pendingFor time.Duration
	runningFor time.Duration
	failWith   string
	// queuedBy is the label of the request context that queued it (see
	// WithQueuedBy); quirk is how its record contradicts itself.
	queuedBy string
	quirk    RecordQuirk
	// shownOffset is the service's clock offset when it was created: its
	// record keeps the times that clock stamped, whatever the clock does later.
	shownOffset time.Duration
}

// status is the backup's state at now: pending, then running, then its
// outcome.
func (b *backup) status(now time.Time) (status string, completedAt *time.Time, errText *string) {
	switch {
	case now.Before(b.createdAt.Add(b.pendingFor)):
		return "pending", nil, nil
	case now.Before(b.createdAt.Add(b.pendingFor + b.runningFor)):
		return "running", nil, nil
	}
	done := b.createdAt.Add(b.pendingFor + b.runningFor)
	if b.failWith != "" {
		e := b.failWith
		return "failed", &done, &e
	}
	return "success", &done, nil
}

func inProgress(status string) bool { return status == "pending" || status == "running" }

type auditLog struct {
	id           string
	orgID        string
	createdAt    time.Time
	seq          int
	action       string
	actor        string
	resourceType string
	resourceID   string
}

// Wire forms, exactly as the contract shows them.

type accountJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	BackupStatus string `json:"backup_status"`
	Platform     string `json:"platform"`
	ServiceType  string `json:"service_type"`
	CreatedAt    string `json:"created_at"`
}

type backupJSON struct {
	ID          string  `json:"id"`
	AccountID   string  `json:"account_id"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	CompletedAt *string `json:"completed_at"`
	Error       *string `json:"error"`
}

type auditLogJSON struct {
	ID           string `json:"id"`
	CreatedAt    string `json:"created_at"`
	Action       string `json:"action"`
	Actor        string `json:"actor"`
	ResourceType string `json:"resource_type"`
	ResourceID   string `json:"resource_id"`
}

type tokenJSON struct {
	Name         string       `json:"name"`
	ExpiresAt    string       `json:"expires_at"`
	Organization organization `json:"organization"`
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }
