package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// cli drives the Terraform (or OpenTofu) binary the acceptance tests use,
// directly, for what the test framework cannot do: interrupt an apply with
// SIGINT, read warnings, -invoke an action. The provider is served from
// this test process (as the framework does), so it talks to the test's
// mock with the test's short poll intervals.
type cli struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

// newCLI serves e's provider and prepares a working directory holding
// config as main.tf.
func newCLI(t *testing.T, e *testEnv, config string) *cli {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	bin := terraformBinary(t)
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	factory := e.factories()["backup"]
	server, err := factory()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := tf6server.Serve("registry.terraform.io/backup-service/backup", func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, reattach, closed), tf6server.WithGoPluginLogger(hclog.NewNullLogger()),
			tf6server.WithLoggingSink(t))
		if err != nil {
			t.Error(err)
		}
	}()
	var cfg *plugin.ReattachConfig
	select {
	case cfg = <-reattach:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	host := "registry.terraform.io"
	if usingOpenTofu {
		host = openTofuRegistry
	}
	attach, err := json.Marshal(map[string]any{host + "/backup-service/backup": map[string]any{
		"Protocol": string(cfg.Protocol), "ProtocolVersion": cfg.ProtocolVersion, "Pid": cfg.Pid, "Test": true,
		"Addr": map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	emptyRC := filepath.Join(dir, ".terraformrc")
	if err := os.WriteFile(emptyRC, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, bin: bin, dir: dir, env: append(os.Environ(),
		"TF_REATTACH_PROVIDERS="+string(attach), "TF_CLI_CONFIG_FILE="+emptyRC, "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "TF_LOG=", "TF_LOG_PATH=")}
	c.run("init", "-input=false", "-no-color")
	return c
}

// newDevCLI prepares dir as a working directory for the provider build in
// pluginDir, which Terraform starts itself (dev_overrides), as users try a
// local build: one provider process per command, ended with it, so that a
// SIGKILL of the command's process group kills the provider too. No init:
// dev_overrides needs none.
func newDevCLI(t *testing.T, bin, pluginDir, dir string) *cli {
	t.Helper()
	rc := filepath.Join(dir, ".terraformrc")
	overrides := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"backup-service/backup\" = %q\n  }\n  direct {}\n}\n", pluginDir)
	if err := os.WriteFile(rc, []byte(overrides), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cli{t: t, bin: bin, dir: dir, env: append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc, "TF_REATTACH_PROVIDERS=", "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "TF_LOG=", "TF_LOG_PATH=")}
}

// write replaces the configuration (main.tf).
func (c *cli) write(config string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(config), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

// run runs a command that must succeed and returns its output.
func (c *cli) run(args ...string) string {
	c.t.Helper()
	out, err := c.exec(nil, args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(c.bin), strings.Join(args, " "), err, out)
	}
	return out
}

// interrupt runs a command and sends it SIGINT, as Ctrl-C does, once when
// reports true; it returns the output and the command's error.
func (c *cli) interrupt(when func() bool, args ...string) (string, error) {
	c.t.Helper()
	return c.signal(syscall.SIGINT, when, args...)
}

// kill runs a command and kills it (SIGKILL, as a lost runner does) once
// when reports true. The provider is served from the test process, which
// the kill does not reach: the command's connection to it closes, which
// cancels what the provider was doing, as its own death would.
func (c *cli) kill(when func() bool, args ...string) (string, error) {
	c.t.Helper()
	return c.signal(syscall.SIGKILL, when, args...)
}

func (c *cli) exec(interruptWhen func() bool, args ...string) (string, error) {
	return c.signal(syscall.SIGINT, interruptWhen, args...)
}

func (c *cli) signal(sig syscall.Signal, when func() bool, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	p, err := c.start(ctx, &out, nil, args...)
	if err != nil {
		return "", err
	}
	if when != nil {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-p.done:
				return out.String(), p.err
			case <-tick.C:
				if when() {
					p.signal(sig)
					break wait
				}
			}
		}
	}
	err = p.wait()
	return out.String(), err
}

// cliProcess is one running command of a cli. It runs in its own process
// group, as a shell runs a job: a signal reaches Terraform and the
// providers it started (dev_overrides), as Ctrl-C in a terminal or a
// runner's death does.
type cliProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // once done is closed
}

// start starts a command with env added to the cli's, its output (stdout
// and stderr) written to out; ctx's end kills its process group.
func (c *cli) start(ctx context.Context, out io.Writer, env []string, args ...string) (*cliProcess, error) {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir, cmd.Env = c.dir, append(slices.Clip(c.env), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &cliProcess{cmd: cmd, done: make(chan struct{})}
	cmd.Cancel = func() error {
		p.signal(syscall.SIGKILL)
		return nil
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// signal sends sig to the command's process group, unless it has ended.
func (p *cliProcess) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-p.cmd.Process.Pid, sig)
	}
}

// wait waits for the command to end and returns its error.
func (p *cliProcess) wait() error {
	<-p.done
	return p.err
}

// state returns the attributes of one resource in the CLI's state.
func (c *cli) state(addr string) map[string]any {
	c.t.Helper()
	out := c.run("show", "-json", "-no-color")
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Tainted bool           `json:"tainted"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.NewDecoder(io.LimitReader(strings.NewReader(out), 16<<20)).Decode(&doc); err != nil {
		c.t.Fatalf("show -json: %v\n%s", err, out)
	}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Address == addr {
			r.Values["tainted"] = r.Tainted
			return r.Values
		}
	}
	return nil
}

// terraformBinary is the binary the acceptance tests run.
func terraformBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(envTerraformPath); bin != "" {
		return bin
	}
	found, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("no terraform binary")
	}
	return found
}

// skipBelow skips a CLI-driven test on a binary older than atLeast, before
// any configuration it could not parse is written; why says what needs it.
func skipBelow(t *testing.T, atLeast, why string) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	bin := terraformBinary(t)
	out, err := exec.CommandContext(t.Context(), bin, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", bin, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("version -json: %v\n%s", err, out)
	}
	if version.Must(version.NewVersion(v.Version)).LessThan(version.Must(version.NewVersion(atLeast))) {
		t.Skipf("%s needs Terraform %s or newer; this is %s", why, atLeast, v.Version)
	}
}
