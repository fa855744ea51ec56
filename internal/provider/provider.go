// Package provider implements the Terraform provider for the Backup Service.
package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/clock"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// Environment variables read where the attribute is null.
const (
	EnvBaseURL = "BACKUP_BASE_URL"
	EnvAPIKey  = "BACKUP_API_KEY"
)

var (
	_ provider.Provider                  = (*backupProvider)(nil)
	_ provider.ProviderWithListResources = (*backupProvider)(nil)
	_ provider.ProviderWithActions       = (*backupProvider)(nil)
)

// backupProvider is the provider "backup".
type backupProvider struct {
	version string
	// http2Warned: that HTTP/2 is off is logged once, not for each provider configuration.
	http2Warned sync.Once
}

// New returns the provider factory for the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &backupProvider{version: version} }
}

type providerModel struct {
	BaseURL           types.String `tfsdk:"base_url"`
	APIKey            types.String `tfsdk:"api_key"`
	MaxRetries        types.Number `tfsdk:"max_retries"`
	RequestTimeout    duration     `tfsdk:"request_timeout"`
	RetryBudget       duration     `tfsdk:"retry_budget"`
	AllowInsecureHTTP types.Bool   `tfsdk:"allow_insecure_http"`
	CACertFile        types.String `tfsdk:"ca_cert_file"`
	CACertPEM         types.String `tfsdk:"ca_cert_pem"`
	OrganizationID    types.String `tfsdk:"organization_id"`
	KeyExpiryWarning  duration     `tfsdk:"key_expiry_warning"`
	DestroyWithout    types.Object `tfsdk:"destroy_without_backup"`
}

func (p *backupProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "backup"
	resp.Version = p.version
}

func (p *backupProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reads accounts, API key details and audit logs of the Backup Service, and triggers backups.",
		Attributes: map[string]schema.Attribute{
			"base_url": optionalString("Base URL of the Backup Service, without `/api/v1`, for example `https://backup.example.com`. " +
				"Defaults to the `" + EnvBaseURL + "` environment variable, which an empty value does not hide."),
			"api_key": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "API key, sent in the `X-API-Key` header. Keys are created and revoked in the Backup Service web " +
					"application. Defaults to the `" + EnvAPIKey + "` environment variable, which an empty value does not hide."},
			"max_retries": schema.NumberAttribute{Optional: true, Validators: []validator.Number{wholeNumber(0, 20)},
				Description: fmt.Sprintf("How many times a request that failed with a server error (5xx) or a network error is retried "+
					"(a backup trigger only when no second backup can result). Defaults to %d. A rate-limit refusal (429) is not "+
					"counted: it is waited out for as long as the operation's `timeouts` allow, or `retry_budget`.", client.DefaultMaxRetries)},
			"retry_budget": optionalDuration(fmt.Sprintf("How long one request may spend waiting to be retried, as a Go duration such as `5m`. It bounds "+
				"server and network errors always, and rate-limit refusals (429: the key's allowance, shared by every process that "+
				"uses the key, or the service's load) only for operations without `timeouts` of their own: data sources, "+
				"refreshes and imports. A resource or action with `timeouts` waits out 429s until its timeout. Defaults to `%s`.",
				client.DefaultRetryBudget)),
			"request_timeout": optionalDuration(fmt.Sprintf("Timeout of one HTTP request, as a Go duration such as `30s`. Defaults to `%s`.", client.DefaultRequestTimeout)),
			"key_expiry_warning": optionalDuration("Warn in every plan and apply when the API key expires within this long, as a Go duration such " +
				"as `720h`, naming the key and its expiry date. It costs one `GET /token` per provider process, shared with " +
				"the `organization_id` check; `terraform validate` sends nothing. To fail a plan instead, use a `check` block " +
				"or a postcondition on the `backup_token` data source."),
			"allow_insecure_http": schema.BoolAttribute{Optional: true,
				Description: "Allow a plain `http://` base URL for hosts other than loopback. The API key would travel " +
					"in clear: use only on a trusted network. Defaults to `false`."},
			"ca_cert_file": optionalString("Path of a PEM file of CA certificates to trust besides the system's: a private CA of a "+
				"self-hosted service, or a TLS-inspecting proxy's. A file that cannot be read or holds no certificate "+
				"is refused at validate time. Certificate checks are never turned off.", pemValidator(true)),
			"ca_cert_pem": optionalString("PEM of CA certificates to trust besides the system's, as `ca_cert_file` but inline "+
				"(for example `file(\"ca.pem\")` or a variable). Both may be set.", pemValidator(false)),
			"organization_id": optionalString("The id of the organization the API key must belong to, for example `org_8Fq2LmT0aZ7cX1vB`: "+
				"a guard against a key of the wrong environment. Before its first backup (a `backup_trigger`, the "+
				"action, a `backup_on_destroy`), the provider reads the key's organization once (`GET /api/v1/token`) "+
				"and, on a mismatch, fails naming both organizations, with no backup queued. Reads are not checked.", organizationIDValidator()),
			"destroy_without_backup": destroyWithoutBackupAttribute(),
		},
	}
}

