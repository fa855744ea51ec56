package provider

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const defaultBackupsMax = 100

var _ datasource.DataSourceWithValidateConfig = (*accountBackupsDataSource)(nil)

// accountBackupsDataSource is backup_account_backups: an account's backups, newest first.
type accountBackupsDataSource struct{ dataSource }

type accountBackupsModel struct {
	AccountID     types.String      `tfsdk:"account_id"`
	MaxResults    types.Number      `tfsdk:"max_results"`
	Statuses      []types.String    `tfsdk:"statuses"`
	CreatedBefore timetypes.RFC3339 `tfsdk:"created_before"`
	CreatedAfter  timetypes.RFC3339 `tfsdk:"created_after"`
	// CompletedBefore keeps the backups that finished before it.
	CompletedBefore timetypes.RFC3339 `tfsdk:"completed_before"`
	Backups         []backupModel     `tfsdk:"backups"`
	Truncated       types.Bool        `tfsdk:"truncated"`
}

// backupModel is one backup in state.
type backupModel struct {
	ID          types.String      `tfsdk:"id"`
	Status      types.String      `tfsdk:"status"`
	CreatedAt   timetypes.RFC3339 `tfsdk:"created_at"`
	CompletedAt timetypes.RFC3339 `tfsdk:"completed_at"`
	Error       types.String      `tfsdk:"error"`
}

func backupToModel(b client.Backup) backupModel {
	return backupModel{ID: types.StringValue(b.ID), Status: types.StringValue(b.Status), CreatedAt: timeValue(b.CreatedAt),
		CompletedAt: timePtrValue(b.CompletedAt), Error: types.StringPointerValue(b.Error)}
}

func (d *accountBackupsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists the backups of one account, newest first, up to `max_results`, optionally only those of some " +
			"statuses, created in a window, or finished before a time. With `statuses = [\"success\"]`, `max_results = 1` and " +
			"`completed_before`, it is the restore point: the last good backup that finished before a time. The listing is " +
			"checked as it is read: one out of order or inconsistent (a backup newer than one listed before it, an id listed " +
			"twice with different contents) is an error, never a silent answer.",
		Attributes: map[string]schema.Attribute{
			"account_id":  accountIDArgument(),
			"max_results": maxResultsAttribute("backups", defaultBackupsMax),
			"statuses": schema.ListAttribute{Optional: true, ElementType: types.StringType, Validators: statusesValidators,
				Description: "Keep only backups with one of these statuses: `pending`, `running`, `success`, `failed` " +
					"(applied by the provider while paging: the API has no filters). `success` keeps only good backups: a success " +
					"whose record contradicts itself (no `completed_at`, one before `created_at`, or an `error`) is left out, as it " +
					"is no restore point."},
			"created_before": optionalTime("Keep only backups created strictly before this time (RFC 3339, for example `2026-11-24T09:00:00Z`). " +
				"The newer backups are read and skipped: the listing is newest first and the API has no filters."),
			"created_after": optionalTime("Keep only backups created strictly after this time (RFC 3339). The listing stops at the first " +
				"backup created at or before it: no older page is read. It must be before `created_before` and `completed_before`: " +
				"an empty window is refused at validate."),
			"completed_before": optionalTime("Keep only backups that finished (have `completed_at`) strictly before this time (RFC 3339). A backup " +
				"created before it that finished after it, or is still in progress, is left out. The newer backups are read and " +
				"skipped, and the listing stops as soon as `max_results` backups are found: with `statuses = [\"success\"]` and " +
				"`max_results = 1`, only the pages up to the last good backup that finished before this time are read. " +
				"`created_after` must be before it, and `statuses`, when set, must name a finished status (`success` or `failed`): " +
				"a filter no backup can pass is refused at validate."),
			"truncated": schema.BoolAttribute{Computed: true,
				Description: "Whether `max_results` cut the listing: true when backups were left unread after the last one " +
					"returned (which may or may not match `statuses`), false when `backups` holds every backup (of those " +
					"statuses, in the window) the account has."},
			"backups": objectList("The backups, newest first.", map[string]schema.Attribute{
				"id":           computedString("Backup id (`bkp_...`)."),
				"status":       computedString("`pending`, `running`, `success` or `failed` (the service may add values; only `success` is a good backup)."),
				"created_at":   computedTime("When the backup was queued, RFC 3339 in UTC."),
				"completed_at": computedTime("When the backup ended, RFC 3339 in UTC; null while it is in progress."),
				"error":        computedString("Why the backup failed; null unless it failed."),
			}),
		},
	}
}

