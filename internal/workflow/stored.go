package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// Key is the private-state key under which a resource keeps its record,
// one per resource.
const Key = "lifecycle"

// version is the version of the stored record. A record of a later
// version (written by a newer release) is refused rather than misread.
const version = 1

type stored struct {
	V           int       `json:"v"`
	Phase       Phase     `json:"phase"`
	BackupID    string    `json:"backup_id,omitempty"`
	Status      string    `json:"status,omitempty"`
	TriggeredAt time.Time `json:"triggered_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	Confirmed   bool      `json:"confirmed,omitempty"`
	CountsUntil time.Time `json:"counts_until,omitzero"`
	Reused      bool      `json:"reused,omitempty"`
	Since       time.Time `json:"since,omitzero"`
	AheadAt     time.Time `json:"ahead_at,omitzero"`
}

// Encode is the record as private state; nil for None with nothing to
// carry, which removes the key.
func Encode(r Record) []byte {
	if r.Phase == PhaseNone && r.Since.IsZero() {
		return nil
	}
	raw, _ := json.Marshal(stored{V: version, Phase: r.Phase, BackupID: r.BackupID, Status: r.Status,
		TriggeredAt: r.TriggeredAt, CompletedAt: r.CompletedAt, Confirmed: r.Confirmed, CountsUntil: r.CountsUntil, Reused: r.Reused, Since: r.Since, AheadAt: r.AheadAt})
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
	return Record{Phase: s.Phase, BackupID: s.BackupID, Status: s.Status, TriggeredAt: s.TriggeredAt,
		CompletedAt: s.CompletedAt, Confirmed: s.Confirmed, CountsUntil: s.CountsUntil, Reused: s.Reused, Since: s.Since, AheadAt: s.AheadAt}, nil
}

// TriggerState is what a backup_trigger's state says of its backup
// ("" and zero for null).
type TriggerState struct {
	BackupID, Status         string
	TriggeredAt, CompletedAt time.Time
	Reused                   bool
}

// FromTriggerState is a trigger's record: its state's values, and from
// its stored record what the state cannot say: an import not yet adopted,
// an unidentified trigger's confirmation, why nobody waits for a backup in
// progress. The state wins where both speak: it is what users see and
// what every operation writes.
func FromTriggerState(s TriggerState, stored []byte) (Record, error) {
	kept, err := Decode(stored)
	if err != nil {
		return Record{}, err
	}
	r := Record{BackupID: s.BackupID, Status: s.Status, TriggeredAt: s.TriggeredAt, CompletedAt: s.CompletedAt, Confirmed: kept.Confirmed, Reused: s.Reused,
		Since: kept.Since, AheadAt: kept.AheadAt}
	switch {
	case r.BackupID == "" && r.TriggeredAt.IsZero() && kept.Phase == PhaseNone && !kept.Since.IsZero():
		// A replacement that queued no backup, kept tainted so that the next
		// attempt knows when the replaced change went ahead.
		return Record{Since: kept.Since}, nil
	case r.BackupID == "":
		if r.TriggeredAt.IsZero() {
			return Record{}, errors.New("no backup id and no triggered_at")
		}
		r.Phase = PhaseUnidentified
		return r, nil
	case kept.Phase == PhaseImported:
		r.Phase = PhaseImported
	case client.InProgress(r.Status) && (kept.Phase == PhaseInterrupted || kept.Phase == PhaseTimedOut):
		r.Phase = kept.Phase
	case kept.Phase == PhaseFailed && kept.BackupID == r.BackupID:
		// The state has no room for the record's error: a success that
		// contradicted itself stays failed.
		r.Phase = PhaseFailed
	default:
		r.Phase = phaseOf(r.backup())
	}
	r.Confirmed = false
	return r, nil
}

// State is the record as a trigger's state shows it.
func (r Record) State() TriggerState {
	return TriggerState{BackupID: r.BackupID, Status: r.Status, TriggeredAt: r.TriggeredAt, CompletedAt: r.CompletedAt, Reused: r.Reused}
}
