package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// LatestSuccess against services that answer oddly: a success without
// completed_at counts from created_at; pages of failures that never end
// stop with a *ListingError instead of reading forever.
func TestLatestSuccessAgainstOddServices(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	t.Run("success without completed_at", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"data":[{"id":"bkp_0123456789abcdef","account_id":"acc_0123456789abcdef","status":"success","created_at":%q}],"pagination":{"next_cursor":null}}`,
				created.Format(time.RFC3339))
		}))
		t.Cleanup(srv.Close)
		c, err := New(Options{BaseURL: srv.URL, APIKey: "bks_test", Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.LatestSuccess(context.Background(), "acc_0123456789abcdef")
		if err != nil || b == nil || !SuccessTime(b).Equal(created) {
			t.Fatalf("%+v %v, want the success, timed by its created_at", b, err)
		}
	})
	t.Run("failures without end", func(t *testing.T) {
		t.Parallel()
		page := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			page++
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"data":[{"id":"bkp_%016d","account_id":"acc_0123456789abcdef","status":"failed","created_at":%q}],"pagination":{"next_cursor":"c"}}`,
				page, created.Format(time.RFC3339))
		}))
		t.Cleanup(srv.Close)
		c, err := New(Options{BaseURL: srv.URL, APIKey: "bks_test", Clock: newFakeClock()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.LatestSuccess(context.Background(), "acc_0123456789abcdef")
		var le *ListingError
		if !errors.As(err, &le) || page > 3 {
			t.Fatalf("err = %v after %d pages, want a *ListingError within a few pages", err, page)
		}
	})
}