// optionalString is an optional string setting of the provider.
func optionalString(description string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Description: description, Validators: validators}
}

// optionalDuration is an optional, positive Go duration setting of the provider.
func optionalDuration(description string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Description: description,
		CustomType: durationType{}, Validators: []validator.String{positiveDuration}}
}

func (p *backupProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	if conf, ok := p.readConfiguration(ctx, req, &resp.Diagnostics); ok {
		p.connect(ctx, conf, resp)
	}
}

// configuration is what the provider block and the environment set: the client's options and the runner's settings (the
// workflow's defaults: the schema sets none of them), from which connect builds both.
type configuration struct {
	model   providerModel
	client  client.Options
	runner  workflow.Settings
	release *guardRelease
}

// readConfiguration reads the provider block, and the environment where the block leaves a setting out.
func (p *backupProvider) readConfiguration(ctx context.Context, req provider.ConfigureRequest, diags *diag.Diagnostics) (configuration, bool) {
	cfg, ok := decode[providerModel](ctx, req.Config, diags)
	if !ok {
		return configuration{}, false
	}
	for _, s := range []struct {
		v         types.String
		attr, env string
	}{{cfg.BaseURL, "base_url", EnvBaseURL}, {cfg.APIKey, "api_key", EnvAPIKey}} {
		if s.v.IsUnknown() {
			diags.AddAttributeError(path.Root(s.attr), "Unknown Backup Service "+s.attr,
				fmt.Sprintf("The provider cannot talk to the Backup Service while %q is unknown at plan time. Set it to a "+
					"known value, or leave it out and set the %s environment variable.", s.attr, s.env))
		}
	}
	if cfg.MaxRetries.IsUnknown() || cfg.RequestTimeout.IsUnknown() || cfg.RetryBudget.IsUnknown() || cfg.AllowInsecureHTTP.IsUnknown() ||
		cfg.CACertFile.IsUnknown() || cfg.CACertPEM.IsUnknown() || cfg.OrganizationID.IsUnknown() {
		diags.AddError("Unknown Backup Service provider setting",
			"max_retries, request_timeout, retry_budget, allow_insecure_http, ca_cert_file, ca_cert_pem and organization_id must be known at plan time.")
	}
	if diags.HasError() {
		return configuration{}, false
	}

	opts := client.Options{
		// A null or empty attribute falls back to the environment: an empty variable must not hide it.
		BaseURL:           cmp.Or(cfg.BaseURL.ValueString(), os.Getenv(EnvBaseURL)),
		APIKey:            cmp.Or(cfg.APIKey.ValueString(), os.Getenv(EnvAPIKey)),
		AllowInsecureHTTP: cfg.AllowInsecureHTTP.ValueBool(),
		UserAgent:         userAgent(p.version, req.TerraformVersion, os.Getenv(EnvAppendUserAgent)),
		Organization:      cfg.OrganizationID.ValueString(),
	}
	if opts.BaseURL == "" {
		diags.AddAttributeError(path.Root("base_url"), "Missing Backup Service base URL",
			"Set base_url in the provider block, or the "+EnvBaseURL+" environment variable (an empty base_url counts as not set).")
	}
	if opts.APIKey == "" {
		diags.AddAttributeError(path.Root("api_key"), "Missing Backup Service API key",
			"Set api_key in the provider block, or the "+EnvAPIKey+" environment variable (an empty api_key counts as not set).")
	}
	opts.MaxRetries = client.DefaultMaxRetries
	if !cfg.MaxRetries.IsNull() {
		opts.MaxRetries = int(wholeValue(cfg.MaxRetries))
	}
	opts.RetryBudget, opts.RequestTimeout = durationOf(cfg.RetryBudget), durationOf(cfg.RequestTimeout) // zero: the client's default
	if pems := caPEMs(cfg, diags); len(pems) > 0 {
		pool, err := client.CertPool(pems...)
		if err != nil {
			diags.AddError("Invalid CA certificates", err.Error())
		}
		opts.RootCAs = pool
	}
	release := releaseFrom(ctx, cfg.DestroyWithout, diags)
	if diags.HasError() {
		return configuration{}, false
	}
	opts.Logger = tfLogger{key: opts.APIKey}
	return configuration{model: cfg, client: opts, release: release}, true
}

