package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/backup-service/terraform-provider-backup/internal/client"
)

// addAPIError says what failed (summary), then describeError.
func addAPIError(diags *diag.Diagnostics, summary string, err error) {
	diags.AddError(summary, describeError(err))
}

// describeError is the detail text of addAPIError; hints (the operation's) follow the service's explanation, before the request id.
func describeError(err error, hints ...string) string {
	var b strings.Builder
	var apiErr *client.APIError
	var re *client.RetryError
	tail := ""
	joined, ok := err.(interface{ Unwrap() []error })
	if ok && len(joined.Unwrap()) == 2 && err.Error() == joined.Unwrap()[0].Error()+": "+joined.Unwrap()[1].Error() {
		// What failed, then its cause (fmt.Errorf("%w: %w")): a sentence, then the cause told on its own.
		what := joined.Unwrap()[0].Error()
		fmt.Fprintf(&b, "%s%s.\n\n%s", strings.ToUpper(what[:1]), what[1:], describeError(joined.Unwrap()[1]))
	} else if ok && len(joined.Unwrap()) > 1 {
		// Errors one after another, each told on its own, so that none's status or request ID reads as another's.
		for i, e := range joined.Unwrap() {
			if i > 0 {
				b.WriteString("\n\nThen: ")
			}
			b.WriteString(describeError(e))
		}
	} else if errors.As(err, &apiErr) {
		fmt.Fprintf(&b, "The Backup Service answered HTTP %d", apiErr.StatusCode)
		if apiErr.Title != "" {
			fmt.Fprintf(&b, " (%s)", apiErr.Title)
		}
		fmt.Fprintf(&b, " to %s %s.", apiErr.Method, apiErr.Path)
		if apiErr.Detail != "" {
			fmt.Fprintf(&b, "\n\n%s", apiErr.Detail)
		}
		errors.As(err, &re)
		var unproven *client.UnprovenAbsenceError
		if errors.As(err, &unproven) {
			fmt.Fprintf(&b, "\n\nThis does not prove that account %s is gone, so nothing is concluded from it: %s. Check base_url (or "+
				"the %s environment variable, where base_url is not set): the path above is its path followed by the API's.",
				unproven.AccountID, unproven.Why, EnvBaseURL)
		} else if hint := hintFor(apiErr, re); hint != "" {
			fmt.Fprintf(&b, "\n\n%s", hint)
		}
		if re != nil {
			tail = fmt.Sprintf("\n\nThe provider gave up after %s: %s.", plural(re.Attempts, "attempt"), re.Reason)
		}
		if apiErr.RequestID != "" {
			tail += fmt.Sprintf("\n\nRequest ID: %s (quote it to the Backup Service's support).", apiErr.RequestID)
		} else {
			tail += "\n\nThe response carried no request ID: it may not have come from the Backup Service (a proxy, for instance)."
		}
	} else {
		b.WriteString(err.Error())
		if advice := transportAdvice(err); advice != "" {
			tail = "\n\n" + advice
		}
	}
	for _, h := range hints {
		if h != "" { // a caller with nothing to say there
			fmt.Fprintf(&b, "\n\n%s", h)
		}
	}
	return b.String() + tail
}

// transportAdvice says what to do about an error without an answer of the service, naming a setting that can help.
func transportAdvice(err error) string {
	var ce *client.ConnectionError
	var re *client.RetryError
	switch {
	case errors.As(err, &ce):
		switch {
		case errors.Is(ce.Reason, client.ErrUntrustedCertificate):
			return "The certificate of " + ce.Host + " is not trusted by this machine. Behind a TLS-inspecting proxy or with a " +
				"self-hosted service signed by a private CA, give that CA's certificate to the provider with ca_cert_file or " +
				"ca_cert_pem (or add it to the system's trust store). The provider never turns certificate checks off. Retrying cannot help."
		case errors.Is(ce.Reason, client.ErrHostNotFound):
			return "Check the host name in base_url (or " + EnvBaseURL + "): " + ce.Host + " does not resolve from this machine. Retrying cannot help."
		case errors.Is(ce.Reason, client.ErrNotTLS):
			return "The server at " + ce.Host + " answered in plain HTTP to an https:// base_url. Check the port, or, for a service " +
				"on this machine that only speaks plain HTTP, use http:// in base_url. Retrying cannot help."
		}
	case errors.Is(err, client.ErrInconsistentListing):
		return "The listing is out of order or inconsistent: the Backup Service, or a proxy in front of it (a cache, a load balancer, " +
			"a lagging replica), answered pages that contradict each other or the documented newest-first order, at the two records " +
			"named above. Nothing was concluded from it. Try again; if it happens again, report the two records to the service's support."
	case errors.As(err, new(*client.BackupNotFoundError)):
		return "The Backup Service never deletes a backup while its account exists, so a listing that does not hold one this " +
			"provider recorded, or was told of, is behind or not the service's (a proxy, a wrong base_url, another deployment " +
			"behind a load balancer): nothing was concluded from it, and no other backup was queued. Check base_url and try again."
	case errors.As(err, new(*client.ListingError)):
		return "The listing was stopped so that the plan does not page forever or fill memory: the service (or a proxy in front of it) " +
			"is not answering as the API documents. Check base_url."
	case errors.As(err, &re) && re.Cause == client.RetryPastDeadline:
		return "The operation's timeout left no time for another attempt; raise its timeouts setting, or try again later."
	case errors.As(err, &re) && errors.As(err, new(*client.TimeoutError)):
		return "No attempt got an answer within request_timeout; raise request_timeout if the service is slow, or max_retries."
	case errors.As(err, &re):
		return "The request failed on every attempt; check the base URL and the network, or raise max_retries."
	case errors.As(err, new(*client.TimeoutError)):
		return "Raise request_timeout if the service is slow to answer."
	case errors.Is(err, context.DeadlineExceeded):
		return "The operation's timeout (its timeouts setting) ran out first."
	case errors.Is(err, context.Canceled):
		return "The operation was interrupted first (Ctrl-C, or Terraform stopping)."
	}
	return ""
}

