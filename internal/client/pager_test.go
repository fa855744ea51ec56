package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestListingPagesAtFiftyInBothOrders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 1, Accounts: 137}, nil)
	want := f.srv.AccountIDs() // oldest first
	for _, order := range []Order{OrderAsc, OrderDesc, ""} {
		before := f.srv.Requests(mockservice.RouteListAccounts)
		got, err := f.client.ListAccounts(context.Background(), ListOptions{Order: order})
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
	got, err := f.client.ListAccounts(context.Background(), ListOptions{Max: 60})
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
	if !errors.Is(last, ErrBadRequest) {
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
	got, err := c.ListAccounts(context.Background(), ListOptions{})
	if !errors.Is(err, ErrRepeatedCursor) || len(got) != 3 {
		t.Fatalf("%d items, %v", len(got), err)
	}
	c = fakePages(t, []*string{ptr("c0")})
	if _, err := c.ListAccounts(context.Background(), ListOptions{}); !errors.Is(err, ErrRepeatedCursor) {
		t.Fatalf("self-referencing cursor: %v", err)
	}
}

func TestListingToleratesAbsentCursorAndUnknownValues(t *testing.T) {
	t.Parallel()
	c := fakePages(t, []*string{ptr("c1"), ptr("")})
	got, err := c.ListAccounts(context.Background(), ListOptions{})
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