// connect builds the client and the runner, and hands them to every kind.
func (p *backupProvider) connect(ctx context.Context, conf configuration, resp *provider.ConfigureResponse) {
	cl, err := client.New(conf.client)
	if err != nil {
		addClientConfigError(&resp.Diagnostics, conf.model, conf.client.BaseURL, conf.client.APIKey, err)
		return
	}
	if cl.HTTP2Off() {
		p.http2Warned.Do(func() {
			tflog.Warn(ctx, "GODEBUG sets http2debug, with which Go's HTTP/2 code logs every request header, the API key "+
				"among them, where no mask reaches: the provider talks to the Backup Service over HTTP/1.1 instead. Terraform's "+
				"own log of its link to the provider is not covered: it shows an api_key set in the configuration (use "+
				EnvAPIKey+" instead)")
		})
	}
	clk := cmp.Or[clock.Clock](conf.client.Clock, clock.Wall{}) // the client's default too
	if d := durationOf(conf.model.KeyExpiryWarning); d > 0 {
		warnKeyExpiry(ctx, cl, clk.Now(), d, &resp.Diagnostics)
	}
	data := &providerData{client: cl, runner: workflow.New(cl, clk, conf.client.Logger, conf.runner), clock: clk, release: conf.release}
	resp.DataSourceData = data
	resp.ResourceData = data
	resp.ActionData = data
	resp.ListResourceData = data
}

// providerData is what Configure hands to everything: it lives for one process, one Terraform command.
type providerData struct {
	client *client.Client
	// runner takes backups through client, and keeps what this process's trigger deletes leave their replacements;
	// clock is theirs: the wall clock, or a test's.
	runner  *workflow.Runner
	clock   clock.Clock
	release *guardRelease // destroy_without_backup; nil when unset
}

// dataFrom takes what Configure handed over; nil (before configuration, as in validation) is no error.
func dataFrom(raw any, diags *diag.Diagnostics) *providerData {
	d, ok := raw.(*providerData)
	if !ok && raw != nil {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", raw))
	}
	return d
}

// dataSource is what every data source shares: its name after the provider's, and the provider's data.
type dataSource struct {
	name string
	data *providerData
}

func (d *dataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.name
}

func (d *dataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// readModel decodes a data source's configuration, has read complete the model and, unless it reported an error, saves it.
func readModel[M any](ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse, read func(*M)) {
	if m, ok := decode[M](ctx, req.Config, &resp.Diagnostics); ok {
		read(&m)
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		}
	}
}

// backupResource is what the trigger and the guard share; timeout names the timeouts setting of their waits.
type backupResource struct {
	data    *providerData
	timeout string
}

func (r *backupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig refuses a timeout that could never let a wait succeed.
func (r *backupResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	validateTimeoutsBlock(ctx, req.Config, r.timeout, &resp.Diagnostics)
}

func (p *backupProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &triggerResource{backupResource{timeout: "create"}} },
		func() resource.Resource { return &onDestroyResource{backupResource{timeout: "delete"}} },
	}
}

func (p *backupProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{func() action.Action { return &triggerAction{} }}
}

func (p *backupProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{func() list.ListResource { return &triggerList{} }}
}

func (p *backupProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource { return &tokenDataSource{dataSource{name: "_token"}} },
		func() datasource.DataSource { return &accountDataSource{dataSource{name: "_account"}} },
		func() datasource.DataSource { return &accountsDataSource{dataSource{name: "_accounts"}} },
		func() datasource.DataSource { return &auditLogsDataSource{dataSource{name: "_audit_logs"}} },
		func() datasource.DataSource { return &accountBackupsDataSource{dataSource{name: "_account_backups"}} },
		func() datasource.DataSource { return &staleAccountsDataSource{dataSource{name: "_stale_accounts"}} },
	}
}

