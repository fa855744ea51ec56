// Command noopread is the provider with one change, made at the plugin
// protocol: refreshing a backup_trigger returns its state as it was,
// without a request. make bench measures with it the floor of a refresh,
// what Terraform and the protocol cost when the provider's reads cost
// nothing. The provider package does not know this build exists.
package main

import (
	"context"
	"log"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/backup-service/terraform-provider-backup/internal/provider"
)

// noopRead answers ReadResource of backup_trigger with the prior state.
type noopRead struct{ tfprotov6.ProviderServer }

func (s noopRead) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != "backup_trigger" {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

func main() {
	// As the released binary does (main.go): no SDK logging unless asked,
	// so that the floor is measured under the same conditions.
	logging := false
	for _, kv := range os.Environ() {
		if name, value, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "TF_LOG") && value != "" {
			logging = true
		}
	}
	if !logging {
		_ = os.Setenv("TF_LOG_SDK", "off")
		_ = os.Setenv("TF_LOG_PROVIDER_BACKUP", "off")
	}
	server := providerserver.NewProtocol6(provider.New("bench-noopread")())
	err := tf6server.Serve("registry.terraform.io/backup-service/backup", func() tfprotov6.ProviderServer {
		return noopRead{server()}
	})
	if err != nil {
		log.Fatal(err)
	}
}
