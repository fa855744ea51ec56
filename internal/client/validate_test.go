package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A proxy or a wrong host answering 200 with `{}`, `null` or a body without
// the fields the contract requires must not pass as "no backups" or "a valid
// key": each is a DecodeError, never an empty or zero answer.
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
			_, err := c.ListAccounts(context.Background(), ListOptions{})
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
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("want a DecodeError, got %v", err)
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
	var de *DecodeError
	if a != nil || !errors.Is(err, ErrOtherAccount) || !errors.As(err, &de) {
		t.Fatalf("Account = %+v, %v; want a *DecodeError matching ErrOtherAccount", a, err)
	}
	if !strings.Contains(err.Error(), "asked for acc_0123456789abcdef, the answer is for acc_OTHER00000000000") {
		t.Errorf("the error does not name both accounts: %v", err)
	}
}