// addClientConfigError points a setting the client refused at its attribute, and says where it came from.
func addClientConfigError(diags *diag.Diagnostics, cfg providerModel, baseURL, key string, err error) {
	from := func(v types.String, attr, env string) string {
		if v.IsNull() || v.ValueString() == "" {
			return "the " + env + " environment variable (used because " + attr + " is not set or empty)"
		}
		return attr
	}
	// Terraform quotes an attribute's configuration line: a base URL that may hold secrets names no attribute.
	baseURLError := diags.AddAttributeError
	if client.BaseURLMayHoldSecrets(baseURL, key) {
		baseURLError = func(_ path.Path, summary, detail string) { diags.AddError(summary, detail) }
	}
	switch {
	case errors.Is(err, client.ErrInsecureURL):
		baseURLError(path.Root("base_url"), "Plain http base URL refused",
			fmt.Sprintf("The base URL, from %s, uses plain http to a host other than loopback: %v. "+
				"Use https, or set allow_insecure_http = true in the provider block to accept it on a trusted network.",
				from(cfg.BaseURL, "base_url", EnvBaseURL), err))
	case errors.Is(err, client.ErrInvalidBaseURL):
		baseURLError(path.Root("base_url"), "Invalid Backup Service base URL",
			fmt.Sprintf("The base URL, from %s: %v.", from(cfg.BaseURL, "base_url", EnvBaseURL), err))
	case errors.Is(err, client.ErrInvalidAPIKey):
		diags.AddAttributeError(path.Root("api_key"), "Invalid Backup Service API key",
			fmt.Sprintf("The API key, from %s: %v.", from(cfg.APIKey, "api_key", EnvAPIKey), err))
	default:
		diags.AddError("Invalid Backup Service provider configuration", err.Error())
	}
}

// EnvAppendUserAgent is read, as HashiCorp's providers read it, for text to append to the User-Agent (a pipeline's name, say).
const EnvAppendUserAgent = "TF_APPEND_USER_AGENT"

// userAgent names the provider and Terraform, then what TF_APPEND_USER_AGENT adds, on one line (a header holds no control characters).
func userAgent(version, terraformVersion, appended string) string {
	ua := fmt.Sprintf("terraform-provider-backup/%s Terraform/%s", version, terraformVersion)
	appended = strings.Join(strings.FieldsFunc(appended, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' }), " ")
	if appended != "" {
		ua += " " + appended
	}
	return ua
}

// warnKeyExpiry warns when the key expires within window of now, from the process's one token read.
func warnKeyExpiry(ctx context.Context, c *client.Client, now time.Time, window time.Duration, diags *diag.Diagnostics) {
	tok, err := c.KeyToken(ctx)
	if err != nil {
		diags.AddWarning("Unable to check when the API key expires",
			describeError(err, "key_expiry_warning is set, but the key's token could not be read; the plan goes on without the check."))
		return
	}
	left := tok.ExpiresAt.Sub(now)
	if left >= window {
		return
	}
	when := "expires in " + left.Round(time.Minute).String()
	switch days := int(left.Round(24*time.Hour) / (24 * time.Hour)); { // 6 days 23 h reads 7 days, as a key made to last 7
	case left <= 0:
		when = "has expired"
	case days >= 2:
		when = fmt.Sprintf("expires in %d days", days)
	}
	diags.AddWarning(fmt.Sprintf("The Backup Service API key %q %s", tok.Name, when),
		fmt.Sprintf("The API key %q of organization %s expires at %s, within key_expiry_warning (%s). Create a new key in the "+
			"Backup Service web application and set it in api_key (or %s) before then: every plan and apply fails once it has expired.",
			tok.Name, tok.Organization.ID, tok.ExpiresAt.UTC().Format(time.RFC3339), window, EnvAPIKey))
}

// tfLogger hands the client's logs to tflog, the API key masked in messages and field values in case any text ever carried it.
type tfLogger struct{ key string }

// mask: the key is never empty, Configure refuses an empty one.
func (l tfLogger) mask(ctx context.Context) context.Context {
	return tflog.MaskMessageStrings(tflog.MaskAllFieldValuesStrings(ctx, l.key), l.key)
}

func (l tfLogger) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(l.mask(ctx), msg, fields)
}

func (l tfLogger) Warn(ctx context.Context, msg string, fields map[string]any) {
	tflog.Warn(l.mask(ctx), msg, fields)
}
