package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// defaultResumeWithin: how long a stopped destroy's backup counts for the next (its retry), not
// its timeouts.delete, since the guarded data may change in between.
const (
	defaultResumeWithin = "10m"
	defaultResume       = 10 * time.Minute
)

var (
	_ resource.ResourceWithConfigure      = (*onDestroyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*onDestroyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*onDestroyResource)(nil)
)

// onDestroyResource is backup_on_destroy: its destroy takes a backup and fails unless it
// succeeded, so that Terraform keeps what depends on it. Creating it takes no backup.
type onDestroyResource struct{ backupResource }

type onDestroyModel struct {
	ID         types.String         `tfsdk:"id"`
	AccountID  types.String         `tfsdk:"account_id"`
	OnConflict types.String         `tfsdk:"on_conflict"`
	Resume     timetypes.GoDuration `tfsdk:"resume_within"`
	Reuse      timetypes.GoDuration `tfsdk:"reuse_within"`
	Pending    types.Object         `tfsdk:"pending_destroy_backup"`
	Timeouts   timeouts.Value       `tfsdk:"timeouts"`
}

func newOnDestroyResource() resource.Resource {
	return &onDestroyResource{backupResource{timeout: "delete"}}
}

func (r *onDestroyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_on_destroy"
}

func (r *onDestroyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Takes one backup of an account when this resource is destroyed, and fails the destroy unless the backup " +
			"succeeded, so that what it `depends_on` is kept. Creating it takes no backup.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Description: "The account ID.",
			},
			"account_id": replacingAccountID("ID of the account to back up on destroy: `acc_` followed by exactly 16 letters or " +
				"digits. Changing it destroys this resource, which backs up the old account."),
			"on_conflict": onConflictArgument("What the destroy does when a backup of the account is already in progress: `wait` " +
				"(the default) waits for it, then takes a new one, so that the backup reflects the data as it is destroyed; `fail` " +
				"fails the destroy."),
			"resume_within": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(defaultResumeWithin),
				Description: "How long after a destroy stopped (interrupted, timed out, or unable to identify its backup) the backup " +
					"it began still counts for the next destroy, as a Go duration such as `10m`. Defaults to `" + defaultResumeWithin +
					"`: the retry of a stopped destroy. Later, a destroy takes a new backup, since the data may have changed.",
				CustomType: timetypes.GoDurationType{}, Validators: []validator.String{positiveDuration},
			},
			"reuse_within":           reuseWithinArgument("destroy"),
			"pending_destroy_backup": pendingAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("delete",
				"How long the destroy may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Defaults to `30m`."),
		},
	}
}

// ModifyPlan checks a new guard's key against organization_id, runs the preflight of a destroy,
// and clears the pending destroy-time backup on any other plan (the data may have changed).
func (r *onDestroyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() {
			r.preflight(ctx, req.State, &resp.Diagnostics)
		}
		return // Delete decides whether the record still counts
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingNull())...)
	if req.State.Raw.IsNull() {
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_on_destroy", &resp.Diagnostics)
	}
}

// preflight reports at plan what would stop the guard's destroy, before anything is destroyed.
func (r *onDestroyResource) preflight(ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) {
	if r.data == nil {
		return
	}
	m, ok := decode[onDestroyModel](ctx, &state, diags)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	summary := fmt.Sprintf("The destroy of backup_on_destroy of account %s cannot take its backup", accountID)
	c := r.data.runner.CheckDestroy(ctx, accountID, m.OnConflict.ValueString() != onConflictFail)
	switch {
	case c.Verdict == workflow.WrongKey:
		addOrganizationError(diags, "the destroy of backup_on_destroy of account "+accountID, c.Err)
	case c.Verdict == workflow.Unread:
		diags.AddError(summary, describeError(c.Err, guardKept))
	case c.Verdict == workflow.Gone && r.data.release.covers(accountID):
		diags.AddWarning(fmt.Sprintf("backup_on_destroy of account %s will let the destroy go ahead without a backup: %s", accountID, r.data.release.reason),
			describeError(c.Err, r.data.release.warning(accountID)))
	case c.Verdict == workflow.Gone:
		diags.AddError(summary, describeError(c.Err, goneGuardAdvice(accountID)))
	case c.Verdict == workflow.Busy:
		diags.AddError(summary, fmt.Sprintf("A backup of account %s is in progress (backup_status %q) and on_conflict is \"fail\": "+
			"the destroy would fail. Wait for it to end, or set on_conflict = \"wait\" and apply that first. %s",
			accountID, c.Account.BackupStatus, guardKept))
	}
}

// guardKept ends what a guard's failure says: nothing was destroyed.
const guardKept = "Nothing was destroyed: the guard, and every resource it depends on, stays."

// goneGuardAdvice is goneAdvice after a destroy that stopped.
func goneGuardAdvice(accountID string) string { return goneAdvice(accountID) + " " + guardKept }

