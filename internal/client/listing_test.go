package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestListingPagesAtFiftyInBothOrders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 1, Accounts: 137}, nil)
	want := f.srv.AccountIDs() // oldest first
	for _, order := range []Order{OrderAsc, OrderDesc, ""} {
		before := f.srv.Requests(mockservice.RouteListAccounts)
		got, err := Collect(f.client.Accounts(context.Background(), ListOptions{Order: order}))
		if err != nil {
			t.Fatal(err)
		}
		if n := f.srv.Requests(mockservice.RouteListAccounts) - before; n != 3 {
			t.Errorf("order %q: %d requests, want ceil(137/50) = 3", order, n)
		}
		if len(got) != 137 {
			t.Fatalf("order %q: %d accounts", order, len(got))
		}
		for i := range got {
			w := want[i]
			if order != OrderAsc {
				w = want[len(want)-1-i]
			}
			if got[i].ID != w {
				t.Fatalf("order %q: item %d %s, want %s", order, i, got[i].ID, w)
			}
		}
	}
}

func TestListingMax(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 2, Accounts: 137}, nil)
	got, err := Collect(f.client.Accounts(context.Background(), ListOptions{Max: 60}))
	if err != nil || len(got) != 60 {
		t.Fatalf("%d %v", len(got), err)
	}
	if n := f.srv.Requests(mockservice.RouteListAccounts); n != 2 {
		t.Errorf("%d requests for 60 items, want 2", n)
	}
	// Stopping the iteration early stops the requests.
	for _, err := range f.client.Accounts(context.Background(), ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if n := f.srv.Requests(mockservice.RouteListAccounts); n != 3 {
		t.Errorf("%d requests after an early break", n)
	}
}

func TestListingRestartsOnceAfterInvalidCursor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 3, Accounts: 120}, nil)
	seen := map[string]bool{}
	pages := 0
	for a, err := range f.client.Accounts(context.Background(), ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[a.ID] {
			t.Fatalf("%s yielded twice", a.ID)
		}
		seen[a.ID] = true
		if len(seen) == 50 && pages == 0 {
			pages++
			f.srv.RotateCursorKey() // the cursor in hand is now invalid
		}
	}
	if len(seen) != 120 {
		t.Fatalf("%d accounts", len(seen))
	}
	// first page, refused cursor, first page again, two more pages
	if n := f.srv.Requests(mockservice.RouteListAccounts); n != 5 {
		t.Errorf("%d requests", n)
	}
}

func TestListingFailsAfterSecondInvalidCursor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4, Accounts: 120}, nil)
	n := 0
	var last error
	for _, err := range f.client.Accounts(context.Background(), ListOptions{}) {
		if err != nil {
			last = err
			break
		}
		n++
		if n%50 == 0 {
			f.srv.RotateCursorKey()
		}
	}
	if !errors.Is(last, errBadRequest) {
		t.Fatalf("%v", last)
	}
}

// fakePages serves pages with the given next cursors (nil for null, "" for
// the field left out).
func fakePages(t *testing.T, cursors []*string) *Client {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			_, _ = fmt.Sscanf(c, "c%d", &i)
		}
		if i >= len(cursors) {
			i = len(cursors) - 1
		}
		next := "null"
		switch {
		case cursors[i] == nil:
		case *cursors[i] == "":
			_, _ = fmt.Fprintf(w, `{"data":[{"id":"acc_%016d"}],"pagination":{"limit":50}}`, i)
			return
		default:
			next = `"` + *cursors[i] + `"`
		}
		_, _ = fmt.Fprintf(w, `{"data":[{"id":"acc_%016d","backup_status":"archived","new_field":true}],"pagination":{"limit":50,"next_cursor":%s}}`, i, next)
	}))
	t.Cleanup(ts.Close)
	c, _ := New(Options{BaseURL: ts.URL, APIKey: "k", Clock: newFakeClock()})
	return c
}

func ptr(s string) *string { return &s }

func TestListingDetectsRepeatedCursor(t *testing.T) {
	t.Parallel()
	c := fakePages(t, []*string{ptr("c1"), ptr("c2"), ptr("c1")})
	got, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	if !errors.Is(err, errRepeatedCursor) || len(got) != 3 {
		t.Fatalf("%d items, %v", len(got), err)
	}
	c = fakePages(t, []*string{ptr("c0")})
	if _, err := Collect(c.Accounts(context.Background(), ListOptions{})); !errors.Is(err, errRepeatedCursor) {
		t.Fatalf("self-referencing cursor: %v", err)
	}
}

