// Which backup a change stands for, and every transition of its Record:
//
//	none ──trigger──▶ in_progress ──wait──▶ succeeded | failed
//	  │                  ├──▶ interrupted (Ctrl-C)  ─┐
//	  │                  └──▶ timed_out             ─┴─ follow ─▶ ...
//	  └──outcome unknown / not listed──▶ unidentified ──found──▶ in_progress ...
//	import ──▶ imported ──first apply──▶ (phase of its status)

package workflow

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// phase is where the recorded backup is, as far as the record knows.
type phase string

// The phases: the status (Record.Status) says the rest.
const (
	phaseNone         phase = ""             // nothing recorded: the next change takes a new backup
	phaseUnidentified phase = "unidentified" // triggered, its backup never listed
	phaseIdentified   phase = "identified"   // its backup is known, in progress or good
	phaseFailed       phase = "failed"       // ended in any status but success
	phaseImported     phase = "imported"     // until the first apply takes the configuration
)

// Record is what a resource or invocation knows of the backup it stands for; the private state's format (Encode, Decode).
type Record struct {
	Phase    phase  `json:"phase"`
	BackupID string `json:"backup_id,omitempty"` // "" while unidentified or none
	Status   string `json:"status,omitempty"`    // as last read; "" before an import's first read
	// TriggeredAt: when the backup was created or, unidentified, when its trigger began (this machine's clock).
	TriggeredAt time.Time `json:"triggered_at,omitzero"`
	// TriggeredOnService: an unidentified trigger's start on the service's clock (the Date of the page read just before
	// it): only for the grace before it is sent again, never to tell which backup is its.
	TriggeredOnService time.Time `json:"triggered_on_service,omitzero"`
	CompletedAt        time.Time `json:"completed_at,omitzero"`
	Confirmed          bool      `json:"confirmed,omitempty"`   // the service accepted an unidentified backup's trigger
	CountsUntil        time.Time `json:"counts_until,omitzero"` // a stopped destroy's record stands until then
	// StoppedOnService: when a stopped destroy stopped on the service's clock (the last page read's Date; zero: unknown):
	// its record stands for resume_within on that clock too.
	StoppedOnService time.Time `json:"stopped_on_service,omitzero"`
	Reused           bool      `json:"reused,omitempty"` // a recent backup counted (reuse_within)
	// Prior: a mark of the account's backups (shown as prior_backup_ids): before the change goes ahead, the read before its
	// trigger (its backup above, never in it); once ahead, the read then, with its backup, the next change's floor. Nil: none.
	Prior *Mark `json:"prior,omitempty"`
	// Ahead: the change went ahead. A trigger's record shows it by its backup in Prior; this says it for one not identified.
	Ahead bool `json:"ahead,omitempty"`
}

// Key is the private-state key of a resource's record.
const Key = "lifecycle"

// version of the stored record: a later one is refused, never misread.
const version = 1

type stored struct {
	V int `json:"v"`
	Record
}

// Encode is the record as private state; nil (no key) for None with nothing to carry.
func Encode(r Record) []byte {
	if r.Phase == phaseNone && r.Prior == nil {
		return nil
	}
	raw, _ := json.Marshal(stored{V: version, Record: r})
	return raw
}

// Decode reads a stored record; empty is None.
func Decode(raw []byte) (Record, error) {
	if len(raw) == 0 {
		return Record{}, nil
	}
	var s stored
	if err := json.Unmarshal(raw, &s); err != nil {
		return Record{}, fmt.Errorf("unreadable backup record: %w", err)
	}
	if s.V != version {
		return Record{}, fmt.Errorf("backup record of version %d, this release reads version %d: use the release that wrote it or a later one", s.V, version)
	}
	return s.Record, nil
}

// FromTriggerState is a trigger's record from its state (shown: its attributes, prior_backup_ids among them) and its stored
// record, which adds what the state cannot say; the state wins. Terraform gives a tainted object's Delete no private state:
// everything a replacement needs is in the state.
func FromTriggerState(shown Record, raw []byte) (Record, error) {
	kept, err := Decode(raw)
	if err != nil {
		return Record{}, err
	}
	r := Record{BackupID: shown.BackupID, Status: shown.Status, TriggeredAt: shown.TriggeredAt, CompletedAt: shown.CompletedAt,
		Reused: shown.Reused, Prior: shown.Prior}
	switch {
	case r.BackupID == "" && r.TriggeredAt.IsZero():
		// A replacement that queued no backup, kept to carry the replaced change's floor.
		return Record{Prior: r.Prior}, nil
	case r.BackupID == "":
		// Accepted, as the state shows it (a tainted object's Delete has no stored part): never sent again (seed 328).
		r.Phase, r.TriggeredOnService, r.Confirmed = phaseUnidentified, kept.TriggeredOnService, shown.Confirmed || kept.Confirmed
		// Without its stored part, it is a tainted trigger's: its apply failed, and Terraform started
		// no dependent (seed 6773: taken as gone ahead, two such replaced together had no floor).
		r.Ahead = kept.Ahead
	case kept.Phase == phaseFailed && kept.BackupID == r.BackupID:
		r.Phase = phaseFailed // a success that contradicted itself: the state has no room for why
	default:
		r.Phase = phaseOf(r.backup(), kept.Phase)
	}
	if r.BackupID != "" {
		r.Ahead = r.Prior.has(r.BackupID)
	}
	return r, nil
}

