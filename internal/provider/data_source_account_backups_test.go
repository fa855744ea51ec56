package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock/clocktest"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

func TestAccAccountBackupsDataSource(t *testing.T) {
	clock := clocktest.NewVirtual(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	e := newTestEnv(t, mockservice.Options{Seed: 501, Clock: clock, PendingFor: time.Minute, RunningFor: time.Minute})
	id := e.srv.AccountIDs()[0]
	e.srv.AddBackups(id, 120, 3, "platform quota exceeded") // 120 finished, every third failed
	// And one in progress, newest.
	// The clock starts at a known time, so that the listing's timestamps
	// are known; nothing waits, so it stays there.
	inProgress := e.outsideBackup(t, id)
	all, err := client.Collect(e.rawClient(t).Backups(context.Background(), id, client.ListOptions{}))
	if err != nil || len(all) != 121 {
		t.Fatalf("%d %v", len(all), err)
	}
	at := func(i int, attr string) tfjsonpath.Path {
		return tfjsonpath.New("backups").AtSliceIndex(i).AtMapKey(attr)
	}
	failed := all[1] // the newest finished one: number 120, a multiple of 3
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
data "backup_account_backups" "default" { account_id = %[1]q }
data "backup_account_backups" "all" {
  account_id  = %[1]q
  max_results = 500
}
data "backup_account_backups" "two" {
  account_id  = %[1]q
  max_results = 2
}
`, id)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.backup_account_backups.default", tfjsonpath.New("backups"), knownvalue.ListSizeExact(100)),
				statecheck.ExpectKnownValue("data.backup_account_backups.default", tfjsonpath.New("max_results"), knownvalue.Int64Exact(100)),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", tfjsonpath.New("backups"), knownvalue.ListSizeExact(121)),
				statecheck.ExpectKnownValue("data.backup_account_backups.two", tfjsonpath.New("backups"), knownvalue.ListSizeExact(2)),
				statecheck.ExpectKnownValue("data.backup_account_backups.default", tfjsonpath.New("truncated"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", tfjsonpath.New("truncated"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue("data.backup_account_backups.two", tfjsonpath.New("truncated"), knownvalue.Bool(true)),
				// Newest first: the backup in progress.
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(0, "id"), knownvalue.StringExact(inProgress.ID)),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(0, "status"), knownvalue.StringExact("pending")),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(0, "created_at"), knownvalue.StringExact("2026-11-21T10:00:00Z")),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(0, "completed_at"), knownvalue.Null()),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(0, "error"), knownvalue.Null()),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(1, "id"), knownvalue.StringExact(failed.ID)),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(1, "status"), knownvalue.StringExact("failed")),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(1, "error"), knownvalue.StringExact("platform quota exceeded")),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(1, "completed_at"), knownvalue.StringExact(failed.CompletedAt.UTC().Format(time.RFC3339))),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(2, "status"), knownvalue.StringExact("success")),
				statecheck.ExpectKnownValue("data.backup_account_backups.all", at(2, "error"), knownvalue.Null()),
			},
		}},
	})
}

func TestAccAccountBackupsDataSourceErrors(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 502})
	gone := e.srv.AccountIDs()[0]
	e.srv.DeleteAccount(gone)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(fmt.Sprintf(`data "backup_account_backups" "x" { account_id = %q }`, gone)),
				ExpectError: errorWithRequestID(`Unable to list the backups of account "`+gone+`"`, 404, "Resource not found."),
			},
			{
				Config:      e.config(fmt.Sprintf(`data "backup_account_backups" "x" { account_id = %q }`, e.srv.ForeignAccountID())),
				ExpectError: errorWithRequestID("Unable to list the backups", 403, "You are not authorized to perform this action."),
			},
			{
				Config:      e.config(`data "backup_account_backups" "x" { account_id = "acc_nope" }`),
				ExpectError: expectError("must be an account id"),
				PlanOnly:    true,
			},
			{
				Config: e.config(fmt.Sprintf(`data "backup_account_backups" "x" {
  account_id = %q
  statuses   = ["succeeded"]
}`, gone)),
				ExpectError: expectError("statuses", "value must be one of", "got: \"succeeded\""),
				PlanOnly:    true,
			},
			{
				Config: e.config(fmt.Sprintf(`data "backup_account_backups" "x" {
  account_id = %q
  statuses   = []
}`, gone)),
				ExpectError: expectError("statuses", "at least 1"),
				PlanOnly:    true,
			},
			{
				Config: e.config(fmt.Sprintf(`data "backup_account_backups" "x" {
  account_id  = %q
  max_results = -1
}`, gone)),
				ExpectError: expectError("max_results must be a whole number from 1 to 2147483647; got -1."),
				PlanOnly:    true,
			},
		},
	})
}

// The latest good backup on the second page costs the two pages up to it,
// whatever the history holds beyond; truncated says that backups were
// left unread, and a listing read to its end says it was not cut.
func TestAccAccountBackupsLatestGoodBackupCost(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 503})
	id := e.srv.AccountIDs()[0]
	now := e.clock.Now().UTC()
	var history []mockservice.BackupSpec
	for i := range 200 { // 200 good ones, older
		history = append(history, mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(400-i) * time.Hour)})
	}
	for i := range 55 { // then 55 failed ones: the newest good one is on page 2
		history = append(history, mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(60-i) * time.Hour), Error: "quota exceeded"})
	}
	e.srv.AddHistory(id, history...)
	c := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "latest_good" {
  account_id  = %q
  statuses    = ["success"]
  max_results = 1
}

output "latest_good" {
  value = data.backup_account_backups.latest_good
}
`, id)))
	if n := e.listingsDuring(func() { c.run("apply", "-auto-approve", "-no-color") }); n > 3 || n < 2 {
		t.Errorf("the latest good backup on page 2 cost %d listing requests, want 2 (at most 3)", n)
	}
	var out struct {
		LatestGood struct {
			Value struct {
				Backups []struct {
					ID, Status string
					CreatedAt  string `json:"created_at"`
				} `json:"backups"`
				Truncated bool `json:"truncated"`
			} `json:"value"`
		} `json:"latest_good"`
	}
	if err := json.Unmarshal([]byte(c.run("output", "-json")), &out); err != nil {
		t.Fatal(err)
	}
	got := out.LatestGood.Value
	want := history[199].CreatedAt.Truncate(time.Second).Format(time.RFC3339)
	if len(got.Backups) != 1 || got.Backups[0].Status != client.StatusSuccess || got.Backups[0].CreatedAt != want || !got.Truncated {
		t.Errorf("latest good backup: %+v, want one success created at %s, truncated", got, want)
	}

	// Every failed one: the listing is read to its end (6 pages), not cut.
	c2 := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "failed" {
  account_id  = %q
  statuses    = ["failed"]
  max_results = 1000
}

