package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// A proxy or a wrong host answering 200 with `{}`, `null` or a body without
// the fields the contract requires must not pass as "no backups" or "a valid
// key": each is a decodeError, never an empty or zero answer.
func TestContractRequiredFieldsAreEnforced(t *testing.T) {
	t.Parallel()
	const acct = "acc_0123456789abcdef"
	calls := map[string]func(*Client) error{
		"token": func(c *Client) error { _, err := c.Token(context.Background()); return err },
		"account": func(c *Client) error {
			_, err := c.Account(context.Background(), acct)
			return err
		},
		"accounts": func(c *Client) error {
			_, err := Collect(c.Accounts(context.Background(), ListOptions{}))
			return err
		},
		"backups": func(c *Client) error {
			_, err := Collect(c.Backups(context.Background(), acct, ListOptions{}))
			return err
		},
		"audit logs": func(c *Client) error {
			_, err := Collect(c.AuditLogs(context.Background(), ListOptions{}))
			return err
		},
	}
	cases := []struct {
		call, body string
	}{
		{"token", `{}`},
		{"token", `null`},
		{"token", `{"name":"ci"}`},
		{"token", `{"name":"ci","expires_at":"2030-01-01T00:00:00Z"}GARBAGE`},
		{"account", `{}`},
		{"account", `{"name":"crm"}`},
		{"account", `{"id":"../../api/v1/token","name":"crm"}`},
		{"account", `{"id":"acc_0123456789abcdef\n","name":"crm"}`},
		{"accounts", `{}`},
		{"accounts", `null`},
		{"accounts", `{"data":null,"pagination":{"limit":50}}`},
		{"accounts", `{"data":[{}],"pagination":{"limit":50}}`},
		{"backups", `{}`},
		{"backups", `{"pagination":{"limit":50}}`},
		{"backups", `{"data":[{"id":"bkp_0123456789abcdef"}],"pagination":{"limit":50}}`},
		{"backups", `{"data":[{"status":"success","created_at":"2026-01-01T00:00:00Z"}],"pagination":{"limit":50}}`},
		{"backups", `{"data":[{"id":"bkp_0123456789abcdef","status":"\u001b\u200b","created_at":"2026-01-01T00:00:00Z"}],"pagination":{"limit":50}}`},
		{"audit logs", `{"data":[{"action":"x"}],"pagination":{"limit":50}}`},
	}
	for _, tc := range cases {
		t.Run(tc.call+" "+tc.body, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(ts.Close)
			c, err := New(Options{BaseURL: ts.URL, APIKey: "k", Clock: newFakeClock()})
			if err != nil {
				t.Fatal(err)
			}
			err = calls[tc.call](c)
			var de *decodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a decodeError, got %v", err)
			}
		})
	}
}

// A hostile id is refused, never cleaned into a valid-looking one: a single
// answer fails to decode, a listing leaves the record out.
func TestHostileIDsAreRefused(t *testing.T) {
	t.Parallel()
	g := textGuard{key: newSecret(guardKey)}
	for _, id := range []string{"acc_0123456789abcde\x1bf", "acc_0123456789abcdef/../../token", "acc_0123456789abcdef\n", guardKey} {
		body, _ := json.Marshal(map[string]any{"id": id, "name": "n"})
		if err := decodeStrict(body, &Account{}, g); err == nil {
			t.Errorf("account id %q accepted", id)
		}
		body, _ = json.Marshal(map[string]any{"name": "n", "expires_at": "2027-01-01T00:00:00Z", "organization": map[string]any{"id": id}})
		if err := decodeStrict(body, &Token{}, g); err == nil {
			t.Errorf("organization id %q accepted", id)
		}
		body, _ = json.Marshal(map[string]any{"id": "bkp_0123456789abcdef", "account_id": id, "status": "success", "created_at": "2026-11-21T10:00:00Z"})
		if err := decodeStrict(body, &Backup{}, g); err == nil {
			t.Errorf("backup of account id %q accepted", id)
		}
	}
}

