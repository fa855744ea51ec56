package client

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

func TestKeyNeverPrinted(t *testing.T) {
	t.Parallel()
	const key = "very-secret-key-123"
	c, err := New(Options{BaseURL: "https://backup.example.com", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		sprint("%v", c), sprint("%+v", c), sprint("%#v", c), sprint("%s", c.key), sprint("%#v", c.opts),
	} {
		if strings.Contains(s, key) {
			t.Fatalf("key printed: %s", s)
		}
	}
}

// maxBaseURLMessage bounds a base URL error's message, whatever base_url
// holds.
const maxBaseURLMessage = 300

// No base URL error shows credentials, a query, a fragment or the key,
// however malformed the URL, nor grows with it; and none is a url.Error,
// whose text is the raw URL.
func TestBaseURLErrorsShowNoCredentials(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 10<<10)
	cases := []struct {
		raw     string
		secrets []string
		want    string // the whole message, when given
	}{
		{raw: "https//ci:Pa55w0rd@host", secrets: []string{"Pa55w0rd", "ci:"},
			want: `invalid base URL "https//host": it must not carry credentials, a query or a fragment`},
		{raw: "https://ci:Pa55%w0rd@host", secrets: []string{"Pa55", "w0rd", "%w0", "ci:"},
			want: `invalid base URL "https://host": it must not carry credentials, a query or a fragment`},
		{raw: "https://host?token=s3cret", secrets: []string{"s3cret", "token"},
			want: `invalid base URL "https://host": it must not carry credentials, a query or a fragment`},
		{raw: "https://user:pass@host/path?x=1#f", secrets: []string{"user", "pass", "x=1", "#f"},
			want: `invalid base URL "https://host/path": it must not carry credentials, a query or a fragment`},
		{raw: "http://a:b@[::1", secrets: []string{"a:b"},
			want: `invalid base URL "http://[::1": it must not carry credentials, a query or a fragment`},
		{raw: "ht!tp://u:p@h", secrets: []string{"u:p"},
			want: `invalid base URL "ht!tp://h": it must not carry credentials, a query or a fragment`},
		{raw: "https://" + hostileKey + "@host", secrets: []string{hostileKey},
			want: `invalid base URL "https://host": it must not carry credentials, a query or a fragment`},
		{raw: "https://ci:" + hostileKey + "@host", secrets: []string{hostileKey, "ci:"}},
		// The key where no credentials go: masked all the same.
		{raw: hostileKey, secrets: []string{hostileKey},
			want: `invalid base URL "[REDACTED]": it has no scheme; add https:// (for example https://[REDACTED])`},
		{raw: "ftp://" + long, secrets: []string{strings.Repeat("a", maxShownBaseURL+1)}},
		{raw: "https://u:" + long + "@host", secrets: []string{"aaaa"},
			want: `invalid base URL "https://host": it must not carry credentials, a query or a fragment`},
		{raw: "https://host/?q=" + long, secrets: []string{"aaaa"}},
		// Delimiters in the wrong part: a "#", "?" or "/" in a password,
		// an "@" in a query.
		{raw: "https://u:pa#ss@host", secrets: []string{"pa", "ss"},
			want: `invalid base URL "https://": it must not carry credentials, a query or a fragment`},
		{raw: "https://u:pa?ss@host/x", secrets: []string{"pa", "ss"}},
		{raw: "https://u:pa/ss@host", secrets: []string{"pa", "ss"},
			want: `invalid base URL "https://host": it must not carry credentials, a query or a fragment`},
		{raw: "https://host/?token=abc@def", secrets: []string{"abc", "def", "token"}},
		{raw: "user:pass@host", secrets: []string{"user", "pass"},
			want: `invalid base URL "host": it must not carry credentials, a query or a fragment`},
		{raw: "?token=s3cret", secrets: []string{"s3cret"},
			want: `invalid base URL (not shown: it may hold credentials): it must not carry credentials, a query or a fragment`},
		// url.Parse refusals, told without its text (which quotes the URL,
		// or a piece of a port or an escape).
		{raw: "https://host:pa55", secrets: []string{`":pa55"`},
			want: `invalid base URL "https://host:pa55": its port is not a number`},
		{raw: "https://ho%zzst", secrets: []string{`"%zz"`},
			want: `invalid base URL "https://ho%zzst": it holds a % not followed by two hexadecimal digits (write %25 for a % itself)`},
		{raw: "http://[::1", want: `invalid base URL "http://[::1": its IPv6 address is malformed (write it in brackets: https://[2001:db8::1]:8443)`},
		{raw: "https://host\x1b]0;PWNED\x07/x", secrets: []string{"\x1b", "\x07"},
			want: `invalid base URL "https://host]0;PWNED/x": it holds control characters`},
		{raw: "https//host", want: `invalid base URL "https//host": the colon after https is missing; write https://`},
	}
	for _, tc := range cases {
		_, err := New(Options{BaseURL: tc.raw, APIKey: hostileKey})
		if err == nil {
			t.Errorf("%.40q: accepted", tc.raw)
			continue
		}
		msg := err.Error()
		var uErr *url.Error
		if !errors.Is(err, ErrInvalidBaseURL) || errors.As(err, &uErr) {
			t.Errorf("%.40q: %T %v", tc.raw, err, err)
		}
		if tc.want != "" && msg != tc.want {
			t.Errorf("%.40q:\n got %s\nwant %s", tc.raw, msg, tc.want)
		}
		for _, s := range tc.secrets {
			if strings.Contains(msg, s) {
				t.Errorf("%.40q: the message shows %q: %s", tc.raw, s, msg)
			}
		}
		if len(msg) > maxBaseURLMessage || strings.ContainsFunc(msg, unicode.IsControl) {
			t.Errorf("%.40q: a message of %d bytes: %q", tc.raw, len(msg), msg)
		}
	}
}

