package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The records the service answers with, and how each is taken in: decoded
// strictly, its required fields and ids checked, its text cleaned.

// The service's id formats: a prefix and exactly 16 ASCII letters or digits.
var (
	AccountIDFormat      = regexp.MustCompile(`^acc_[A-Za-z0-9]{16}$`)
	BackupIDFormat       = regexp.MustCompile(`^bkp_[A-Za-z0-9]{16}$`)
	OrganizationIDFormat = regexp.MustCompile(`^org_[A-Za-z0-9]{16}$`)
	auditLogIDFormat     = regexp.MustCompile(`^log_[A-Za-z0-9]{16}$`)
)

// Backup statuses the service is known to use; others are passed through.
const (
	StatusPending = "pending"
	StatusRunning = "running"
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// InProgress reports whether a backup or account status means a backup is still under way.
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

func (a *Account) admit(g textGuard) error {
	a.Name, a.BackupStatus = g.text(a.Name), g.word(a.BackupStatus)
	a.Platform, a.ServiceType = g.word(a.Platform), g.word(a.ServiceType)
	switch {
	case a.ID == "":
		return missing("account id")
	case !AccountIDFormat.MatchString(a.ID):
		return fmt.Errorf("%w: account id %q", errMalformedID, a.ID)
	}
	return nil
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

func (t *Token) admit(g textGuard) error {
	t.Name, t.Organization.Name = g.text(t.Name), g.text(t.Organization.Name)
	switch {
	case t.Name == "":
		return missing("token name")
	case t.ExpiresAt.IsZero():
		return missing("token expires_at")
	case t.Organization.ID != "" && !OrganizationIDFormat.MatchString(t.Organization.ID): // absent: see CheckOrganization
		return fmt.Errorf("%w: organization id %q", errMalformedID, t.Organization.ID)
	}
	return nil
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

func (b *Backup) admit(g textGuard) error {
	b.Status = g.word(b.Status)
	if b.Error != nil {
		e := g.text(*b.Error)
		b.Error = &e
	}
	switch {
	case b.ID == "":
		return missing("backup id")
	case !BackupIDFormat.MatchString(b.ID):
		return fmt.Errorf("%w: backup id %q", errMalformedID, b.ID)
	case b.AccountID != "" && !AccountIDFormat.MatchString(b.AccountID):
		return fmt.Errorf("%w: account id %q of backup %s", errMalformedID, b.AccountID, b.ID)
	case b.Status == "":
		return missing("backup status of " + b.ID)
	case b.CreatedAt.IsZero():
		return missing("backup created_at of " + b.ID)
	}
	return nil
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

func (l *AuditLog) admit(g textGuard) error {
	l.Action, l.Actor = g.word(l.Action), g.text(l.Actor)
	l.ResourceType, l.ResourceID = g.word(l.ResourceType), g.text(l.ResourceID) // any kind: no one format to check
	if l.ID == "" {
		return missing("audit log id")
	}
	return nil
}

// Order of a listing by its primary timestamp.
type Order string

// Orders the service accepts.
const (
	OrderAsc  Order = "asc"
	OrderDesc Order = "desc"
)

// A record is refused for a field the API contract requires absent or empty
// (so that `{}` from a proxy does not pass as "no backups"), or a malformed id.
var (
	errMissing     = errors.New("a field the API contract requires is missing")
	errMalformedID = errors.New("an id does not have the documented format")
)

func missing(what string) error { return fmt.Errorf("%w: %s", errMissing, what) }

// record is every decoded answer: admit cleans its strings, then checks its required fields
// and ids. Ids are checked, not cleaned, so that cleaning cannot make a hostile id look valid;
// text is cleaned before the check, so that a status of control characters fails.
type record interface{ admit(textGuard) error }

// streamed is a record that reads itself from the decoder in one pass.
type streamed interface{ decodeFrom(dec *json.Decoder) error }

// decodeStrict decodes one JSON value and refuses anything after it.
func decodeStrict(body []byte, out record, g textGuard) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	var err error
	if s, ok := out.(streamed); ok {
		err = s.decodeFrom(dec)
	} else {
		err = dec.Decode(out)
	}
	if err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("data follows the JSON value")
	}
	return out.admit(g)
}

// Bounds, in characters, of the service's strings shown to the user.
const (
	maxShownText      = 300 // a server string
	maxShownWord      = 64  // a short server string: a status, a platform
	maxShownRequestID = 64  // a request id that is not a UUID
)

// redacted replaces the API key wherever the service echoed it.
const redacted = "[REDACTED]"

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// textGuard makes the service's untrusted strings safe to show: the key
// masked, control characters (escape sequences among them) removed, cut.
type textGuard struct{ key *secret }

// text and word clean s and cut it to maxShownText or maxShownWord characters.
func (g textGuard) text(s string) string { return g.cut(g.clean(s), maxShownText) }
func (g textGuard) word(s string) string { return g.cut(g.clean(s), maxShownWord) }

// clean folds s with the key masked before, after, and in its folded form:
// folding can join a key's pieces (the fuzz target found one).
func (g textGuard) clean(s string) string {
	if g.key == nil || g.key.value == "" {
		return fold(s)
	}
	key := g.key.value
	s = fold(strings.ReplaceAll(s, key, redacted))
	s = strings.ReplaceAll(s, key, redacted)
	if folded := g.key.folded; folded != "" && folded != key {
		s = strings.ReplaceAll(s, folded, redacted)
	}
	return s
}

// fold removes invalid UTF-8 (strings.Map reads each invalid byte as
// ReplacementChar), control and format characters, and folds white space.
func fold(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == unicode.ReplacementChar: // Cf: bidi, zero-width
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// cut keeps the first n characters of s and says how many were dropped.
func (g textGuard) cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s… (cut: %d more characters)", string(r[:n]), len(r)-n)
}

// requestID shows a UUID as it is, anything else cleaned, cut and quoted: not an id to trust.
func (g textGuard) requestID(s string) string {
	if s == "" || uuidRE.MatchString(s) {
		return s
	}
	return strconv.Quote(g.cut(g.clean(s), maxShownRequestID))
}

// guardedError keeps an error for errors.Is/As while showing its text cleaned.
type guardedError struct {
	shown string
	err   error
}

func (e *guardedError) Error() string { return e.shown }
func (e *guardedError) Unwrap() error { return e.err }

// wrap is given only errors that are there (non-nil).
func (g textGuard) wrap(err error) error { return &guardedError{shown: g.text(err.Error()), err: err} }