// phaseOf is the phase of a record in phase was once it read b: an import stays; a self-contradicting success (Good) fails.
func phaseOf(b client.Backup, was phase) phase {
	switch {
	case was == phaseImported:
		return was
	case client.InProgress(b.Status), b.Good():
		return phaseIdentified
	default:
		return phaseFailed
	}
}

// floor is the mark a change replacing this record's must count above (RunOptions.Since): its Prior, which holds its
// backup once it went ahead. None for a trigger gone ahead unidentified: its backup may yet be listed above any mark.
func (r Record) floor() *Mark {
	if r.Phase == phaseUnidentified && r.Ahead {
		return nil
	}
	return r.Prior
}

// above is the record counting only above m too: its mark holds m's backups, and one of them recorded as its backup reads
// as gone ahead (FromTriggerState), so that no create adopts it.
func (r Record) above(m *Mark) Record {
	r.Prior = r.Prior.joined(m)
	if r.BackupID != "" {
		r.Ahead = r.Prior.has(r.BackupID)
	}
	return r
}

// goesAhead is the record once its change goes ahead after o: its Prior becomes the listing o last read (Outcome.Seen),
// or failing that the read before it, with its backup; one not identified keeps the read before it, to be looked for above.
func (r Record) goesAhead(o Outcome) Record {
	r.Ahead = true
	if r.BackupID != "" && !r.Prior.has(r.BackupID) {
		r.Prior = cmp.Or(o.Seen, r.Prior.with(r.BackupID))
	}
	return r
}

// Saving says how a trigger's create or update came to its outcome.
type Saving struct {
	Creating  bool // a create: refused, it keeps the record it replaces
	Importing bool // an import's first apply: a backup it does not wait for goes ahead as it is
	Waits     bool // wait_for_completion
	Stopped   bool // interrupted as it returned (Ctrl-C)
}

// Saved is the record a trigger's create or update saves after o, and whether it saves one: a refused create keeps the one
// it replaces (its floor, a backup to adopt), other refusals save nothing. The change goes ahead only if the apply goes on
// past it, so the next counts only backups listed since; not on a stopped wait (no dependent starts; the next plan settles).
func (r Record) Saved(o Outcome, s Saving) (Record, bool) {
	next := r.after(o)
	switch {
	case o.Kind == Refused:
		return r, s.Creating && r.carriesAChange()
	case o.UnidentifiedGoesOn(s.Waits):
	case o.Kind == NotIdentified, s.Stopped:
		return next, true
	case o.Kind == Succeeded, o.Kind == NotWaited && (s.Importing || o.Good(false)):
	default:
		return next, true
	}
	return next.goesAhead(o), true
}

// UnidentifiedGoesOn: the apply goes on (a warning) past a trigger not identified: accepted, unwaited, not Adopted.
func (o Outcome) UnidentifiedGoesOn(waits bool) bool {
	return o.Kind == NotIdentified && !waits && o.Confirmed && !o.Adopted
}

// identified is an unidentified record once a look found its backup b on page: the floor (read since) if it went ahead.
func (r Record) identified(b client.Backup, page *client.BackupsPage) Record {
	r = r.Observe(b) // keeps Ahead and Prior
	if r.Ahead {
		r.Prior = cmp.Or(markOf(page, b.ID), r.Prior.with(b.ID))
	}
	return r
}