func TestListingToleratesAbsentCursorAndUnknownValues(t *testing.T) {
	t.Parallel()
	c := fakePages(t, []*string{ptr("c1"), ptr("")})
	got, err := Collect(c.Accounts(context.Background(), ListOptions{}))
	if err != nil || len(got) != 2 {
		t.Fatalf("%d %v", len(got), err)
	}
	if got[0].BackupStatus != "archived" {
		t.Errorf("unknown status not passed through: %q", got[0].BackupStatus)
	}
}

// Ended says whether records were left unread, from the page in hand and
// its cursor, without a request of its own.
func TestListingEndedSaysWhetherRecordsWereLeft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 3, Accounts: 100}, nil)
	cases := []struct {
		max      int
		complete bool
		requests int
	}{
		{max: 0, complete: true, requests: 2},   // every account
		{max: 100, complete: true, requests: 2}, // the last record of the last page
		{max: 49, complete: false, requests: 1}, // records left on the page
		{max: 50, complete: false, requests: 1}, // a full page with a cursor
		{max: 120, complete: true, requests: 2}, // fewer than asked for
	}
	for _, c := range cases {
		before := f.srv.Requests(mockservice.RouteListAccounts)
		complete, calls := false, 0
		n := 0
		for _, err := range f.client.Accounts(context.Background(), ListOptions{Max: c.max, Ended: func(done bool) { complete = done; calls++ }}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if got := f.srv.Requests(mockservice.RouteListAccounts) - before; got != c.requests {
			t.Errorf("max %d: %d requests, want %d", c.max, got, c.requests)
		}
		if calls != 1 || complete != c.complete {
			t.Errorf("max %d (%d read): Ended called %d times, complete = %t, want once, %t", c.max, n, calls, complete, c.complete)
		}
		if c.max == 0 || c.max > 100 {
			continue
		}
		// The same, when the caller stops reading instead of asking for
		// a maximum.
		complete, calls, n = false, 0, 0
		for _, err := range f.client.Accounts(context.Background(), ListOptions{Ended: func(done bool) { complete = done; calls++ }}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == c.max {
				break
			}
		}
		if calls != 1 || complete != c.complete {
			t.Errorf("stopped after %d: Ended called %d times, complete = %t, want once, %t", c.max, calls, complete, c.complete)
		}
	}
}

// Tests of a backups listing checked, not trusted: a faulty service (or a
// proxy, a lagging replica) plays pages out of order, or an id twice with
// different contents; the listing stops with an error naming both records,
// and costs no request of its own.

const consistencyAccount = "acc_0123456789abcdef"

// t0 is the time the faulty services' backups are created around.
var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// bk is one backup record's JSON: id bkp_ + 16 characters made from n,
// created at t0 plus created, with status (and completed_at and error
// as the status needs).
func bk(n int, created time.Duration, status string) string {
	at := t0.Add(created)
	completed, errText := "null", "null"
	switch status {
	case StatusSuccess:
		completed = `"` + at.Add(11*time.Minute).Format(time.RFC3339) + `"`
	case StatusFailed:
		completed, errText = `"`+at.Add(11*time.Minute).Format(time.RFC3339)+`"`, `"quota exceeded"`
	}
	return fmt.Sprintf(`{"id":"bkp_%016d","account_id":%q,"status":%q,"created_at":%q,"completed_at":%s,"error":%s}`,
		n, consistencyAccount, status, at.Format(time.RFC3339), completed, errText)
}

func bkID(n int) string { return fmt.Sprintf("bkp_%016d", n) }

// pagedService plays a backups listing of the given pages (page i's
// cursor is "p<i>"), and counts its requests.
func pagedService(t *testing.T, pages ...[]string) (*Client, *atomic.Int64) {
	t.Helper()
	requests := &atomic.Int64{}
	c, _ := hostileClient(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		i := 0
		if cur := r.URL.Query().Get("cursor"); cur != "" {
			_, _ = fmt.Sscanf(cur, "p%d", &i)
		}
		next := "null"
		if i+1 < len(pages) {
			next = fmt.Sprintf(`"p%d"`, i+1)
		}
		_, _ = fmt.Fprintf(w, `{"data":[%s],"pagination":{"limit":50,"next_cursor":%s}}`, strings.Join(pages[i], ","), next)
	}, nil)
	return c, requests
}

