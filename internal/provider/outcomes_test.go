package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// errNotListed is why a trigger's backup was not identified, as the
// workflow gives it: the listing never showed it.
var errNotListed = errors.New("the account's backups listing shows no backup above those it listed before the trigger")

// Every outcome, told by every caller: the message has the expected
// severity and summary, names the caller's own timeout setting where a
// timeout is involved, never another caller's, and says what follows.
func TestOutcomeMessagesFitTheirCaller(t *testing.T) {
	t.Parallel()
	const acct = "acc_0123456789abcdef"
	running := client.Backup{ID: "bkp_0123456789abcdef", AccountID: acct, Status: client.StatusRunning}
	failed := running
	failed.Status, failed.Error = client.StatusFailed, new(string)
	*failed.Error = "export refused"
	conflict := &client.APIError{Method: "POST", Path: "/api/v1/accounts/" + acct + "/backup", StatusCode: 409, Title: "Conflict",
		Detail: "A backup for account " + acct + " is already in progress.", RequestID: "0b7c7a70-1c6f-4a8e-9c3e-1d2f3a4b5c6d"}
	overloaded := &client.APIError{Method: "POST", Path: "/x", StatusCode: 429, Title: "Too Many Requests"}
	unprocessable := &client.APIError{Method: "POST", Path: "/x", StatusCode: 422, Title: "Unprocessable Entity", Detail: "paused"}

	callers := map[string]caller{"create": createCaller, "resume": resumeCaller, "invoke": invokeCaller, "destroy": destroyCaller(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))}
	unidentifiedAt := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		outcome  workflow.Outcome
		severity diag.Severity
		summary  string
		// what the detail says: {timeout} stands for the caller's timeout
		// setting, {next} for what the caller says follows.
		want []string
		next func(caller) string
		// guardErrs: a caller that guards a change (interruptStops) makes
		// this an error under its own summary.
		guardErrs bool
	}{
		{"wait interrupted", workflow.Outcome{Kind: workflow.Unsettled, Backup: &running, Waited: 3 * time.Second, Err: context.Canceled},
			diag.SeverityWarning, "Waiting for the backup was interrupted", []string{"bkp_0123456789abcdef", "running"}, func(c caller) string { return c.says(onInterrupt) }, true},
		{"wait timed out", workflow.Outcome{Kind: workflow.Unsettled, Backup: &running, Waited: 5 * time.Minute, Err: context.DeadlineExceeded},
			diag.SeverityError, "Backup still in progress", []string{"still running after waiting 5m0s", "({timeout} is 5m0s)", "Raise {timeout}"}, func(c caller) string { return c.says(onTimeout) }, false},
		{"backup failed", workflow.Outcome{Kind: workflow.Failed, Backup: &failed, Err: errors.New("backup bkp_0123456789abcdef ended with status \"failed\": export refused")},
			diag.SeverityError, "Backup did not succeed", []string{`status "failed"`, "export refused"}, func(c caller) string { return c.says(onFailure) }, false},
		// Not waited for, but already listed as failed (simulation seed 631): the change must not go ahead.
		{"not waited for, already failed", workflow.Outcome{Kind: workflow.NotWaited, Backup: &failed},
			diag.SeverityError, "Backup did not succeed", []string{`status "failed"`, "export refused"}, func(c caller) string { return c.says(onFailure) }, false},
		{"conflict wait timed out", workflow.Outcome{Kind: workflow.Refused, Waited: 5 * time.Minute, Err: &workflow.ConflictWaitError{Running: &running, Err: context.DeadlineExceeded}},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"already in progress", "({timeout} is 5m0s)", "No backup was queued", "Raise {timeout}"}, nil, false},
		{"conflict wait interrupted", workflow.Outcome{Kind: workflow.Refused, Err: &workflow.ConflictWaitError{Running: &running, Err: context.Canceled}},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"Interrupted", "no backup was queued"}, nil, false},
		{"conflict refused", workflow.Outcome{Kind: workflow.Refused, Err: conflict},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"HTTP 409", "already in progress.", `With on_conflict = "fail", the provider does not wait for that backup to end: no backup was queued.`, "Request ID: 0b7c7a70"}, nil, false},
		{"interrupted before the trigger was sent", workflow.Outcome{Kind: workflow.Refused, Err: fmt.Errorf("POST /x: %w", context.Canceled)},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"context canceled", "No backup was queued", "interrupted first"}, nil, false},
		{"no time left to send the trigger again", workflow.Outcome{Kind: workflow.Refused,
			Err: &client.RetryError{Attempts: 1, Cause: client.RetryPastDeadline, Reason: "waiting 25s would outlive the operation's deadline", Err: overloaded}},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"HTTP 429", "raise the operation's timeouts", "No backup was queued", "gave up after 1 attempt"}, nil, false},
		{"not backupable", workflow.Outcome{Kind: workflow.Refused, Err: unprocessable},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"HTTP 422", "paused", "web application"}, nil, false},
		{"queued, not identified", workflow.Outcome{Kind: workflow.NotIdentified, TriggeredAt: unidentifiedAt, Confirmed: true, Err: errNotListed},
			diag.SeverityError, "Unable to trigger a backup of account " + acct, []string{"a backup was queued", "2026-11-23T10:00:00Z"}, func(c caller) string { return c.says(onUnidentified) }, false},
	}
	for _, tc := range cases {
		for name, c := range callers {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				var diags diag.Diagnostics
				o := tc.outcome
				o.AccountID = acct
				report(&diags, c, 5*time.Minute, o)
				if len(diags) != 1 {
					t.Fatalf("%d diagnostics: %v", len(diags), diags)
				}
				d := diags[0]
				detail := strings.Join(strings.Fields(d.Detail()), " ")
				severity, summary := tc.severity, tc.summary
				if tc.guardErrs && c.says(stopsSummary) != "" {
					severity, summary = diag.SeverityError, c.says(stopsSummary)
				}
				if d.Severity() != severity || d.Summary() != summary {
					t.Errorf("%s %q, want %s %q", d.Severity(), d.Summary(), severity, summary)
				}
				at := 0
				for _, w := range tc.want {
					w = strings.ReplaceAll(w, "{timeout}", c.says(timeoutName))
					i := strings.Index(detail[at:], w)
					if i < 0 {
						t.Fatalf("%q not found (in order) in %q", w, detail)
					}
					at += i + len(w)
				}
				if n := strings.Count(detail, "in progress"); tc.name == "conflict refused" && n != 1 {
					t.Errorf("says the conflict %d times, want once (the service's answer): %q", n, detail)
				}
				for _, status := range []string{"HTTP 409", "HTTP 422"} {
					if n := strings.Count(detail, status); n > 1 {
						t.Errorf("says %s %d times: %q", status, n, detail)
					}
				}
				if tc.next != nil && !strings.Contains(detail, tc.next(c)) {
					t.Errorf("does not say what follows (%q): %q", tc.next(c), detail)
				}
				for _, other := range []string{"timeouts.create", "timeouts.invoke", "timeouts.delete"} {
					if other != c.says(timeoutName) && strings.Contains(detail, other) {
						t.Errorf("names %s, which a %s does not have: %q", other, name, detail)
					}
				}
			})
		}
	}
}