// ValidateConfig refuses, before any request, filters no backup can pass.
func (d *accountBackupsDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var before, after, completed timetypes.RFC3339
	var statuses types.List
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("created_before"), &before)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("created_after"), &after)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("completed_before"), &completed)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("statuses"), &statuses)...)
	if resp.Diagnostics.HasError() {
		return
	}
	a, aKnown := knownTime(after, &resp.Diagnostics)
	if b, ok := knownTime(before, &resp.Diagnostics); ok && aKnown && !a.Before(b) {
		resp.Diagnostics.AddAttributeError(path.Root("created_after"), "Empty time window",
			fmt.Sprintf("created_after (%s) must be before created_before (%s): no backup can be created in between.",
				after.ValueString(), before.ValueString()))
	}
	if c, ok := knownTime(completed, &resp.Diagnostics); ok && aKnown && !a.Before(c) {
		resp.Diagnostics.AddAttributeError(path.Root("created_after"), "Empty time window",
			fmt.Sprintf("created_after (%s) must be before completed_before (%s): a backup created after created_after "+
				"finishes after it, so none can have finished before completed_before.", after.ValueString(), completed.ValueString()))
	}
	// ElementsAs fails where the list, or a status, is not known yet, or a status is null: not refused here.
	var named []string
	if completed.IsNull() || statuses.ElementsAs(ctx, &named, false).HasError() ||
		slices.ContainsFunc(named, func(st string) bool { return !client.InProgress(st) }) {
		return // a finished status, or one not known yet
	}
	if len(named) > 0 {
		resp.Diagnostics.AddAttributeError(path.Root("statuses"), "No backup can pass these filters",
			fmt.Sprintf("completed_before keeps only backups that finished, and statuses keeps only backups in progress (%s), "+
				"which have not: name success or failed in statuses, or leave completed_before out.", strings.Join(named, ", ")))
	}
}

func (d *accountBackupsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *accountBackupsModel) {
		m.MaxResults = orDefault(m.MaxResults, types.NumberValue(big.NewFloat(defaultBackupsMax)))
		m.Backups = []backupModel{}
		id := m.AccountID.ValueString()
		limit := int(wholeValue(m.MaxResults))
		before := timeOf(m.CreatedBefore, &resp.Diagnostics)
		after := timeOf(m.CreatedAfter, &resp.Diagnostics)
		completedBefore := timeOf(m.CompletedBefore, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
		complete, windowRead := false, false
		// The loop stops at the limit or at the window's end, so that only the pages up to there are read.
		for b, err := range d.data.client.Backups(ctx, id, client.ListOptions{
			Skipped: warnSkipped(&resp.Diagnostics, "backup_account_backups"),
			Ended:   func(c bool) { complete = c },
		}) {
			if err != nil {
				addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to list the backups of account %q for backup_account_backups", id), err)
				return
			}
			if !after.IsZero() && !b.CreatedAt.After(after) {
				windowRead = true // newest first: every backup of the window was read
				break
			}
			if !before.IsZero() && !b.CreatedAt.Before(before) ||
				len(m.Statuses) > 0 && !slices.ContainsFunc(m.Statuses, func(st types.String) bool { return hasStatus(b, st.ValueString()) }) ||
				!completedBefore.IsZero() && !finishedBefore(b, completedBefore) {
				continue
			}
			m.Backups = append(m.Backups, backupToModel(b))
			if len(m.Backups) >= limit {
				break
			}
		}
		m.Truncated = types.BoolValue(!complete && !windowRead)
	})
}

// hasStatus says whether b passes the status filter st: `success` keeps only a good backup (client.Backup.Good, the rule's
// one test), never a success whose record contradicts itself.
func hasStatus(b client.Backup, st string) bool {
	if st == client.StatusSuccess {
		return b.Good()
	}
	return b.Status == st
}

// finishedBefore says whether b finished, and was created, strictly before t.
func finishedBefore(b client.Backup, t time.Time) bool {
	return b.CompletedAt != nil && b.CompletedAt.Before(t) && b.CreatedAt.Before(t)
}
