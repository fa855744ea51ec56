package client

import "time"

// Backup statuses the service is known to use; others are passed through.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// InProgress reports whether a backup or account status means a backup is
// still under way.
func InProgress(status string) bool { return status == StatusPending || status == StatusRunning }

// Account is an account of the organization. Unknown fields are ignored.
type Account struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	BackupStatus string    `json:"backup_status"`
	Platform     string    `json:"platform"`
	ServiceType  string    `json:"service_type"`
	CreatedAt    time.Time `json:"created_at"`
}

// Token describes the presented API key.
type Token struct {
	Name         string       `json:"name"`
	ExpiresAt    time.Time    `json:"expires_at"`
	Organization Organization `json:"organization"`
}

// Organization is the organization a key belongs to.
type Organization struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Backup is one backup of an account.
type Backup struct {
	ID          string     `json:"id"`
	AccountID   string     `json:"account_id"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Error       *string    `json:"error"`
}

// Good reports whether b is a success whose record does not contradict
// itself: completed_at present and not before created_at, and no error.
func (b Backup) Good() bool {
	return b.Status == StatusSuccess && b.CompletedAt != nil && !b.CompletedAt.Before(b.CreatedAt) &&
		(b.Error == nil || *b.Error == "")
}

// AuditLog is one audit log record.
type AuditLog struct {
	ID           string    `json:"id"`
	CreatedAt    time.Time `json:"created_at"`
	Action       string    `json:"action"`
	Actor        string    `json:"actor"`
	ResourceType string    `json:"resource_type"`
	ResourceID   string    `json:"resource_id"`
}

// Order of a listing by its primary timestamp.
type Order string

// Orders the service accepts.
const (
	OrderAsc  Order = "asc"
	OrderDesc Order = "desc"
)
