package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestTriggerAcceptedButAnswered500QueuesOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 1}, nil)
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1})
	tr, err := f.client.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Recovered || tr.Backup.Status != StatusPending {
		t.Errorf("%+v", tr)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued, want 1", n)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 1 {
		t.Errorf("the POST was sent %d times; the backup was found without resending", n)
	}
}

func TestTriggerServerErrorBeforeProcessingIsResent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 2}, nil)
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger, Times: 2})
	tr, err := f.client.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Recovered || tr.Account == nil {
		t.Errorf("%+v", tr)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued", n)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 3 {
		t.Errorf("%d POSTs, want 3", n)
	}
}

func TestTriggerRateLimitedIsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 3}, nil)
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultOverload, Route: mockservice.RouteTrigger, Times: 1, RetryAfter: time.Second})
	if _, err := f.client.TriggerBackup(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued", n)
	}
	if n := f.srv.Requests(mockservice.RouteListBackups); n != 1 {
		t.Errorf("%d listings; a refused 429 needs no look", n)
	}
}

func TestTriggerTruncatedResponseIsRecognised(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 4}, nil)
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultTruncatedBody, Route: mockservice.RouteTrigger, Times: 1})
	tr, err := f.client.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Recovered || f.srv.BackupsQueued(id) != 1 {
		t.Fatalf("%+v, %d queued", tr, f.srv.BackupsQueued(id))
	}
}

func TestTriggerMalformedSuccessIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 5}, nil)
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultMalformedJSON, Route: mockservice.RouteTrigger, Times: 1})
	tr, err := f.client.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Account != nil || tr.Backup.ID == "" || f.srv.BackupsQueued(id) != 1 {
		t.Fatalf("%+v", tr)
	}
}

// The first POST times out at the client but the service queues it later:
// the backup is looked for during the grace period and found, and the POST
// is not sent again.
func TestTriggerTimeoutThenConflictIsRecognised(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 6}, func(o *Options) {
		o.RequestTimeout = 50 * time.Millisecond
		o.BackoffBase = 200 * time.Millisecond
		o.UncertainGrace = 400 * time.Millisecond
		o.Clock = realClock{}
	})
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultLatency, Route: mockservice.RouteTrigger, Times: 1, Latency: 100 * time.Millisecond})
	tr, err := f.client.TriggerBackup(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Recovered {
		t.Errorf("%+v", tr)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued", n)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 1 {
		t.Errorf("%d POSTs, want 1", n)
	}
}

// A 409 after an unknown outcome is not ours when the running backup is
// older than the first attempt: it stays a conflict.
func TestTriggerConflictWithOlderBackupStaysConflict(t *testing.T) {
	t.Parallel()
	clock := mockservice.NewManualClock(time.Now().Truncate(time.Second))
	f := newFixture(t, mockservice.Options{Seed: 7, Clock: clock, PendingFor: time.Hour}, nil)
	id := f.srv.AccountIDs()[0]
	if _, err := f.client.TriggerBackup(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	// A minute later on both clocks, the first backup still running.
	clock.Advance(time.Minute)
	<-f.clock.After(time.Minute)
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger, Times: 1})
	_, err := f.client.TriggerBackup(context.Background(), id)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("%v", err)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Fatalf("%d backups queued", n)
	}
}

// When the backups cannot be listed, the outcome stays unknown and the POST
// is not sent again.
func TestTriggerDoesNotResendBlind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, mockservice.Options{Seed: 8}, func(o *Options) { o.MaxRetries = 1 })
	id := f.srv.AccountIDs()[0]
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger, Times: 1})
	f.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListBackups})
	_, err := f.client.TriggerBackup(context.Background(), id)
	var ue *UnidentifiedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrServer) || ue.Queued {
		t.Fatalf("%T %v", err, err)
	}
	if n := f.srv.Requests(mockservice.RouteTrigger); n != 1 {
		t.Errorf("%d POSTs", n)
	}
	if n := f.srv.BackupsQueued(id); n != 1 {
		t.Errorf("%d queued", n)
	}
}
