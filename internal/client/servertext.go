package client

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxShownText bounds a server string shown to the user, in characters.
const MaxShownText = 300

// maxShownRequestID bounds a request id that is not a UUID.
const maxShownRequestID = 64

// Redacted replaces the API key wherever the service echoed it.
const Redacted = "[REDACTED]"

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// textGuard makes the service's untrusted strings safe to show: the key
// masked, control characters (escape sequences among them) removed, cut.
type textGuard struct{ key *secret }

// text cleans s and cuts it to MaxShownText characters.
func (g textGuard) text(s string) string { return g.cut(g.clean(s), MaxShownText) }

// clean folds s with the key masked before, after, and in its folded form:
// folding can join a key's pieces (the fuzz target found one).
func (g textGuard) clean(s string) string {
	key := ""
	if g.key != nil {
		key = g.key.value
	}
	if key == "" {
		return fold(s)
	}
	s = fold(strings.ReplaceAll(s, key, Redacted))
	s = strings.ReplaceAll(s, key, Redacted)
	if folded := g.key.folded; folded != "" && folded != key {
		s = strings.ReplaceAll(s, folded, Redacted)
	}
	return s
}

// fold removes invalid UTF-8, control and format characters, and folds
// white space.
func fold(s string) string {
	s = strings.ToValidUTF8(s, "")
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

// requestID shows a UUID as it is, and anything else cleaned, cut and
// quoted, so that it does not read as an id to trust.
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

func (g textGuard) wrap(err error) error {
	if err == nil {
		return nil
	}
	return &guardedError{shown: g.text(err.Error()), err: err}
}

// guarded is implemented by every decoded answer, to clean its strings; ids
// are checked instead, so that cleaning cannot make a hostile id look valid.
type guarded interface{ guard(textGuard) }

// maxShownWord bounds a short server string: a status, a platform.
const maxShownWord = 64

func (g textGuard) word(s string) string { return g.cut(g.clean(s), maxShownWord) }

func (b *Backup) guard(g textGuard) {
	b.Status = g.word(b.Status)
	if b.Error != nil {
		e := g.text(*b.Error)
		b.Error = &e
	}
}

func (a *Account) guard(g textGuard) {
	a.Name = g.text(a.Name)
	a.BackupStatus = g.word(a.BackupStatus)
	a.Platform = g.word(a.Platform)
	a.ServiceType = g.word(a.ServiceType)
}

func (t *Token) guard(g textGuard) {
	t.Name = g.text(t.Name)
	t.Organization.Name = g.text(t.Organization.Name)
}

func (l *AuditLog) guard(g textGuard) {
	l.Action = g.word(l.Action)
	l.Actor = g.text(l.Actor)
	l.ResourceType = g.word(l.ResourceType)
	l.ResourceID = g.text(l.ResourceID) // any kind: no one format to check
}
