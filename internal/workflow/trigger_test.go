package workflow

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// mockTriggerFault is a fault the mock service plays on a trigger, and what
// the client must make of it. The faulty services of trigger_faults_test.go
// play what the mock cannot (lagging listings, skewed clocks, resets).
type mockTriggerFault struct {
	name   string
	opts   mockservice.Options
	client func(*client.Options, *Settings)
	faults []mockservice.Fault
	// before runs once the account exists, before the trigger under test;
	// it may reset the mock's counters, so that they count that trigger.
	before func(t *testing.T, f *fixture, id string)
	// err is the outcome wanted; nil: success.
	err func(Outcome) bool
	// Wanted counts: POSTs, backups listings (-1: not checked), backups
	// queued in all.
	posts, listings, queued int
	recovered               bool
	// check looks further at a successful trigger.
	check func(t *testing.T, tr *triggered)
}

var mockTriggerFaults = []mockTriggerFault{
	{
		// Processed, then answered 500: found by listing, not resent.
		name:   "accepted but answered 500 queues once",
		faults: []mockservice.Fault{{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1}},
		posts:  1, listings: -1, queued: 1, recovered: true,
		check: func(t *testing.T, tr *triggered) {
			if tr.Backup.Status != client.StatusPending {
				t.Errorf("status %q, want pending", tr.Backup.Status)
			}
		},
	},
	{
		// 500 before processing: nothing was queued, so resending is safe.
		name:   "server error before processing is resent",
		faults: []mockservice.Fault{{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger, Times: 2}},
		posts:  3, listings: -1, queued: 1,
		check: func(t *testing.T, tr *triggered) {
			if tr.Account == nil {
				t.Error("the service's answer names the account; the result lost it")
			}
		},
	},
	{
		// A 429 refuses the request: retried after Retry-After, and the two
		// listings are the read before the trigger and its look for its own
		// backup, not a search.
		name:   "rate limited is retried",
		faults: []mockservice.Fault{{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, Times: 1, RetryAfter: time.Second}},
		posts:  2, listings: 2, queued: 1,
	},
	{
		name:   "truncated response is recognised",
		faults: []mockservice.Fault{{Kind: mockservice.FaultTruncatedBody, Route: mockservice.RouteTrigger, Times: 1}},
		posts:  1, listings: -1, queued: 1, recovered: true,
	},
	{
		// A 202 whose body is not JSON: the backup was queued; the client
		// identifies it without the account the body would have named.
		name:   "malformed success is accepted",
		faults: []mockservice.Fault{{Kind: mockservice.FaultMalformedJSON, Route: mockservice.RouteTrigger, Times: 1}},
		posts:  1, listings: -1, queued: 1,
		check: func(t *testing.T, tr *triggered) {
			if tr.Account != nil {
				t.Errorf("account %+v from a body that is not JSON", tr.Account)
			}
		},
	},
	{
		// The POST times out at the client (a real socket timeout: the one
		// real clock here) and the service queues it later: looked for
		// during the grace period and found, not sent again.
		name: "timeout then found within grace",
		client: func(o *client.Options, s *Settings) {
			o.RequestTimeout = 50 * time.Millisecond
			o.BackoffBase = 200 * time.Millisecond
			s.UncertainGrace = 400 * time.Millisecond
			o.Clock = clock.Wall{}
		},
		faults: []mockservice.Fault{{Kind: mockservice.FaultLatency, Route: mockservice.RouteTrigger, Times: 1, Latency: 100 * time.Millisecond}},
		posts:  1, listings: -1, queued: 1, recovered: true,
	},
	{
		// A 409 after an unknown outcome, from a backup running since a
		// minute before this trigger: not ours, the conflict stands.
		name: "conflict with an older backup stays a conflict",
		opts: mockservice.Options{PendingFor: time.Hour},
		before: func(t *testing.T, f *fixture, id string) {
			if tr, o := triggerOnce(t, f.client, context.Background(), id); tr == nil {
				t.Fatal(o.Err)
			}
			<-f.clock.After(time.Minute)
			f.srv.ResetStats()
		},
		faults: []mockservice.Fault{{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger, Times: 1}},
		err:    func(o Outcome) bool { return errors.Is(o.Err, client.ErrConflict) },
		posts:  2, listings: -1, queued: 0,
	},
	{
		// Processed, answered 500, and the backups cannot be listed: the
		// outcome stays unknown and the POST is not sent again.
		name:   "does not resend blind",
		client: func(o *client.Options, s *Settings) { o.MaxRetries = 1 },
		faults: []mockservice.Fault{
			{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1},
			{Kind: mockservice.FaultServerError, Route: mockservice.RouteListBackups},
		},
		err: func(o Outcome) bool {
			return o.Kind == NotIdentified && serverError(o.Err) && !o.Confirmed
		},
		posts: 1, listings: -1, queued: 1,
	},
}

