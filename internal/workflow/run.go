package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
)

// Kind is what became of a run, a follow-up or one account of many.
type Kind int

// The kinds. Only Succeeded, and NotWaited for a caller that does not wait, let a guarded change go ahead (Outcome.Good).
const (
	// Refused: no backup was queued or followed (refused, or not sent); Err says why: *RefusalError (the service refused
	// the trigger), *ConflictWaitError (a wait stopped), *UnreadError (the recorded backup could not be read).
	Refused       Kind = iota + 1
	NotIdentified      // a backup was queued (Confirmed), or perhaps queued, and never found
	NotWaited          // the backup is known, and nobody waited for it to end
	Succeeded          // waited for, it succeeded and counts
	Failed             // waited for, it ended in another status or does not count
	Unsettled          // the wait stopped, the backup goes on; Err says why: out of time, interrupted, or polling failed
)

// ConflictWaitError: the wait for a backup in progress (Running, when seen) stopped for Err; none was queued.
type ConflictWaitError struct {
	Running *client.Backup
	Err     error
}

func (e *ConflictWaitError) Error() string { return e.Err.Error() }

func (e *ConflictWaitError) Unwrap() error { return e.Err }

// RefusalError: the service answered the trigger's own POST with Err, queuing nothing (never a failed read before or after).
type RefusalError struct{ Err error }

func (e *RefusalError) Error() string { return e.Err.Error() }

func (e *RefusalError) Unwrap() error { return e.Err }

// UnreadError: the recorded backup BackupID (empty: one not identified, looked for) could not be read, for Err.
type UnreadError struct {
	BackupID string
	Err      error
}

func (e *UnreadError) Error() string { return e.Err.Error() }

func (e *UnreadError) Unwrap() error { return e.Err }

// Outcome is the one answer of a run: what became of the backup, and why.
type Outcome struct {
	Kind      Kind
	AccountID string
	Backup    *client.Backup // as last read; nil when none is known
	Err       error          // why the outcome is not good; nil for Succeeded and NotWaited
	Waited    time.Duration  // how long the wait that stopped had lasted
	// TriggeredAt, TriggeredOnService and Confirmed describe a NotIdentified trigger (see Record).
	TriggeredAt, TriggeredOnService time.Time
	Confirmed                       bool
	// Before: the mark of the read before this run's trigger (reused: the floor counted above); its backup is above it.
	Before *Mark
	// Seen: the last first page read's mark, with Backup: the next change's floor if it goes ahead now (Record.goesAhead).
	Seen   *Mark
	Reused bool // no backup queued: a recent one counts (RunOptions.ReuseWithin)
	// Renewed: a run in place of a record's backup that no longer counted or was never listed: the backup is this run's.
	Renewed bool
	// Adopted: NotIdentified, a replaced trigger's (CreateTrigger): the change goes ahead only once found, waited for or not.
	Adopted bool
	// ReuseRefused says why reuse_within could not be read: a new backup was taken.
	ReuseRefused error
	// At: a stopped wait's last first-page answer time, both clocks (zero: none): a stopped destroy's record stands on both.
	At client.AnswerTime
	// earlier: an afterUnknown run's backup found when its own trigger got a 409: the earlier trigger's, not the run's.
	earlier bool
}

// Good says whether the change may go ahead: a backup seen to succeed or, not waiting, one queued that has not failed.
func (o Outcome) Good(waits bool) bool {
	if waits || o.Kind != NotWaited {
		return o.Kind == Succeeded
	}
	return o.Backup != nil && (client.InProgress(o.Backup.Status) || o.Backup.Good())
}

// Reason is the service's error text for a backup that did not succeed, or says there was none.
func (o Outcome) Reason() string {
	if o.Backup != nil && o.Backup.Error != nil && *o.Backup.Error != "" {
		return *o.Backup.Error
	}
	return "the service gave no reason"
}

func refused(err error) Outcome { return Outcome{Kind: Refused, Err: err} }

// notWaited: b is known, on page when read from a first page, and nobody waits for it.
func notWaited(b *client.Backup, page *client.BackupsPage) Outcome {
	return Outcome{Kind: NotWaited, Backup: b, Seen: markOf(page, b.ID)}
}

// failed: b ended in another status than success or, with why (counted's reason), in a success that does not count.
func failed(b client.Backup, why error) Outcome {
	if why == nil {
		why = fmt.Errorf("backup %s of account %s ended with status %q: %s", b.ID, b.AccountID, b.Status, Outcome{Backup: &b}.Reason())
	}
	return Outcome{Kind: Failed, Backup: &b, Err: why}
}