output "failed" {
  value = { n = length(data.backup_account_backups.failed.backups), truncated = data.backup_account_backups.failed.truncated }
}
`, id)))
	c2.run("apply", "-auto-approve", "-no-color")
	var failed struct {
		Failed struct {
			Value struct {
				N         int  `json:"n"`
				Truncated bool `json:"truncated"`
			} `json:"value"`
		} `json:"failed"`
	}
	if err := json.Unmarshal([]byte(c2.run("output", "-json")), &failed); err != nil {
		t.Fatal(err)
	}
	if failed.Failed.Value.N != 55 || failed.Failed.Value.Truncated {
		t.Errorf("every failed backup: %+v, want 55, not truncated", failed.Failed.Value)
	}
}

// The restore point, the last good backup before a time, costs the pages
// up to it; a window ends the listing at its first older backup; a window
// that holds no time is refused before any request.
func TestAccAccountBackupsRestorePoint(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 504})
	id := e.srv.AccountIDs()[0]
	now := e.clock.Now().UTC().Truncate(time.Second)
	at := func(i int) time.Time { return now.Add(-time.Duration(130-i) * time.Hour) }
	var history []mockservice.BackupSpec
	for i := range 130 { // hourly, the newest an hour ago; 70 to 99 failed
		spec := mockservice.BackupSpec{CreatedAt: at(i)}
		if i >= 70 && i < 100 {
			spec.Error = "quota exceeded"
		}
		history = append(history, spec)
	}
	e.srv.AddHistory(id, history...)
	c := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "restore_point" {
  account_id     = %[1]q
  statuses       = ["success"]
  max_results    = 1
  created_before = %[2]q
}

output "restore_point" {
  value = data.backup_account_backups.restore_point
}
`, id, at(90).Format(time.RFC3339))))
	// The restore point is backup 69, the 61st newest: on page 2.
	if n := e.listingsDuring(func() { c.run("apply", "-auto-approve", "-no-color") }); n > 3 || n < 2 {
		t.Errorf("a restore point on page 2 cost %d listing requests, want 2 (at most 3)", n)
	}
	type listing struct {
		Value struct {
			Backups []struct {
				Status    string
				CreatedAt string `json:"created_at"`
			} `json:"backups"`
			Truncated bool `json:"truncated"`
		} `json:"value"`
	}
	var out struct {
		RestorePoint listing `json:"restore_point"`
	}
	if err := json.Unmarshal([]byte(c.run("output", "-json")), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.RestorePoint.Value; len(got.Backups) != 1 || got.Backups[0].Status != client.StatusSuccess ||
		got.Backups[0].CreatedAt != at(69).Format(time.RFC3339) || !got.Truncated {
		t.Errorf("restore point: %+v, want the success created at %s, truncated", got, at(69).Format(time.RFC3339))
	}

	// A window of failed backups only: nothing, not truncated, and no page
	// past the window's first older backup (backup 80, on page 1).
	c2 := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "window" {
  account_id     = %[1]q
  statuses       = ["success"]
  created_after  = %[2]q
  created_before = %[3]q
}

output "window" {
  value = data.backup_account_backups.window
}
`, id, at(80).Format(time.RFC3339), at(90).Format(time.RFC3339))))
	if n := e.listingsDuring(func() { c2.run("apply", "-auto-approve", "-no-color") }); n > 2 || n < 1 {
		t.Errorf("a window on page 1 cost %d listing requests, want 1 (at most 2)", n)
	}
	var window struct {
		Window listing `json:"window"`
	}
	if err := json.Unmarshal([]byte(c2.run("output", "-json")), &window); err != nil {
		t.Fatal(err)
	}
	if got := window.Window.Value; len(got.Backups) != 0 || got.Truncated {
		t.Errorf("window of failed backups: %+v, want none, not truncated", got)
	}

	// created_after not before created_before: refused at validate.
	c3 := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "empty" {
  account_id     = %[1]q
  created_after  = %[2]q
  created_before = %[2]q
}
`, id, at(80).Format(time.RFC3339))))
	var out3 string
	var err error
	if n := e.listingsDuring(func() { out3, err = c3.exec(nil, "validate", "-no-color") }); n != 0 {
		t.Errorf("validate sent %d listing requests", n)
	}
	if err == nil || !strings.Contains(out3, "Empty time window") {
		t.Errorf("an empty window passed validate: %v\n%s", err, out3)
	}
}

