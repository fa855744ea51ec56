package provider

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// privateBytes is private state holding one key.
type privateBytes map[string][]byte

func (p privateBytes) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

// A destroy-time record counts until its own counts_until, shown in
// pending_destroy_backup; an absent, empty or unreadable record, or one of
// another version, is none.
func TestDestroyBackupRecord(t *testing.T) {
	t.Parallel()
	triggered := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		raw       string
		wantOK    bool
		wantUntil time.Time
	}{
		{"timed out", `{"v":1,"phase":"timed_out","backup_id":"bkp_0123456789abcdef","status":"running","triggered_at":"2026-11-20T10:00:00Z","counts_until":"2026-11-20T10:45:00Z"}`,
			true, triggered.Add(45 * time.Minute)},
		{"not identified", `{"v":1,"phase":"unidentified","triggered_at":"2026-11-20T10:00:00Z","counts_until":"2026-11-20T10:10:00Z"}`,
			true, triggered.Add(10 * time.Minute)},
		{"absent", ``, false, time.Time{}},
		{"another version", `{"v":2,"phase":"timed_out"}`, false, time.Time{}},
		{"unreadable", `{"v":1,"backup_id":`, false, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := privateBytes{}
			if tc.raw != "" {
				p[workflow.Key] = []byte(tc.raw)
			}
			d := destroyRecord(t.Context(), p)
			ok := d.Phase != workflow.PhaseNone
			if ok != tc.wantOK {
				t.Fatalf("read %+v, ok %t; want ok %t", d, ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if !d.CountsUntil.Equal(tc.wantUntil) || !d.StandsForDestroy(tc.wantUntil, time.Hour) || d.StandsForDestroy(tc.wantUntil.Add(time.Second), time.Hour) {
				t.Errorf("counts until %s, want %s", d.CountsUntil, tc.wantUntil)
			}
			obj := pendingObject(d)
			attrs := obj.Attributes()
			if want := tc.wantUntil.Format(time.RFC3339); attrs["counts_until"].(timetypes.RFC3339).ValueString() != want {
				t.Errorf("pending_destroy_backup.counts_until = %s, want %s", attrs["counts_until"], want)
			}
			if (d.BackupID == "") != attrs["backup_id"].IsNull() {
				t.Errorf("pending_destroy_backup.backup_id = %s for backup id %q", attrs["backup_id"], d.BackupID)
			}
		})
	}
	// What Delete writes reads back the same.
	running := client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusRunning, CreatedAt: triggered}
	d := workflow.Record{}.AfterStoppedDestroy(workflow.Outcome{Kind: workflow.TimedOut, Backup: &running}, triggered, time.Hour)
	raw := workflow.Encode(d)
	if back := destroyRecord(t.Context(), privateBytes{workflow.Key: raw}); back != d {
		t.Errorf("round trip: %+v, want %+v", back, d)
	}
}