// backUp queues one backup and, with WaitForCompletion, waits for it; with ReuseWithin, a recent backup may count instead.
func (w *Runner) backUp(ctx context.Context, accountID string, opts RunOptions) Outcome {
	var o Outcome
	if opts.ReuseWithin > 0 {
		o = w.reuse(ctx, accountID, opts)
	} else {
		o = w.run(ctx, accountID, opts)
	}
	o.AccountID = accountID
	return o
}

// pollSettings shape a wait: a poll waits a tenth of the time waited so far, at least Initial and at most Max.
type pollSettings struct {
	Initial time.Duration
	Max     time.Duration
}

// defaultPoll notices a backup's end within max(2 s, 10% of the wait), at two requests a minute in a long wait.
var defaultPoll = pollSettings{Initial: 2 * time.Second, Max: 30 * time.Second}

func (p pollSettings) interval(waited time.Duration) time.Duration {
	return max(p.Initial, min(p.Max, waited/10))
}

func (p pollSettings) orDefault() pollSettings {
	if p.Initial <= 0 || p.Max <= 0 {
		return defaultPoll
	}
	return p
}

// EventKind says what an Event reports.
type EventKind int

// Events of a run.
const (
	EventConflict EventKind = iota + 1 // another backup (Backup) is in progress; it is waited for first
	EventQueued                        // the backup was queued, recovered or adopted
	EventStatus                        // the backup's status, changed from Previous, or the same for StillWaitingEvery (the wait goes on)
	EventDone                          // the backup reached a terminal status
	EventReused                        // a backup this run did not queue counts for it (ReuseWithin)
)

// StillWaitingEvery is how long a wait goes without news before an EventStatus with no change (or, for another's backup,
// EventConflict again) says that it goes on: a long wait is not silent.
const StillWaitingEvery = time.Minute

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
	// ReuseWithin, when positive, lets a backup started at most this long before the run count for it (see reuse).
	ReuseWithin time.Duration
	// Since: the listing's mark when the previous change went ahead; reuse only above it (nil: unknown; Unrecorded only).
	Since *Mark
	// Unrecorded: the caller records no change (an action, a guard's destroy): a recent backup counts wherever listed.
	Unrecorded bool
	// Progress, when set, is told of each step, from the caller's goroutine.
	Progress func(Event)
	// replaced: the backup of the record this run replaces (no longer counting or standing): never the run's own, even
	// when a listing that drops it hid it from the read before the trigger (deep-run seed 126609).
	replaced string
	// predates: backups the triggers this create replaces listed before their trigger: never the run's own, even with
	// their floor unknown (gone ahead unidentified) and a lagging listing hiding them from this read (deep-run seed 538772).
	predates *Mark
	// afterUnknown: the run sends again a trigger of unknown outcome, which the service may yet process: a 409 may be
	// that trigger's backup running, and is read as after an unknown outcome (deep-run seed 283844).
	afterUnknown bool
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

// looked is a read of an account's first page of backups before a trigger: the page, and its mark.
type looked struct {
	page client.BackupsPage
	mark *Mark
	// shown is the newest backup of each page read before it since the mark's own read (a conflict's wait).
	shown newest
}

// look reads the account's first page of backups: the read before any trigger, which tells its backup from every other.
func (w *Runner) look(ctx context.Context, accountID string) (looked, error) {
	p, err := w.c.FirstBackupsPage(ctx, accountID)
	if err != nil {
		return looked{}, err
	}
	if p.At.Stored > maxReadAge {
		return looked{}, &cachedReadError{Stored: p.At.Stored}
	}
	m, err := pageMark(p)
	if err != nil {
		return looked{}, err
	}
	return looked{page: p, mark: m.readSince(p.At.Received)}, nil
}

// maxReadAge is the most a cache may have held the read before a trigger (its Age): a second, as a revalidated answer's
// rounds; one held longer hides what started since, which would then read as new.
const maxReadAge = time.Second

// cachedReadError: the read before a trigger came from a cache's store, not the service as it is now.
type cachedReadError struct{ Stored time.Duration }

func (e *cachedReadError) Error() string {
	return fmt.Sprintf("the answer came from a cache that had held it for %s (its Age header), so it does not list what "+
		"started since; let the backups listing reach the service uncached", e.Stored)
}

var errLookFailed = errors.New("reading the account's newest backups before the trigger failed, so its backup could not be told " +
	"from any other: no backup was queued")

// lookFirst is the read before a trigger, or the outcome that fails closed. The key's organization is checked first
// (once per client), as the trigger's POST checks it: a key of another organization reads nothing.
func (w *Runner) lookFirst(ctx context.Context, accountID string) (looked, *Outcome) {
	if err := w.c.CheckOrganization(ctx); err != nil {
		return looked{}, &Outcome{Kind: Refused, Err: err}
	}
	l, err := w.look(ctx, accountID)
	if err != nil {
		return looked{}, &Outcome{Kind: Refused, Err: fmt.Errorf("%w: %w", errLookFailed, err)}
	}
	return l, nil
}

