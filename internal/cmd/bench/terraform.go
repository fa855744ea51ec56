package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// harness holds the built provider and a Terraform CLI configuration that
// points at it with dev_overrides.
type harness struct {
	work     string
	binDir   string
	provider string
	cliCfg   string
	// noopCfg points Terraform at a build whose backup_trigger refresh does
	// nothing, the floor of a refresh.
	noopCfg string
	// pagedCfg points Terraform at the provider built as of
	// pagedReadCommit, whose refresh pages every trigger's backups.
	pagedCfg string
	// planStepCfgs point Terraform at the providers built as of
	// planStepCommits (section 12), in that order.
	planStepCfgs []string
}

func newHarness(ctx context.Context, root string) (*harness, error) {
	work, err := os.MkdirTemp("", "backup-bench-")
	if err != nil {
		return nil, err
	}
	h := &harness{work: work, binDir: filepath.Join(work, "bin")}
	h.provider = filepath.Join(h.binDir, "terraform-provider-backup")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", h.provider, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the provider: %w\n%s", err, out)
	}
	variants := map[string]string{"noop": filepath.Join(work, "bin-noop"), "paged": filepath.Join(work, "bin-paged")}
	// The floor: the provider behind a protocol wrapper whose refresh of a
	// backup_trigger sends nothing (internal/cmd/bench/noopread).
	build = exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(variants["noop"], "terraform-provider-backup"), "./internal/cmd/bench/noopread")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the no-op-read provider: %w\n%s", err, out)
	}
	// Before: the provider as it was before refreshes of finished
	// triggers checked only their account, built from that commit.
	if err := buildAt(ctx, root, pagedReadCommit, filepath.Join(work, "src-paged"), filepath.Join(variants["paged"], "terraform-provider-backup")); err != nil {
		return nil, err
	}
	h.cliCfg, h.noopCfg, h.pagedCfg = filepath.Join(work, "terraformrc"), filepath.Join(work, "terraformrc-noop"), filepath.Join(work, "terraformrc-paged")
	cfgs := map[string]string{h.cliCfg: h.binDir, h.noopCfg: variants["noop"], h.pagedCfg: variants["paged"]}
	for _, c := range planStepCommits {
		bin := filepath.Join(work, "bin-"+c.commit)
		if err := buildAt(ctx, root, c.commit, filepath.Join(work, "src-"+c.commit), filepath.Join(bin, "terraform-provider-backup")); err != nil {
			return nil, err
		}
		cfg := filepath.Join(work, "terraformrc-"+c.commit)
		cfgs[cfg] = bin
		h.planStepCfgs = append(h.planStepCfgs, cfg)
	}
	for cfgPath, dir := range cfgs {
		cfg := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"backup-service/backup\" = %q\n  }\n  direct {}\n}\n", dir)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// pagedReadCommit is the last commit whose backup_trigger refresh paged
// every trigger's backups (535c707 made finished triggers check only their
// account): section 6's "before".
const pagedReadCommit = "8f717f8"

// buildAt builds the provider as it was at commit, from a temporary git
// worktree (the repository's history is part of every clone).
func buildAt(ctx context.Context, root, commit, src, out string) error {
	add := exec.CommandContext(ctx, "git", "worktree", "add", "--detach", src, commit)
	add.Dir = root
	if b, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("checking out %s to build the provider as it was: %w\n%s", commit, err, b)
	}
	defer func() {
		rm := exec.CommandContext(context.WithoutCancel(ctx), "git", "worktree", "remove", "--force", src)
		rm.Dir = root
		_ = rm.Run()
	}()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, ".")
	build.Dir = src
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the provider as of %s: %w\n%s", commit, err, b)
	}
	return nil
}

func (h *harness) close() { _ = os.RemoveAll(h.work) }

// mock is a mock service served on a loopback port.
type mock struct {
	srv *mockservice.Server
	url string
	hs  *http.Server
}

func startMock(ctx context.Context, opts mockservice.Options) (*mock, error) {
	srv := mockservice.New(opts)
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return &mock{srv: srv, url: "http://" + ln.Addr().String(), hs: hs}, nil
}

func (m *mock) close() { _ = m.hs.Close() }

// workdir is a Terraform working directory with one configuration.
type workdir struct {
	h   *harness
	dir string
	env []string
}

const terraformBlock = `terraform {
  required_providers {
    backup = {
      source = "backup-service/backup"
    }
  }
}
`

func (h *harness) workdir(name, config string, m *mock) (*workdir, error) {
	dir := filepath.Join(h.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(terraformBlock+config), 0o600); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+h.cliCfg, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	if m != nil {
		env = append(env, "BACKUP_BASE_URL="+m.url, "BACKUP_API_KEY="+m.srv.DemoKey())
	}
	return &workdir{h: h, dir: dir, env: env}, nil
}

// run runs terraform and returns its wall time.
func (w *workdir) run(ctx context.Context, args ...string) (time.Duration, error) {
	return w.runWith(ctx, nil, args...)
}

// runWith runs terraform with extra environment variables.
func (w *workdir) runWith(ctx context.Context, env []string, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "terraform", append([]string{"-chdir=" + w.dir}, args...)...)
	cmd.Env = append(slices.Clone(w.env), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("terraform %s: %w\n%s", strings.Join(args, " "), err, tail(out.String(), 40))
	}
	return d, nil
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(len(l)-lines, 0):], "\n")
}

// debugProvider runs the provider in debug mode, so that this harness (not
// Terraform) is its parent and can read its peak memory.
type debugProvider struct {
	cmd      *exec.Cmd
	reattach string
}

func (h *harness) startDebugProvider(ctx context.Context, m *mock) (*debugProvider, error) {
	cmd := exec.CommandContext(ctx, h.provider, "-debug")
	cmd.Env = append(os.Environ(), "BACKUP_BASE_URL="+m.url, "BACKUP_API_KEY="+m.srv.DemoKey())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// It prints a line holding TF_REATTACH_PROVIDERS='{...}'.
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			const marker = "TF_REATTACH_PROVIDERS="
			if _, v, ok := strings.Cut(sc.Text(), marker); ok {
				found <- strings.Trim(strings.TrimSpace(v), "'")
			}
		}
		close(found)
	}()
	select {
	case v, ok := <-found:
		if ok {
			return &debugProvider{cmd: cmd, reattach: v}, nil
		}
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	return nil, fmt.Errorf("the provider did not print TF_REATTACH_PROVIDERS")
}

// peakRSS is the provider's high-water mark of resident memory (VmHWM).
func (p *debugProvider) peakRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc status")
}

func (p *debugProvider) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
	}
}
