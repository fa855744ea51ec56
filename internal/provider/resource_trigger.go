package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
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

// defaultCreateTimeout bounds a create, waits included.
const defaultCreateTimeout = 30 * time.Minute

var (
	_ resource.ResourceWithConfigure      = (*triggerResource)(nil)
	_ resource.ResourceWithImportState    = (*triggerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*triggerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*triggerResource)(nil)
	_ resource.ResourceWithIdentity       = (*triggerResource)(nil)
)

// triggerResource is backup_trigger: one on-demand backup, taken when the
// resource is created (or replaced, when account_id or triggers change).
type triggerResource struct{ backupResource }

func (r *triggerResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_trigger"
	// A trigger recorded before its backup could be identified has the
	// identity { account_id, id = null } until a later read finds it.
	resp.ResourceBehavior.MutableIdentity = true
}

func (r *triggerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// Kept from the state unless the plan of an update says otherwise
	// (planUpdate).
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "Triggers one on-demand backup of an account when it is created or replaced (a change of `account_id` or " +
			"`triggers`), and follows its outcome. With `wait_for_completion`, what depends on it runs only after the backup succeeded.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "ID of the backup this resource queued (`bkp_...`).",
			},
			"account_id": schema.StringAttribute{
				Required:      true,
				Description:   "ID of the account to back up: `acc_` followed by exactly 16 letters or digits. Changing it takes a new backup.",
				Validators:    []validator.String{accountIDValidator()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"triggers": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Arbitrary values; a change of any value takes a new backup, for example `{ release = var.release }`. " +
					"Entries whose value is null count as absent, and an empty map is the same as no map, so adding `{}` or " +
					"`{ a = null }` takes no backup. A trigger adopted by import takes the configuration's `triggers` without a new backup.",
			},
			"wait_for_completion": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Wait, within `timeouts.create`, until the backup has finished, and fail the apply unless it succeeded; " +
					"an interrupted or timed-out wait is resumed, not retaken, by the next apply. Defaults to `false`: the apply " +
					"returns once the backup is queued.",
			},
			"on_conflict": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(onConflictWait),
				Description: "What to do when a backup of the account is already in progress: `wait` (the default) waits for it to finish, " +
					"within `timeouts.create`, then queues a new one, so that the backup reflects this apply; `fail` fails the apply.",
				Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)},
			},
			"reuse_within": schema.StringAttribute{
				Optional:    true,
				Description: reuseWithinDescription("create"),
				CustomType:  timetypes.GoDurationType{}, Validators: []validator.String{positiveDuration{}},
			},
			"reused": schema.BoolAttribute{
				Computed: true, PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
				Description: "Whether this trigger's create queued no backup because a recent one counted for it (`reuse_within`): " +
					"true also for a retried apply that follows the backup its own killed run queued.",
			},
			"backup_status": schema.StringAttribute{
				Computed: true, PlanModifiers: keep,
				Description: "Status of the backup when last read: `pending`, `running`, `success` or `failed` " +
					"(the service may add values; only `success` is a good backup).",
			},
			"triggered_at": schema.StringAttribute{
				Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup was queued, RFC 3339 in UTC, on the Backup Service's clock (for a reused backup, when whoever " +
					"took it queued it; for one not identified yet, when its trigger was sent, on this machine's clock).",
			},
			"completed_at": schema.StringAttribute{
				Computed: true, CustomType: timetypes.RFC3339Type{}, PlanModifiers: keep,
				Description: "When the backup ended, RFC 3339 in UTC; null while it is in progress.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("create",
				"How long creation may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Also bounds a resumed wait. Defaults to `30m`."),
		},
	}
}

func (r *triggerResource) runOptions(ctx context.Context, m *triggerModel) workflow.RunOptions {
	return workflow.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() == onConflictWait,
		WaitForCompletion: m.WaitForCompletion.ValueBool(),
		ReuseWithin:       durationOf(m.ReuseWithin),
		Progress:          progress(ctx, nil, m.AccountID.ValueString()),
	}
}