// warnSkipped returns a ListOptions.Skipped that warns once of the records of a listing left out.
func warnSkipped(diags *diag.Diagnostics, listing string) func(int, string) {
	return func(count int, example string) {
		diags.AddWarning(fmt.Sprintf("%s of the Backup Service's listing left out", plural(count, "record")),
			fmt.Sprintf("%s left out %s whose id does not have the documented format (a prefix and 16 letters or digits), "+
				"or that name another account than the one listed, for example %s. "+
				"The service, or a proxy in front of it, is not answering as the API documents.", listing, plural(count, "record"), example))
	}
}

// hintFor advises on an answer of the service; re, when not nil, is how the retries ended.
func hintFor(e *client.APIError, re *client.RetryError) string {
	switch e.StatusCode {
	case http.StatusUnauthorized:
		return "The API key was rejected: it is missing, invalid or expired, belongs to another organization, or the user who created it lost access. " +
			"API keys are created and revoked by an organization owner or admin in the Backup Service web application; " +
			"set a valid one in the provider's api_key or the " + EnvAPIKey + " environment variable."
	case http.StatusForbidden:
		return "The API key is valid but lacks permission for this: the resource is outside the key's organization, the permissions of the user " +
			"who created the key changed, or the account is restricted."
	case http.StatusTooManyRequests:
		if re != nil && re.Cause == client.RetryBudgetSpent {
			return "The Backup Service is rate limiting this key (or is under heavy load) for longer than the provider's retry_budget " +
				"allows an operation without timeouts of its own. Raise retry_budget, lower -parallelism, or spread the key's use " +
				"(every process using the key shares its allowance)."
		}
		return "The Backup Service is rate limiting this key (or is under heavy load); lower -parallelism, or raise the operation's timeouts."
	}
	if e.StatusCode >= 500 {
		return "The Backup Service failed; the provider retried where that was safe. Try again later."
	}
	return ""
}

// listSome joins up to n items with sep, and says how many more there are.
func listSome(items []string, n int, sep string) string {
	if len(items) <= n {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s%s… and %d more", strings.Join(items[:n], sep), sep, len(items)-n)
}

// plural is n and noun in the right number: "no account", "1 account", "2 accounts".
func plural(n int, noun string) string {
	switch n {
	case 0:
		return "no " + noun
	case 1:
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// wrongOrganizationHint follows a client.ErrWrongOrganization.
const wrongOrganizationHint = "The provider's organization_id guards against a key of another environment: " +
	"check which key the provider was given (api_key or " + EnvAPIKey + "), or correct organization_id."

// addOrganizationError says why a guard (what) cannot be planned or created: the key's organization; hints follow the answer.
func addOrganizationError(diags *diag.Diagnostics, what string, err error, hints ...string) {
	if errors.Is(err, client.ErrWrongOrganization) {
		diags.AddError("API key of another organization for "+what, describeError(err, append([]string{wrongOrganizationHint}, hints...)...))
		return
	}
	diags.AddError("Unable to check the API key's organization for "+what, describeError(err, hints...))
}

// checkOrganizationAtPlan fails the plan of a new guard of kind whose key is not of organization_id.
func checkOrganizationAtPlan(ctx context.Context, data *providerData, plan tfsdk.Plan, kind string, diags *diag.Diagnostics) {
	if data == nil {
		return
	}
	var accountID types.String
	diags.Append(plan.GetAttribute(ctx, path.Root("account_id"), &accountID)...)
	if err := data.client.CheckOrganization(ctx); err != nil {
		addOrganizationError(diags, kind+" of account "+accountID.ValueString(), err)
	}
}
