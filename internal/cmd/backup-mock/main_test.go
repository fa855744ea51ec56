package main

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// TestMain runs the command itself when the test binary is started as it
// (see startCommand).
func TestMain(m *testing.M) {
	if os.Getenv("BACKUP_MOCK_TEST_RUN_MAIN") == "1" {
		os.Args = append([]string{"backup-mock"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// keyOf is the key the command serves for a -seed given or not.
func keyOf(given bool, seed uint64) string {
	return mockservice.New(mockservice.Options{Seed: chooseSeed(given, seed)}).DemoKey()
}

// Without -seed, the key differs from run to run (it was the same on every
// run and machine, from seed 1); with -seed 1 it is the same every time.
func TestDefaultKeyIsRandomUnlessSeeded(t *testing.T) {
	t.Parallel()
	a, b := keyOf(false, 0), keyOf(false, 0)
	if a == b {
		t.Errorf("two runs without -seed served the same key %s", a)
	}
	seed1 := mockservice.New(mockservice.Options{Seed: 1}).DemoKey()
	if a == seed1 || b == seed1 {
		t.Errorf("a run without -seed served seed 1's key")
	}
	if x, y := keyOf(true, 1), keyOf(true, 1); x != y || x != seed1 {
		t.Errorf("-seed 1 served %s, then %s; want %s twice", x, y, seed1)
	}
	if x, y := keyOf(true, 0), keyOf(true, 0); x != y {
		t.Errorf("-seed 0 served %s, then %s", x, y)
	}
}

func TestFaultFlagCapsLatency(t *testing.T) {
	t.Parallel()
	var f faultFlags
	if err := f.Set("latency,latency=1h"); err == nil || !strings.Contains(err.Error(), "at most 30s") {
		t.Errorf("-fault latency,latency=1h: %v, want a refusal naming the 30s cap", err)
	}
	if err := f.Set("latency,latency=30s"); err != nil || len(f) != 1 {
		t.Errorf("-fault latency,latency=30s: %v", err)
	}
}

// mockRun is a running backup-mock and the settings it wrote.
type mockRun struct {
	env    map[string]string
	stderr string
}

// startCommand runs the command with args and -env-file, reads the file,
// and stops the command (SIGINT) when the test ends.
func startCommand(t *testing.T, args ...string) mockRun {
	t.Helper()
	dir := t.TempDir()
	envFile := filepath.Join(dir, "mock.env")
	cmd := exec.CommandContext(t.Context(), os.Args[0], append(args, "-env-file", envFile)...)
	cmd.Env = append(os.Environ(), "BACKUP_MOCK_TEST_RUN_MAIN=1")
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = nil, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if fi, err := os.Stat(envFile); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command wrote no -env-file")
		}
		time.Sleep(20 * time.Millisecond)
	}
	f, err := os.Open(envFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run := mockRun{env: map[string]string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		run.env[k] = v
	}
	b, _ := os.ReadFile(stderr.Name())
	run.stderr = string(b)
	return run
}

func get(t *testing.T, url string, header map[string]string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// The command writes the base URL, the key and the admin token to its
// -env-file; the admin API wants the token, any request a loopback Host;
// the examples' account is served; without -seed the key and the token
// differ between runs, with -seed 1 the key does not.
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the command")
	}
	t.Parallel()
	a, b := startCommand(t), startCommand(t)
	s1, s2 := startCommand(t, "-seed", "1"), startCommand(t, "-seed", "1")
	for _, r := range []mockRun{a, b, s1, s2} {
		if !strings.HasPrefix(r.env["BACKUP_BASE_URL"], "http://127.0.0.1:") || !strings.HasPrefix(r.env["BACKUP_API_KEY"], "bks_") ||
			!strings.HasPrefix(r.env["BACKUP_MOCK_ADMIN_TOKEN"], "bkm_") {
			t.Fatalf("-env-file: %v", r.env)
		}
	}
	if a.env["BACKUP_API_KEY"] == b.env["BACKUP_API_KEY"] || a.env["BACKUP_MOCK_ADMIN_TOKEN"] == b.env["BACKUP_MOCK_ADMIN_TOKEN"] {
		t.Errorf("two runs without -seed: the same key or admin token: %v, %v", a.env, b.env)
	}
	if !strings.Contains(a.stderr, "random seed") {
		t.Errorf("stderr does not name the random seed: %s", a.stderr)
	}
	if s1.env["BACKUP_API_KEY"] != s2.env["BACKUP_API_KEY"] || s1.env["BACKUP_MOCK_ADMIN_TOKEN"] == s2.env["BACKUP_MOCK_ADMIN_TOKEN"] {
		t.Errorf("two runs with -seed 1: want the same key, different admin tokens: %v, %v", s1.env, s2.env)
	}

	base, key, token := a.env["BACKUP_BASE_URL"], a.env["BACKUP_API_KEY"], a.env["BACKUP_MOCK_ADMIN_TOKEN"]
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(base, "http://"))
	for _, c := range []struct {
		path   string
		header map[string]string
		want   int
	}{
		{"/api/v1/accounts/" + mockservice.ExampleAccountID, map[string]string{"X-API-Key": key}, 200},
		{"/api/v1/accounts/" + mockservice.ExampleAccountID + "/backups", map[string]string{"X-API-Key": key}, 200},
		{"/api/v1/token", map[string]string{"X-API-Key": key, "Host": "evil.example:" + port}, 421},
		{"/_mock/stats", nil, 401},
		{"/_mock/stats", map[string]string{"Authorization": "Bearer " + b.env["BACKUP_MOCK_ADMIN_TOKEN"]}, 401},
		{"/_mock/stats", map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example:" + port}, 421},
		{"/_mock/stats", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"/_mock/stats", map[string]string{"X-Mock-Admin-Token": token, "Host": "localhost:" + port}, 200},
	} {
		if got := get(t, base+c.path, c.header); got != c.want {
			t.Errorf("GET %s with %v: %d, want %d", c.path, c.header, got, c.want)
		}
	}
}

// The command serves the failure controls: a paused account's trigger
// answers 422, a lost answer is a closed connection, and a reset undoes
// both.
func TestCommandFailureControls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the command")
	}
	t.Parallel()
	r := startCommand(t, "-running", "10m") // the lost answer's backup runs on past the reset
	base, key, token := r.env["BACKUP_BASE_URL"], r.env["BACKUP_API_KEY"], r.env["BACKUP_MOCK_ADMIN_TOKEN"]
	account := "/_mock/accounts/" + mockservice.ExampleAccountID
	trigger := func() (int, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/accounts/"+mockservice.ExampleAccountID+"/backup", nil)
		req.Header.Set("X-API-Key", key)
		res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			return 0, err
		}
		_ = res.Body.Close()
		return res.StatusCode, nil
	}
	admin := func(path, body string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("POST %s %s: %d", path, body, res.StatusCode)
		}
	}
	admin(account+"/state", `{"state": "paused"}`)
	if got, err := trigger(); err != nil || got != http.StatusUnprocessableEntity {
		t.Fatalf("a paused account's trigger: %d, %v; want 422", got, err)
	}
	admin(account+"/state", `{"state": "active"}`)
	admin(account+"/lose-trigger-answer", `{"how": "drop"}`)
	if got, err := trigger(); err == nil {
		t.Fatalf("a lost answer: %d, want a closed connection", got)
	}
	admin(account+"/state", `{"state": "paused"}`)
	admin("/_mock/reset", "")
	if got, err := trigger(); err != nil || got != http.StatusConflict {
		t.Errorf("after a reset: %d, %v; want 409, the lost answer's backup in progress", got, err)
	}
}

// -env-file holds the key and the admin token: the file ends with mode
// 0600 even when a file of that name existed with a wider mode.
func TestEnvFileIsPrivateEvenWhenItExisted(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mock.env")
	if err := os.WriteFile(path, []byte("OLD=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask made of it
		t.Fatal(err)
	}
	if err := writeEnvFile(path, "BACKUP_API_KEY=secret\n"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("mode %o, want 600", mode)
	}
	if b, _ := os.ReadFile(path); string(b) != "BACKUP_API_KEY=secret\n" {
		t.Errorf("content %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".backup-mock-env-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