// goneAdvice is the way out of a guard whose account the service proved gone.
func goneAdvice(accountID string) string {
	return fmt.Sprintf("There is nothing to back up, and that is not a good backup: the guard fails closed. If the account was "+
		"deleted on purpose (or belongs to another organization than this key's), let this destroy go ahead without a backup "+
		"by naming it in the provider block:\n\n  destroy_without_backup = {\n    account_ids = [%q]\n    reason      = \"<why>\"\n  }\n\n"+
		"or forget the guard with a removed block (lifecycle { destroy = false }) or terraform state rm. If the account should "+
		"exist, check base_url (or %s) and the API key.", accountID, EnvBaseURL)
}

// Create checks the account and the key's organization, so that a wrong one fails the apply that
// adds the guard, not the destroy it exists for.
func (r *onDestroyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	m, ok := decode[onDestroyModel](ctx, req.Plan, &resp.Diagnostics) // pending_destroy_backup null, as ModifyPlan planned it
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	if err := r.data.client.CheckOrganization(ctx); err != nil {
		addOrganizationError(&resp.Diagnostics, "backup_on_destroy of account "+accountID, err)
		return
	}
	if _, err := r.data.client.Account(ctx, accountID); err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read account %s for backup_on_destroy", accountID), err)
		return
	}
	m.ID = m.AccountID
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read checks the account and never removes the guard: an account proven gone is a warning here,
// and its destroy fails closed (see preflight).
func (r *onDestroyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	switch c := r.data.runner.CheckAccount(ctx, accountID); {
	case c.Verdict == workflow.Gone:
		resp.Diagnostics.AddWarning(fmt.Sprintf("The account of backup_on_destroy %s does not exist for this API key", accountID),
			describeError(c.Err, "The guard stays in the state. Its destroy cannot take a backup, and fails. "+goneAdvice(accountID)))
	case c.Verdict == workflow.Unread && c.Report: // else another resource reports this shared failure
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read account %s of backup_on_destroy", accountID), c.Err)
	}
}

// Update stores the settings and clears the pending destroy-time backup; it takes no backup.
func (r *onDestroyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...) // pending_destroy_backup null, as ModifyPlan planned it
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	saveRecord(ctx, resp.Private, workflow.Record{}, &resp.Diagnostics)
}

// Delete takes the backup and waits for it; when it cannot see it succeed, it fails, so that
// Terraform keeps what the guard depends on, and records the backup for the next destroy to follow.
func (r *onDestroyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, diags := m.Timeouts.Delete(ctx, defaultTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := m.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, r.data.clock, timeout, accountID)
	defer cancel()
	opts := workflow.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() != onConflictFail,
		WaitForCompletion: true,
		ReuseWithin:       durationOf(m.Reuse),
		Unrecorded:        true, // a destroy has no previous change: any backup within reuse_within counts
		Progress:          progress(ctx, nil, m.AccountID.ValueString()),
	}
	resume := cmp.Or(durationOf(m.Resume), defaultResume) // unset in a state a test wrote by hand
	// Follow the backup an earlier destroy began while it stands (workflow.CountsForDestroy), or take a new one.
	earlier := destroyRecord(ctx, req.Private)
	var o workflow.Outcome
	switch {
	case earlier.StandsForDestroy(r.data.clock.Now(), resume):
		tflog.Info(ctx, "following the backup an earlier destroy began", map[string]any{"record": earlier.String()})
		o = r.data.runner.Follow(ctx, accountID, earlier, workflow.FollowOptions{RunOptions: opts, Counts: workflow.CountsForDestroy, Renew: true})
	case earlier.Phase != workflow.PhaseNone:
		// It stood for a destroy that stopped before resume_within: the data may have changed since.
		tflog.Info(ctx, "the backup an earlier destroy began no longer counts for this one; taking a new backup",
			map[string]any{"backup_id": earlier.BackupID, "counts_until": earlier.CountsUntil})
		earlier = workflow.Record{}
		fallthrough
	default:
		o = r.data.runner.Run(ctx, accountID, opts)
	}
	if o.Good(true) {
		b := o.Backup
		tflog.Info(ctx, "backup before destroy succeeded", map[string]any{"backup_id": b.ID})
		if o.Reused {
			resp.Diagnostics.AddWarning(fmt.Sprintf("Destroyed after backup %s of account %s, taken before this destroy", b.ID, accountID),
				fmt.Sprintf("This destroy queued no backup: backup %s, created at %s, succeeded within reuse_within (%s) of it.",
					b.ID, b.CreatedAt.UTC().Format(time.RFC3339), m.Reuse.ValueString()))
		}
		if earlier.Phase != workflow.PhaseNone {
			// Users see which backup let this destroy go ahead: the one a stopped destroy began.
			resp.Diagnostics.AddWarning(fmt.Sprintf("Destroyed after backup %s of account %s, begun by an earlier destroy", b.ID, accountID),
				fmt.Sprintf("This destroy queued no backup: it followed backup %s, which a destroy that stopped began at %s "+
					"(pending_destroy_backup), until it succeeded.", b.ID, earlier.TriggeredAt.UTC().Format(time.RFC3339)))
		}
		return
	}
	if r.data.release.covers(accountID) {
		if why, ok := cannotBackUp(o); ok {
			resp.Diagnostics.AddWarning(fmt.Sprintf("Destroyed without a backup of account %s: %s", accountID, r.data.release.reason),
				fmt.Sprintf("The account cannot be backed up: %s\n\n%s", why, r.data.release.warning(accountID)))
			return
		}
	}

	// The destroy fails: record what the next one follows, for
	// resume_within from now (workflow.Record.AfterStoppedDestroy).
	next := earlier.AfterStoppedDestroy(o, r.data.clock.Now(), resume)
	saveRecord(ctx, resp.Private, next, &resp.Diagnostics)
	// The kept state shows the record: Terraform stores the state a failed destroy returns.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingObject(next))...)

	if errors.Is(o.Err, client.ErrGone) {
		resp.Diagnostics.AddError(fmt.Sprintf("Unable to back up account %s before destroy", accountID),
			describeError(o.Err, goneGuardAdvice(accountID)))
	} else {
		report(&resp.Diagnostics, destroyCaller(next.CountsUntil), timeout, o)
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Backup before destroy did not succeed",
			fmt.Sprintf("The backup of account %s could not be seen to succeed; the destroy stops here.", accountID))
	}
}

