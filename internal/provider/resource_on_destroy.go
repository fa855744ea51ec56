package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/lifecycle"
)

const defaultDestroyTimeout = 30 * time.Minute

var (
	_ resource.ResourceWithConfigure      = (*onDestroyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*onDestroyResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*onDestroyResource)(nil)
)

// onDestroyResource is backup_on_destroy: creating it takes no backup;
// destroying it (destroy, removal from the configuration, replacement)
// takes one and waits for it to succeed, and fails the destroy otherwise,
// so that Terraform keeps what depends on it.
type onDestroyResource struct{ backupResource }

type onDestroyModel struct {
	ID         types.String   `tfsdk:"id"`
	AccountID  types.String   `tfsdk:"account_id"`
	OnConflict types.String   `tfsdk:"on_conflict"`
	Pending    types.Object   `tfsdk:"pending_destroy_backup"`
	Timeouts   timeouts.Value `tfsdk:"timeouts"`
}

func newOnDestroyResource() resource.Resource {
	return &onDestroyResource{backupResource{timeout: "delete"}}
}

func (r *onDestroyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_on_destroy"
}

func (r *onDestroyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Takes one backup of an account when this resource is destroyed, waits for it to succeed, and fails the " +
			"destroy otherwise. Creating it takes no backup (it checks that the account exists and, with the provider's " +
			"`organization_id`, that the key belongs to that organization). Give it " +
			"`depends_on = [<the resource that holds the account's data>]`: Terraform then destroys this one first, so the " +
			"backup is taken, and has succeeded, before that resource goes, and a failed backup stops the destroy with that " +
			"resource kept. That guards `terraform destroy` and removal of that resource from the configuration. To guard its " +
			"replacement too, add `lifecycle { replace_triggered_by = [<that resource>.id] }`: `depends_on` alone does not " +
			"replace this resource when that one is replaced, so no backup is taken; `.id` changes only on replacement, so an " +
			"in-place update of that resource takes no backup. It works on every Terraform and OpenTofu version the provider " +
			"supports. A destroy uses `on_conflict` and `timeouts.delete` as stored in the state: to change them for a destroy, " +
			"apply the change first.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				Description: "The account ID.",
			},
			"account_id": schema.StringAttribute{
				Required:      true,
				Description:   "ID of the account to back up on destroy: `acc_` followed by exactly 16 letters or digits. Changing it destroys this resource, which backs up the old account.",
				Validators:    []validator.String{accountIDValidator()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"on_conflict": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(onConflictWait),
				Description: "What the destroy does when a backup of the account is already in progress: `wait` (the default) waits " +
					"for it, then takes a new one, so that the backup reflects the data as it is destroyed; `fail` fails the destroy.",
				Validators: []validator.String{stringvalidator.OneOf(onConflictWait, onConflictFail)},
			},
			"pending_destroy_backup": pendingAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": resourceTimeoutsBlock("delete",
				"How long the destroy may take, waits included (for a backup already in progress, and for "+
					"completion), as a positive duration such as `30m`. Defaults to `30m`."),
		},
	}
}

// ModifyPlan checks, for a guard planned for creation, that the key belongs
// to the provider's organization_id (one token read per process, none
// without organization_id): a guard that could never back up fails at
// plan, not at the destroy it exists for. For any other plan that is not
// a destroy, it plans the pending destroy-time backup away: once the
// guarded data may have changed, that backup no longer stands for a
// destroy, and users see the record being cleared.
func (r *onDestroyResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // a destroy: Delete decides whether the record still counts
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingNull())...)
	if req.State.Raw.IsNull() {
		checkOrganizationAtPlan(ctx, r.data, req.Plan, "backup_on_destroy", &resp.Diagnostics)
	}
}