// The restore point by completion, the last good backup that finished
// before a time, costs the pages up to it: a good backup created before
// the time but finished after it straddles the time and is passed over,
// as is one still running.
func TestAccAccountBackupsRestorePointByCompletion(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 505})
	id := e.srv.AccountIDs()[0]
	now := e.clock.Now().UTC().Truncate(time.Second)
	at := func(i int) time.Time { return now.Add(-time.Duration(130-i) * time.Hour) }
	var history []mockservice.BackupSpec
	for i := range 130 { // hourly, each 11 minutes long, the newest an hour ago; 70 to 99 failed
		spec := mockservice.BackupSpec{CreatedAt: at(i)}
		if i >= 70 && i < 100 {
			spec.Error = "quota exceeded"
		}
		history = append(history, spec)
	}
	e.srv.AddHistory(id, history...)
	e.outsideBackup(t, id) // in progress, newest
	// Backup 69 was created 5 minutes before T and finished 6 after it.
	T := at(69).Add(5 * time.Minute).Format(time.RFC3339)
	c := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "restore_point" {
  account_id       = %[1]q
  statuses         = ["success"]
  max_results      = 1
  completed_before = %[2]q
}

output "restore_point" {
  value = data.backup_account_backups.restore_point
}
`, id, T)))
	// The restore point is backup 68, the 63rd newest: on page 2.
	n := e.listingsDuring(func() { c.run("apply", "-auto-approve", "-no-color") })
	t.Logf("a restore point by completion on page 2: %d listing requests for plan and apply", n)
	if n > 3 || n < 2 {
		t.Errorf("a restore point on page 2 cost %d listing requests, want 2 (at most 3)", n)
	}
	type listing struct {
		Value struct {
			Backups []struct {
				Status      string
				CreatedAt   string `json:"created_at"`
				CompletedAt string `json:"completed_at"`
			} `json:"backups"`
			Truncated bool `json:"truncated"`
		} `json:"value"`
	}
	var out struct {
		RestorePoint listing `json:"restore_point"`
	}
	if err := json.Unmarshal([]byte(c.run("output", "-json")), &out); err != nil {
		t.Fatal(err)
	}
	want := at(68)
	if got := out.RestorePoint.Value; len(got.Backups) != 1 || got.Backups[0].Status != client.StatusSuccess ||
		got.Backups[0].CreatedAt != want.Format(time.RFC3339) || got.Backups[0].CompletedAt != want.Add(11*time.Minute).Format(time.RFC3339) || !got.Truncated {
		t.Errorf("restore point: %+v, want the success created at %s, truncated", got, want.Format(time.RFC3339))
	}

	// By creation, the same time gives the backup that straddles it.
	c2 := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "by_creation" {
  account_id     = %[1]q
  statuses       = ["success"]
  max_results    = 1
  created_before = %[2]q
}

output "by_creation" {
  value = data.backup_account_backups.by_creation
}
`, id, T)))
	c2.run("apply", "-auto-approve", "-no-color")
	var out2 struct {
		ByCreation listing `json:"by_creation"`
	}
	if err := json.Unmarshal([]byte(c2.run("output", "-json")), &out2); err != nil {
		t.Fatal(err)
	}
	if got := out2.ByCreation.Value; len(got.Backups) != 1 || got.Backups[0].CreatedAt != at(69).Format(time.RFC3339) {
		t.Errorf("by creation: %+v, want the success created at %s", got, at(69).Format(time.RFC3339))
	}

	// completed_before now: the backup in progress has not finished, and
	// the newest finished one (129, failed) is the first match.
	c3 := newCLI(t, e, e.config(fmt.Sprintf(`
data "backup_account_backups" "finished" {
  account_id       = %[1]q
  max_results      = 2
  completed_before = %[2]q
}

output "finished" {
  value = data.backup_account_backups.finished
}
`, id, now.Format(time.RFC3339))))
	if n := e.listingsDuring(func() { c3.run("apply", "-auto-approve", "-no-color") }); n > 2 || n < 1 {
		t.Errorf("the newest finished backups cost %d listing requests, want 1 (at most 2)", n)
	}
	var out3 struct {
		Finished listing `json:"finished"`
	}
	if err := json.Unmarshal([]byte(c3.run("output", "-json")), &out3); err != nil {
		t.Fatal(err)
	}
	if got := out3.Finished.Value; len(got.Backups) != 2 || got.Backups[0].CreatedAt != at(129).Format(time.RFC3339) ||
		got.Backups[1].CreatedAt != at(128).Format(time.RFC3339) {
		t.Errorf("finished before now: %+v, want backups 129 and 128", got)
	}
}

