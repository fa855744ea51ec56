package mockservice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// cursorPos is what a cursor carries: the listing it belongs to, its order,
// and the sort key of the last item handed out.
type cursorPos struct {
	Scope string `json:"s"`
	Desc  bool   `json:"d"`
	Time  int64  `json:"t"` // unix nanoseconds
	Seq   int    `json:"q"`
}

var errInvalidCursor = errors.New("invalid cursor")

const macLen = 16

// encodeCursor makes an opaque, tamper-evident cursor: the position in
// base64url, a dot, and a truncated HMAC of it.
func encodeCursor(key []byte, p cursorPos) string {
	raw, _ := json.Marshal(p)
	body := base64.RawURLEncoding.EncodeToString(raw)
	return body + "." + base64.RawURLEncoding.EncodeToString(sign(key, body))
}

// decodeCursor checks a cursor's signature and scope and returns its
// position.
func decodeCursor(key []byte, scope, c string) (cursorPos, error) {
	var p cursorPos
	body, mac, ok := strings.Cut(c, ".")
	if !ok || len(c) > 512 {
		return p, errInvalidCursor
	}
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if err != nil || !hmac.Equal(got, sign(key, body)) {
		return p, errInvalidCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || json.Unmarshal(raw, &p) != nil || p.Scope != scope {
		return cursorPos{}, errInvalidCursor
	}
	// Only the text the service wrote is a cursor: base64 decoding skips
	// line breaks, and JSON accepts other spellings of the same position.
	if encodeCursor(key, p) != c {
		return cursorPos{}, errInvalidCursor
	}
	return p, nil
}

func sign(key []byte, body string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return m.Sum(nil)[:macLen]
}

// item is anything a listing sorts: by time, then by creation sequence.
type item interface{ sortKey() (time.Time, int) }

func (a *account) sortKey() (time.Time, int) { return a.createdAt, a.seq }

// A backup is listed by the created_at it shows: a clock set back between
// two backups lists the later one below the earlier, as a real service
// would, and the rule must not take that order for the order they ran in.
func (b *backup) sortKey() (time.Time, int)   { return b.createdAt.Add(b.shownOffset), b.seq }
func (l *auditLog) sortKey() (time.Time, int) { return l.createdAt, l.seq }

// after reports whether it comes after the cursor position in its order.
func after(it item, p cursorPos) bool {
	t, q := it.sortKey()
	pt := time.Unix(0, p.Time)
	if p.Desc {
		return less(t, q, pt, p.Seq)
	}
	return less(pt, p.Seq, t, q)
}
