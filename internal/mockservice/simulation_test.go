package mockservice

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
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

// A front answers in the service's place: its own page, dated by its own
// clock (or not at all, or unreadably); the request is processed only when
// the front says so, and a relaying front passes the service's answer with
// its own Date.
func TestFrontFault(t *testing.T) {
	t.Parallel()
	vc := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Clock: vc, Accounts: 1})
	acc, key := s.AccountIDs()[0], s.DemoKey()
	trigger := "/api/v1/accounts/" + acc + "/backup"
	for _, tc := range []struct {
		front     Front
		status    int
		date      []string // the Date values sent; nil: none
		processed bool
		age       string // the Age sent; "": none
	}{
		{Front{Date: FrontDateSkewed, Skew: -30 * time.Minute}, 502, []string{"Sat, 21 Nov 2026 09:30:00 GMT"}, false, ""},
		{Front{Date: FrontDateYear1, JSON: true, Status: 503}, 503, []string{"Mon, 01 Jan 0001 00:00:00 GMT"}, false, ""},
		{Front{Date: FrontDateYear9999, Processed: true}, 502, []string{"Fri, 31 Dec 9999 23:59:59 GMT"}, true, ""},
		{Front{Date: FrontDateUnparsable}, 502, []string{"yesterday, around noon"}, false, ""},
		{Front{Date: FrontDateNone}, 502, nil, false, ""},
		{Front{Date: FrontDateTrue, Relay: true}, 202, []string{"Sat, 21 Nov 2026 15:00:00 GMT"}, true, ""},
		{Front{Date: FrontDateTrue, Relay: true, Age: 10*time.Minute + 500*time.Millisecond}, 202, []string{"Sat, 21 Nov 2026 16:00:00 GMT"}, true, "600"},
	} {
		before := len(s.Truth(acc))
		s.AddFault(Fault{Kind: FaultFront, Route: RouteTrigger, Times: 1, Front: tc.front})
		s.SetClockOffset(time.Hour) // the service's own clock, which a front's Date never shows
		r := call(t, s, "POST", trigger, key)
		s.SetClockOffset(0)
		if r.status != tc.status {
			t.Errorf("%+v: status %d, want %d (%s)", tc.front, r.status, tc.status, r.raw)
		}
		if got := r.header.Values("Date"); !slices.Equal(got, tc.date) {
			t.Errorf("%+v: Date %q, want %q", tc.front, got, tc.date)
		}
		if got := r.header.Get("Age"); got != tc.age {
			t.Errorf("%+v: Age %q, want %q", tc.front, got, tc.age)
		}
		if tc.status != 202 && (r.header.Get("X-Request-ID") != "" || strings.Contains(r.raw, "request_id")) {
			t.Errorf("%+v: a front's page carries the service's request id: %s", tc.front, r.raw)
		}
		if processed := len(s.Truth(acc)) > before; processed != tc.processed {
			t.Errorf("%+v: processed %v, want %v", tc.front, processed, tc.processed)
		}
		vc.Advance(time.Hour) // the backup ends
	}
	if got := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups", key); got.status != 200 || got.header.Get("Date") != "Sat, 21 Nov 2026 17:00:00 GMT" {
		t.Errorf("after the front's one hit: %d %q", got.status, got.header.Get("Date"))
	}
}

// Each backup lasts as SetBackupLength says when it is queued.
func TestBackupLength(t *testing.T) {
	t.Parallel()
	vc := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Clock: vc, Accounts: 1})
	acc, key := s.AccountIDs()[0], s.DemoKey()
	lengths := []time.Duration{time.Minute, 5 * time.Minute}
	s.SetBackupLength(func() (time.Duration, time.Duration) {
		d := lengths[0]
		lengths = lengths[1:]
		return time.Second, d
	})
	for range 2 {
		if r := call(t, s, "POST", "/api/v1/accounts/"+acc+"/backup", key); r.status != 202 {
			t.Fatalf("trigger: %d %s", r.status, r.raw)
		}
		vc.Advance(2 * time.Minute)
	}
	truth := s.Truth(acc)
	if len(truth) != 2 || truth[0].CompletedAt.Sub(truth[0].CreatedAt) != time.Minute+time.Second ||
		truth[1].CompletedAt.Sub(truth[1].CreatedAt) != 5*time.Minute+time.Second {
		t.Errorf("lengths: %+v", truth)
	}
}