func (r *triggerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := plan.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, r.data.clock, timeout, accountID)
	defer cancel()

	o, after := r.runOrAdopt(ctx, &plan, r.runOptions(ctx, &plan))
	r.record(ctx, &plan, workflow.Record{Since: after}, o, createCaller, timeout, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

// record saves what a create or an update learnt of the trigger's backup:
// the record, in the state and in private state, and says what follows.
// A trigger whose backup is known is saved even after an error (a create
// is then tainted); one without a backup, unless unidentified, is not.
func (r *triggerResource) record(ctx context.Context, m *triggerModel, prior workflow.Record, o workflow.Outcome, by caller,
	timeout time.Duration, private privateSetter, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics,
) {
	switch o.Kind {
	case workflow.NotIdentified:
		recordUnidentified(ctx, m, prior, o, private, diags, by)
	case workflow.Refused, workflow.ConflictNotOver, workflow.Unreadable:
		report(diags, by, timeout, o)
		if by != createCaller || prior.Since.IsZero() {
			return
		}
		// A replacement that queued no backup: saved without one, so
		// tainted, to tell the next attempt when the replaced change went
		// ahead (Terraform forgets a create that fails without a state).
		rec := workflow.Record{Since: prior.Since}
		m.setRecord(rec)
		saveRecord(ctx, private, rec, diags)
	default:
		rec := prior.After(o)
		if rec.AheadAt.IsZero() && o.Good(m.WaitForCompletion.ValueBool()) {
			rec.AheadAt = r.data.runner.ServiceNow() // the next change's backups start after it
		}
		m.setRecord(rec)
		saveRecord(ctx, private, rec, diags)
		report(diags, by, timeout, o)
	}
	diags.Append(state.Set(ctx, m)...)
	setIdentity(ctx, identity, m.AccountID.ValueString(), m.ID.ValueString(), diags)
}

// Read refreshes the backup's outcome, through the trigger's record. A
// finished backup never changes again and cannot be deleted, so for a
// finished trigger only its account's existence can change: that is
// checked through the command state (one request, or a share of one
// listing of every account) instead of paging the account's backups,
// which cost a request per 50 newer backups. A backup in progress is the
// account's newest (the service refuses a second one), so reading it
// costs one. Only the attributes that changed are set.
func (r *triggerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, ok := decode[triggerModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID, backupID := m.AccountID.ValueString(), m.ID.ValueString()
	if resp.Identity != nil && req.Identity != nil && req.Identity.Raw.IsNull() {
		// State from before identities (or from Terraform before 1.12, which
		// keeps none): the framework wants one after every Read, even one
		// that removes the resource.
		setIdentity(ctx, resp.Identity, accountID, backupID, &resp.Diagnostics)
	}
	rec, ok := triggerRecord(ctx, &m, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	switch {
	case rec.Phase == workflow.PhaseNone:
		return // no backup to refresh: a refused replacement, tainted
	case rec.Phase == workflow.PhaseUnidentified:
		if !m.WaitForCompletion.ValueBool() {
			r.readUnidentified(ctx, &m, rec, resp)
		}
		// Else the next apply identifies it and waits for it, in an update
		// or in the replacement of a tainted trigger: both look for it by
		// triggered_at, which a refresh must therefore keep.
		return
	case rec.Finished():
		_, report, err := r.data.command.account(ctx, r.data.client, accountID)
		switch {
		case errors.Is(err, client.ErrGone):
			removeTrigger(ctx, resp, accountID, backupID, err)
		case err != nil && report:
			addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to check that account %s of backup %s still exists", accountID, backupID), err)
		case err != nil:
			// Another resource reports this shared failure; the plan fails on it.
		}
		return
	}
	b, err := r.data.client.FindBackup(ctx, accountID, backupID)
	var missing *client.BackupNotFoundError
	switch {
	case rec.Phase == workflow.PhaseImported && rec.Status == "" && (errors.Is(err, client.ErrGone) || errors.As(err, &missing)):
		// The read that completes an import fails naming the ids, rather
		// than leaving Terraform's generic "non-existent remote object".
		addImportNotFound(&resp.Diagnostics, accountID, backupID, err)
		return
	case errors.Is(err, client.ErrGone):
		removeTrigger(ctx, resp, accountID, backupID, err)
		return
	case errors.As(err, &missing):
		// Records are never deleted while their account lives: a listing
		// without this one lags, or is not the service's. It proves nothing.
		resp.Diagnostics.AddError(fmt.Sprintf("Backup %s of account %s is missing from the account's backups", backupID, accountID),
			fmt.Sprintf("The account's backups listing does not hold backup %s, which this trigger recorded. The Backup Service never "+
				"deletes a backup while its account exists, so the listing is behind, or not the service's (a proxy, another base_url): "+
				"the trigger is kept as it is. Check base_url and try again.", backupID))
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read backup %s of account %s", backupID, accountID), err)
		return
	}
	r.refreshed(ctx, &m, rec, rec.Observe(*b), resp)
}

// refreshed sets what a refresh learnt: the attributes that changed, and
// the record when it did.
func (r *triggerResource) refreshed(ctx context.Context, m *triggerModel, prior, now workflow.Record, resp *resource.ReadResponse) {
	if now == prior {
		return
	}
	next := *m
	next.setRecord(now)
	for _, a := range []struct {
		name     string
		was, now attr.Value
	}{
		{"id", m.ID, next.ID}, {"backup_status", m.BackupStatus, next.BackupStatus},
		{"triggered_at", m.TriggeredAt, next.TriggeredAt}, {"completed_at", m.CompletedAt, next.CompletedAt},
	} {
		if !a.now.Equal(a.was) {
			resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(a.name), a.now)...)
		}
	}
	saveRecord(ctx, resp.Private, now, &resp.Diagnostics)
}

// removeTrigger removes a trigger whose account the service proved gone
// (gone matches client.ErrGone); nothing else removes one.
func removeTrigger(ctx context.Context, resp *resource.ReadResponse, accountID, backupID string, gone error) {
	resp.Diagnostics.AddWarning("Backup trigger removed from state",
		describeError(gone, fmt.Sprintf("The Backup Service proved that backup %s of account %s can no longer be read: the account "+
			"does not exist for this API key (it was deleted, or is outside the key's organization). The trigger is removed from "+
			"the state, so the plan proposes to create it again, which fails while the account is missing.", backupID, accountID)))
	resp.State.RemoveResource(ctx)
}

// ModifyPlan checks, for a trigger planned for creation, the key's
// organization against organization_id (one token read per process, none
// without it), so that a key of another organization fails the plan. For
// an update it decides, once, what the change means for the backup
// (planUpdate).
func (r *triggerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	switch {
	case req.State.Raw.IsNull() && !req.Plan.Raw.IsNull():
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_trigger", &resp.Diagnostics)
	case !req.State.Raw.IsNull() && !req.Plan.Raw.IsNull():
		r.planUpdate(ctx, req, resp)
	}
}

// Update takes no new backup. It stores how the resource behaves (waits,
// conflicts, timeouts, adopted triggers) and, when the plan says so,
// follows the recorded backup: identifies it, reads it, or resumes
// waiting for it.
func (r *triggerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state triggerModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, ok := triggerRecord(ctx, &state, req.Private, &resp.Diagnostics)
	if !ok {
		return
	}
	rec = rec.Adopted()
	accountID := state.AccountID.ValueString()
	setIdentity(ctx, resp.Identity, accountID, state.ID.ValueString(), &resp.Diagnostics)
	if !plan.BackupStatus.IsUnknown() {
		if rec.AheadAt.IsZero() && rec.Phase != workflow.PhaseNone {
			rec.AheadAt = r.data.runner.ServiceNow() // its change goes ahead now (Next planned no retake)
		}
		saveRecord(ctx, resp.Private, rec, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
		return
	}
	timeout := plan.createTimeout(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	wctx, cancel := boundedFor(ctx, r.data.clock, timeout, accountID)
	defer cancel()
	if rec.Phase != workflow.PhaseUnidentified && plan.WaitForCompletion.ValueBool() {
		tflog.Info(wctx, "waiting for the backup", map[string]any{"backup_id": rec.BackupID, "status": rec.Status})
	}
	opts := r.runOptions(wctx, &plan)
	opts.After = rec.Since
	o := r.data.runner.Follow(wctx, accountID, rec, workflow.FollowOptions{RunOptions: opts})
	r.record(ctx, &plan, rec, o, resumeCaller, timeout, resp.Private, &resp.State, resp.Identity, &resp.Diagnostics)
}

// Delete forgets the resource (backups are never deleted: the resource's
// page says so). It keeps what the trigger's replacement needs to adopt a
// backup still in progress.
func (r *triggerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	state, ok := decode[triggerModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	if r.data != nil {
		r.rememberForReplacement(ctx, &state, req.Private, state.createTimeout(ctx, &resp.Diagnostics))
	}
}
