package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestEveryEndpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, mockservice.Options{Seed: 1, Accounts: 3, AuditLogs: 4}, nil)
	id := f.srv.AccountIDs()[0]

	tok, err := f.client.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Name != mockservice.DemoKeyName || tok.Organization.ID != f.srv.OrganizationID() || tok.Organization.Name != "Example Org" ||
		time.Until(tok.ExpiresAt) < 89*24*time.Hour {
		t.Errorf("token %+v", tok)
	}

	acc, err := f.client.Account(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if acc.ID != id || acc.BackupStatus != "success" || acc.Platform == "" || acc.ServiceType != "backup" || acc.Name == "" || acc.CreatedAt.IsZero() {
		t.Errorf("account %+v", acc)
	}

	accs, err := f.client.ListAccounts(ctx, ListOptions{})
	if err != nil || len(accs) != 3 {
		t.Fatalf("accounts: %d, %v", len(accs), err)
	}

	trigger := f.client.Trigger(id)
	acct, err := trigger.Post(ctx)
	sent := trigger.Sent()
	if err != nil {
		t.Fatal(err)
	}
	if acct == nil || acct.ID != id || acct.BackupStatus != StatusPending || !sent {
		t.Errorf("triggered %+v, sent %t", acct, sent)
	}

	bks, err := Collect(f.client.Backups(ctx, id, ListOptions{}))
	if err != nil || len(bks) != 1 || !strings.HasPrefix(bks[0].ID, "bkp_") || bks[0].Status != StatusPending || bks[0].AccountID != id {
		t.Fatalf("backups %v %v", bks, err)
	}
	b, err := f.client.FindBackup(ctx, id, bks[0].ID)
	if err != nil || b.ID != bks[0].ID {
		t.Fatalf("find %v %v", b, err)
	}
	if _, err := f.client.FindBackup(ctx, id, "bkp_0000000000000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("find missing: %v", err)
	}

	logs, err := Collect(f.client.AuditLogs(ctx, ListOptions{Order: OrderDesc}))
	if err != nil || len(logs) != 5 {
		t.Fatalf("audit logs %d %v", len(logs), err)
	}
	if l := logs[0]; l.Action != "backup.triggered" || l.ResourceID != id || l.Actor != "api_key:"+mockservice.DemoKeyName || l.ResourceType != "account" {
		t.Errorf("newest audit log %+v", l)
	}
}