// Each caller says something for every outcome it can meet.
func TestEveryCallerSaysWhatFollows(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]caller{"create": createCaller, "resume": resumeCaller, "invoke": invokeCaller, "destroy": destroyCaller(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))} {
		for field, text := range map[string]string{"timeoutName": c.says(timeoutName), "interrupted": c.says(onInterrupt), "timedOut": c.says(onTimeout),
			"unidentifiedWaiting": c.says(onUnidentified)} {
			if text == "" {
				t.Errorf("%s caller: %s is empty", name, field)
			}
		}
		// Only a trigger meets a backup not identified that nobody waits for.
		if (name == "create" || name == "resume") && c.says(onUnidentifiedUnwaited) == "" {
			t.Errorf("%s caller: unidentifiedNotWaiting is empty", name)
		}
		if name != "invoke" && c.says(onFailure) == "" {
			t.Errorf("%s caller: failed is empty", name)
		}
		if stops := c.says(stopsSummary) != ""; stops != (name == "invoke" || name == "destroy") {
			t.Errorf("%s caller: an interrupted wait stops the change it guards: %t (%q); only an action and a destroy guard one",
				name, stops, c.says(stopsSummary))
		}
	}
}

// What only a destroy says: that it reads its settings from the state
// (raising timeouts.delete in the configuration alone does not change the
// next destroy), and, when the account cannot be backed up, the way out.
func TestDestroyAdviceFitsTheDestroy(t *testing.T) {
	t.Parallel()
	running := client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusRunning}
	failed := client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusFailed}
	conflict := &client.APIError{Method: "POST", Path: "/x", StatusCode: 409, Title: "Conflict", RequestID: "r"}
	unprocessable := &client.APIError{Method: "POST", Path: "/x", StatusCode: 422, Title: "Unprocessable Entity", Detail: "paused", RequestID: "r"}
	const fromState, wayOut = "as the state holds them", "lifecycle { destroy = false }"
	for _, tc := range []struct {
		name    string
		outcome workflow.Outcome
		says    string
	}{
		{"wait timed out", workflow.Outcome{Kind: workflow.Unsettled, Backup: &running, Waited: time.Minute, Err: context.DeadlineExceeded}, fromState},
		{"conflict wait timed out", workflow.Outcome{Kind: workflow.Refused, Waited: time.Minute, Err: &workflow.ConflictWaitError{Running: &running, Err: context.DeadlineExceeded}}, fromState},
		{"conflict refused", workflow.Outcome{Kind: workflow.Refused, Err: conflict}, fromState},
		{"backup failed", workflow.Outcome{Kind: workflow.Failed, Backup: &failed, Err: errors.New("backup bkp_0123456789abcdef ended with status \"failed\": export refused")}, wayOut},
		{"not backupable", workflow.Outcome{Kind: workflow.Refused, Err: unprocessable}, wayOut},
	} {
		for callerName, c := range map[string]caller{"destroy": destroyCaller(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)), "create": createCaller, "invoke": invokeCaller} {
			var diags diag.Diagnostics
			o := tc.outcome
			o.AccountID = "acc_0123456789abcdef"
			report(&diags, c, 5*time.Minute, o)
			says := strings.Contains(strings.Join(strings.Fields(diags[0].Detail()), " "), tc.says)
			if says != (callerName == "destroy") {
				t.Errorf("%s told by %s: says %q = %t: %q", tc.name, callerName, tc.says, says, diags[0].Detail())
			}
		}
	}
}