// run reads the account's newest backups, else fails closed, then queues a backup (and waits for it with WaitForCompletion).
func (w *Runner) run(ctx context.Context, accountID string, opts RunOptions) Outcome {
	l, stop := w.lookFirst(ctx, accountID)
	if stop != nil {
		return *stop
	}
	return w.runFrom(ctx, accountID, opts, l)
}

// runFrom is run after the read before the trigger. A backup a conflict waits out joins the mark: it is not this run's.
func (w *Runner) runFrom(ctx context.Context, accountID string, opts RunOptions, l looked) Outcome {
	start, emit := w.progress(opts)
	l, stop := markBefore(opts, l)
	for rereads := 0; stop == nil; {
		tr, o := w.trigger(ctx, accountID, l, opts.afterUnknown)
		if tr != nil {
			if tr.Recovered {
				w.log.Warn(ctx, "the trigger's outcome was unknown; found the backup it queued instead of queueing another",
					map[string]any{"account_id": accountID, "backup_id": tr.Backup.ID})
			}
			o = w.waitOwn(ctx, accountID, &tr.Backup, tr.Page, opts.WaitForCompletion, start, emit)
			o.Before, o.earlier = l.mark, tr.Earlier
			return o
		}
		if o.Kind == Refused && errors.Is(o.Err, client.ErrNotSentInTime) {
			// Refused unprocessed past the empty read's reach (Runner.sendBy): nothing was queued, so read again.
			if rereads == maxRereads {
				o.Err = fmt.Errorf("%w: %w", errRefusedPastEmptyRead, o.Err)
				return o
			}
			rereads++
			w.log.Warn(ctx, "reading the account's backups again before its trigger: the listing read before showed none, and the "+
				"service's refusals (429) held the trigger past the 30 s within which it must follow that read", map[string]any{
				"account_id": accountID, "reread": rereads, "of_at_most": maxRereads})
			prev := l
			if l, stop = w.lookFirst(ctx, accountID); stop == nil {
				l, stop = markBefore(opts, l)
				// What the reads before it listed, or a conflict waited out, predates the run as well.
				l.mark, l.shown = prev.mark.then(l.mark), prev.shown
				l.shown.add(prev.page)
			}
			continue
		}
		// Only a refused trigger's 409 is another's backup to wait out: one not identified after an unknown outcome
		// may be that trigger's own (deep-run seed 601591: waited out, the next apply queued a second backup).
		if o.Kind != Refused || !opts.WaitOnConflict || !errors.Is(o.Err, client.ErrConflict) {
			return o
		}
		running, seen, stopped := w.waitOutConflict(ctx, accountID, l, start, emit)
		if stopped != nil {
			return *stopped
		}
		// The wait's last read is the read before the next trigger: what it lists predates that POST, its Date is
		// the trigger's start on the service (deep-run seed 78363: the first read's Date, minutes earlier, let a stopped
		// destroy's record stand for no time, and the next destroy queued a second backup). Each read's newest stays one a
		// later listing must hold (deep-run seed 570657: another host's listing after the POST, lacking it, was believed).
		l.shown.add(seen.page)
		l.page, l.mark = seen.page, l.mark.then(seen.mark)
		if running != nil {
			l.mark = l.mark.with(running.ID)
		}
	}
	return *stop
}

// markBefore is the read before a trigger with what predates the run joined to its mark, or the outcome that fails closed:
// a read that lost what the previous change listed.
func markBefore(opts RunOptions, l looked) (looked, *Outcome) {
	if opts.Since.emptiedOf(l.page) || opts.Since.lostFrom(l.page) {
		o := refused(errReadLost)
		return l, &o
	}
	if opts.Since != nil {
		// What the previous change listed predates this run, even where a lagging listing hid it from the
		// read before it: never this run's (a new user's run: release 1's backup taken for release 3).
		l.mark = union(l.mark, opts.Since)
	}
	if opts.predates != nil {
		l.mark = union(l.mark, opts.predates)
	}
	l.mark = l.mark.with(opts.replaced)
	return l, nil
}

// maxRereads bounds the reads again before a trigger the rate limit kept from being sent in time: 5 minutes of refusals.
const maxRereads = 10

var errRefusedPastEmptyRead = errors.New("the account's backups listing showed none, so the trigger had to be sent within 30 seconds " +
	"of reading it for its backup to be told from any other; the service's refusals (429) and the rate limit's waits kept it from that " +
	"after reading the listing again 10 times, and nothing was queued. Try again once the API key's allowance is less used")