// inconsistentListing is err's *inconsistentListingError, or fails the test
// unless err is one, inside a *ListingError, matching ErrInconsistentListing.
func inconsistentListing(t *testing.T, err error) *inconsistentListingError {
	t.Helper()
	var le *ListingError
	var ie *inconsistentListingError
	if !errors.Is(err, ErrInconsistentListing) || !errors.As(err, &le) || !errors.As(err, &ie) {
		t.Fatalf("want a *ListingError matching ErrInconsistentListing, got %v", err)
	}
	return ie
}

func TestBackupsOutOfOrderOnOnePage(t *testing.T) {
	t.Parallel()
	// The third is two hours newer than the second: the page is checked
	// whole before any of it is handed out, so nothing is.
	c, requests := pagedService(t, []string{bk(1, 0, "success"), bk(2, -time.Hour, "success"), bk(3, time.Hour, "success"), bk(4, -2*time.Hour, "success")})
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	ie := inconsistentListing(t, err)
	if len(got) != 0 || requests.Load() != 1 {
		t.Errorf("%d backups yielded, %d requests; want none of the faulty page, 1 request", len(got), requests.Load())
	}
	if ie.Kind != outOfOrder || ie.Earlier.ID != bkID(2) || ie.Later.ID != bkID(3) ||
		!ie.Earlier.CreatedAt.Equal(t0.Add(-time.Hour)) || !ie.Later.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("%+v", ie)
	}
	msg := err.Error()
	for _, want := range []string{"/api/v1/accounts/" + consistencyAccount + "/backups", bkID(2), bkID(3), "2026-11-21T09:00:00Z", "2026-11-21T11:00:00Z",
		"out of order or inconsistent", "2h0m0s newer", "10s", "page 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
}

func TestBackupsOutOfOrderAcrossPages(t *testing.T) {
	t.Parallel()
	page1 := []string{bk(1, 0, "success"), bk(2, -time.Hour, "failed")}
	page2 := []string{bk(3, -30*time.Minute, "success"), bk(4, -2*time.Hour, "success")}
	c, requests := pagedService(t, page1, page2, []string{bk(5, -3*time.Hour, "success")})
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	ie := inconsistentListing(t, err)
	var le *ListingError
	errors.As(err, &le)
	if len(got) != 2 || requests.Load() != 2 || le.Pages != 2 || le.Items != 2 {
		t.Errorf("%d backups, %d requests, %+v; want page 1's two, 2 requests", len(got), requests.Load(), le)
	}
	if ie.Kind != outOfOrder || ie.Earlier.ID != bkID(2) || ie.Earlier.Page != 1 || ie.Later.ID != bkID(3) || ie.Later.Page != 2 {
		t.Errorf("%+v", ie)
	}
	// Every reader of backups gets it, and none takes an answer from it.
	if b, err := c.FindBackup(context.Background(), consistencyAccount, bkID(5)); b != nil || !errors.Is(err, ErrInconsistentListing) {
		t.Errorf("FindBackup: %v, %v", b, err)
	}
	if b, err := latestSuccess(context.Background(), c, consistencyAccount); b == nil || err != nil || b.ID != bkID(1) {
		t.Errorf("latestSuccess, on page 1 before the fault: %v, %v", b, err)
	}
}

// Clocks may disagree: a record up to listingClockAllowance newer than
// one before it is in order, just past it is not.
func TestBackupsClockAllowance(t *testing.T) {
	t.Parallel()
	c, _ := pagedService(t, []string{bk(1, 0, "success"), bk(2, -5*time.Second, "success"), bk(3, 5*time.Second, "success"), bk(4, -time.Hour, "success")})
	if got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{})); err != nil || len(got) != 4 {
		t.Fatalf("10 s newer, within the allowance: %d, %v", len(got), err)
	}
	c, _ = pagedService(t, []string{bk(1, 0, "success"), bk(2, -5*time.Second, "success"), bk(3, 6*time.Second, "success")})
	if ie := inconsistentListing(t, mustFail(Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{})))); ie.Earlier.ID != bkID(2) || ie.Later.ID != bkID(3) {
		t.Errorf("%+v", ie)
	}
}