// A stopped destroy names when its record stops counting, whether or not
// it recorded a backup; no placeholder reaches a message.
func TestDestroyCallerNamesItsMoment(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, c := range []caller{destroyCaller(at), destroyCaller(time.Time{})} {
		for _, s := range []string{c.says(onInterrupt), c.says(onTimeout), c.says(onUnidentified)} {
			if strings.Contains(s, "{") {
				t.Errorf("a placeholder is left in %q", s)
			}
		}
	}
	if c := destroyCaller(at); !strings.Contains(c.says(onInterrupt), "before 2026-11-25T10:00:00Z") {
		t.Errorf("the interrupted destroy does not name when its record stops counting: %q", c.says(onInterrupt))
	}
}

// A destroy stopped because the listing did not hold the stopped one's
// backup is a stop too: it names when its record stops counting, as the
// timed-out one does; a trigger's read says nothing of a window (a
// helper's user path: "Check base_url and try again", and no window).
func TestUnreadBackupStopNamesTheWindow(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	missing := &client.BackupNotFoundError{AccountID: "acc_0123456789abcdef", BackupID: "bkp_0123456789abcdef"}
	for _, unread := range []*workflow.UnreadError{{BackupID: missing.BackupID, Err: missing}, {Err: context.DeadlineExceeded}} {
		for name, c := range map[string]caller{"destroy": destroyCaller(at), "create": createCaller} {
			var diags diag.Diagnostics
			report(&diags, c, time.Minute, workflow.Outcome{Kind: workflow.Refused, AccountID: missing.AccountID, Err: unread})
			got := strings.Join(strings.Fields(diags[0].Detail()), " ")
			if names := strings.Contains(got, "before 2026-11-25T10:00:00Z"); names != (name == "destroy") || strings.Contains(got, "\n\n\n") {
				t.Errorf("%s, %v: names the window %t: %q", name, unread.Err, names, got)
			}
		}
	}
}

// An operation's own deadline or interruption is told as such, not as a bare Go error.
func TestContextErrorsSayWhatHappened(t *testing.T) {
	t.Parallel()
	for err, want := range map[error]string{context.DeadlineExceeded: "timeouts setting", context.Canceled: "interrupted"} {
		if got := describeError(fmt.Errorf("looking for the backup: %w", err)); !strings.Contains(got, want) {
			t.Errorf("%v: %q", err, got)
		}
	}
}

// One account's reason in a fleet's error keeps its sentences apart.
func TestOneLineKeepsSentences(t *testing.T) {
	t.Parallel()
	d := diag.NewErrorDiagnostic("Unable to trigger a backup of account acc_0123456789abcdef",
		"POST /x: HTTP 422 Unprocessable Entity: not in a backupable state: paused\n\nThe account cannot be backed up.\n\nRequest ID: r1")
	want := "Unable to trigger a backup of account acc_0123456789abcdef: POST /x: HTTP 422 Unprocessable Entity: not in a " +
		"backupable state: paused. The account cannot be backed up. Request ID: r1."
	if got := oneLine(d); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
}