// sendBy is when a trigger after read l may start at the latest (zero: any time). After an empty read, what is listed
// above it counts only within emptyReadHorizon of it, and the look after the POST takes up to the longer of
// IdentifyWithin and UncertainGrace: a POST the rate limit holds back longer would queue a backup it could not identify.
func (w *Runner) sendBy(l looked) time.Time {
	if !l.mark.readEmpty() || l.mark.readAt.IsZero() {
		return time.Time{}
	}
	return l.mark.readAt.Add(w.set.emptyReadHorizon() - max(w.set.IdentifyWithin, w.set.UncertainGrace))
}

// waitOwn tells of b, which this change queued (on page, if read from a first page), and waits for it if the caller does.
func (w *Runner) waitOwn(ctx context.Context, accountID string, b *client.Backup, page *client.BackupsPage, waits bool, start time.Time, emit emitFunc) Outcome {
	emit(EventQueued, *b, "")
	if !waits {
		return notWaited(b, page)
	}
	return w.waitFrom(ctx, accountID, b, page, start, emit)
}

// waitOutConflict waits for the account's backup in progress to end: it (nil: none listed) and the last first page read;
// stopped, when the wait stopped, is dated by the last page read (the stop on the service's clock: deep-run seed 125452).
// Unless before listed one in progress, a 409 whose backup is neither in progress nor above the mark is behind a lagging
// listing: waited for until listed, or it would be the first above the mark, taken for the next trigger's backup.
func (w *Runner) waitOutConflict(ctx context.Context, accountID string, before looked, start time.Time, emit emitFunc) (running *client.Backup, seen looked, stopped *Outcome) {
	mark, explained, read := before.mark, inProgress(before.page) != nil, &before.page
	var err error
	for {
		if seen, err = w.look(ctx, accountID); err != nil {
			break // the listing failed: stopped
		}
		page := seen.page // a failed look below clears seen
		read = &page
		if running = inProgress(seen.page); running != nil {
			emit(EventConflict, *running, "")
			told := w.stillWaiting(emit, EventConflict)
			var last *client.BackupsPage
			_, last, err = w.poll(ctx, accountID, running, nil, func(now client.Backup, _ string) { told(now) })
			if m := markOf(last, ""); m != nil {
				seen = looked{page: *last, mark: seen.mark.then(m)}
				read = last
			}
			break
		}
		if mark, _ = w.provenBelow(ctx, accountID, mark, seen.page); explained || mark == nil || len(mark.above(seen.page)) > 0 {
			break // it ended since the 409, and is listed: the next trigger counts above it
		}
		if err = clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(start))); err != nil {
			break
		}
	}
	if err != nil {
		return nil, looked{}, &Outcome{Kind: Refused, Waited: w.clock.Now().Sub(start), Err: &ConflictWaitError{Running: running, Err: err}, At: answeredAt(read)}
	}
	return running, seen, nil
}

func answeredAt(page *client.BackupsPage) client.AnswerTime {
	if page == nil {
		return client.AnswerTime{}
	}
	return page.At
}

// inProgress is the newest backup in progress a page lists, or nil.
func inProgress(p client.BackupsPage) *client.Backup {
	if i := slices.IndexFunc(p.Backups, func(b client.Backup) bool { return client.InProgress(b.Status) }); i >= 0 {
		return &p.Backups[i]
	}
	return nil
}

// waitFrom waits for b (as just read, on page if from a first page) to end; it counts only if then a good backup (counted).
func (w *Runner) waitFrom(ctx context.Context, accountID string, b *client.Backup, page *client.BackupsPage, start time.Time, emit emitFunc) Outcome {
	still := w.stillWaiting(emit, EventStatus)
	last, page, err := w.poll(ctx, accountID, b, page, func(now client.Backup, prev string) {
		if now.Status == prev {
			still(now)
			return
		}
		emit(EventStatus, now, prev)
		still(client.Backup{}) // news: the next unchanged EventStatus is a whole StillWaitingEvery away
		w.log.Debug(ctx, "backup status changed", map[string]any{
			"account_id": accountID, "backup_id": now.ID, "status": now.Status, "previous_status": prev,
			"elapsed": w.clock.Now().Sub(start).Round(time.Second).String(),
		})
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			// Read once more, briefly, for a true message and a stopped destroy's record dated by the service at its stop.
			rctx, cancel := detached(ctx)
			if now, p, rerr := w.find(rctx, accountID, last.ID); rerr == nil {
				last, page = now, cmp.Or(p, page)
			}
			cancel()
		}
		return Outcome{Kind: Unsettled, Backup: last, Waited: w.clock.Now().Sub(start), Err: err, At: answeredAt(page)}
	}
	emit(EventDone, *last, "")
	if last.Status != client.StatusSuccess {
		return failed(*last, nil)
	}
	if err := counted(*last); err != nil {
		return failed(*last, err)
	}
	if page == nil {
		// The last read was not of the first page: one more, for the next change's floor.
		if l, lerr := w.look(ctx, accountID); lerr == nil {
			page = &l.page
		}
	}
	return Outcome{Kind: Succeeded, Backup: last, Seen: markOf(page, last.ID)}
}