func mustFail[T any](_ T, err error) error { return err }

func TestBackupsIDTwiceWithOtherContents(t *testing.T) {
	t.Parallel()
	cases := map[string][][]string{
		"one page":    {{bk(1, 0, "failed"), bk(2, -time.Hour, "success"), bk(1, 0, "success")}},
		"two pages":   {{bk(1, 0, "failed"), bk(2, -time.Hour, "success")}, {bk(1, 0, "success"), bk(3, -2*time.Hour, "success")}},
		"other time":  {{bk(1, 0, "running"), bk(2, -time.Hour, "success")}, {bk(1, -30*time.Minute, "running")}},
		"backwards":   {{bk(1, 0, "running"), bk(2, -time.Hour, "success")}, {bk(1, 0, "pending")}},
		"after moved": {{bk(1, 0, "running")}, {bk(1, 0, "success"), bk(2, -time.Hour, "success")}, {bk(1, 0, "failed")}},
	}
	for name, pages := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, requests := pagedService(t, pages...)
			_, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
			ie := inconsistentListing(t, err)
			if ie.Kind != changedRepeat || ie.Earlier.ID != bkID(1) || ie.Later.ID != bkID(1) || requests.Load() != int64(len(pages)) {
				t.Errorf("%+v after %d requests", ie, requests.Load())
			}
			if name == "two pages" {
				if ie.Earlier.Status != "failed" || ie.Later.Status != "success" || ie.Earlier.Page != 1 || ie.Later.Page != 2 {
					t.Errorf("%+v", ie)
				}
				msg := err.Error()
				for _, want := range []string{"listed twice with different contents", "first as " + bkID(1) + " (failed", "then as " + bkID(1) + " (success", "2026-11-21T10:00:00Z"} {
					if !strings.Contains(msg, want) {
						t.Errorf("the error does not say %q: %s", want, msg)
					}
				}
			}
		})
	}
}

// An id listed again as it was (a service whose cursors are offsets, after
// a new backup) is dropped without a word, and its place is not judged; a
// backup in progress may have moved on in between.
func TestBackupsRepeatsThatAreNotFaults(t *testing.T) {
	t.Parallel()
	page1 := []string{bk(1, 0, "running"), bk(2, -time.Hour, "success"), bk(2, -time.Hour, "success"), bk(3, -2*time.Hour, "failed")}
	page2 := []string{bk(2, -time.Hour, "success"), bk(3, -2*time.Hour, "failed"), bk(1, 0, "success"), bk(4, -3*time.Hour, "success")}
	c, requests := pagedService(t, page1, page2)
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	if err != nil || requests.Load() != 2 {
		t.Fatalf("%d requests: %v", requests.Load(), err)
	}
	var seen []string
	for _, b := range got {
		seen = append(seen, b.ID[len(b.ID)-1:]+":"+b.Status)
	}
	if strings.Join(seen, " ") != "1:running 2:success 3:failed 4:success" {
		t.Errorf("yielded %v", seen)
	}
}

