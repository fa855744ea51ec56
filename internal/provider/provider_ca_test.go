package provider

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// A service behind a certificate of a private CA: refused, with advice
// naming ca_cert_file and ca_cert_pem, until the CA is given by either;
// a PEM or a file without a certificate is refused at validate time.
func TestAccProviderPrivateCA(t *testing.T) {
	e := newTestEnv(t, mockservice.Options{Seed: 2101})
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	ts.StartTLS()
	t.Cleanup(ts.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte(caPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(extra string) string {
		return withProvider(fmt.Sprintf("provider \"backup\" {\n  base_url = %q\n  api_key  = %q\n%s}\ndata \"backup_token\" \"t\" {}\n", ts.URL, e.key, extra))
	}
	named := []statecheck.StateCheck{str("data.backup_token.t", "name", mockservice.DemoKeyName)}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{
			{Config: cfg(""), ExpectError: expectError("not trusted", "ca_cert_file or ca_cert_pem", "Retrying cannot help")},
			{Config: cfg("  ca_cert_pem = \"not a certificate\"\n"), ExpectError: expectError("Invalid CA certificates", "ca_cert_pem holds no PEM certificate")},
			{Config: cfg("  ca_cert_file = \"/nonexistent/ca.pem\"\n"), ExpectError: expectError("Unreadable CA certificate file")},
			{Config: cfg(fmt.Sprintf("  ca_cert_pem = %q\n", caPEM)), ConfigStateChecks: named},
			{Config: cfg(fmt.Sprintf("  ca_cert_file = %q\n", caFile)), ConfigStateChecks: named},
		},
	})
}