// An account answer for another account than the one asked for is
// refused, as a decode error that says so: a service (or a proxy that
// mixes up its caches) does not choose which account a record stands for.
func TestAccountAnswerForAnotherAccountIsRefused(t *testing.T) {
	t.Parallel()
	c, _ := hostileClient(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"id":"acc_OTHER00000000000","name":"other","backup_status":"success"}`))
	}, nil)
	a, err := c.Account(t.Context(), "acc_0123456789abcdef")
	var de *decodeError
	if a != nil || !errors.Is(err, errOtherAccount) || !errors.As(err, &de) {
		t.Fatalf("Account = %+v, %v; want a *decodeError matching errOtherAccount", a, err)
	}
	if !strings.Contains(err.Error(), "asked for acc_0123456789abcdef, the answer is for acc_OTHER00000000000") {
		t.Errorf("the error does not name both accounts: %v", err)
	}
}

const guardKey = "bks_guardTestKey0123456789abcdef"

// hostileText is what a hostile service puts in every text field: an
// escape sequence that retitles a terminal and recolours it, the key, and
// format characters that reorder or hide text.
const hostileText = "ci\x1b]0;TITLE-PWNED\x07\x1b[31m" + guardKey + "\u202e\u200b\r\n"

// recordJSON is one record of type t as JSON, built from t's own fields,
// so that a field added later is covered without touching this test: every
// text field holds text, every id field a valid id (ids are checked, not
// cleaned; see TestHostileIDsAreRefused).
func recordJSON(t reflect.Type, text string) map[string]any {
	out := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		switch {
		case f.Type == reflect.TypeFor[time.Time](), f.Type == reflect.TypeFor[*time.Time]():
			out[name] = "2026-11-21T10:00:00Z"
		case f.Type.Kind() == reflect.Struct:
			out[name] = recordJSON(f.Type, text)
		case f.Name == "ID" || strings.HasSuffix(f.Name, "ID") && f.Name != "ResourceID":
			out[name] = validID(t, f.Name)
		default:
			out[name] = text
		}
	}
	return out
}

// validID is a well-formed id for field name of type t.
func validID(t reflect.Type, name string) string {
	switch {
	case name == "AccountID" || t == reflect.TypeFor[Account]():
		return "acc_0123456789abcdef"
	case t == reflect.TypeFor[Backup]():
		return "bkp_0123456789abcdef"
	case t == reflect.TypeFor[AuditLog]():
		return "log_0123456789abcdef"
	case t == reflect.TypeFor[Organization]():
		return "org_0123456789abcdef"
	}
	panic("no id format for " + t.Name() + "." + name)
}

// shownStrings collects every string v holds, with its field path.
func shownStrings(v reflect.Value, at string, out map[string]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			shownStrings(v.Elem(), at, out)
		}
	case reflect.String:
		out[at] = v.String()
	case reflect.Slice:
		for i := range v.Len() {
			shownStrings(v.Index(i), at+"[]", out)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				shownStrings(v.Field(i), at+"."+v.Type().Field(i).Name, out)
			}
		}
	}
}

// decodedRecords decodes body-building text into every record type the
// client decodes, single answers and listings, as the client does.
func decodedRecords(t *testing.T, text string) map[string]any {
	t.Helper()
	g := textGuard{key: newSecret(guardKey)}
	encoded, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	decoded := map[string]any{}
	decode := func(name string, out record) {
		body := strings.ReplaceAll(recordTemplates()[name], textPlaceholder, string(encoded))
		if err := decodeStrict([]byte(body), out, g); err == nil {
			decoded[name] = out
		}
	}
	decode("token", &Token{})
	decode("account", &Account{})
	decode("accounts", &pageDecoder[Account]{text: g,
		idOf: func(a *Account) string { return a.ID }, accept: func(a *Account) bool { return AccountIDFormat.MatchString(a.ID) }})
	decode("backups", &pageDecoder[Backup]{text: g,
		idOf: func(b *Backup) string { return b.ID }, accept: func(b *Backup) bool { return BackupIDFormat.MatchString(b.ID) }})
	decode("audit logs", &pageDecoder[AuditLog]{text: g,
		idOf: func(l *AuditLog) string { return l.ID }, accept: func(l *AuditLog) bool { return auditLogIDFormat.MatchString(l.ID) }})
	return decoded
}

// textPlaceholder stands for the text in recordTemplates, JSON-quoted.
const textPlaceholder = `"\u0000TEXT\u0000"`

// recordTemplates are the JSON answers decodedRecords decodes, built once
// (by reflection over the record types) with a placeholder for the text,
// so that a fuzz input costs a substitution, not a rebuild.
var recordTemplates = sync.OnceValue(func() map[string]string {
	const marker = "\x00TEXT\x00"
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return strings.ReplaceAll(string(b), `"\u0000TEXT\u0000"`, textPlaceholder)
	}
	listing := func(rec reflect.Type) string {
		return enc(map[string]any{"data": []any{recordJSON(rec, marker)}, "pagination": map[string]any{"limit": 50}})
	}
	return map[string]string{
		"token":      enc(recordJSON(reflect.TypeFor[Token](), marker)),
		"account":    enc(recordJSON(reflect.TypeFor[Account](), marker)),
		"accounts":   listing(reflect.TypeFor[Account]()),
		"backups":    listing(reflect.TypeFor[Backup]()),
		"audit logs": listing(reflect.TypeFor[AuditLog]()),
	}
})

// unsafeText says what is wrong with a string about to reach the state, a
// plan or a terminal: a control or format character, or the key.
func unsafeText(s string) string {
	if strings.Contains(s, guardKey) {
		return "holds the API key"
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Sprintf("holds the control or format character %U", r)
		}
	}
	if len([]rune(s)) > maxShownText+40 {
		return "is not bounded"
	}
	return ""
}

// Every string field of every record the client decodes comes out with no
// control or format character and without the key, bounded, whatever the
// service put in it: names, platforms, service types, statuses, errors,
// actions, actors, resource ids, the key's and the organization's names.
func TestEveryDecodedStringIsGuarded(t *testing.T) {
	t.Parallel()
	decoded := decodedRecords(t, hostileText+strings.Repeat("x", 5000))
	for _, name := range []string{"token", "account", "accounts", "backups", "audit logs"} {
		if decoded[name] == nil {
			t.Errorf("%s: refused a record with hostile text but valid ids", name)
		}
	}
	// The text reached the records, cleaned (so the check below is not of
	// placeholders).
	if a, ok := decoded["account"].(*Account); !ok || !strings.HasPrefix(a.Name, "ci]0;TITLE-PWNED[31m"+redacted) {
		t.Fatalf("the account's name is %q", a.Name)
	}
	for name, v := range decoded {
		fields := map[string]string{}
		shownStrings(reflect.ValueOf(v), name, fields)
		for at, s := range fields {
			if why := unsafeText(s); why != "" {
				t.Errorf("%s %s: %q", at, why, s)
			}
		}
	}
}

// The property above for any text: whatever the service sends in a text
// field, nothing decoded holds a control or format character or the key.
func FuzzDecodeRecords(f *testing.F) {
	for _, seed := range []string{hostileText, "", "\x00", guardKey[:10] + "\xff" + guardKey[10:], "\u202e" + guardKey, strings.Repeat("é", 400)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, v := range decodedRecords(t, text) {
			fields := map[string]string{}
			shownStrings(reflect.ValueOf(v), name, fields)
			for at, s := range fields {
				if why := unsafeText(s); why != "" {
					t.Errorf("%s %s: %q", at, why, s)
				}
			}
		}
	})
}

// A key whose own characters cleaning would change (a no-break space, two
// spaces, a zero-width character) is masked all the same, whether the
// service echoes it whole or split by an invalid byte.
func TestKeyWithCharactersCleaningChangesIsMasked(t *testing.T) {
	t.Parallel()
	for _, key := range []string{
		"bks_abc\u00a0def0123456789",
		"bks_abc  def0123456789",
		"bks_abc\u200bdef0123456789",
		"bks_abc\u202edef0123456789",
		"bks_\u00a0\u200b  abcdef0123456789",
	} {
		if err := checkAPIKey(key); err != nil {
			t.Fatalf("%q: %v (the test wants keys a user can configure)", key, err)
		}
		g := textGuard{key: newSecret(key)}
		half := len(key) / 2
		for _, echoed := range []string{
			"invalid key " + key + " presented",
			"invalid key " + key[:half] + "\xff" + key[half:] + " presented",
			key,
		} {
			got := g.text(echoed)
			if !strings.Contains(got, redacted) || strings.Contains(got, key) || strings.Contains(got, fold(key)) ||
				strings.Contains(got, "0123456789") {
				t.Errorf("key %q echoed as %q shows as %q", key, echoed, got)
			}
		}
	}
}

// A text of exactly the limit is kept whole; a longer one says, in
// characters rather than bytes, how many it dropped.
func TestCutCountsCharacters(t *testing.T) {
	g := textGuard{}
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"ééé", 3, "ééé"},
		{"abcd", 3, "abc… (cut: 1 more characters)"},
		{"éééééé", 2, "éé… (cut: 4 more characters)"},
	} {
		if got := g.cut(tc.in, tc.n); got != tc.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestIDFormats(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"acc_0123456789abcdef":  true,
		"acc_ABCDEFGHIJKLMNOP":  true,
		"acc_0123456789abcde":   false, // 15
		"acc_0123456789abcdef0": false, // 17
		"ACC_0123456789abcdef":  false,
		"acc_0123456789abcde-":  false,
		"bkp_0123456789abcdef":  false,
		"":                      false,
		"acc_0123456789abcdéf":  false,
	}
	for in, want := range cases {
		if got := AccountIDFormat.MatchString(in); got != want {
			t.Errorf("AccountIDFormat.MatchString(%q) = %v, want %v", in, got, want)
		}
	}
}

// Good is a success whose record holds together: completed_at present and
// not before created_at, and no error.
func TestBackupGood(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := created.Add(d); return &v }
	text := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		b    Backup
		want bool
	}{
		{"a success", Backup{Status: StatusSuccess, CreatedAt: created, CompletedAt: at(time.Minute)}, true},
		{"completed as it started", Backup{Status: StatusSuccess, CreatedAt: created, CompletedAt: at(0)}, true},
		{"an empty error", Backup{Status: StatusSuccess, CreatedAt: created, CompletedAt: at(time.Minute), Error: text("")}, true},
		{"no completed_at", Backup{Status: StatusSuccess, CreatedAt: created}, false},
		{"completed before it started", Backup{Status: StatusSuccess, CreatedAt: created, CompletedAt: at(-time.Second)}, false},
		{"an error", Backup{Status: StatusSuccess, CreatedAt: created, CompletedAt: at(time.Minute), Error: text("disk full")}, false},
		{"failed", Backup{Status: StatusFailed, CreatedAt: created, CompletedAt: at(time.Minute)}, false},
	} {
		if got := tc.b.Good(); got != tc.want {
			t.Errorf("%s: good %t, want %t", tc.name, got, tc.want)
		}
	}
}
