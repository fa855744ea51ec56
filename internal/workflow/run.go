package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Kind is what became of a run, a follow-up or one account of many.
type Kind int

// The kinds. Only Succeeded, and NotWaited for a caller that does not
// wait, let a guarded change go ahead (Outcome.Good).
const (
	Refused         Kind = iota + 1 // no backup was queued: refused, or not sent; Err says why
	ConflictNotOver                 // the wait for a backup already in progress stopped; none was queued
	NotIdentified                   // a backup was queued (Confirmed), or perhaps queued, and never found
	Unreadable                      // the recorded backup (BackupID) could not be read; nothing followed or queued
	NotWaited                       // the backup is known, and nobody waited for it to end
	Succeeded                       // waited for, it succeeded and counts
	Failed                          // waited for, it ended in another status or does not count
	TimedOut                        // the wait ran out; the backup goes on
	Interrupted                     // the wait was interrupted; the backup goes on
	Unfollowed                      // polling failed (Err); the backup goes on
)

// Outcome is the one answer of a run: what became of the backup, and why.
type Outcome struct {
	Kind      Kind
	AccountID string
	Backup    *client.Backup // as last read; nil when none is known
	Err       error          // why the outcome is not good; nil for Succeeded and NotWaited
	Waited    time.Duration  // how long the wait that stopped had lasted
	Running   *client.Backup // the backup a ConflictNotOver waited for, when seen
	// TriggeredAt, TriggeredOnService and Confirmed describe a NotIdentified
	// trigger (see Record).
	TriggeredAt, TriggeredOnService time.Time
	Confirmed                       bool
	Misdated                        string // see Rule.Misdated
	BackupID                        string // the backup an Unreadable follow-up could not read
	Reused                          bool   // no backup queued: a recent one counts (RunOptions.ReuseWithin)
	// ReuseRefused says why reuse_within could not be read: a new backup was taken.
	ReuseRefused error
}

// Good says whether the change may go ahead: a backup seen to succeed or,
// for a caller that does not wait, one queued that has not failed.
func (o Outcome) Good(waits bool) bool {
	if waits || o.Kind != NotWaited {
		return o.Kind == Succeeded
	}
	return o.Backup != nil && (client.InProgress(o.Backup.Status) || o.Backup.Good())
}

// Reason is the service's error text for a backup that did not succeed,
// or says there was none.
func (o Outcome) Reason() string {
	if o.Backup != nil && o.Backup.Error != nil && *o.Backup.Error != "" {
		return *o.Backup.Error
	}
	return "the service gave no reason"
}

func refused(err error) Outcome { return Outcome{Kind: Refused, Err: err} }

func notWaited(b *client.Backup) Outcome { return Outcome{Kind: NotWaited, Backup: b} }

// failed: b ended in another status than success or, with why (Rule.Check's
// reason), in a success that does not count.
func failed(b client.Backup, why error) Outcome {
	if why == nil {
		why = fmt.Errorf("backup %s of account %s ended with status %q: %s", b.ID, b.AccountID, b.Status, Outcome{Backup: &b}.Reason())
	}
	return Outcome{Kind: Failed, Backup: &b, Err: why}
}

// Run queues one backup of the account and, with WaitForCompletion, waits
// for it to end; with ReuseWithin, a recent backup may count instead.
func (w *Runner) Run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	run := w.run
	if opts.ReuseWithin > 0 {
		run = w.reuse
	}
	o := run(ctx, accountID, opts)
	o.AccountID = accountID
	return w.onService(o)
}

// onService notes when a trigger not identified began on the service's
// clock, and a backup dated ahead of it, for whichever machine looks next.
func (w *Runner) onService(o Outcome) Outcome {
	if o.Kind == NotIdentified {
		o.Misdated = cmp.Or(o.Misdated, misdatedIn(o.Err))
	}
	if off, ok := w.c.ClockOffset(); ok && o.Kind == NotIdentified && o.TriggeredOnService.IsZero() {
		o.TriggeredOnService = o.TriggeredAt.Add(off)
	}
	return o
}

// PollSettings shape a wait: a poll waits a tenth of the time waited so
// far, at least Initial and at most Max.
type PollSettings struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultPoll notices a backup's end within max(2 s, 10% of the wait), at
// two requests a minute in a long wait.
var DefaultPoll = PollSettings{Initial: 2 * time.Second, Max: 30 * time.Second}

func (p PollSettings) interval(waited time.Duration) time.Duration {
	return max(p.Initial, min(p.Max, waited/10))
}

func (p PollSettings) orDefault() PollSettings {
	if p.Initial <= 0 || p.Max <= 0 {
		return DefaultPoll
	}
	return p
}

