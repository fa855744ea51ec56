package mockservice

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
)

// The simulation's knobs: the truth names who queued each backup and its
// true times, whatever the service shows; a lag hides new backups; an
// offset moves shown times only; quirks and listing faults change records.
func TestSimulationKnobsAndTruth(t *testing.T) {
	t.Parallel()
	vc := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Clock: vc, Accounts: 1})
	acc := s.AccountIDs()[0]
	key := s.DemoKey()
	s.SetClockOffset(5 * time.Minute)
	s.SetListingLag(10 * time.Second)
	s.SetRecordQuirk(acc, QuirkNoCompletedAt)

	req := httptest.NewRequest(http.MethodPost, "/api/v1/accounts/"+acc+"/backup", nil)
	req.Host = "127.0.0.1:1"
	req.Header.Set("X-API-Key", key)
	req = req.WithContext(WithQueuedBy(req.Context(), "actor-1"))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 202 {
		t.Fatalf("trigger: %d %s", rec.Code, rec.Body)
	}
	if got := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups", key); len(got.body["data"].([]any)) != 0 {
		t.Fatalf("a backup shown within the listing lag: %s", got.raw)
	}
	vc.Advance(time.Hour)
	got := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups", key)
	item := got.body["data"].([]any)[0].(map[string]any)
	if item["created_at"] != "2026-11-21T10:05:00Z" || item["status"] != "success" || item["completed_at"] != nil {
		t.Errorf("record %v: want created_at shown 5 minutes ahead, success, and the quirk's null completed_at", item)
	}
	if d := got.header.Get("Date"); d != "Sat, 21 Nov 2026 11:05:00 GMT" {
		t.Errorf("Date %q, want the offset clock's", d)
	}
	truth := s.Truth(acc)
	if len(truth) != 1 || truth[0].QueuedBy != "actor-1" || !truth[0].CreatedAt.Equal(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)) ||
		!truth[0].Done || truth[0].Consistent || truth[0].Status != "success" {
		t.Errorf("truth %+v", truth)
	}

	s.AddFault(Fault{Kind: FaultDuplicateItem, Route: RouteListBackups, Times: 1})
	if got := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups", key); len(got.body["data"].([]any)) != 2 {
		t.Errorf("duplicate fault: %s", got.raw)
	}
	s.AddFault(Fault{Kind: FaultProxyNotFound, Times: 1})
	if got := call(t, s, "GET", "/api/v1/accounts/"+acc, key); got.status != 404 || got.header.Get("Content-Type") != "text/html" {
		t.Errorf("proxy 404: %d %q", got.status, got.header.Get("Content-Type"))
	}
	s.SetAccountState(acc, StatePaused)
	if got := call(t, s, "POST", "/api/v1/accounts/"+acc+"/backup", key); got.status != 422 {
		t.Errorf("paused account: %d", got.status)
	}
}