// The plain http refusal quotes the URL as it is shown anywhere else.
func TestInsecureBaseURLErrorIsShownSafely(t *testing.T) {
	t.Parallel()
	_, err := New(Options{BaseURL: "http://backup.example.com/" + strings.Repeat("p", 1000), APIKey: hostileKey})
	if !errors.Is(err, ErrInsecureURL) || len(err.Error()) > maxBaseURLMessage {
		t.Fatalf("%v", err)
	}
}

func TestShownBaseURL(t *testing.T) {
	t.Parallel()
	g := textGuard{key: newSecret(hostileKey)}
	for raw, want := range map[string]string{
		"https://backup.example.com/prefix": "https://backup.example.com/prefix",
		"  https://backup.example.com  ":    "https://backup.example.com",
		"https://user:pass@host/p?q=1#f":    "https://host/p",
		"https//ci:Pa55w0rd@host":           "https//host",
		"ht!tp://u:p@h":                     "ht!tp://h",
		"u:p@h//x@y":                        "y",
		"https://u:p@":                      "https://",
		"https://host/a@b":                  "https://b", // an "@" in a path: shown short of it, safely
		"//user@host":                       "//host",    // a scheme-relative URL keeps its "//"
		"?q=1":                              "",
		"@":                                 "",
		"https://" + hostileKey:             "https://" + redacted,
	} {
		if got := shownBaseURL(raw, g); got != want {
			t.Errorf("shownBaseURL(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := shownBaseURL("https://"+strings.Repeat("h", 500), g); len(got) > maxShownBaseURL+50 {
		t.Errorf("a long URL is shown whole: %d bytes", len(got))
	}
}

func TestBaseURLMayHoldSecrets(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]bool{
		"https://backup.example.com":          false,
		" https://backup.example.com\n":       false,
		"http://127.0.0.1:8080/prefix":        false,
		"https://u:p@backup.example.com":      true,
		"https://backup.example.com?t=1":      true,
		"https://backup.example.com#f":        true,
		"https://" + hostileKey + ".com":      true,
		"https://" + strings.Repeat("h", 200): true,
	} {
		if got := BaseURLMayHoldSecrets(raw, hostileKey); got != want {
			t.Errorf("BaseURLMayHoldSecrets(%.40q) = %v, want %v", raw, got, want)
		}
	}
}

func TestBaseURLWithoutSchemeSaysAddHTTPS(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"127.0.0.1:41489", "backup.example.com"} {
		_, err := New(Options{BaseURL: raw, APIKey: hostileKey})
		if !errors.Is(err, ErrInvalidBaseURL) || !strings.Contains(err.Error(), "add https://") ||
			!strings.Contains(err.Error(), "https://"+raw) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