// After an invalid cursor the listing starts again: the backups created
// since are newest on the new first page, which is not out of order.
func TestBackupsRestartIsANewPass(t *testing.T) {
	t.Parallel()
	var requests atomic.Int64
	c, _ := hostileClient(t, func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		switch {
		case n == 1:
			_, _ = fmt.Fprintf(w, `{"data":[%s,%s],"pagination":{"limit":50,"next_cursor":"x"}}`, bk(2, -time.Hour, "running"), bk(3, -2*time.Hour, "success"))
		case r.URL.Query().Get("cursor") != "":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"Bad Request","status":400,"detail":"invalid cursor","request_id":"00000000-0000-4000-8000-000000000000"}`))
		default:
			_, _ = fmt.Fprintf(w, `{"data":[%s,%s,%s,%s],"pagination":{"limit":50,"next_cursor":null}}`,
				bk(1, 0, "pending"), bk(2, -time.Hour, "success"), bk(3, -2*time.Hour, "success"), bk(4, -3*time.Hour, "failed"))
		}
	}, nil)
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	if err != nil || len(got) != 4 || requests.Load() != 3 {
		t.Fatalf("%d backups, %d requests: %v", len(got), requests.Load(), err)
	}
}

// The check reads nothing more than the caller does: a fault on a page
// past the caller's answer is never requested. A page read is checked
// whole: a fault after the caller's answer on its page stops it (the
// restore point with max_results = 1 and the page's first two swapped).
func TestBackupsCheckCostsNoRequest(t *testing.T) {
	t.Parallel()
	c, requests := pagedService(t, []string{bk(1, 0, "running"), bk(2, -time.Hour, "success"), bk(3, time.Hour, "success")})
	if b, err := latestSuccess(context.Background(), c, consistencyAccount); b != nil || requests.Load() != 1 {
		t.Errorf("%v, %v after %d requests; want no answer from a page out of order", b, err, requests.Load())
	} else {
		_ = inconsistentListing(t, err)
	}
	page1 := []string{bk(1, 0, "running"), bk(2, -time.Hour, "success")}
	c, requests = pagedService(t, page1, []string{bk(3, time.Hour, "success")})
	if b, err := latestSuccess(context.Background(), c, consistencyAccount); err != nil || b == nil || b.ID != bkID(2) || requests.Load() != 1 {
		t.Errorf("%v, %v after %d requests", b, err, requests.Load())
	}
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{Max: 2}))
	if err != nil || len(got) != 2 || requests.Load() != 2 {
		t.Errorf("%d, %v after %d requests", len(got), err, requests.Load())
	}
}

// A listing ranged twice is checked afresh each time.
func TestBackupsListingRangedTwice(t *testing.T) {
	t.Parallel()
	c, _ := pagedService(t, []string{bk(1, 0, "success"), bk(2, -time.Hour, "success")}, []string{bk(3, -2*time.Hour, "failed")})
	seq := c.Backups(context.Background(), consistencyAccount, ListOptions{})
	for i := range 2 {
		if got, err := Collect(seq); err != nil || len(got) != 3 {
			t.Fatalf("pass %d: %d backups, %v", i+1, len(got), err)
		}
	}
}

// What the error shows of the records passed the client's text guard: a
// status echoing the key or holding escape sequences shows neither.
func TestInconsistentListingErrorTextIsGuarded(t *testing.T) {
	t.Parallel()
	hostile := strings.ReplaceAll(bk(1, 0, "success"), `"status":"success"`, `"status":"ok\u001b[2J `+hostileKey+`"`)
	c, _ := pagedService(t, []string{bk(1, 0, "failed"), bk(2, -time.Hour, "success")}, []string{hostile})
	_, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	ie := inconsistentListing(t, err)
	if msg := err.Error(); strings.Contains(msg, hostileKey) || strings.ContainsFunc(msg, unicode.IsControl) || !strings.Contains(msg, redacted) {
		t.Errorf("%q", msg)
	}
	if ie.Kind != changedRepeat {
		t.Errorf("%+v", ie)
	}
}

// refusingCursorOnce is a listing whose page i (cursor "p<i>") page
// answers, until its cursor refusedAt is refused once with the invalid
// cursor's 400; requests counts the requests.
func refusingCursorOnce(t *testing.T, refusedAt int, page func(i int) (record int, last bool)) (c *Client, requests *int) {
	t.Helper()
	requests, refused := new(int), false
	c, _ = hostileClient(t, func(w http.ResponseWriter, r *http.Request) {
		*requests++
		i := 0
		if cur := r.URL.Query().Get("cursor"); cur != "" {
			_, _ = fmt.Sscanf(cur, "p%d", &i)
		}
		if i == refusedAt && !refused {
			refused = true
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"Bad Request","status":400,"detail":"invalid cursor","request_id":"00000000-0000-4000-8000-000000000000"}`))
			return
		}
		record, last := page(i)
		next := `"p` + strconv.Itoa(i+1) + `"`
		if last {
			next = "null"
		}
		_, _ = fmt.Fprintf(w, `{"data":[%s],"pagination":{"limit":50,"next_cursor":%s}}`, bk(record+1, -time.Duration(record)*time.Hour, "success"), next)
	}, nil)
	return c, requests
}

// A deep listing whose cursor is refused starts again and reads on past
// the pages it reads again: they hold nothing new, and are not barren.
func TestBackupsRestartReadsOnPastTheRereadPages(t *testing.T) {
	t.Parallel()
	const pages, refusedAt = 8, 6
	c, requests := refusingCursorOnce(t, refusedAt, func(i int) (int, bool) { return i, i+1 == pages })
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{}))
	if err != nil || len(got) != pages || *requests != refusedAt+1+pages {
		t.Fatalf("%d backups after %d requests: %v; want all %d, read once more from the first page", len(got), *requests, err, pages)
	}
}