// stillWaiting emits kind for a read of a backup in progress once StillWaitingEvery passed without news (zero Backup: news).
func (w *Runner) stillWaiting(emit emitFunc, kind EventKind) func(client.Backup) {
	last := w.clock.Now()
	return func(b client.Backup) {
		now := w.clock.Now()
		if b.ID != "" && now.Sub(last) < StillWaitingEvery {
			return
		}
		if b.ID != "" {
			emit(kind, b, b.Status)
		}
		last = now
	}
}

// poll reads the backup (as read on page) from one interval on until no longer in progress, telling seen of each read;
// on error, the last state seen. It returns the first page the last read found it on (nil: further down, or none read).
func (w *Runner) poll(ctx context.Context, accountID string, last *client.Backup, page *client.BackupsPage,
	seen func(now client.Backup, prev string),
) (*client.Backup, *client.BackupsPage, error) {
	began := w.clock.Now()
	for client.InProgress(last.Status) {
		if err := clock.Sleep(ctx, w.clock, w.set.Poll.interval(w.clock.Now().Sub(began))); err != nil {
			return last, page, err
		}
		// A listing that contradicts itself or ends without the backup ends the wait too: read past, it let
		// another host's next page follow that host's backup to its success (deep-run seeds 546677, 550739).
		now, p, err := w.find(ctx, accountID, last.ID)
		if err != nil {
			return last, page, cmp.Or(ctx.Err(), err)
		}
		seen(*now, last.Status)
		last, page = now, p
	}
	return last, page, nil
}

// find reads one backup by id from the first page, which it returns, or on from it when further down (page nil), never
// from a first page again: a restarted pass could take it from another listing's first page (deep-run seed 358686: a
// wait followed another history's backup to its success). Not found further down: the first page and the error.
func (w *Runner) find(ctx context.Context, accountID, backupID string) (*client.Backup, *client.BackupsPage, error) {
	p, err := w.c.FirstBackupsPage(ctx, accountID)
	if err != nil {
		return nil, nil, err
	}
	if i := slices.IndexFunc(p.Backups, func(b client.Backup) bool { return b.ID == backupID }); i >= 0 {
		return &p.Backups[i], &p, nil
	}
	b, err := w.c.FindBackupAfter(ctx, accountID, backupID, p)
	if err != nil {
		return nil, &p, err
	}
	return b, nil, nil
}

// provenBelow is m shown further down than p when p goes on without m's anchor: only then is the listing read on (a request
// a page, at most proofPages) until p's last backup and, after it, the anchor. Unshown (never listed, a failed read), m is
// returned as is, and nothing p lists counts above it; lost when the pass read the whole listing without it or p's last
// (the service never removes one: another host's, seeds 815 and 306878).
func (w *Runner) provenBelow(ctx context.Context, accountID string, m *Mark, p client.BackupsPage) (shown *Mark, lost bool) {
	if !m.unproven(p) {
		return m, false
	}
	anchor, last, passed, anchorFirst, whole := m.IDs[0], p.Backups[len(p.Backups)-1].ID, false, false, false
	// Unbroken: a pass restarted after a refused cursor could join another listing's first page to this one's.
	opts := client.ListOptions{Pages: proofPages, Unbroken: true, Ended: func(complete bool) { whole = complete }}
	for b, err := range w.c.Backups(ctx, accountID, opts) {
		switch {
		case err != nil:
			w.log.Warn(ctx, "the account's backups listing could not be read past its first page, which goes on without the newest "+
				"backup listed before; none of it counts as new", map[string]any{"account_id": accountID, "error": err.Error()})
			return m, false
		case b.ID == anchor && passed:
			return m.shownBelow(last), false
		case b.ID == anchor:
			anchorFirst = true // listed above p's last: p proves nothing, unless this listing lacks p's backups
		case b.ID == last && anchorFirst:
			return m, false
		case b.ID == last:
			passed = true
		}
	}
	w.log.Warn(ctx, "the account's backups listing does not show the newest backup listed before below its first page's; none of it counts as new",
		map[string]any{"account_id": accountID, "pages_read_whole": whole})
	return m, whole
}