// A reason cut to its bound keeps its request id, the one thing a user can
// quote to support (a helper's user path: a 403's was cut off).
func TestOneLineKeepsTheRequestID(t *testing.T) {
	t.Parallel()
	d := diag.NewErrorDiagnostic("Unable to trigger a backup of account acc_0123456789abcdef",
		"GET /x: HTTP 403 Forbidden: "+strings.Repeat("the key may not back up this account, ", 30)+"\n\nRequest ID: 3f8e2c1a-0b7d-4c3e-9a51-2d8e4f7b6a10 (quote it to the Backup Service's support).")
	got := oneLine(d)
	if !strings.HasSuffix(got, "Request ID: 3f8e2c1a-0b7d-4c3e-9a51-2d8e4f7b6a10 (quote it to the Backup Service's support).") || utf8.RuneCountInString(got) > oneLineMax+1 {
		t.Errorf("%q (%d runes); want it within %d, ending with the request id", got, utf8.RuneCountInString(got), oneLineMax)
	}
}

// Errors one after another are told apart: the trigger's 500, then the
// listing's own failure and its retries, each with its request ID.
func TestJoinedErrorsAreToldApart(t *testing.T) {
	t.Parallel()
	post := &client.APIError{Method: "POST", Path: "/api/v1/accounts/acc_0123456789abcdef/backup", StatusCode: 500, Title: "Internal Server Error", RequestID: "r-post"}
	list := &client.RetryError{Attempts: 5, Reason: "retries exhausted", Err: &client.APIError{Method: "GET",
		Path: "/api/v1/accounts/acc_0123456789abcdef/backups", StatusCode: 503, Title: "Service Unavailable", RequestID: "r-list"}}
	got := strings.Join(strings.Fields(describeError(errors.Join(post, list))), " ")
	first, then, ok := strings.Cut(got, "Then: ")
	if !ok || !strings.Contains(first, "HTTP 500") || !strings.Contains(first, "r-post") || strings.Contains(first, "gave up") ||
		!strings.Contains(then, "HTTP 503") || !strings.Contains(then, "gave up after 5 attempts") || !strings.Contains(then, "r-list") {
		t.Errorf("%q", got)
	}
}

// What failed and its cause (the read before a trigger, and its 404) read
// as a sentence, then the service's answer: no "Then:", which tells errors
// one after another.
func TestCausedErrorReadsAsASentence(t *testing.T) {
	t.Parallel()
	what := errors.New("reading the account's newest backups failed: no backup was queued")
	cause := &client.APIError{Method: "GET", Path: "/api/v1/accounts/acc_0123456789abcdef/backups", StatusCode: 404, Title: "Resource not found.", RequestID: "r-list"}
	got := describeError(fmt.Errorf("%w: %w", what, cause))
	if !strings.HasPrefix(got, "Reading the account's newest backups failed: no backup was queued.\n\nThe Backup Service answered HTTP 404") ||
		strings.Contains(got, "Then:") || !strings.Contains(got, "r-list") {
		t.Errorf("%q", got)
	}
}

// A backup a listing does not hold, in a wait or a follow, is not said to
// be gone: the listing is behind or not the service's, and the user is told
// what to check (a helper's user path: "account … has no backup …", bare).
func TestMissingBackupSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("waiting 4s for the backup already in progress: %w", &client.BackupNotFoundError{AccountID: "acc_0123456789abcdef", BackupID: "bkp_0123456789abcdef"})
	got := strings.Join(strings.Fields(describeError(err)), " ")
	if strings.Contains(got, "has no backup") || !strings.Contains(got, "does not hold backup bkp_0123456789abcdef") ||
		!strings.Contains(got, "never deletes a backup") || !strings.Contains(got, "Check base_url") {
		t.Errorf("%q", got)
	}
}