// Create checks the account and the key's organization, so that a
// mistyped or foreign account, or a key of another organization, fails the
// apply that adds the guard, not the destroy it exists for.
func (r *onDestroyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	m, ok := decode[onDestroyModel](ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	accountID := m.AccountID.ValueString()
	if err := r.data.client.CheckOrganization(ctx); err != nil {
		addOrganizationError(&resp.Diagnostics, "backup_on_destroy of account "+accountID, err)
		return
	}
	m.Pending = pendingNull()
	if _, err := r.data.client.Account(ctx, accountID); err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read account %s for backup_on_destroy", accountID), err)
		return
	}
	m.ID = m.AccountID
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read checks that the account still exists: a guard of an account the
// service no longer knows can back nothing up, and is removed with a
// warning (the plan then proposes to create it again, which fails while
// the account is missing).
func (r *onDestroyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	// The same check as finished triggers' refresh, shared across the
	// command: one GET each for the first few, then one listing of every
	// account, however many guards the configuration holds.
	accountID := m.AccountID.ValueString()
	exists, report, err := r.data.command.accountExists(ctx, r.data.client, accountID)
	switch {
	case err != nil && report:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to check that account %s of backup_on_destroy still exists", accountID), err)
	case err != nil:
		// Another resource reports this shared failure; the plan fails on it.
	case !exists:
		resp.Diagnostics.AddWarning("Backup on destroy removed from state",
			fmt.Sprintf("The Backup Service no longer knows account %s (deleted, or no longer visible to this API key): "+
				"there is nothing to back up when it is destroyed, so the guard is removed from the state.", accountID))
		resp.State.RemoveResource(ctx)
		return
	}
	// A record written by a release without pending_destroy_backup is
	// shown too, so that a plan clears it visibly like any other.
	if rec := destroyRecord(ctx, req.Private); rec.Phase != lifecycle.None && m.Pending.IsNull() {
		timeout, diags := m.Timeouts.Delete(ctx, defaultDestroyTimeout)
		resp.Diagnostics.Append(diags...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("pending_destroy_backup"), pendingObject(rec, timeout))...)
	}
}

// Update stores on_conflict and timeouts and clears the pending
// destroy-time backup (see ModifyPlan); it takes no backup.
func (r *onDestroyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	m.Pending = pendingNull()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	saveRecord(ctx, resp.Private, lifecycle.Record{}, &resp.Diagnostics)
}

// Delete takes the backup and waits for it. When it cannot see it succeed
// it fails, so that Terraform keeps this resource and everything this
// resource depends on, and records the backup it began: destroying again
// follows that backup rather than queueing another.
func (r *onDestroyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, ok := decode[onDestroyModel](ctx, req.State, &resp.Diagnostics)
	if !ok {
		return
	}
	timeout, diags := m.Timeouts.Delete(ctx, defaultDestroyTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := m.AccountID.ValueString()
	ctx, cancel := boundedFor(ctx, r.data.client, timeout, accountID)
	defer cancel()
	opts := client.RunOptions{
		WaitOnConflict:    m.OnConflict.ValueString() != onConflictFail,
		WaitForCompletion: true,
		Poll:              r.data.poll,
		Progress:          logProgress(ctx),
	}
	now := r.data.client.Now()
	earlier := destroyRecord(ctx, req.Private)
	if earlier.Phase != lifecycle.None && !earlier.StandsForDestroy(now, timeout) {
		// It stood for a destroy that stopped more than timeouts.delete
		// ago: the data may have changed since, so it is not this one's.
		tflog.Info(ctx, "the backup an earlier destroy began no longer counts for this one; taking a new backup",
			map[string]any{"backup_id": earlier.BackupID, "counts_until": earlier.Until(timeout)})
		earlier = lifecycle.Record{}
	}

	b, err := r.backUp(ctx, accountID, earlier, opts)
	if err == nil && b != nil && b.Status == client.StatusSuccess {
		tflog.Info(ctx, "backup before destroy succeeded", map[string]any{"backup_id": b.ID})
		return
	}

	// The destroy fails: record what the next one follows, for
	// timeouts.delete from now (lifecycle.Record.AfterStoppedDestroy).
	next := earlier.AfterStoppedDestroy(b, err, r.data.client.Now(), timeout)
	saveRecord(ctx, resp.Private, next, &resp.Diagnostics)
	pending := pendingNull()
	if next.Phase != lifecycle.None {
		pending = pendingObject(next, timeout)
	}
	// The kept state shows the record: Terraform stores the state a failed
	// destroy returns.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("pending_destroy_backup"), pending)...)

	if b == nil && err != nil {
		addTriggerError(&resp.Diagnostics, destroyCaller, accountID, timeout, err)
	} else {
		reportWait(&resp.Diagnostics, destroyCaller, accountID, timeout, err)
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Backup before destroy did not succeed",
			fmt.Sprintf("The backup of account %s could not be seen to succeed; the destroy stops here.", accountID))
	}
}

// backUp follows the backup an earlier destroy began, while it counts
// for this one (lifecycle.CountsForDestroy), or takes a new one.
func (r *onDestroyResource) backUp(ctx context.Context, accountID string, earlier lifecycle.Record, opts client.RunOptions) (*client.Backup, error) {
	c := r.data.client
	if earlier.Phase == lifecycle.None {
		return c.RunBackup(ctx, accountID, opts)
	}
	tflog.Info(ctx, "following the backup an earlier destroy began", map[string]any{"record": earlier.String()})
	return c.Follow(ctx, accountID, earlier.Known(), client.FollowOptions{RunOptions: opts, Counts: lifecycle.CountsForDestroy, Renew: true})
}