// A listing with a foreign item shows, at its top, another account's
// newest backup.
func TestForeignItemFault(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Accounts: 2})
	ids, key := s.AccountIDs(), s.DemoKey()
	s.AddHistory(ids[1], BackupSpec{CreatedAt: time.Now().Add(-time.Hour)})
	s.AddFault(Fault{Kind: FaultForeignItem, Route: RouteListBackups, Times: 1})
	got := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups", key)
	data := got.body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["account_id"] != ids[1] || data[0].(map[string]any)["id"] != s.NewestBackupID(ids[1]) {
		t.Errorf("foreign item: %s", got.raw)
	}
	if again := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups", key); len(again.body["data"].([]any)) != 0 {
		t.Errorf("after the fault's one hit: %s", again.raw)
	}
}

// A listing of another history shows another account's newest backups,
// as many as the page holds, under this account's id, and ends there.
func TestOtherHistoryFault(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Accounts: 2})
	ids, key := s.AccountIDs(), s.DemoKey()
	s.AddHistory(ids[0], BackupSpec{CreatedAt: time.Now().Add(-2 * time.Hour)})
	s.AddHistory(ids[1], BackupSpec{CreatedAt: time.Now().Add(-3 * time.Hour)}, BackupSpec{CreatedAt: time.Now().Add(-time.Hour)},
		BackupSpec{CreatedAt: time.Now().Add(-4 * time.Hour)})
	s.AddFault(Fault{Kind: FaultOtherHistory, Route: RouteListBackups, Times: 1})
	got := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups?limit=2", key)
	data := got.body["data"].([]any)
	theirs := s.Truth(ids[1])
	slices.SortFunc(theirs, func(a, b BackupTruth) int { return b.CreatedAt.Compare(a.CreatedAt) })
	if len(data) != 2 || data[0].(map[string]any)["id"] != theirs[0].ID || data[1].(map[string]any)["id"] != theirs[1].ID ||
		data[0].(map[string]any)["account_id"] != ids[0] || data[1].(map[string]any)["account_id"] != ids[0] ||
		got.body["pagination"].(map[string]any)["next_cursor"] != nil {
		t.Errorf("other history: %s", got.raw)
	}
	if again := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups", key); len(again.body["data"].([]any)) != 1 {
		t.Errorf("after the fault's one hit: %s", again.raw)
	}
	// Another deployment cannot read this one's cursor.
	s.SetPageCap(1)
	first := call(t, s, "GET", "/api/v1/accounts/"+ids[1]+"/backups", key)
	next, _ := first.body["pagination"].(map[string]any)["next_cursor"].(string)
	s.AddFault(Fault{Kind: FaultOtherHistory, Route: RouteListBackups, Times: 1})
	if refused := call(t, s, "GET", "/api/v1/accounts/"+ids[1]+"/backups?cursor="+next, key); refused.status != http.StatusBadRequest ||
		refused.body["detail"] != "invalid cursor" {
		t.Errorf("a cursor under the fault: %d %s", refused.status, refused.raw)
	}
}

// A paged other deployment lists that history in pages that go on, read
// on by its own cursors; the service's own cursor is refused there.
func TestOtherHistoryFaultPaged(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Accounts: 2})
	ids, key := s.AccountIDs(), s.DemoKey()
	s.AddHistory(ids[0], BackupSpec{CreatedAt: time.Now().Add(-2 * time.Hour)}, BackupSpec{CreatedAt: time.Now().Add(-5 * time.Hour)})
	s.AddHistory(ids[1], BackupSpec{CreatedAt: time.Now().Add(-3 * time.Hour)}, BackupSpec{CreatedAt: time.Now().Add(-time.Hour)},
		BackupSpec{CreatedAt: time.Now().Add(-4 * time.Hour)})
	theirs := s.Truth(ids[1])
	slices.SortFunc(theirs, func(a, b BackupTruth) int { return b.CreatedAt.Compare(a.CreatedAt) })
	own := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups?limit=1", key)
	ownNext, _ := own.body["pagination"].(map[string]any)["next_cursor"].(string)
	s.AddFault(Fault{Kind: FaultOtherHistory, Route: RouteListBackups, AccountID: ids[0], Paged: true})
	var listed []string
	for cursor := ""; ; {
		got := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups?limit=2"+cursor, key)
		for _, d := range got.body["data"].([]any) {
			if d.(map[string]any)["account_id"] != ids[0] {
				t.Fatalf("listed under another id: %s", got.raw)
			}
			listed = append(listed, d.(map[string]any)["id"].(string))
		}
		next, _ := got.body["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if len(listed) != 3 || listed[0] != theirs[0].ID || listed[2] != theirs[2].ID {
		t.Errorf("listed %v, want the other history %v, whole, in pages", listed, theirs)
	}
	if refused := call(t, s, "GET", "/api/v1/accounts/"+ids[0]+"/backups?cursor="+ownNext, key); refused.status != http.StatusBadRequest {
		t.Errorf("the service's own cursor there: %d %s", refused.status, refused.raw)
	}
}