// Progress reads as sentences to the user and as phrases in the log (no
// ".:" before the log's fields); a long wait says what it waits for, and a
// conflict's wait reads unlike a slow backup's.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	const acct = "acc_0123456789abcdef"
	b := client.Backup{ID: "bkp_0123456789abcdef", AccountID: acct, Status: client.StatusRunning}
	done := b
	done.Status, done.CompletedAt = client.StatusSuccess, new(time.Time)
	*done.CompletedAt = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		ev   workflow.Event
		want string
	}{
		{workflow.Event{Kind: workflow.EventQueued, Backup: client.Backup{ID: b.ID, Status: client.StatusPending}},
			"Queued backup bkp_0123456789abcdef of account acc_0123456789abcdef (pending)."},
		{workflow.Event{Kind: workflow.EventStatus, Backup: b, Previous: client.StatusPending, Elapsed: 12 * time.Second},
			"Backup bkp_0123456789abcdef: pending -> running [12s elapsed]."},
		{workflow.Event{Kind: workflow.EventStatus, Backup: b, Previous: client.StatusRunning, Elapsed: 72 * time.Second},
			"Backup bkp_0123456789abcdef of account acc_0123456789abcdef still running [1m12s elapsed]."},
		{workflow.Event{Kind: workflow.EventConflict, Backup: b, Elapsed: time.Millisecond},
			"Backup bkp_0123456789abcdef of account acc_0123456789abcdef is already in progress (running); waiting for it before queueing a new one."},
		{workflow.Event{Kind: workflow.EventConflict, Backup: b, Elapsed: 2 * time.Minute},
			"Still waiting for backup bkp_0123456789abcdef of account acc_0123456789abcdef, which was already in progress (running), before queueing a new one [2m0s elapsed]."},
		{workflow.Event{Kind: workflow.EventDone, Backup: done, Elapsed: 3 * time.Minute},
			"Backup bkp_0123456789abcdef of account acc_0123456789abcdef ended: success, completed at 2026-11-23T10:00:00Z [3m0s elapsed]."},
	}
	for _, tc := range cases {
		var said []string
		progress(context.Background(), func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }, acct)(tc.ev)
		if len(said) != 1 || said[0] != tc.want {
			t.Errorf("event %d said %q, want %q", tc.ev.Kind, said, tc.want)
		}
	}
}

// The log gets each line as a phrase: hclog writes "message: fields".
func TestProgressLogLineHasNoStrayPeriod(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &out)
	progress(ctx, nil, "acc_0123456789abcdef")(workflow.Event{Kind: workflow.EventQueued, Backup: client.Backup{ID: "bkp_0123456789abcdef", Status: client.StatusPending}})
	line := out.String()
	if !strings.Contains(line, `"@message":"Queued backup bkp_0123456789abcdef of account acc_0123456789abcdef (pending)"`) || strings.Contains(line, ".\"") {
		t.Errorf("log line %s, want the message without its period", line)
	}
}

// A trigger a listing lost is not told that -replace sends another
// (-replace would look again and find the same), nor that no look finds it:
// one at the service's own listing does.
func TestUnidentifiedWayOutIsTrue(t *testing.T) {
	t.Parallel()
	m := &triggerModel{AccountID: types.StringValue("acc_0123456789abcdef"), WaitForCompletion: types.BoolValue(true)}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"none listed yet", errNotListed, "if still none is listed, sends a new trigger"},
		{"the listing lost", workflow.ErrListingLost, "-replace included; a later look finds this one once the service's own listing answers. If every look fails so"},
	} {
		var diags diag.Diagnostics
		reportUnidentified(m, workflow.Outcome{Kind: workflow.NotIdentified, Err: tc.err}, &diags, createCaller)
		if len(diags) != 1 || !strings.Contains(strings.Join(strings.Fields(diags[0].Detail()), " "), tc.want) {
			t.Errorf("%s: %v; want it to say %q", tc.name, diags, tc.want)
		}
	}
}

// A trigger that does not wait goes ahead on its own accepted trigger not
// identified yet (a warning), never on a replaced trigger's it adopted: that
// backup may have failed unseen (deep-run seed 382733).
func TestUnidentifiedAdoptedTriggerStopsTheChange(t *testing.T) {
	t.Parallel()
	m := &triggerModel{AccountID: types.StringValue("acc_0123456789abcdef"), WaitForCompletion: types.BoolValue(false)}
	for _, adopted := range []bool{false, true} {
		var diags diag.Diagnostics
		o := workflow.Outcome{Kind: workflow.NotIdentified, Confirmed: true, Adopted: adopted, Err: errNotListed}
		reportUnidentified(m, o, &diags, createCaller)
		rec, _ := workflow.Record{}.Saved(o, workflow.Saving{Creating: true})
		if diags.HasError() != adopted || rec.Ahead == adopted {
			t.Errorf("adopted %t: %v, record %s; want an error, the change not gone ahead, only for the adopted trigger", adopted, diags, rec)
		}
	}
}