// proofPages bounds provenBelow: a thousand backups started since the read.
const proofPages = 20

type triggered struct {
	Account   *client.Account // as the answer gave it; nil when it could not be read
	Backup    client.Backup
	Page      *client.BackupsPage // the first page it was found on
	Recovered bool                // the outcome was unknown, and the backup was found rather than queued again
	Earlier   bool                // found after a 409 to an afterUnknown run's only trigger: not that trigger's
}

// errReadLost: the read before a trigger, a whole listing, lacks the newest backup its previous change listed (or lists
// none): an old backup counted above it would read as new (a front's or cache's empty page; lagging: deep-run seed 727310).
var errReadLost = errors.New("the account's newest backups, read before the trigger, do not list the newest backup listed when this " +
	"trigger's previous change went ahead (prior_backup_ids), and the service never removes one: it is another listing (a wrong host " +
	"behind a load balancer, a front's or a cache's page) or one that lags behind the service's writes, so no backup was queued. " +
	"Try again; if every read lacks it, prior_backup_ids came from another listing: `terraform state rm` the trigger, and apply")

// ErrListingLost: a listing ended without a backup listed before the trigger, or an empty read is no longer proven; what
// any listing shows since proves nothing (seed 815 of the simulation: the trigger's read came from another host's listing).
var ErrListingLost = errors.New("the account's backups listing no longer lists a backup it showed before (the newest one read before " +
	"the trigger, or the newest of a page read since), though the service never removes one; or, after a read before the trigger " +
	"that listed none, it lists backups that ran longer than the time since, or is read too long after that read to show " +
	"absence: it may be another listing (a wrong host behind a load balancer, a front's or a cache's page), so no backup it " +
	"shows can be told to be this trigger's")

// errListingContradicts: a first page read while looking for the trigger's backup contradicted itself; a host that
// answers so (a front, a wrong host behind a load balancer) may answer the next look with a history of its own.
var errListingContradicts = errors.New("a page of the account's backups listing contradicted itself while the trigger's backup was " +
	"looked for, so no page read after it can be told to be the service's, and no backup it shows to be this trigger's")

var errNotListed = errors.New("the account's backups listing shows no backup above those it listed before the trigger")

// trigger queues a backup (above l's mark: rule.identify) or says why not. The POST is not idempotent: look before resending.
func (w *Runner) trigger(ctx context.Context, accountID string, l looked, afterUnknown bool) (*triggered, Outcome) {
	mine := rule{AccountID: accountID, Mark: l.mark, Shown: l.shown}
	began := w.clock.Now()
	var read *client.BackupsPage // the last page read since the POST: a stopped destroy's record is dated at its stop (deep-run seed 560472)
	unidentified := func(queued bool, err error) Outcome {
		return Outcome{Kind: NotIdentified, TriggeredAt: began, TriggeredOnService: l.page.At.Service, Confirmed: queued, Err: err, Before: l.mark,
			At: answeredAt(read)}
	}
	post := w.c.Trigger(accountID)
	uncertain, mayHaveQueued := afterUnknown, false // mayHaveQueued: a trigger of this run may have been processed
	if !uncertain {
		post.SendBy(w.sendBy(l))
	}
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
			tr, page, err := w.identify(ctx, acct, mine, false)
			if tr == nil {
				read = cmp.Or(page, read)
				if page != nil && errors.Is(err, errNotListed) {
					err = errors.Join(err, unexplainedError(mine.unexplained(*page))) // what the user can check: a clock, or a backup dated ahead
				}
				return nil, unidentified(true, err)
			}
			return tr, Outcome{}
		case ctx.Err() != nil:
			if !post.Sent() {
				return nil, refused(ctx.Err())
			}
			// A POST may have been on its way: look once, briefly, so that the caller records it.
			found, page, _ := w.lookDetached(ctx, mine)
			if found != nil {
				return &triggered{Backup: *found, Page: page, Recovered: true}, Outcome{}
			}
			read = cmp.Or(page, read)
			return nil, unidentified(false, ctx.Err())
		case errors.Is(err, client.ErrConflict) && uncertain:
			tr, o, page := w.conflictAfterUncertain(ctx, mine, err)
			if o.Kind == NotIdentified {
				read = cmp.Or(page, read)
				o = unidentified(o.Confirmed, o.Err)
			}
			if tr != nil {
				tr.Earlier = !mayHaveQueued
			}
			return tr, o
		case errors.As(err, &unsure):
			uncertain, mayHaveQueued = true, true
			post.SendBy(time.Time{}) // a read now could list this trigger's backup as predating it
			w.log.Warn(ctx, "the outcome of a backup trigger is unknown; looking for the backup before sending it again",
				map[string]any{"account_id": accountID, "error": err.Error()})
			// A listing may lag behind the POST, as after a 202; with no answer, the request may still be on its way.
			grace := w.set.IdentifyWithin
			if !unsure.Answered {
				grace = max(grace, w.set.UncertainGrace)
			}
			found, page, lerr := w.lookFor(ctx, mine, grace)
			if found != nil {
				return &triggered{Backup: *found, Page: page, Recovered: true}, Outcome{}
			}
			read = cmp.Or(page, read)
			if lerr != nil && !errors.Is(lerr, errNotListed) {
				// Nothing can be seen: sending again could queue a second backup.
				return nil, unidentified(false, errors.Join(err, lerr))
			}
			if b, herr := w.hiddenBelow(ctx, mine, *page); b != nil || herr != nil {
				// Listed since, below the mark, or not shown not to be: it may be this trigger's.
				return nil, unidentified(false, errors.Join(err, lerr, herr, unexplainedError(b)))
			}
			if werr := post.Wait(ctx, err); werr != nil {
				// Say what the look found first: the POST's retry error reads as the cause otherwise.
				return nil, unidentified(false, fmt.Errorf("no backup of it was listed in the %s it was looked for, and it was not sent again: %w",
					grace, werr))
			}
		default:
			return nil, refused(&RefusalError{Err: err})
		}
	}
}