// Unbroken: a refused cursor stops the listing with its error, never a
// second pass from the first page.
func TestBackupsUnbrokenStopsAtARefusedCursor(t *testing.T) {
	t.Parallel()
	const pages, refusedAt = 8, 3
	c, requests := refusingCursorOnce(t, refusedAt, func(i int) (int, bool) { return i, i+1 == pages })
	got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{Unbroken: true}))
	if !errors.Is(err, errBadRequest) || len(got) != refusedAt || *requests != refusedAt+1 {
		t.Fatalf("%d backups after %d requests: %v; want the %d before the refused cursor, then its error", len(got), *requests, err, refusedAt)
	}
}

// The last page read again after a restart is not barren either: two
// barren pages after it, fewer than maxBarrenPages, still let the listing
// read on.
func TestBackupsRestartCountsBarrenPagesFromTheRereadOnes(t *testing.T) {
	t.Parallel()
	const refusedAt = 6
	// Pages 6 and 7 repeat page 5's record; page 8, the last, holds a new one.
	c, _ := refusingCursorOnce(t, refusedAt, func(i int) (int, bool) {
		if i == refusedAt+2 {
			return i, true
		}
		return min(i, refusedAt-1), false
	})
	if got, err := Collect(c.Backups(context.Background(), consistencyAccount, ListOptions{})); err != nil || len(got) != refusedAt+1 {
		t.Fatalf("%d backups: %v; want %d, past two barren pages", len(got), err, refusedAt+1)
	}
}

// Pages stops a listing after its first page, and Ended says whether it held everything.
func TestBackupsFirstPageOnly(t *testing.T) {
	t.Parallel()
	c, requests := pagedService(t, []string{bk(1, 0, "running"), bk(2, -time.Hour, "success")}, []string{bk(3, -2*time.Hour, "failed")})
	p, err := c.FirstBackupsPage(context.Background(), consistencyAccount)
	if err != nil || len(p.Backups) != 2 || !p.More || requests.Load() != 1 {
		t.Errorf("%+v, %v after %d requests; want the 2 of the first page, more to come, 1 request", p, err, requests.Load())
	}
	c, requests = pagedService(t, []string{bk(1, 0, "running"), bk(2, -time.Hour, "success")})
	if p, err = c.FirstBackupsPage(context.Background(), consistencyAccount); err != nil || len(p.Backups) != 2 || p.More || requests.Load() != 1 {
		t.Errorf("%+v, %v after %d requests; want the whole listing, 1 request", p, err, requests.Load())
	}
}

// FindBackupAfter reads on from a first page's cursor, never that page
// again: a pass started over could take another listing's first page.
func TestFindBackupAfterReadsOnFromTheFirstPage(t *testing.T) {
	t.Parallel()
	c, requests := pagedService(t, []string{bk(1, 0, "running")}, []string{bk(2, -time.Hour, "success")}, []string{bk(3, -2*time.Hour, "success")})
	ctx := context.Background()
	first, err := c.FirstBackupsPage(ctx, consistencyAccount)
	if err != nil || !first.More {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	if b, err := c.FindBackupAfter(ctx, consistencyAccount, bkID(3), first); err != nil || b == nil || b.ID != bkID(3) || requests.Load() != 3 {
		t.Errorf("found %v (%v) after %d requests; want %s after 3: the first page, then pages 2 and 3", b, err, requests.Load(), bkID(3))
	}
	var missing *BackupNotFoundError
	if b, err := c.FindBackupAfter(ctx, consistencyAccount, bkID(1), first); b != nil || !errors.As(err, &missing) || requests.Load() != 5 {
		t.Errorf("found %v (%v) after %d requests; want none past the first page, after 2 more", b, err, requests.Load())
	}
	if b, err := c.FindBackupAfter(ctx, consistencyAccount, bkID(2), BackupsPage{}); b != nil || !errors.As(err, &missing) || requests.Load() != 5 {
		t.Errorf("a page that ends: %v (%v) after %d requests; want none, no request", b, err, requests.Load())
	}
}
