package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Why an account is stale.
const (
	staleNever      = "never"       // no successful backup
	staleOld        = "old"         // the latest success is older than max_age
	staleUnreadable = "unreadable"  // its backups cannot be read (403)
	staleAhead      = "dated_ahead" // the latest success ended after now: its age cannot be read
)

// staleAccountsDataSource is backup_stale_accounts: the accounts without a successful backup within max_age.
type staleAccountsDataSource struct{ dataSource }

type staleAccountsModel struct {
	MaxAge       duration            `tfsdk:"max_age"`
	Platform     types.String        `tfsdk:"platform"`
	BackupStatus types.String        `tfsdk:"backup_status"`
	ServiceType  types.String        `tfsdk:"service_type"`
	Checked      types.Int64         `tfsdk:"checked"`
	Accounts     []staleAccountModel `tfsdk:"accounts"`
	IDs          []types.String      `tfsdk:"ids"`
	GoneIDs      []types.String      `tfsdk:"gone_ids"`
}

type staleAccountModel struct {
	ID            types.String      `tfsdk:"id"`
	Name          types.String      `tfsdk:"name"`
	Platform      types.String      `tfsdk:"platform"`
	BackupStatus  types.String      `tfsdk:"backup_status"`
	LastSuccessAt timetypes.RFC3339 `tfsdk:"last_success_at"`
	Reason        types.String      `tfsdk:"reason"`
}

func (d *staleAccountsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists the accounts whose latest successful backup is older than `max_age`, or that have none: " +
			"the input of a backup freshness check. A success whose record contradicts itself (no `completed_at`, one before " +
			"`created_at`, or an `error`) is no good backup and does not count.",
		Attributes: map[string]schema.Attribute{
			"max_age": schema.StringAttribute{Required: true, CustomType: durationType{}, Validators: []validator.String{positiveDuration},
				Description: "How old the latest successful backup may be, as a Go duration such as `24h` or `36h30m`, " +
					"measured from its `completed_at` to now."},
			"platform":      accountFilter("platform"),
			"backup_status": accountFilter("backup_status"),
			"service_type":  accountFilter("service_type"),
			"checked": schema.Int64Attribute{Computed: true,
				Description: "How many accounts were checked: those that match the filters and whose backups were read. An account " +
					"whose backups the key may not read (`unreadable`) or that was proven gone (`gone_ids`) is not counted."},
			"accounts": objectList("The stale accounts, in the order of the accounts listing (newest first).", map[string]schema.Attribute{
				"id":            computedString("Account id (`acc_...`)."),
				"name":          computedString("Display name of the account."),
				"platform":      computedString("Lower-case identifier of the platform whose data is backed up."),
				"backup_status": computedString("Status of the account's latest backup, as the accounts listing reports it."),
				"last_success_at": computedTime("When the latest successful backup ended, RFC 3339 in UTC; null when the account " +
					"has none, or its backups cannot be read."),
				"reason": computedString("Why the account is stale: `never` (no successful backup), `old` (the latest is older than " +
					"`max_age`), `unreadable` (the key may not read its backups: 403; a freshness check cannot vouch for it) or " +
					"`dated_ahead` (the latest ended after now on this machine's clock, past a 10 s allowance: a clock set ahead " +
					"dated it, so its age cannot be read, and it cannot vouch for the account)."),
			}),
			"ids": computedStrings("Ids of the stale accounts, in the same order as `accounts`."),
			"gone_ids": computedStrings("Ids of accounts that were listed but that the Backup Service then proved gone when their " +
				"backups were read (deleted since the listing, or outside the key's organization): not checked, and named in a " +
				"warning. Any other failure to read an account's backups (a 404 that is not the service's own answer among them) is an error."),
		},
	}
}