func TestTriggerAgainstMockFaults(t *testing.T) {
	t.Parallel()
	for i, tc := range mockTriggerFaults {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Seed = uint64(i + 1)
			f := newFixture(t, opts, tc.client)
			id := f.srv.AccountIDs()[0]
			if tc.before != nil {
				tc.before(t, f, id)
			}
			// The read before the trigger, then the faults: they play on the trigger.
			l, err := f.client.look(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			for _, fault := range tc.faults {
				f.srv.AddFault(fault)
			}
			tr, o := f.client.trigger(context.Background(), id, l, false)
			err = o.Err
			switch {
			case tc.err == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tc.err != nil && !tc.err(o):
				t.Fatalf("err = %T %v, not the error wanted", err, err)
			case tc.err != nil && tr != nil:
				t.Fatalf("failed, and still reported %+v", tr)
			case tc.err == nil && tr.Backup.ID != f.srv.NewestBackupID(id):
				t.Fatalf("reported backup %s; the one queued is %s", tr.Backup.ID, f.srv.NewestBackupID(id))
			}
			if tr != nil && tr.Recovered != tc.recovered {
				t.Errorf("recovered = %t, want %t", tr.Recovered, tc.recovered)
			}
			if n := f.srv.BackupsQueued(id); n != tc.queued {
				t.Errorf("%d backups queued, want %d", n, tc.queued)
			}
			if n := f.srv.Requests(mockservice.RouteTrigger); n != tc.posts {
				t.Errorf("%d POSTs, want %d", n, tc.posts)
			}
			if n := f.srv.Requests(mockservice.RouteListBackups); tc.listings >= 0 && n != tc.listings {
				t.Errorf("%d listings, want %d", n, tc.listings)
			}
			if tc.check != nil && tr != nil {
				tc.check(t, tr)
			}
		})
	}
}

// Interrupted after the service queued the backup but before its answer
// arrived: the backup is found and returned, so that the caller records it
// rather than queueing another next time.
func TestTriggerInterruptedAfterSendingIsRecognised(t *testing.T) {
	t.Parallel()
	srv := mockservice.New(mockservice.Options{Seed: 32, RateLimit: 10000})
	acct := srv.AccountIDs()[0]
	ctx, cancel := context.WithCancel(context.Background())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			srv.ServeHTTP(w, r)
			return
		}
		srv.ServeHTTP(httptest.NewRecorder(), r) // processed: the backup is queued
		cancel()                                 // the user presses Ctrl-C
		<-r.Context().Done()                     // and the answer never comes
	}))
	t.Cleanup(ts.Close)
	c := newRunner(t, client.Options{BaseURL: ts.URL, APIKey: srv.DemoKey(), Clock: newFakeClock()}, Settings{})
	tr, o := triggerOnce(t, c, ctx, acct)
	if err := o.Err; err != nil || !tr.Recovered || tr.Backup.ID == "" {
		t.Fatalf("trigger = %+v, %v; want the backup it queued, recovered", tr, err)
	}
	if n := srv.BackupsQueued(acct); n != 1 {
		t.Errorf("%d backups queued", n)
	}
}
