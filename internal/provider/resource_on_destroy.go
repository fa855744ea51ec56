package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

const (
	defaultDestroyTimeout = 30 * time.Minute
	// privateDestroyBackup holds the backup a destroy began and did not see
	// succeed (interrupted, timed out, or not yet identified), so that
	// destroying again follows it instead of queueing a second one.
	privateDestroyBackup = "destroy_backup"
)

var (
	_ resource.ResourceWithConfigure      = (*onDestroyResource)(nil)
	_ resource.ResourceWithValidateConfig = (*onDestroyResource)(nil)
)

// onDestroyResource is backup_on_destroy: creating it takes no backup;
// destroying it (destroy, removal from the configuration, replacement)
// takes one and waits for it to succeed, and fails the destroy otherwise,
// so that Terraform keeps what depends on it.
type onDestroyResource struct {
	data *providerData
}

type onDestroyModel struct {
	ID         types.String   `tfsdk:"id"`
	AccountID  types.String   `tfsdk:"account_id"`
	OnConflict types.String   `tfsdk:"on_conflict"`
	Timeouts   timeouts.Value `tfsdk:"timeouts"`
}

// destroyBackup is what a destroy that did not finish recorded.
type destroyBackup struct {
	BackupID    string    `json:"backup_id,omitempty"`
	TriggeredAt time.Time `json:"triggered_at"`
	// Confirmed: the service accepted the trigger (see
	// client.UnidentifiedError.Queued).
	Confirmed bool `json:"confirmed"`
}

func newOnDestroyResource() resource.Resource { return &onDestroyResource{} }

func (r *onDestroyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_on_destroy"
}

func (r *onDestroyResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Takes one backup of an account when this resource is destroyed, waits for it to succeed, and fails the " +
			"destroy otherwise. Creating it takes no backup (it checks that the account exists). Give it " +
			"`depends_on = [<the resource that holds the account's data>]`: Terraform then destroys this one first, so the " +
			"backup is taken, and has succeeded, before that resource goes, and a failed backup stops the destroy with that " +
			"resource kept. It works on every Terraform and OpenTofu version the provider " +
			"supports, for `terraform destroy`, removal from the configuration and replacement.",
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
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Delete: true,
				DeleteDescription: "How long the destroy may take, waits included (for a backup already in progress, and for " +
					"completion), as a positive duration such as `30m`. Defaults to `30m`.",
			}),
		},
	}
}

func (r *onDestroyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *onDestroyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, "delete", &resp.Diagnostics)
}

// Create checks the account, so that a mistyped or foreign account fails
// the apply that adds the guard, not the destroy it exists for.
func (r *onDestroyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	accountID := m.AccountID.ValueString()
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
	var m onDestroyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
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
	}
}

// Update stores on_conflict and timeouts; it takes no backup.
func (r *onDestroyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete takes the backup and waits for it. When it cannot see it succeed
// it fails, so that Terraform keeps this resource and everything this
// resource depends on, and records the backup it began: destroying again
// follows that backup rather than queueing another.
func (r *onDestroyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m onDestroyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
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
	var earlier destroyBackup
	if raw, ds := req.Private.GetKey(ctx, privateDestroyBackup); len(raw) > 0 {
		resp.Diagnostics.Append(ds...)
		_ = json.Unmarshal(raw, &earlier) // unreadable: take a new backup
	}

	b, err := r.backUp(ctx, accountID, earlier, opts)
	if err == nil && b != nil && b.Status == client.StatusSuccess {
		tflog.Info(ctx, "backup before destroy succeeded", map[string]any{"backup_id": b.ID})
		return
	}

	// The destroy fails: record what the next one follows. What was
	// recorded stays unless this destroy learnt better: a transient error
	// must not make the next destroy queue a second backup.
	var next *destroyBackup
	if earlier != (destroyBackup{}) {
		next = &earlier
	}
	var ue *client.UnidentifiedError
	var we *client.WaitError
	switch {
	case errors.Is(err, client.ErrBackupFailed):
		next = nil // the next destroy takes a new backup
	case errors.As(err, &ue):
		next = &destroyBackup{TriggeredAt: ue.TriggeredAt, Confirmed: ue.Queued}
	case errors.As(err, &we) && we.Backup.ID != "":
		next = &destroyBackup{BackupID: we.Backup.ID, TriggeredAt: we.Backup.CreatedAt, Confirmed: true}
	}
	var mark []byte
	if next != nil {
		mark, _ = json.Marshal(next)
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateDestroyBackup, mark)...)

	switch {
	case b == nil && err != nil:
		addTriggerError(&resp.Diagnostics, destroyCaller, accountID, timeout, err)
	case errors.As(err, &we) && errors.Is(err, context.Canceled):
		// An interrupt is only a warning for a create; here it must stop
		// the destroy.
		resp.Diagnostics.AddError("Destroy interrupted while waiting for the backup",
			fmt.Sprintf("Backup %s of account %s was %s when the wait was interrupted after %s. It goes on in the Backup Service. %s",
				we.Backup.ID, accountID, we.Backup.Status, we.Waited.Round(time.Second), destroyCaller.interrupted))
	default:
		reportWait(&resp.Diagnostics, destroyCaller, accountID, timeout, err)
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.AddError("Backup before destroy did not succeed",
			fmt.Sprintf("The backup of account %s could not be seen to succeed; the destroy stops here.", accountID))
	}
}

// backUp follows the backup an earlier destroy began, or takes a new one.
func (r *onDestroyResource) backUp(ctx context.Context, accountID string, earlier destroyBackup, opts client.RunOptions) (*client.Backup, error) {
	c := r.data.client
	switch {
	case earlier.BackupID != "":
		b, err := c.FindBackup(ctx, accountID, earlier.BackupID)
		if err != nil {
			return nil, err
		}
		tflog.Info(ctx, "following the backup an earlier destroy began", map[string]any{"backup_id": b.ID, "status": b.Status})
		switch {
		case client.InProgress(b.Status):
			opts.Progress(client.Event{Kind: client.EventQueued, Backup: *b})
			return c.WaitForBackup(ctx, *b, opts.Poll, opts.Progress)
		case b.Status == client.StatusSuccess:
			return b, nil
		}
		// It failed: this destroy takes a new one.
	case !earlier.TriggeredAt.IsZero():
		tflog.Info(ctx, "looking for the backup an earlier destroy triggered", map[string]any{"triggered_at": earlier.TriggeredAt})
		return c.ResumeTrigger(ctx, accountID, earlier.TriggeredAt, earlier.Confirmed, opts)
	}
	return c.RunBackup(ctx, accountID, opts)
}
