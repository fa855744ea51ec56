package client

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// Concurrent callers share one listing: ⌈A/50⌉ requests for all of them.
func TestAccountIndexSingleFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 41, Accounts: 120}, nil)
	ids := f.srv.AccountIDs()
	gone := ids[7]
	f.srv.DeleteAccount(gone)
	x := f.client.NewAccountIndex()
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for _, id := range ids {
		wg.Go(func() {
			a, _, err := x.Lookup(context.Background(), id)
			found := a != nil
			switch {
			case err != nil:
				errs <- err
			case found == (id == gone):
				errs <- errors.New(id + ": wrong answer")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// 120 seeded accounts + the foreign one the mock lists for nobody: 3 pages.
	if n := f.srv.Requests(mockservice.RouteListAccounts); n != 3 {
		t.Errorf("%d listing requests for %d callers, want 3", n, len(ids))
	}
}

// A failed listing is reported to one caller only; the others get the
// error without the duty to report it.
func TestAccountIndexReportsAFailureOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 42, Accounts: 60}, func(o *Options) { o.MaxRetries = 0 })
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListAccounts})
	x := f.client.NewAccountIndex()
	reports := 0
	for _, id := range f.srv.AccountIDs() {
		_, report, err := x.Lookup(context.Background(), id)
		if !errors.Is(err, errServer) {
			t.Fatalf("err = %v, want the listing's 500", err)
		}
		if report {
			reports++
		}
	}
	if reports != 1 {
		t.Errorf("%d callers were asked to report the failure, want 1", reports)
	}
	if n := f.srv.Requests(mockservice.RouteListAccounts); n != 1 {
		t.Errorf("%d listing requests, want 1 (the failure is shared, not retried per caller)", n)
	}
}

// A waiter whose context ends returns at once; a listing whose own caller
// gave up is started again by the next caller.
func TestAccountIndexCancellation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 43, Accounts: 10}, nil)
	id := f.srv.AccountIDs()[0]
	x := f.client.NewAccountIndex()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, report, err := x.Lookup(cancelled, id); !errors.Is(err, context.Canceled) || report {
		t.Fatalf("cancelled caller: report %t, err %v; want context.Canceled, nothing to report", report, err)
	}
	a, _, err := x.Lookup(context.Background(), id)
	found := a != nil
	if err != nil || !found {
		t.Fatalf("the next caller: found %t, err %v; want a fresh listing that finds the account", found, err)
	}
}