// after is the record once a run or a follow of r came to o, its change not gone ahead unless it had (see goesAhead);
// None, with r's floor, when no backup is known to have been queued.
func (r Record) after(o Outcome) Record {
	switch {
	case o.Backup != nil:
		next := r // its times, where the run read none
		if r.BackupID != o.Backup.ID {
			// Another backup: the read before its trigger, else r's floor; never with it until its change goes ahead.
			next = Record{Prior: cmp.Or(o.Before, r.floor()).without(o.Backup.ID)}
		}
		next.Phase = phaseNone // decided by this outcome alone (an import is adopted by now)
		next = next.Observe(*o.Backup)
		next.Reused = next.Reused || o.Reused
		return next
	case o.Kind == NotIdentified:
		return Record{Phase: phaseUnidentified, TriggeredAt: o.TriggeredAt, TriggeredOnService: o.TriggeredOnService,
			Confirmed: o.Confirmed, Prior: o.Before, Ahead: r.Ahead}
	}
	return Record{Prior: r.floor()}
}

// ImportedAs is the record of an import of backupID, before its first read.
func ImportedAs(backupID string) Record {
	return Record{Phase: phaseImported, BackupID: backupID}
}

// Observe is the record after a read of its backup; an import stays imported until adopted.
func (r Record) Observe(b client.Backup) Record {
	// A record in progress may still change: triggered_at stays what it first read, so that no plan is contradicted.
	if !b.CreatedAt.IsZero() && (r.BackupID != b.ID || r.TriggeredAt.IsZero()) {
		r.TriggeredAt = b.CreatedAt
	}
	r.BackupID, r.Status, r.Confirmed, r.TriggeredOnService, r.CompletedAt = b.ID, b.Status, false, time.Time{}, time.Time{}
	if b.CompletedAt != nil {
		r.CompletedAt = *b.CompletedAt
	}
	r.Phase = phaseOf(b, r.Phase)
	return r
}

// Adopted is an imported record once the first apply took the configuration: from then on, the phase of its status.
func (r Record) Adopted() Record {
	if r.Phase == phaseImported && r.Status != "" {
		r.Phase = phaseOf(r.backup(), phaseNone) // imported no more
	}
	return r
}

// backup is the record's backup as the service last gave it.
func (r Record) backup() client.Backup {
	b := client.Backup{ID: r.BackupID, Status: r.Status, CreatedAt: r.TriggeredAt}
	if !r.CompletedAt.IsZero() {
		b.CompletedAt = &r.CompletedAt
	}
	return b
}

// Finished: the backup ended and the record knows when it began; it never changes again.
func (r Record) Finished() bool {
	return r.Status != "" && !client.InProgress(r.Status) && !r.TriggeredAt.IsZero()
}

// Step is what the next apply of a backup_trigger does with its backup.
type Step int

// The steps.
const (
	keep   Step = iota // nothing to do with the backup
	Settle             // read or wait for the backup; an unidentified one is looked for first
	Retake             // replace the trigger, which takes a new backup
)

// Next is the step of the next apply for a trigger that waited (waitedBefore) and now waits (waitsNow) for its backup.
func (r Record) Next(waitedBefore, waitsNow bool) Step {
	switch {
	case r.Phase == phaseNone:
		return keep // no backup: a refused replacement, tainted (see FromTriggerState)
	case r.Phase == phaseUnidentified, r.Phase == phaseImported, waitsNow && !waitedBefore:
		return Settle
	case r.Phase == phaseFailed && r.Status != "" && !r.Ahead:
		return Retake // its change never went ahead: not on a failed backup
	case !r.Ahead:
		// Not gone ahead on record (a wait interrupted): the apply letting it records when, or the next floor is too early.
		return Settle
	case !waitedBefore || !waitsNow:
		return keep
	case client.InProgress(r.Status):
		return Settle
	case r.Phase == phaseFailed && r.Status != "":
		return Retake
	}
	return keep
}

// TakesConfigTriggers: an imported trigger adopts the configuration's triggers in place on its first apply.
func (r Record) TakesConfigTriggers() bool { return r.Phase == phaseImported }

// awaitsItsBackup: the record's change queued a backup (or may have) and never went ahead, so a replacement of the same
// triggers may adopt it while it still counts (stillCounts). Not one whose change went ahead with it, even running: the
// replacement may be another trigger created with those triggers, which Terraform does not tell apart (seed 303); nor one
// not identified whose change went ahead unwaited (seed 11138); nor an import never applied.
func (r Record) awaitsItsBackup() bool {
	return r.Phase != phaseNone && r.Phase != phaseImported && !r.Ahead
}

// Empty: nothing is recorded; the next change takes a new backup.
func (r Record) Empty() bool { return r.Phase == phaseNone }

// Unidentified: its backup was triggered and never identified.
func (r Record) Unidentified() bool { return r.Phase == phaseUnidentified }

// carriesAChange: it holds a floor, a backup or one awaited, for a replacement: a create that queued nothing still saves it.
func (r Record) carriesAChange() bool {
	return r.floor() != nil || r.BackupID != "" || r.awaitsItsBackup()
}

