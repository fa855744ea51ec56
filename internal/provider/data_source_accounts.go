package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// accountsDataSource is backup_accounts: every account of the organization, optionally filtered (here: the API has no filters).
type accountsDataSource struct{ dataSource }

type accountsModel struct {
	Order        types.String   `tfsdk:"order"`
	Platform     types.String   `tfsdk:"platform"`
	BackupStatus types.String   `tfsdk:"backup_status"`
	ServiceType  types.String   `tfsdk:"service_type"`
	Accounts     []accountModel `tfsdk:"accounts"`
	IDs          []types.String `tfsdk:"ids"`
}

func (d *accountsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists every account of the organization, paging through the API, optionally filtered by platform, backup status or service type.",
		Attributes: map[string]schema.Attribute{
			"order":         orderAttribute("the accounts' creation time"),
			"platform":      accountFilter("platform"),
			"backup_status": accountFilter("backup_status"),
			"service_type":  accountFilter("service_type"),
			"accounts":      objectList("The accounts, in the requested order.", accountAttributes()),
			"ids":           computedStrings("Ids of the accounts, in the same order as `accounts`; handy with `for_each = toset(...)`."),
		},
	}
}

func (d *accountsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	readModel(ctx, req, resp, func(m *accountsModel) {
		m.Order = orDefault(m.Order, types.StringValue(string(client.OrderDesc)))
		m.Accounts, m.IDs = []accountModel{}, []types.String{}
		accounts, ok := newAccountFilters(m.Platform, m.BackupStatus, m.ServiceType).list(ctx, d.data.client, client.Order(m.Order.ValueString()),
			"backup_accounts", "So ids and accounts are empty, and anything built from them (for example a backup_trigger action's "+
				"account_ids) backs up nothing.", &resp.Diagnostics)
		if !ok {
			return
		}
		for _, a := range accounts {
			m.Accounts = append(m.Accounts, accountToModel(a))
			m.IDs = append(m.IDs, types.StringValue(a.ID))
		}
	})
}

// What a listing keeps to explain an empty result, bounded against a service answering oddly.
const (
	filterValuesKept     = 50 // distinct values kept per filtered field
	filterValuesShown    = 10 // of those, shown in the warning
	filterNearMissesKept = 5  // values equal to the filter but for white space
	filterValueShownLen  = 64 // characters of one value kept and shown
)

// accountFilters (backup_accounts, backup_stale_accounts) apply while paging and note what they saw, to explain an empty result.
type accountFilters struct {
	set     []*filterField // the filters that are set, in schema order
	listed  int            // accounts listed
	matched int            // accounts every filter matches
}

// filterField is one filter that is set, and what the listing showed of its field.
type filterField struct {
	attr  string
	want  string
	get   func(client.Account) string
	alone int // accounts this filter alone matches
	// others holds distinct values of the field that do not match, up to filterValuesKept; othersLeftOut says more were seen.
	others        map[string]struct{}
	othersLeftOut bool
	// near holds values that differ from want only in surrounding white space: the likeliest typo once case is ignored.
	near map[string]struct{}
}

func newAccountFilters(platform, backupStatus, serviceType types.String) *accountFilters {
	f := &accountFilters{}
	add := func(attr string, v types.String, get func(client.Account) string) {
		if v.IsNull() || v.IsUnknown() {
			return
		}
		f.set = append(f.set, &filterField{attr: attr, want: v.ValueString(), get: get,
			others: map[string]struct{}{}, near: map[string]struct{}{}})
	}
	add("platform", platform, func(a client.Account) string { return a.Platform })
	add("backup_status", backupStatus, func(a client.Account) string { return a.BackupStatus })
	add("service_type", serviceType, func(a client.Account) string { return a.ServiceType })
	return f
}

// filterMatches is the rule of every account filter: case does not matter, white space does.
func filterMatches(want, value string) bool { return strings.EqualFold(want, value) }

// keep reports whether every filter that is set matches a, and notes a.
func (f *accountFilters) keep(a client.Account) bool {
	f.listed++
	all := true
	for _, fl := range f.set {
		all = fl.observe(fl.get(a)) && all
	}
	if all {
		f.matched++
	}
	return all
}