// Filters no backup can pass are refused at validate, before any request.
func TestAccAccountBackupsCompletedBeforeValidation(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, mockservice.Options{Seed: 506})
	id := e.srv.AccountIDs()[0]
	cases := map[string]struct{ body, want string }{
		"created_after at completed_before": {`
  created_after    = "2026-11-24T09:00:00Z"
  completed_before = "2026-11-24T09:00:00Z"`, "created_after (2026-11-24T09:00:00Z) must be before completed_before"},
		"created_after after completed_before": {`
  created_after    = "2026-11-25T09:00:00Z"
  completed_before = "2026-11-24T09:00:00Z"`, "none can have finished before completed_before"},
		"only statuses in progress": {`
  statuses         = ["pending", "running"]
  completed_before = "2026-11-24T09:00:00Z"`, "statuses keeps only backups in progress (pending, running)"},
	}
	for name, tc := range cases {
		c := newCLI(t, e, e.config(fmt.Sprintf("data \"backup_account_backups\" \"x\" {\n  account_id = %q%s\n}\n", id, tc.body)))
		var out string
		var err error
		if n := e.listingsDuring(func() { out, err = c.exec(nil, "validate", "-no-color") }); n != 0 {
			t.Errorf("%s: validate sent %d listing requests", name, n)
		}
		if err == nil || !expectError(tc.want).MatchString(out) {
			t.Errorf("%s: passed validate or said something else: %v\n%s", name, err, out)
		}
	}
	// A finished status among them, or a window that holds time, passes.
	c := newCLI(t, e, e.config(fmt.Sprintf(`data "backup_account_backups" "x" {
  account_id       = %q
  statuses         = ["running", "success"]
  created_after    = "2026-11-23T09:00:00Z"
  completed_before = "2026-11-24T09:00:00Z"
}
`, id)))
	if out, err := c.exec(nil, "validate", "-no-color"); err != nil {
		t.Errorf("a filter backups can pass was refused: %v\n%s", err, out)
	}
}