// EventKind says what an Event reports.
type EventKind int

// Events of a run.
const (
	EventConflict EventKind = iota + 1 // another backup (Backup) is in progress; it is waited for first
	EventQueued                        // the backup was queued, recovered or adopted
	EventStatus                        // the backup's status changed from Previous
	EventDone                          // the backup reached a terminal status
	EventReused                        // a backup this run did not queue counts for it (ReuseWithin)
)

// Event reports progress of a backup run.
type Event struct {
	Kind     EventKind
	Backup   client.Backup
	Previous string
	Elapsed  time.Duration // since the run (or the wait) began
	Age      time.Duration // of EventReused: how long ago the backup started
}

// RunOptions shape a run.
type RunOptions struct {
	WaitOnConflict    bool // wait for a backup already in progress, then queue one; else the 409 is the outcome
	WaitForCompletion bool
	// ReuseWithin, when positive, lets a backup started no more than this
	// long before the run count for it (see reuse).
	ReuseWithin time.Duration
	// After is when the resource's previous change went ahead, on the
	// service's clock (Rule.After); zero when none is known.
	After time.Time
	// Progress, when set, is told of each step, from the caller's goroutine.
	Progress func(Event)
}

type emitFunc func(kind EventKind, b client.Backup, prev string)

// progress is when a run begins, and what tells opts.Progress of each step, timed from then.
func (w *Runner) progress(opts RunOptions) (start time.Time, emit emitFunc) {
	start = w.clock.Now()
	return start, func(kind EventKind, b client.Backup, prev string) {
		if opts.Progress != nil {
			opts.Progress(Event{Kind: kind, Backup: b, Previous: prev, Elapsed: w.clock.Now().Sub(start)})
		}
	}
}

// run queues one backup of the account and, with WaitForCompletion, waits
// for it to end, for the resources and the action alike.
func (w *Runner) run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	start, emit := w.progress(opts)
	for {
		tr, o := w.trigger(ctx, accountID, opts)
		if tr != nil {
			if tr.Recovered {
				w.log.Warn(ctx, "the trigger's outcome was unknown; found the backup it queued instead of queueing another",
					map[string]any{"account_id": accountID, "backup_id": tr.Backup.ID})
			}
			return w.waitOwn(ctx, accountID, &tr.Backup, opts.WaitForCompletion, start, emit)
		}
		if !opts.WaitOnConflict || !errors.Is(o.Err, client.ErrConflict) {
			return o
		}
		if stopped := w.waitOutConflict(ctx, accountID, start, emit); stopped != nil {
			return *stopped
		}
	}
}

// waitOwn tells of b, which this change queued, and waits for it if the
// caller does; it counts by its id whatever its times (Rule.Own).
func (w *Runner) waitOwn(ctx context.Context, accountID string, b *client.Backup, waits bool, start time.Time, emit emitFunc) Outcome {
	emit(EventQueued, *b, "")
	if !waits {
		return notWaited(b)
	}
	return w.waitFrom(ctx, accountID, b, start, emit, Rule{AccountID: accountID, Own: b.ID})
}

// waitOutConflict waits for the account's backup in progress to end; it
// returns the outcome when the wait stopped.
func (w *Runner) waitOutConflict(ctx context.Context, accountID string, start time.Time, emit emitFunc) *Outcome {
	running, err := w.newest(ctx, accountID)
	switch {
	case err != nil: // the listing failed: stopped
	case running == nil || !client.InProgress(running.Status):
		// Ended since the 409, or not listed: try again a poll interval later.
		running, err = nil, clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(start)))
	default:
		emit(EventConflict, *running, "")
		_, err = w.poll(ctx, accountID, running, func(client.Backup, string) {})
	}
	if err != nil {
		return &Outcome{Kind: ConflictNotOver, Running: running, Waited: w.clock.Now().Sub(start), Err: err}
	}
	return nil
}