// cannotBackUp says whether a destroy's failure shows that the account cannot be backed up, the one
// case destroy_without_backup lets through: gone, refused by the service itself (422), or failed.
func cannotBackUp(o workflow.Outcome) (string, bool) {
	var refused *client.APIError
	switch {
	case errors.Is(o.Err, client.ErrGone):
		return "the Backup Service proved it does not exist for this API key (deleted, or outside the key's organization).", true
	case o.Kind == workflow.Refused && errors.Is(o.Err, client.ErrUnprocessable) && errors.As(o.Err, &refused) && refused.FromService():
		return "the Backup Service refused to back it up (HTTP 422): " + o.Err.Error(), true
	case o.Kind == workflow.Failed && o.Backup != nil && o.Backup.Status != client.StatusSuccess:
		// A success that does not count (workflow.Rule) proves nothing.
		return "its backup failed: " + o.Err.Error(), true
	}
	return "", false
}

// pendingAttrTypes are the fields of pending_destroy_backup, the record as users see it.
var pendingAttrTypes = map[string]attr.Type{
	"backup_id":    types.StringType,
	"triggered_at": timetypes.RFC3339Type{},
	"counts_until": timetypes.RFC3339Type{},
}

func pendingNull() types.Object { return types.ObjectNull(pendingAttrTypes) }

// pendingObject is the record of a stopped destroy as pending_destroy_backup; null for none.
func pendingObject(d workflow.Record) types.Object {
	if d.Phase == workflow.PhaseNone {
		return pendingNull()
	}
	return types.ObjectValueMust(pendingAttrTypes, map[string]attr.Value{
		"backup_id":    stringOrNull(d.BackupID),
		"triggered_at": timeValue(d.TriggeredAt),
		"counts_until": timetypes.NewRFC3339TimeValue(d.CountsUntil.UTC()),
	})
}

func pendingAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Computed: true,
		Description: "The backup a destroy of this resource began and did not see succeed (it was interrupted, timed out, or " +
			"could not identify its backup); null otherwise. A destroy before `counts_until` follows this backup instead of " +
			"queueing another, and goes ahead only if it succeeds; a later destroy takes a new backup. Any apply that plans " +
			"changes and is not a destroy clears it (the plan shows it going to null), because the data may have changed since; " +
			"a refresh (`-refresh-only`) keeps it.",
		Attributes: map[string]schema.Attribute{
			"backup_id":    schema.StringAttribute{Computed: true, Description: "ID of the backup; null when the destroy could not identify it (it is then looked for above the backups listed just before its trigger)."},
			"triggered_at": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: "When the backup was triggered (RFC 3339)."},
			"counts_until": schema.StringAttribute{Computed: true, CustomType: timetypes.RFC3339Type{}, Description: "Until when the backup stands for a destroy (RFC 3339): the interrupted or timed-out destroy plus its `resume_within`."},
		},
	}
}

// destroyRecord is the record a guard's stopped destroy left; an unreadable one is none (a new backup).
func destroyRecord(ctx context.Context, private privateGetter) workflow.Record {
	stored, _ := private.GetKey(ctx, workflow.Key)
	r, _ := workflow.Decode(stored) // the zero Record with any error
	return r
}
