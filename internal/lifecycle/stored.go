package lifecycle

import (
	"encoding/json"
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
}

// Encode is the record as private state; nil for None, which removes the
// key.
func Encode(r Record) []byte {
	if r.Phase == None {
		return nil
	}
	raw, _ := json.Marshal(stored{V: version, Phase: r.Phase, BackupID: r.BackupID, Status: r.Status,
		TriggeredAt: r.TriggeredAt, CompletedAt: r.CompletedAt, Confirmed: r.Confirmed, CountsUntil: r.CountsUntil})
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
		CompletedAt: s.CompletedAt, Confirmed: s.Confirmed, CountsUntil: s.CountsUntil}, nil
}

// TriggerState is what a backup_trigger's state says of its backup, as
// text ("" for null).
type TriggerState struct {
	BackupID, Status, TriggeredAt, CompletedAt string
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
	r := Record{BackupID: s.BackupID, Status: s.Status, Confirmed: kept.Confirmed}
	if r.TriggeredAt, err = parseTime("triggered_at", s.TriggeredAt); err != nil {
		return Record{}, err
	}
	if r.CompletedAt, err = parseTime("completed_at", s.CompletedAt); err != nil {
		return Record{}, err
	}
	switch {
	case r.BackupID == "":
		if r.TriggeredAt.IsZero() {
			return Record{}, fmt.Errorf("no backup id and no valid triggered_at (%q)", s.TriggeredAt)
		}
		r.Phase = Unidentified
		return r, nil
	case kept.Phase == Imported:
		r.Phase = Imported
	case client.InProgress(r.Status) && (kept.Phase == Interrupted || kept.Phase == TimedOut):
		r.Phase = kept.Phase
	default:
		r.Phase = phaseOf(r.Status)
	}
	r.Confirmed = false
	return r, nil
}

// State is the record as a trigger's state shows it, as text.
func (r Record) State() TriggerState {
	return TriggerState{BackupID: r.BackupID, Status: r.Status, TriggeredAt: formatTime(r.TriggeredAt), CompletedAt: formatTime(r.CompletedAt)}
}

// formatTime is t as the state holds it: RFC 3339 in UTC; "" for zero.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is not an RFC 3339 time (%q)", name, s)
	}
	return t, nil
}