// waitFrom waits for b, as just read, to end; it counts only if rule
// accepts it then.
func (w *Runner) waitFrom(ctx context.Context, accountID string, b *client.Backup, start time.Time, emit emitFunc, rule Rule) Outcome {
	final, err := w.poll(ctx, accountID, b, func(now client.Backup, prev string) {
		emit(EventStatus, now, prev)
		w.log.Debug(ctx, "backup status changed", map[string]any{
			"account_id": accountID, "backup_id": now.ID, "status": now.Status, "previous_status": prev,
			"elapsed": w.clock.Now().Sub(start).Round(time.Second).String(),
		})
	})
	if err != nil {
		kind := Unfollowed
		if errors.Is(err, context.DeadlineExceeded) {
			kind = TimedOut
			// Read the status once more, briefly, so that the message tells the truth.
			rctx, cancel := detached(ctx)
			if now, rerr := w.c.FindBackup(rctx, accountID, final.ID); rerr == nil {
				final = now
			}
			cancel()
		}
		if errors.Is(err, context.Canceled) {
			kind = Interrupted
		}
		return Outcome{Kind: kind, Backup: final, Waited: w.clock.Now().Sub(start), Err: err}
	}
	emit(EventDone, *final, "")
	if final.Status != client.StatusSuccess {
		return failed(*final, nil)
	}
	if err := rule.Check(*final, Final); err != nil {
		return failed(*final, err)
	}
	return Outcome{Kind: Succeeded, Backup: final}
}

// poll reads the backup, from one interval on, until it is no longer in
// progress; on error it returns the last state it saw.
func (w *Runner) poll(ctx context.Context, accountID string, last *client.Backup, changed func(now client.Backup, prev string)) (*client.Backup, error) {
	began := w.clock.Now()
	for client.InProgress(last.Status) {
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(began))); err != nil {
			return last, err
		}
		now, err := w.c.FindBackup(ctx, accountID, last.ID)
		if err != nil {
			return last, cmp.Or(ctx.Err(), err)
		}
		if now.Status != last.Status {
			changed(*now, last.Status)
		}
		last = now
	}
	return last, nil
}

// Queueing: the trigger, and recognising the backup it queued.

// Triggered is what a trigger queued.
type Triggered struct {
	Account   *client.Account // as the answer gave it; nil when it could not be read
	Backup    client.Backup
	Recovered bool // the outcome was unknown, and the backup was found rather than queued again
}

// ErrNotListed: the listing never held the trigger's backup.
var ErrNotListed = errors.New("the account's backups listing shows no backup created since the trigger")

// trigger queues one backup, or says why not. The POST is not idempotent:
// after an unknown outcome the listing is looked at before any resend.
// mine recognises its own backup: without reuse_within, so that an unknown
// outcome never passes off a recent one.
func (w *Runner) trigger(ctx context.Context, accountID string, opts RunOptions) (*Triggered, Outcome) {
	mine := Rule{AccountID: accountID, After: opts.After, Began: w.clock.Now()}
	post := w.c.Trigger(accountID)
	uncertain := false
	for {
		acct, err := post.Post(ctx)
		var unsure *client.UnsureError
		switch {
		case err == nil:
			// Accepted; acct is nil when the answer could not be read.
			if acct != nil && acct.ID != accountID {
				// Answered for another account: keep nothing of it.
				w.log.Warn(ctx, "the answer to a backup trigger names another account; it is ignored",
					map[string]any{"account_id": accountID, "answered_for": acct.ID})
				acct = nil
			}
			return w.identify(ctx, acct, &mine, false)
		case ctx.Err() != nil:
			if !post.Sent() {
				return nil, refused(ctx.Err())
			}
			// A POST may have been on its way: look once, briefly, so that the caller records it.
			if found, _ := w.lookDetached(ctx, &mine); found != nil {
				return &Triggered{Backup: *found, Recovered: true}, Outcome{}
			}
			return nil, mine.unidentified(false, ctx.Err())
		case errors.Is(err, client.ErrConflict) && uncertain:
			return w.conflictAfterUncertain(ctx, &mine, err)
		case errors.As(err, &unsure):
			uncertain = true
			w.log.Warn(ctx, "the outcome of a backup trigger is unknown; looking for the backup before sending it again",
				map[string]any{"account_id": accountID, "error": err.Error()})
			// A listing may lag behind the POST, as after a 202; with no
			// answer, the request may still be on its way through the service.
			grace := w.set.IdentifyWithin
			if !unsure.Answered {
				grace = max(grace, w.set.UncertainGrace)
			}
			found, lerr := w.lookFor(ctx, &mine, grace)
			if found != nil {
				return &Triggered{Backup: *found, Recovered: true}, Outcome{}
			}
			if lerr != nil && !errors.Is(lerr, ErrNotListed) {
				// Nothing can be seen: sending again could queue a second
				// backup.
				return nil, mine.unidentified(false, errors.Join(err, lerr))
			}
			if cerr := w.measured(mine).clocksApart(); cerr != nil {
				// The backup may be listed and not recognised by its time:
				// sending again could queue a second one.
				return nil, mine.unidentified(false, errors.Join(err, cerr))
			}
			if werr := post.Wait(ctx, err); werr != nil {
				return nil, mine.unidentified(false, werr)
			}
		default:
			return nil, refused(err)
		}
	}
}