// hiddenBelow is a backup listed since the mark's read among or below its backups (rule.unexplained) on p or, when p
// goes on short of the mark, on the pages after it (at most proofPages; an error when that pass fails or ends short of
// it): a short page hides one a clock set back stamped below older ones (deep-run seed 619763: resent, a second backup).
func (w *Runner) hiddenBelow(ctx context.Context, mine rule, p client.BackupsPage) (*client.Backup, error) {
	if b := mine.unexplained(p); b != nil || !p.More || !mine.Mark.anchored() {
		return b, nil
	}
	left := map[string]bool{} // backups of the mark not listed yet: a page that lists one again counts it once
	for _, id := range mine.Mark.IDs {
		if !listed(p, id) {
			left[id] = true
		}
	}
	if len(left) == 0 {
		return nil, nil
	}
	for b, err := range w.c.BackupsAfter(ctx, mine.AccountID, p, proofPages) {
		switch {
		case err != nil:
			return nil, errors.Join(errBelowUnshown, err)
		case mine.Mark.has(b.ID):
			if delete(left, b.ID); len(left) == 0 {
				return nil, nil
			}
		case !mine.Claimed.has(b.ID):
			return &b, nil
		}
	}
	return nil, errBelowUnshown
}

var errBelowUnshown = errors.New("the account's backups listing, read on from a first page that goes on, did not show every backup " +
	"listed before the trigger, so a backup listed since among them, which may be this trigger's, cannot be ruled out: it is not sent again")

// unexplainedError says why a backup listed since below the mark is not taken for the trigger's, nor lets it be resent.
func unexplainedError(b *client.Backup) error {
	if b == nil {
		return nil
	}
	return fmt.Errorf("backup %s (%s, created_at %s) is listed since the trigger, below backups listed before it (the service's clock set "+
		"back, a backup above it dated in the future, or a listing that lags): it may be this trigger's, so it is not taken for it, and "+
		"the trigger is not sent again; if it is this trigger's, record it: `terraform state rm` the trigger, then `terraform import` "+
		"it with %s/%s", b.ID, b.Status, stamp(b.CreatedAt), b.AccountID, b.ID)
}

// conflictAfterUncertain reads a 409 after an unknown outcome: a backup in progress listed before the trigger is another's
// (the 409 stands); one above the mark started since, and counts; none listed yet (lagging) is looked for. read: last page.
func (w *Runner) conflictAfterUncertain(ctx context.Context, mine rule, conflict error) (tr *triggered, o Outcome, read *client.BackupsPage) {
	l, err := w.look(ctx, mine.AccountID)
	if err != nil {
		return nil, Outcome{Kind: NotIdentified, Confirmed: false, Err: errors.Join(conflict, err)}, nil
	}
	if !mine.Mark.ranSince(l.page, w.set.emptyReadHorizon()) || mine.Shown.contradictedBy(l.page) {
		return nil, Outcome{Kind: NotIdentified, Confirmed: false, Err: errors.Join(conflict, ErrListingLost)}, &l.page
	}
	mine.Mark, _ = w.provenBelow(ctx, mine.AccountID, mine.Mark, l.page)
	running, found := inProgress(l.page), mine.identify(l.page)
	switch {
	case running != nil && mine.Mark.has(running.ID):
		return nil, refused(&RefusalError{Err: conflict}), &l.page
	case found != nil:
		return &triggered{Backup: *found, Page: &l.page, Recovered: true}, Outcome{}, &l.page
	case running != nil:
		// In progress, not listed before, yet listed below what was: neither waited out as another's nor sent again.
		return nil, Outcome{Kind: NotIdentified, Confirmed: false, Err: errors.Join(conflict, unexplainedError(running))}, &l.page
	}
	tr, page, err := w.identify(ctx, nil, mine, true)
	if tr == nil {
		return nil, Outcome{Kind: NotIdentified, Confirmed: false, Err: err}, cmp.Or(page, &l.page)
	}
	return tr, Outcome{}, tr.Page
}

