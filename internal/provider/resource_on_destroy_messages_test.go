package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

const (
	guardAcct = "acc_0123456789abcdef"
	guardBkp  = "bkp_0123456789abcdef"
)

// guardOutcomes are the outcomes a guard's destroy can stop on.
func guardOutcomes() map[string]workflow.Outcome {
	running := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusRunning}
	failed := running
	failed.Status, failed.Error = client.StatusFailed, new(string)
	*failed.Error = "export refused"
	requestID := "0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d"
	api := func(status int, title, detail string) *client.APIError {
		return &client.APIError{Method: "POST", Path: "/api/v1/accounts/" + guardAcct + "/backup", StatusCode: status, Title: title,
			Detail: detail, RequestID: requestID}
	}
	return map[string]workflow.Outcome{
		"interrupted":         {Kind: workflow.Interrupted, Backup: &running, Waited: 3 * time.Second, Err: context.Canceled},
		"timed out":           {Kind: workflow.TimedOut, Backup: &running, Waited: 5 * time.Minute, Err: context.DeadlineExceeded},
		"failed":              {Kind: workflow.Failed, Backup: &failed, Err: errors.New("backup " + guardBkp + " ended with status \"failed\": export refused")},
		"unfollowed":          {Kind: workflow.Unfollowed, Backup: &running, Waited: time.Minute, Err: api(503, "Service Unavailable", "")},
		"unreadable":          {Kind: workflow.Unreadable, BackupID: guardBkp, Err: api(500, "Internal Server Error", "")},
		"unidentified":        {Kind: workflow.NotIdentified, TriggeredAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Confirmed: true, Err: errNotListed},
		"conflict waited out": {Kind: workflow.ConflictNotOver, Running: &running, Waited: 5 * time.Minute, Err: context.DeadlineExceeded},
		"conflict, on_conflict fail": {Kind: workflow.Refused,
			Err: api(409, "Conflict", "A backup for account "+guardAcct+" is already in progress.")},
		"paused":    {Kind: workflow.Refused, Err: api(422, "Unprocessable Entity", "Account "+guardAcct+" is not in a backupable state: paused")},
		"not found": {Kind: workflow.Refused, Err: api(404, "Not Found", "No account "+guardAcct+".")},
		"reuse refused, then failed": {Kind: workflow.Failed, Backup: &failed, ReuseRefused: workflow.ErrNoEarlierChange,
			Err: errors.New("backup " + guardBkp + " ended with status \"failed\": export refused")},
	}
}

// Every diagnostic of a stopped destroy names the guard (Terraform gives a
// provider no resource address) and, for an error, says what was kept; its
// title reads as a sentence, and no status is told twice.
func TestStoppedDestroyNamesTheGuardAndWhatWasKept(t *testing.T) {
	t.Parallel()
	for name, o := range guardOutcomes() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			o.AccountID = guardAcct
			var reported diag.Diagnostics
			report(&reported, destroyCaller(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)), 5*time.Minute, o)
			diags := namingGuard(guardAcct, reported)
			if len(diags) == 0 || len(diags) != len(reported) || !diags.HasError() {
				t.Fatalf("diagnostics %v from %v", diags, reported)
			}
			for _, d := range diags {
				summary, detail := d.Summary(), strings.Join(strings.Fields(d.Detail()), " ")
				want := "The backup_on_destroy of account " + guardAcct + ": "
				if d.Severity() == diag.SeverityError {
					want = "Kept the backup_on_destroy of account " + guardAcct + " and what it guards: "
				}
				if !strings.HasPrefix(summary, want) {
					t.Errorf("summary %q, want it to begin %q", summary, want)
				}
				if n := strings.Count(summary, guardAcct); n != 1 {
					t.Errorf("summary %q names the account %d times", summary, n)
				}
				rest := strings.TrimPrefix(summary, want)
				if strings.Contains(rest, ": ") || strings.HasSuffix(summary, ".") || rest == "" {
					t.Errorf("summary %q: want one sentence, the guard then what happened", summary)
				}
				for _, status := range []string{"HTTP 404", "HTTP 409", "HTTP 422", "HTTP 500", "HTTP 503"} {
					if n := strings.Count(summary+" "+detail, status); n > 1 {
						t.Errorf("%s told %d times: %q %q", status, n, summary, detail)
					}
				}
			}
		})
	}
}

func TestLowerFirst(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Backup did not succeed":          "backup did not succeed",
		"reuse_within not applied":        "reuse_within not applied",
		"API key of another organization": "API key of another organization",
		"":                                "",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}

// A guarded destroy's backup id reaches the user: its state is gone, so the
// warning shows it, in a summary of its own for each guard.
func TestDestroyedAfterNamesTheBackup(t *testing.T) {
	t.Parallel()
	done := time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)
	b := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusSuccess, CreatedAt: done.Add(-5 * time.Minute), CompletedAt: &done}
	running := client.Backup{ID: guardBkp, AccountID: guardAcct, Status: client.StatusRunning, CreatedAt: b.CreatedAt}
	stopped := workflow.Record{}.AfterStoppedDestroy(workflow.Outcome{Kind: workflow.Interrupted, Backup: &running}, done.Add(-time.Minute), time.Hour)
	for name, tc := range map[string]struct {
		reused  bool
		earlier workflow.Record
		want    string
	}{
		"its own":         {want: "This destroy queued it."},
		"reused":          {reused: true, want: "This destroy queued no backup: backup " + guardBkp + ", created at 2026-11-23T10:00:00Z, is within reuse_within (15m)."},
		"a stopped one's": {earlier: stopped, want: "it followed backup " + guardBkp},
	} {
		summary, detail := destroyedAfter(guardAcct, b, tc.reused, "15m", tc.earlier)
		if want := "The backup_on_destroy of account " + guardAcct + " was destroyed after backup " + guardBkp; summary != want {
			t.Errorf("%s: summary %q, want %q", name, summary, want)
		}
		for _, w := range []string{"Backup " + guardBkp + " of account " + guardAcct + " succeeded at 2026-11-23T10:05:00Z", tc.want, "this is where the backup's id is shown"} {
			if !strings.Contains(detail, w) {
				t.Errorf("%s: detail %q does not say %q", name, detail, w)
			}
		}
	}
}