// observe reports whether the filter matches value, and counts a match or notes a value it does not match.
func (fl *filterField) observe(value string) bool {
	if filterMatches(fl.want, value) {
		fl.alone++
		return true
	}
	shown := cut(value, filterValueShownLen)
	if filterMatches(strings.TrimSpace(fl.want), strings.TrimSpace(value)) && len(fl.near) < filterNearMissesKept {
		fl.near[shown] = struct{}{}
	}
	if _, ok := fl.others[shown]; !ok {
		if len(fl.others) < filterValuesKept {
			fl.others[shown] = struct{}{}
		} else {
			fl.othersLeftOut = true
		}
	}
	return false
}

// list pages the accounts once and returns those every filter keeps; when none is, it warns, consequence saying what follows.
func (f *accountFilters) list(ctx context.Context, c *client.Client, order client.Order, dataSource, consequence string,
	diags *diag.Diagnostics,
) ([]client.Account, bool) {
	var kept []client.Account
	for a, err := range c.Accounts(ctx, client.ListOptions{Order: order, Skipped: warnSkipped(diags, dataSource)}) {
		if err != nil {
			addAPIError(diags, "Unable to list accounts for "+dataSource, err)
			return nil, false
		}
		if f.keep(a) {
			kept = append(kept, a)
		}
	}
	f.warnIfEmpty(diags, dataSource, consequence)
	return kept, true
}

// warnIfEmpty warns when the listing kept no account; consequence says what that empty result leads to.
func (f *accountFilters) warnIfEmpty(diags *diag.Diagnostics, dataSource, consequence string) {
	if f.matched > 0 {
		return
	}
	if len(f.set) == 0 {
		// No filter: the listing itself was empty.
		diags.AddWarning("No account is visible to "+dataSource,
			"The API key's organization has no accounts visible to it. "+consequence)
		return
	}
	diags.AddWarning("No account matches the filters of "+dataSource, f.noMatchDetail()+"\n\n"+consequence)
}

// noMatchDetail explains, filter by filter, why none matched.
func (f *accountFilters) noMatchDetail() string {
	if f.listed == 0 {
		return "The API key's organization has no accounts visible to it, so no filter can match one."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The organization has %s visible to the API key, and none matches every filter that is set:", plural(f.listed, "account"))
	alone := ""
	if len(f.set) > 1 {
		alone = " alone"
	}
	for _, fl := range f.set {
		fmt.Fprintf(&b, "\n- %s = %q%s matches %s.", fl.attr, fl.want, alone, plural(fl.alone, "account"))
		if len(fl.near) > 0 {
			near := quotedKeys(fl.near)
			verb := "differs"
			if len(near) > 1 {
				verb = "differ"
			}
			fmt.Fprintf(&b, " %s %s from it only in surrounding white space, which filters do not ignore (they ignore case).",
				strings.Join(near, ", "), verb)
		}
		if fl.alone == 0 {
			fmt.Fprintf(&b, " %s", fl.valuesSentence())
		}
	}
	return b.String()
}

// valuesSentence names, bounded, the values the accounts have for the field.
func (fl *filterField) valuesSentence() string {
	values := quotedKeys(fl.others)
	if len(values) == 1 && !fl.othersLeftOut {
		return fmt.Sprintf("The only %s among the accounts is %s.", fl.attr, values[0])
	}
	shown := values[:min(len(values), filterValuesShown)]
	list := strings.Join(shown, ", ")
	switch more := len(values) - len(shown); {
	case fl.othersLeftOut:
		// Values beyond those kept were not counted, only seen.
		list += fmt.Sprintf(" and at least %d more", more+1)
	case more > 0:
		list += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("The values of %s among the accounts are %s.", fl.attr, list)
}

// cut bounds text to n characters, marking a cut with "…": a value the service sent, a reason.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// quotedKeys are the keys, sorted, each quoted as Go does, so that surrounding spaces and control characters show.
func quotedKeys(m map[string]struct{}) []string {
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%q", k)
	}
	return keys
}
