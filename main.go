// Command terraform-provider-backup is the Terraform provider for the Backup
// Service.
package main

import (
	"flag"
	"log"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/backup-service/terraform-provider-backup/internal/provider"
)

// version is set by the build (goreleaser: -X main.version={{.Version}}).
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	if !debug {
		quietSDKUnlessLogging()
	}

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	server, err := provider.NewServer(version)()
	if err != nil {
		log.Fatal(err)
	}
	err = tf6server.Serve("registry.terraform.io/backup-service/backup", func() tfprotov6.ProviderServer { return server }, opts...)
	if err != nil {
		log.Fatal(err)
	}
}

// quietSDKUnlessLogging switches the provider's loggers (the SDK's and its
// own) off when no TF_LOG* variable is set. Terraform passes its environment
// to providers and, in that case, shows none of their logs; but both root
// loggers default to TRACE, and formatting their JSON lines for nothing was
// the largest cost of a plan (BENCHMARKS.md has the profile). With any
// TF_LOG* set, as when a user asks for logs, nothing changes. The SDK's
// subsystems (the framework's, the protocol's) are switched off by name:
// unset, their level is none, and each of their trace lines is built and
// masked before it is dropped (a tenth of a plan's CPU; BENCHMARKS.md).
func quietSDKUnlessLogging() {
	for _, kv := range os.Environ() {
		if name, value, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "TF_LOG") && value != "" {
			return
		}
	}
	for _, name := range quietLoggers {
		_ = os.Setenv(name, "off")
	}
}

// quietLoggers are the loggers switched off when no TF_LOG* is set.
var quietLoggers = []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", "TF_LOG_PROVIDER_BACKUP"}