// unidentified: the trigger r looks for queued a backup (queued), or may
// have, and err says why it was not found; Misdated is for the next look.
func (r *Rule) unidentified(queued bool, err error) Outcome {
	return Outcome{Kind: NotIdentified, TriggeredAt: r.Began, TriggeredOnService: r.BeganOnService, Confirmed: queued, Err: err, Misdated: r.Misdated}
}

// conflictAfterUncertain reads a 409 after an unknown outcome: a backup in
// progress started since the trigger is its own; an older one, the 409 stands.
func (w *Runner) conflictAfterUncertain(ctx context.Context, mine *Rule, conflict error) (*Triggered, Outcome) {
	newest, err := w.newest(ctx, mine.AccountID)
	if err != nil {
		return nil, mine.unidentified(true, errors.Join(conflict, err))
	}
	if newest != nil && client.InProgress(newest.Status) {
		rule := w.measured(*mine)
		if err := rule.Check(*newest, Identified); err != nil {
			if !rule.mayBeOwn(*newest) {
				return nil, refused(conflict)
			}
			// Maybe its own, and refused: never waited out and queued again.
			return nil, mine.unidentified(true, errors.Join(conflict, err))
		}
	}
	// Ours, or not listed yet (a lagging listing): look for it.
	return w.identify(ctx, nil, mine, true)
}

// identify finds a backup the service accepted, for IdentifyWithin and,
// when the context ends first, once more, detached.
func (w *Runner) identify(ctx context.Context, acct *client.Account, mine *Rule, recovered bool) (*Triggered, Outcome) {
	found, err := w.lookFor(ctx, mine, w.set.IdentifyWithin)
	if found == nil && ctx.Err() != nil {
		found, err = w.lookDetached(ctx, mine)
	}
	if found == nil {
		return nil, mine.unidentified(true, err)
	}
	return &Triggered{Account: acct, Backup: *found, Recovered: recovered}, Outcome{}
}

// lookDetached looks once (a look of no length) for the trigger's backup after ctx ended, briefly.
func (w *Runner) lookDetached(ctx context.Context, mine *Rule) (*client.Backup, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	return w.lookFor(dctx, mine, 0)
}

// The pause between looks for a trigger's backup doubles up to the max.
const (
	identifyInterval    = time.Second
	identifyMaxInterval = 8 * time.Second
)

// lookFor looks for the trigger's backup until within has passed; else it
// returns the last error (ErrNotListed when the listing held none).
func (w *Runner) lookFor(ctx context.Context, mine *Rule, within time.Duration) (*client.Backup, error) {
	deadline := w.clock.Now().Add(within)
	for interval := identifyInterval; ; interval = min(2*interval, identifyMaxInterval) {
		found, err := w.findMine(ctx, mine)
		if found != nil {
			return found, nil
		}
		err = cmp.Or(err, ErrNotListed)
		if ctx.Err() != nil {
			return nil, err
		}
		if left := deadline.Sub(w.clock.Now()); left <= 0 || clock.Sleep(ctx, w.clock, min(interval, left)) != nil {
			return nil, err // the time ran out, or the context ended while asleep
		}
	}
}

// FindTriggered looks once for the backup of an unidentified record; nil,
// nil when none is listed yet.
func (w *Runner) FindTriggered(ctx context.Context, accountID string, r Record) (*client.Backup, error) {
	return w.findMine(ctx, &Rule{AccountID: accountID, After: r.Since, Began: r.TriggeredAt, BeganOnService: r.TriggeredOnService, Misdated: r.Misdated})
}

// findMine returns the account's newest backup when mine recognises it as
// the trigger's, or why not when it may be its own all the same. A backup
// found misdated stays refused in mine's later looks.
func (w *Runner) findMine(ctx context.Context, mine *Rule) (*client.Backup, error) {
	b, err := w.newest(ctx, mine.AccountID)
	if b == nil {
		return nil, err
	}
	rule := w.measured(*mine) // the service's clock as this listing's answer dates it
	err = rule.Check(*b, Identified)
	switch {
	case err == nil:
		return b, nil
	case rule.mayBeOwn(*b):
		mine.Misdated = cmp.Or(misdatedIn(err), mine.Misdated)
		return nil, err
	}
	return nil, nil
}

// newest is the account's newest backup, as the service lists a new one;
// nil when it lists none.
func (w *Runner) newest(ctx context.Context, accountID string) (*client.Backup, error) {
	for b, err := range w.c.Backups(ctx, accountID, client.ListOptions{Max: 1}) {
		if err != nil {
			return nil, err
		}
		return &b, nil
	}
	return nil, nil
}