// Records of one second come in any order, and replicas behind by up to
// the listing lag may miss, on a later read, what an earlier one showed.
func TestShuffledTiesAndReplicas(t *testing.T) {
	t.Parallel()
	vc := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Clock: vc, Accounts: 1})
	acc, key := s.AccountIDs()[0], s.DemoKey()
	at := vc.Now().Add(-time.Hour)
	s.AddHistory(acc, BackupSpec{CreatedAt: at}, BackupSpec{CreatedAt: at.Add(100 * time.Millisecond)}, BackupSpec{CreatedAt: at.Add(-time.Hour)})
	first := func() (string, int) {
		got := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups", key)
		data := got.body["data"].([]any)
		return data[0].(map[string]any)["id"].(string), len(data)
	}
	s.SetShuffledTies(true)
	tops := map[string]bool{}
	for range 40 {
		top, n := first()
		if n != 3 {
			t.Fatalf("%d backups listed, want 3", n)
		}
		tops[top] = true
	}
	if len(tops) != 2 {
		t.Errorf("the two records of one second came in one order only: %v", tops)
	}

	s.SetShuffledTies(false)
	s.SetListingLag(time.Minute)
	s.SetListingReplicas(true)
	call(t, s, "POST", "/api/v1/accounts/"+acc+"/backup", key)
	vc.Advance(30 * time.Second)
	seen := map[int]bool{}
	for range 40 {
		_, n := first()
		seen[n] = true
	}
	if !seen[3] || !seen[4] {
		t.Errorf("replicas half a lag behind listed %v backups; want some reads with the new one, some without", seen)
	}
}

// A page cap shortens every page, whatever limit asked, and the listing
// goes on to the next page as usual.
func TestPageCap(t *testing.T) {
	t.Parallel()
	vc := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	s := newTest(t, Options{Clock: vc, Accounts: 1})
	acc, key := s.AccountIDs()[0], s.DemoKey()
	at := vc.Now().Add(-time.Hour)
	s.AddHistory(acc, BackupSpec{CreatedAt: at}, BackupSpec{CreatedAt: at.Add(-time.Minute)}, BackupSpec{CreatedAt: at.Add(-2 * time.Minute)})
	s.SetPageCap(2)
	first := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups?limit=50", key)
	next, _ := first.body["pagination"].(map[string]any)["next_cursor"].(string)
	if n := len(first.body["data"].([]any)); n != 2 || next == "" || first.body["pagination"].(map[string]any)["limit"] != float64(50) {
		t.Fatalf("capped first page: %s", first.raw)
	}
	rest := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups?limit=50&cursor="+next, key)
	if n := len(rest.body["data"].([]any)); n != 1 || rest.body["pagination"].(map[string]any)["next_cursor"] != nil {
		t.Fatalf("capped last page: %s", rest.raw)
	}
	s.SetPageCap(0)
	if all := call(t, s, "GET", "/api/v1/accounts/"+acc+"/backups?limit=50", key); len(all.body["data"].([]any)) != 3 {
		t.Fatalf("uncapped: %s", all.raw)
	}
}

// A listing that holds none of the history answers an empty page that
// ends, and refuses a cursor.
func TestEmptyHistoryFault(t *testing.T) {
	t.Parallel()
	s := newTest(t, Options{Accounts: 1})
	id, key := s.AccountIDs()[0], s.DemoKey()
	s.AddHistory(id, BackupSpec{CreatedAt: time.Now().Add(-2 * time.Hour)}, BackupSpec{CreatedAt: time.Now().Add(-time.Hour)})
	s.AddFault(Fault{Kind: FaultEmptyHistory, Route: RouteListBackups, Times: 1})
	got := call(t, s, "GET", "/api/v1/accounts/"+id+"/backups?limit=2", key)
	if got.status != http.StatusOK || len(got.body["data"].([]any)) != 0 || got.body["pagination"].(map[string]any)["next_cursor"] != nil {
		t.Errorf("empty history: %d %s", got.status, got.raw)
	}
	if again := call(t, s, "GET", "/api/v1/accounts/"+id+"/backups", key); len(again.body["data"].([]any)) != 2 {
		t.Errorf("after the fault's one hit: %s", again.raw)
	}
	s.SetPageCap(1)
	first := call(t, s, "GET", "/api/v1/accounts/"+id+"/backups", key)
	next, _ := first.body["pagination"].(map[string]any)["next_cursor"].(string)
	s.AddFault(Fault{Kind: FaultEmptyHistory, Route: RouteListBackups, Times: 1})
	if refused := call(t, s, "GET", "/api/v1/accounts/"+id+"/backups?cursor="+next, key); refused.status != http.StatusBadRequest {
		t.Errorf("a cursor read from a listing that holds none: %d %s", refused.status, refused.raw)
	}
}