// StandsUntil is when a stopped destroy's record stops standing (zero: none).
func (r Record) StandsUntil() time.Time { return r.CountsUntil }

// standsForDestroy: a stopped destroy's record stands until CountsUntil, never longer than resume from now, give or take
// the clock allowance (a clock ahead wrote a later one; the service's clock bounds it too: standsOnService).
func (r Record) standsForDestroy(now time.Time, resume time.Duration) bool {
	return r.Phase != phaseNone && !r.CountsUntil.IsZero() && !now.After(r.CountsUntil) && r.CountsUntil.Sub(now) <= resume+DefaultClockAllowance
}

// standsTooLong: a stopped destroy's record fails to stand only as CountsUntil is further than resume (± the allowance) from
// now (a clock moved between the destroys): kept for the next destroy, never made to stand longer (afterStoppedDestroy).
func (r Record) standsTooLong(now time.Time, resume time.Duration) bool {
	return r.Phase != phaseNone && r.CountsUntil.Sub(now) > resume+DefaultClockAllowance
}

// standsOnService: as of an answer at at, a stopped destroy's record stands for resume_within from its stop on the service's
// clock as on this machine's (standsForDestroy), so a runner's clock ahead at the stop cannot lengthen it. A stop or answer
// without a Date cannot show it stands (that costs a backup), nor an answer off this machine's clock beyond the allowance:
// one is wrong, and both set back would let it stand too long (deep-run seed 72536: a service 30 minutes behind, a runner 3).
func (r Record) standsOnService(at client.AnswerTime, resume time.Duration) bool {
	apart := at.Service.Sub(at.Received)
	return !r.StoppedOnService.IsZero() && !at.Service.IsZero() && !at.Service.After(r.StoppedOnService.Add(resume)) &&
		apart <= DefaultClockAllowance && apart >= -DefaultClockAllowance
}

// overOnService: an answer at, dated within the allowance of this machine's clock, shows resume_within over on the service's.
func (r Record) overOnService(at client.AnswerTime, resume time.Duration) bool {
	apart := at.Service.Sub(at.Received)
	return !r.StoppedOnService.IsZero() && !at.Service.IsZero() && at.Service.After(r.StoppedOnService.Add(resume)) &&
		apart <= DefaultClockAllowance && apart >= -DefaultClockAllowance
}

// stillCounts: a backup an earlier operation of the change began (a stopped destroy's, a replaced trigger's) still counts.
func stillCounts(b client.Backup) bool {
	return client.InProgress(b.Status) || b.Good()
}

// afterStoppedDestroy is what a stopped destroy leaves for the next, until
// now plus resume: its backup, none after a failure, else r (no second backup).
func (r Record) afterStoppedDestroy(o Outcome, now time.Time, resume time.Duration) Record {
	// Its resume_within over on this machine's clock from now, or on the service's as this destroy's last answer
	// shows it (o.At, after a renewal): a stop now must not make it stand again.
	over, renewed := r.standsTooLong(now, resume) || o.Renewed && r.overOnService(o.At, resume), false
	switch o.Kind {
	case Failed:
		return Record{}
	case NotIdentified, Unsettled:
		if o.Kind == NotIdentified || o.Backup.ID != "" {
			r, renewed = r.after(o), true
		}
	}
	if r.Phase == phaseNone {
		return Record{}
	}
	if over && !renewed {
		// Not followed, and nothing queued in its place: kept as it was, never made to stand again (deep-run
		// seeds 430187 and 461015: written on a clock ahead, re-armed by a stop on a right one, it stood past
		// resume_within; 494374: over on the service's clock, re-armed by a stop that waited out another's backup,
		// it counted 45 minutes later). A renewal that could not tell (clocks apart) re-arms it (seed 125452).
		return r
	}
	r.CountsUntil = now.Add(resume).Truncate(time.Second) // as the state shows it
	// Not identified, it stopped after its trigger: the read before it is an earlier, safe, stand-in.
	// A stop no answer dated (its backup unreadable) keeps the earlier stop's, an earlier bound still
	// (seed 14238: dropping it made the record unable to stand, and the next destroy queued a second backup).
	r.StoppedOnService = cmp.Or(o.At.Service, o.TriggeredOnService, r.StoppedOnService)
	return r
}

// String names the record in logs and test failures.
func (r Record) String() string {
	return fmt.Sprintf("%s backup %q status %q triggered %s", r.Phase, r.BackupID, r.Status, r.TriggeredAt.UTC().Format(time.RFC3339))
}