// identify finds an accepted backup for IdentifyWithin (once more, detached, if ctx ends first); else nil, last page, why.
func (w *Runner) identify(ctx context.Context, acct *client.Account, mine rule, recovered bool) (*triggered, *client.BackupsPage, error) {
	found, page, err := w.lookFor(ctx, mine, w.set.IdentifyWithin)
	if found == nil && ctx.Err() != nil {
		var last *client.BackupsPage
		found, last, err = w.lookDetached(ctx, mine)
		page = cmp.Or(last, page)
	}
	if found == nil {
		return nil, page, err
	}
	return &triggered{Account: acct, Backup: *found, Page: page, Recovered: recovered}, page, nil
}

// lookDetached looks once (a look of no length) for the trigger's backup after ctx ended, briefly.
func (w *Runner) lookDetached(ctx context.Context, mine rule) (*client.Backup, *client.BackupsPage, error) {
	dctx, cancel := detached(ctx)
	defer cancel()
	return w.lookFor(dctx, mine, 0)
}

// The pause between looks for a trigger's backup doubles up to the max.
const (
	identifyInterval    = time.Second
	identifyMaxInterval = 8 * time.Second
)

// lookFor looks for the trigger's backup (rule.identify) for within: it and its page, else the last page read and why not.
func (w *Runner) lookFor(ctx context.Context, mine rule, within time.Duration) (*client.Backup, *client.BackupsPage, error) {
	deadline := w.clock.Now().Add(within)
	var last *client.BackupsPage
	shown := mine.Shown.clone()
	for interval := identifyInterval; ; interval = min(2*interval, identifyMaxInterval) {
		p, err := w.c.FirstBackupsPage(ctx, mine.AccountID)
		if errors.Is(err, client.ErrInconsistentListing) {
			// Not the service's listing as documented: no page read after it can be told to be (deep-run seed 524455).
			return nil, last, errors.Join(errListingContradicts, err)
		}
		if err == nil {
			last = &p
			found, lerr := w.seen(ctx, &mine, &shown, p)
			if lerr != nil || found != nil {
				return found, last, lerr
			}
		}
		err = cmp.Or(err, errNotListed)
		if ctx.Err() != nil {
			return nil, last, err
		}
		if left := deadline.Sub(w.clock.Now()); left <= 0 || clock.Sleep(ctx, w.clock, min(interval, left)) != nil {
			return nil, last, err // the time ran out, or the context ended while asleep
		}
	}
}

// seen is the trigger's backup as first page p lists it (nil: none yet), after the pages shown before; ErrListingLost when
// p shows the listing lost, and nothing it lists can be told to be the trigger's.
func (w *Runner) seen(ctx context.Context, mine *rule, shown *newest, p client.BackupsPage) (*client.Backup, error) {
	var lost bool
	if mine.Mark, lost = w.provenBelow(ctx, mine.AccountID, mine.Mark, p); lost || mine.Mark.lostFrom(p) ||
		shown.contradictedBy(p) || !mine.Mark.ranSince(p, w.set.emptyReadHorizon()) {
		return nil, ErrListingLost
	}
	shown.add(p)
	return mine.identify(p), nil
}

// findTriggered looks once for an unidentified record's backup, above the mark read before its trigger (nil, nil: none yet).
func (w *Runner) findTriggered(ctx context.Context, accountID string, r Record) (*client.Backup, *client.BackupsPage, error) {
	if r.Prior == nil {
		return nil, nil, errNoPrior
	}
	b, page, err := w.lookFor(ctx, rule{AccountID: accountID, Mark: r.Prior.readSince(r.TriggeredAt)}, 0)
	if errors.Is(err, errNotListed) {
		err = nil
	}
	return b, page, err
}

var errNoPrior = errors.New("the record of this trigger holds no list of the backups listed before it (prior_backup_ids), so its backup cannot be told from another's")
