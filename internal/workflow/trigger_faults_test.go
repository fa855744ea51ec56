package workflow

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// triggerFault is one way a service answers a trigger badly, and what the
// client must make of it.
type triggerFault struct {
	name  string
	setup func(fs *faultyService)
	// run: false sends TriggerBackup; true RunBackup with run's options.
	viaRun bool
	run    RunOptions
	// err is the outcome wanted (nil: success, and the result must be the
	// one backup queued, unless queued is 0).
	err       func(Outcome) bool
	posts     int
	listings  int // -1: not checked
	queued    int
	recovered bool
	extra     func(t *testing.T, fs *faultyService, began time.Time, o Outcome)
}

func unidentifiedQueued(also error) func(Outcome) bool {
	return func(o Outcome) bool {
		return o.Kind == NotIdentified && o.Confirmed && errors.Is(o.Err, also)
	}
}

var triggerFaults = []triggerFault{
	{
		// An old successful backup, and the new one shown only after a few
		// listings (a lagging read replica): the trigger waits for its own
		// and never reports the old one.
		name:  "lagging listing never claims an old backup",
		setup: func(fs *faultyService) { fs.addOld(client.StatusSuccess, 365*24*time.Hour); fs.lag = 2 },
		posts: 1, listings: 4, queued: 1,
	},
	{
		// The new backup never shows: after IdentifyWithin the error says
		// it was queued; nothing is claimed, no second POST; through a
		// waited RunBackup the error is no success either.
		name:   "listing without the new backup fails clearly",
		setup:  func(fs *faultyService) { fs.addOld(client.StatusSuccess, 365*24*time.Hour); fs.lag = -1 },
		viaRun: true, run: RunOptions{WaitForCompletion: true, WaitOnConflict: true},
		err:   unidentifiedQueued(errNotListed),
		posts: 1, listings: -1, queued: 1,
		extra: func(t *testing.T, fs *faultyService, began time.Time, o Outcome) {
			if !o.TriggeredAt.Equal(began) {
				t.Errorf("triggered at %s, want %s", o.TriggeredAt, began)
			}
			if waited := fs.clock.Now().Sub(began); waited < defaultIdentifyWithin || waited > defaultIdentifyWithin+identifyMaxInterval {
				t.Errorf("looked for %s, want about %s", waited, defaultIdentifyWithin)
			}
		},
	},
	{
		// Queued, but every listing after the read before it fails: the
		// error says so and carries the listing's error.
		name: "queued but listing fails",
		setup: func(fs *faultyService) {
			fs.onListing = func(n int) {
				if n > 1 {
					fs.listingStatus = http.StatusInternalServerError
				}
			}
		},
		err: func(o Outcome) bool {
			return o.Kind == NotIdentified && o.Confirmed && serverError(o.Err)
		},
		posts: 1, listings: -1, queued: 1,
	},
	{
		// The read before the trigger fails: nothing could tell its
		// backup from another's, so nothing is sent (fails closed).
		name:   "the read before the trigger fails",
		setup:  func(fs *faultyService) { fs.listingStatus = http.StatusBadGateway },
		viaRun: true, run: RunOptions{WaitForCompletion: true},
		err: func(o Outcome) bool {
			return o.Kind == Refused && errors.Is(o.Err, errLookFailed) && serverError(o.Err)
		},
		posts: 0, listings: -1, queued: 0,
	},
	{
		// The service's clock 30 s behind this machine's: identified by
		// listing all the same, waited for, and it counts.
		name: "the service clock 30 s behind",
		setup: func(fs *faultyService) {
			fs.skew, fs.runFor = -30*time.Second, time.Minute
			fs.addOld(client.StatusSuccess, time.Hour)
		},
		viaRun: true, run: RunOptions{WaitForCompletion: true},
		posts: 1, listings: -1, queued: 1,
		extra: func(t *testing.T, _ *faultyService, _ time.Time, o Outcome) {
			if o.Kind != Succeeded {
				t.Errorf("outcome %d (%v); want it succeeded", o.Kind, o.Err)
			}
		},
	},
	{
		// Four minutes behind, and the answer lost: found by listing, not sent again.
		name: "reset after processing with the service clock 4 min behind",
		setup: func(fs *faultyService) {
			fs.skew = -4 * time.Minute
			fs.addOld(client.StatusSuccess, time.Hour)
			fs.resetPOSTs = 1
		},
		posts: 1, listings: -1, queued: 1, recovered: true,
	},
	{
		// Four minutes ahead, a 202: identified.
		name:  "the service clock 4 min ahead",
		setup: func(fs *faultyService) { fs.skew = 4 * time.Minute; fs.addOld(client.StatusSuccess, time.Minute) },
		posts: 1, listings: 2, queued: 1,
	},
	{
		// Processed, answered by a reset connection, with the service's
		// clock 3 s behind: recognised as this trigger's, one POST.
		name: "reset after processing with the service clock behind",
		setup: func(fs *faultyService) {
			fs.skew = -3 * time.Second
			fs.addOld(client.StatusSuccess, time.Hour)
			fs.resetPOSTs = 1
		},
		posts: 1, listings: -1, queued: 1, recovered: true,
	},
	{
		// The same with a listing lagging past the grace period: the POST
		// is sent again and answered 409; the backup in progress is this
		// trigger's own, returned, not waited for before a second one.
		name:   "conflict after reset is our own backup",
		setup:  func(fs *faultyService) { fs.skew = -3 * time.Second; fs.resetPOSTs = 1; fs.lag = 12 },
		viaRun: true, run: RunOptions{WaitOnConflict: true},
		posts: 2, listings: -1, queued: 1,
	},
	{
		// A POST without answer, processed later: looked for during the
		// grace period before anything is sent again, and found.
		name:  "processed late is found within grace",
		setup: func(fs *faultyService) { fs.dropPOSTs, fs.processLater = 1, 4 },
		posts: 1, listings: -1, queued: 1, recovered: true,
	},
	{
		// The documented limit: processed after the grace period, once a
		// second POST was sent, it makes two backups; the second is the
		// trigger's.
		name:  "processed after grace is the documented limit",
		setup: func(fs *faultyService) { fs.runFor = time.Second; fs.dropPOSTs, fs.processLater = 1, 1000 },
		posts: 2, listings: -1, queued: -1,
	},
	{
		// A 409 after an unknown outcome, from a backup running since
		// before this trigger: the first POST queued nothing, so the
		// conflict stands.
		name: "conflict with a backup older than the trigger",
		setup: func(fs *faultyService) {
			fs.mu.Lock()
			fs.backups = []client.Backup{{ID: "bkp_other00000000000", AccountID: fs.account, Status: client.StatusRunning, CreatedAt: fs.now().Add(-10 * time.Minute)}}
			fs.mu.Unlock()
			fs.dropPOSTs, fs.processLater = 1, -1 // never processed
		},
		err:   func(o Outcome) bool { return errors.Is(o.Err, client.ErrConflict) },
		posts: -1, listings: -1, queued: 0,
	},
}

func TestTriggerFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range triggerFaults {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs, c := newFaultyService(t)
			tc.setup(fs)
			began := fs.clock.Now()
			var (
				id        string
				recovered bool
				o         Outcome
			)
			if tc.viaRun {
				if o = c.run(context.Background(), fs.account, tc.run); o.Backup != nil {
					id = o.Backup.ID
				}
			} else {
				var tr *triggered
				tr, o = triggerOnce(t, c, context.Background(), fs.account)
				if tr != nil {
					id, recovered = tr.Backup.ID, tr.Recovered
				}
			}
			err := o.Err
			queued := fs.queuedIDs()
			switch {
			case tc.err == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tc.err != nil && !tc.err(o):
				t.Fatalf("err = %T %v, not the error wanted", err, err)
			case tc.err != nil && id != "":
				t.Fatalf("failed, and still reported backup %s", id)
			case tc.err == nil && (len(queued) == 0 || id != queued[len(queued)-1]):
				t.Fatalf("reported backup %s; queued %v (the trigger's is the last)", id, queued)
			}
			if tc.queued >= 0 && len(queued) != tc.queued {
				t.Errorf("queued %v, want %d", queued, tc.queued)
			}
			if recovered != tc.recovered {
				t.Errorf("recovered = %t, want %t", recovered, tc.recovered)
			}
			posts, listings := fs.counts()
			if tc.posts >= 0 && posts != tc.posts {
				t.Errorf("%d POSTs, want %d", posts, tc.posts)
			}
			if tc.listings >= 0 && listings != tc.listings {
				t.Errorf("%d listings, want %d", listings, tc.listings)
			}
			if tc.extra != nil {
				tc.extra(t, fs, began, o)
			}
		})
	}
}