func (d *staleAccountsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *staleAccountsModel) {
		// No account to check reads, downstream, as every account being fresh.
		accounts, ok := newAccountFilters(m.Platform, m.BackupStatus, m.ServiceType).list(ctx, d.data.client, "", "backup_stale_accounts",
			"So checked is 0 and ids is empty: a freshness check built on them passes without checking any account, "+
				"and anything built from ids (for example a backup_trigger action's account_ids) backs up nothing.", &resp.Diagnostics)
		if !ok {
			return
		}
		ids := make([]string, len(accounts))
		for i, a := range accounts {
			ids[i] = a.ID
		}
		step := max(len(accounts)/10, 1)
		outcomes := d.data.client.LatestSuccesses(ctx, ids, func(finished int) {
			if finished%step == 0 || finished == len(accounts) {
				tflog.Info(ctx, "backup_stale_accounts: checking accounts", map[string]any{"checked": finished, "of": len(accounts)})
			}
		})
		if err := ctx.Err(); err != nil {
			resp.Diagnostics.AddError("Unable to check backup freshness", "Interrupted or out of time before every account was checked: "+err.Error())
			return
		}

		now := d.data.clock.Now()
		cutoff := now.Add(-durationOf(m.MaxAge))
		m.Accounts, m.IDs, m.GoneIDs = []staleAccountModel{}, []types.String{}, []types.String{}
		var unreadable, gone, ahead []string
		for i, a := range accounts {
			o := outcomes[i]
			row := staleAccountModel{ID: types.StringValue(a.ID), Name: types.StringValue(a.Name), Platform: types.StringValue(a.Platform),
				BackupStatus: types.StringValue(a.BackupStatus), LastSuccessAt: timetypes.NewRFC3339Null()}
			switch {
			case errors.Is(o.Err, client.ErrGone):
				gone = append(gone, a.ID)
				m.GoneIDs = append(m.GoneIDs, row.ID)
				continue
			case errors.Is(o.Err, client.ErrForbidden):
				row.Reason = types.StringValue(staleUnreadable)
				unreadable = append(unreadable, a.ID)
			case o.Err != nil:
				addAPIError(&resp.Diagnostics, fmt.Sprintf("Unable to read the backups of account %s for backup_stale_accounts", a.ID), o.Err)
				return
			case o.Latest == nil:
				row.Reason = types.StringValue(staleNever)
			default:
				at := client.SuccessTime(o.Latest)
				switch {
				case at.After(now.Add(workflow.DefaultClockAllowance)): // a wrong clock may cost a backup, never make one count
					row.Reason = types.StringValue(staleAhead)
					ahead = append(ahead, a.ID)
				case !at.Before(cutoff):
					continue // fresh
				default:
					row.Reason = types.StringValue(staleOld)
				}
				row.LastSuccessAt = timetypes.NewRFC3339TimeValue(at.UTC())
			}
			m.Accounts = append(m.Accounts, row)
			m.IDs = append(m.IDs, row.ID)
		}
		if len(gone) > 0 {
			resp.Diagnostics.AddWarning(fmt.Sprintf("%s gone since the listing, not checked", plural(len(gone), "account")),
				fmt.Sprintf("The Backup Service listed %s, then proved it does not exist for this API key when its backups were read "+
					"(deleted since the listing, or outside the key's organization). It is not checked, not counted in checked, and "+
					"listed in gone_ids.", listSome(gone, 5, ", ")))
		}
		if len(ahead) > 0 {
			resp.Diagnostics.AddWarning(fmt.Sprintf("The latest successful backup of %s is dated in the future", plural(len(ahead), "account")),
				fmt.Sprintf("The latest successful backup of %s ended after now on this machine's clock, by more than %s: the service's "+
					"clock (or this machine's) is off, so the backup's age cannot be read, and it is listed as stale with reason "+
					"\"dated_ahead\". Check both clocks; it counts once its time has passed.", listSome(ahead, 5, ", "), workflow.DefaultClockAllowance))
		}
		if len(unreadable) > 0 {
			resp.Diagnostics.AddWarning(fmt.Sprintf("The backups of %s could not be read", plural(len(unreadable), "account")),
				fmt.Sprintf("The API key may not read the backups of %s (403), so their freshness is unknown; they are listed as "+
					"stale with reason \"unreadable\". Use a key of a user with access to every account for freshness checks.",
					listSome(unreadable, 5, ", ")))
		}
		// Checked: every account but those gone and those unreadable.
		m.Checked = types.Int64Value(int64(len(accounts) - len(gone) - len(unreadable)))
	})
}
