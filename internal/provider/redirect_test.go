package provider

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// keyCollector plays a host that a redirect would send requests to: it
// counts them, and the API keys they carry.
type keyCollector struct {
	mu             sync.Mutex
	requests, keys int
}

func (k *keyCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.requests++
	if r.Header.Get("X-API-Key") != "" {
		k.keys++
	}
	w.WriteHeader(http.StatusNotFound)
}

// TestAccRedirectToAnotherHostIsRefused: a service that redirects every
// request elsewhere fails the data source at plan time and the trigger at
// apply time, clearly; the other host never sees a request, and no backup
// is queued.
func TestAccRedirectToAnotherHostIsRefused(t *testing.T) {
	collector := &keyCollector{}
	other := httptest.NewServer(collector)
	t.Cleanup(other.Close)
	e := newTestEnv(t, mockservice.Options{Seed: 1401})
	acct := e.srv.AccountIDs()[0]
	e.srv.AddFault(mockservice.Fault{Kind: mockservice.FaultRedirect, Location: other.URL})

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "backup_token" "current" {}`),
				ExpectError: expectError("Unable to read backup_token", "GET /api/v1/token: HTTP 307 redirect to "+other.URL+"/api/v1/token", "not followed", "Set base_url"),
			},
			{
				Config: e.config(triggerConfig(acct, "")),
				ExpectError: expectError("Unable to trigger a backup of account "+acct,
					"HTTP 307 redirect to "+other.URL+"/api/v1/accounts/"+acct+"/backup", "the API key is sent only to "+e.url),
			},
		},
	})
	collector.mu.Lock()
	defer collector.mu.Unlock()
	if collector.requests != 0 || collector.keys != 0 {
		t.Errorf("the other host got %d requests, %d with the key; want none", collector.requests, collector.keys)
	}
	if n := e.srv.BackupsQueued(acct); n != 0 {
		t.Errorf("%d backups queued, want none", n)
	}
}