// A listing out of order, or an id listed twice with other contents, as a
// proxy or a lagging replica in front of the service may answer, is an
// error that names both records and asks to try again: never an answer.
func TestAccAccountBackupsInconsistentListing(t *testing.T) {
	e, f := newFrontEnv(t, mockservice.Options{Seed: 507})
	id := e.srv.AccountIDs()[0]
	now := e.clock.Now().UTC().Truncate(time.Second)
	var history []mockservice.BackupSpec
	for i := range 60 { // hourly, the newest an hour ago: two pages
		history = append(history, mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(60-i) * time.Hour)})
	}
	e.srv.AddHistory(id, history...)
	all, err := client.Collect(e.rawClient(t).Backups(context.Background(), id, client.ListOptions{}))
	if err != nil || len(all) != 60 {
		t.Fatalf("%d %v", len(all), err)
	}
	// rewrite serves the mock's backups listing with the first page's
	// records changed by change.
	rewrite := func(change func(records []map[string]any)) {
		f.set(func(r *http.Request) (answer, bool) {
			if !strings.HasSuffix(r.URL.Path, "/backups") || r.URL.Query().Get("cursor") != "" {
				return answer{}, false
			}
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, r)
			var page map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
				t.Errorf("the mock's page: %v", err)
				return answer{}, false
			}
			data, _ := page["data"].([]any)
			records := make([]map[string]any, len(data))
			for i := range data {
				records[i], _ = data[i].(map[string]any)
			}
			change(records)
			for i := range records {
				data[i] = records[i]
			}
			body, _ := json.Marshal(page)
			return answer{rec.Code, "application/json", string(body)}, true
		})
	}
	cfg := e.config(fmt.Sprintf(`
data "backup_account_backups" "restore_point" {
  account_id       = %[1]q
  statuses         = ["success"]
  max_results      = 1
  completed_before = %[2]q
}
`, id, now.Add(-3*time.Hour).Format(time.RFC3339)))
	stamp := func(b client.Backup) string { return b.CreatedAt.UTC().Format(time.RFC3339) }

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				// The third record dated an hour after the second: out of order.
				PreConfig: func() {
					rewrite(func(records []map[string]any) { records[2]["created_at"] = all[0].CreatedAt.Format(time.RFC3339) })
				},
				Config: cfg,
				ExpectError: expectError(`Unable to list the backups of account "`+id+`"`, "out of order or inconsistent",
					all[2].ID, stamp(all[0]), "is listed after backup", all[1].ID, stamp(all[1]), "a proxy in front of it", "Try again"),
			},
			{
				// The restore point with max_results = 1 and the page's first two
				// swapped: the first passes the filter, but the page is read whole
				// and refused, never answered with the older one.
				PreConfig: func() {
					rewrite(func(records []map[string]any) { records[0], records[1] = records[1], records[0] })
				},
				Config: e.config(fmt.Sprintf(`
data "backup_account_backups" "restore_point" {
  account_id       = %[1]q
  statuses         = ["success"]
  max_results      = 1
  completed_before = %[2]q
}
`, id, now.Format(time.RFC3339))),
				ExpectError: expectError("out of order or inconsistent", all[0].ID, "is listed after backup", all[1].ID),
			},
			{
				// The newest success contradicts itself (an error beside it): it is
				// no restore point (client.Backup.Good), the next good one is.
				PreConfig: func() {
					rewrite(func(records []map[string]any) { records[0]["error"] = "partially failed" })
				},
				Config: e.config(fmt.Sprintf(`
data "backup_account_backups" "restore_point" {
  account_id       = %[1]q
  statuses         = ["success"]
  max_results      = 1
  completed_before = %[2]q
}
`, id, now.Format(time.RFC3339))),
				Check: resource.TestCheckResourceAttr("data.backup_account_backups.restore_point", "backups.0.id", all[1].ID),
			},
			{
				// The first record listed again, third, as failed: inconsistent.
				PreConfig: func() {
					rewrite(func(records []map[string]any) {
						records[2] = maps.Clone(records[0])
						records[2]["status"], records[2]["error"] = "failed", "disk full"
					})
				},
				Config: cfg,
				ExpectError: expectError("out of order or inconsistent", "backup "+all[0].ID+" is listed twice with different contents",
					"first as "+all[0].ID+" (success, created_at "+stamp(all[0]), "then as "+all[0].ID+" (failed", "Try again"),
			},
		},
	})
}
