package provider

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestPollIntervalGrowsToItsCap(t *testing.T) {
	t.Parallel()
	p := pollSettings{initial: 2 * time.Second, max: 5 * time.Second}
	got := []time.Duration{p.initial}
	for range 4 {
		got = append(got, p.next(got[len(got)-1]))
	}
	want := []time.Duration{2 * time.Second, 3 * time.Second, 4500 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("intervals %v, want %v", got, want)
		}
	}
}

// An interrupt (the context cancelled) during a wait stops it at once, even
// between two polls that are seconds apart.
func TestWaitForBackupStopsOnCancel(t *testing.T) {
	t.Parallel()
	srv := mockservice.New(mockservice.Options{Seed: 1, RateLimit: 1000, PendingFor: time.Hour})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, _ := client.New(client.Options{BaseURL: ts.URL, APIKey: srv.DemoKey()})
	id := srv.AccountIDs()[0]
	tr, err := c.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	polls := 0
	last, err := waitForBackup(ctx, c, pollSettings{initial: 10 * time.Second, max: time.Minute}, &tr.Backup,
		func(*client.Backup) { polls++ })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopped after %s", d)
	}
	if last == nil || last.Status != "pending" || polls != 1 {
		t.Errorf("last %+v after %d polls", last, polls)
	}
}

func TestWaitForBackupReturnsTerminal(t *testing.T) {
	t.Parallel()
	srv := mockservice.New(mockservice.Options{Seed: 2, RateLimit: 1000, PendingFor: 20 * time.Millisecond, RunningFor: 30 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c, _ := client.New(client.Options{BaseURL: ts.URL, APIKey: srv.DemoKey()})
	id := srv.AddAccount(mockservice.AccountSpec{FailWith: "no space"})
	tr, err := c.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	b, err := waitForBackup(context.Background(), c, pollSettings{initial: 5 * time.Millisecond, max: 20 * time.Millisecond}, &tr.Backup, func(*client.Backup) { polls++ })
	if err != nil || b.Status != "failed" || *b.Error != "no space" || b.CompletedAt == nil {
		t.Fatalf("%+v %v", b, err)
	}
	// The known state counts as the first look: requests = trigger's two + polls.
	if n := srv.Requests(mockservice.RouteListBackups); n != 1+polls {
		t.Errorf("%d listings for %d states seen in progress", n, polls)
	}
}
