package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// The simulation through the CLI (make simulate-cli): several workspaces
// (pipelines) on one account of the mock, each a loop of releases, guard
// removals and destroys run by the real Terraform (or OpenTofu) binary
// with the provider built from this checkout (dev_overrides: one provider
// process per command, as users run it), Ctrl-C (SIGINT) and SIGKILL sent
// to a command's process group at random moments, and the mock's faults
// switched on and off. Each command uses its own API key, by which the
// mock's ground truth records who queued each backup. The checker
// (simulation_cli_checker_test.go) judges from that truth and the
// simulation's own log of what it ran and signalled, never from what the
// provider reports.
//
// The seed fixes every decision (what each workspace runs, with which
// configuration, which signal at which moment, which fault when), not the
// timing: Terraform, the provider and the mock run on the wall clock, so
// a replay plays the same decisions over another interleaving.

var (
	cliSimDuration   = flag.Duration("simcli.duration", 0, "run the simulation through the CLI for this long (0: skip it; make simulate-cli)")
	cliSimSeed       = flag.Uint64("simcli.seed", 0, "the CLI simulation's seed (0: drawn from the clock and printed)")
	cliSimWorkspaces = flag.Int("simcli.workspaces", 3, "workspaces (pipelines) that run at the same time on the one account")
	cliSimFaults     = flag.Bool("simcli.faults", true, "switch the mock's faults on and off, and hold backups running, at random moments")
	cliSimLag        = flag.Duration("simcli.lag", 0, "the backups listing hides a backup for this long after its POST (a lagging replica)")
	cliSimVerbose    = flag.Bool("simcli.verbose", false, "log every command the simulation runs")
	cliSimRule       = flag.String("simcli.rule", "listing", "the stated limits the judge grants: listing (identity by listing, issue 56) or clock (the rule before it, for older commits)")
)

// envCLISimTerraform lists the CLI binaries, space-separated, that the
// workspaces are given, one each, in turn from an offset the seed picks
// (default: TF_ACC_TERRAFORM_PATH, or terraform on PATH); the paths an
// unpack script prints (see TF_BUILDS in .ci/run) fit.
const envCLISimTerraform = "SIMCLI_TERRAFORM"

// cliSimAnswerRead is how long after an answer was written a signal may
// still keep the provider from reading it.
const cliSimAnswerRead = 100 * time.Millisecond

// cliSimRunTimeout bounds one command: more is a hang, and it is killed.
const cliSimRunTimeout = 4 * time.Minute

func TestSimulationCLI(t *testing.T) {
	if *cliSimDuration <= 0 {
		t.Skip("the simulation through the CLI runs with -simcli.duration (make simulate-cli)")
	}
	seed := *cliSimSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()%1_000_000_000) + 1
	}
	bins := cliSimBinaries(t)
	t.Logf("seed %d, %s, %d workspaces, faults %t, listing lag %s, rule %s, CLIs %s", seed, *cliSimDuration, *cliSimWorkspaces,
		*cliSimFaults, *cliSimLag, *cliSimRule, strings.Join(bins, " "))
	t.Logf("replay: make simulate-cli SIMCLI_SEED=%d SIMCLI_DURATION=%s SIMCLI_WORKSPACES=%d", seed, *cliSimDuration, *cliSimWorkspaces)
	w := newCLISimWorld(t, seed, bins)
	w.run(*cliSimDuration)
	w.finish()
	t.Logf("seed %d: %s", seed, w.summary())
	for _, v := range w.violations {
		t.Errorf("%s", v)
	}
	if len(w.violations) > 0 {
		t.Logf("replay: make simulate-cli SIMCLI_SEED=%d SIMCLI_DURATION=%s SIMCLI_WORKSPACES=%d", seed, *cliSimDuration, *cliSimWorkspaces)
	}
}

// cliSimBinaries are the CLI binaries the workspaces run, in turn.
func cliSimBinaries(t *testing.T) []string {
	t.Helper()
	if list := strings.Fields(os.Getenv(envCLISimTerraform)); len(list) > 0 {
		return list
	}
	return []string{terraformBinary(t)}
}

// cliSimWorld is one simulation: the mock, the workspaces, the log.
type cliSimWorld struct {
	t       *testing.T
	seed    uint64
	began   time.Time
	srv     *mockservice.Server
	url     string
	account string
	plugins string // the directory of the provider build
	root    string
	bins    []string
	lag     time.Duration
	grants  cliSimGrants

	mu         sync.Mutex
	byKey      map[string]*cliSimRun
	runs       []*cliSimRun
	changes    []*cliSimChange
	faults     []*cliSimFault
	violations []cliSimViolation
	conflicts  int // 409s answered to triggers
	holds      int // backups held running
}

// cliSimFault is one fault, as the mock's -fault flag writes it, and when it was on.
type cliSimFault struct {
	spec    string
	on, off time.Time // off zero: still on
}

// cliSimFaultSpecs are the faults the simulation switches on, one at a time.
var cliSimFaultSpecs = []string{
	"accept-then-error,route=trigger_backup,times=1",
	"truncated-body,route=trigger_backup,times=1",
	"malformed-json,route=trigger_backup,times=1",
	"server-error,route=trigger_backup,times=2",
	"overload,route=trigger_backup,times=2,retry-after=1s",
	"latency,route=trigger_backup,latency=3s,times=1",
	"server-error,route=list_backups,p=0.3",
	"latency,route=list_backups,latency=2s,p=0.5",
	"malformed-json,route=list_backups,times=1",
	"overload,p=0.2,retry-after=1s",
	"server-error,route=get_account,times=2",
	"truncated-body,route=list_backups,times=1",
}

func newCLISimWorld(t *testing.T, seed uint64, bins []string) *cliSimWorld {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0xc11))
	// Short backups, so that a waited apply takes seconds: 1-2 s pending, 1-3 s running.
	pending, running := time.Duration(1+rng.IntN(2))*time.Second, time.Duration(1+rng.IntN(3))*time.Second
	srv := mockservice.New(mockservice.Options{Seed: seed, Accounts: 1, PendingFor: pending, RunningFor: running})
	account := srv.AccountIDs()[0]
	now := time.Now()
	// History: one backup inside a 10m reuse_within, one outside.
	srv.AddHistory(account, mockservice.BackupSpec{CreatedAt: now.Add(-40 * time.Minute)}, mockservice.BackupSpec{CreatedAt: now.Add(-15 * time.Minute)})
	if *cliSimLag > 0 {
		srv.SetListingLag(*cliSimLag)
	}
	grants, ok := cliSimRules[*cliSimRule]
	if !ok {
		t.Fatalf("-simcli.rule=%q: want listing or clock", *cliSimRule)
	}
	w := &cliSimWorld{t: t, seed: seed, srv: srv, account: account, bins: bins, lag: *cliSimLag, grants: grants,
		root: t.TempDir(), byKey: map[string]*cliSimRun{}}
	w.plugins = filepath.Join(w.root, "bin")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", filepath.Join(w.plugins, "terraform-provider-backup"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	ts := httptest.NewServer(w)
	t.Cleanup(ts.Close)
	w.url = ts.URL
	t.Logf("mock: account %s, backups pending %s then running %s", account, pending, running)
	return w
}

// run plays the workspaces, and the faults, for d.
func (w *cliSimWorld) run(d time.Duration) {
	w.began = time.Now()
	deadline := w.began.Add(d)
	var wg sync.WaitGroup
	for i := range *cliSimWorkspaces {
		ws := w.newWorkspace(i)
		wg.Go(func() { ws.play(deadline) })
	}
	stop := make(chan struct{})
	var side sync.WaitGroup
	if *cliSimFaults {
		side.Go(func() { w.playFaults(deadline, stop) })
	}
	side.Go(func() { w.progress(stop) })
	wg.Wait()
	close(stop)
	side.Wait()
}

// playFaults, every 10 to 40 s until the deadline, switches one fault on
// for 3 to 15 s (a -fault of the mock, or its admin control that drops a
// trigger's answer), or holds the account's backup running for 5 to 20 s
// (a long backup, not a fault).
func (w *cliSimWorld) playFaults(deadline time.Time, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(w.seed, w.seed^0xfa017))
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(10+rng.IntN(30)) * time.Second):
		}
		if time.Now().After(deadline) {
			return
		}
		var switchOff func()
		switch x := rng.IntN(len(cliSimFaultSpecs) + 4); {
		case x < len(cliSimFaultSpecs):
			switchOff = w.switchFault(cliSimFaultSpecs[x])
		case x < len(cliSimFaultSpecs)+3:
			hold := time.Duration(5+rng.IntN(16)) * time.Second
			w.control("/_mock/accounts/"+w.account+"/hold", fmt.Sprintf(`{"duration": %q}`, hold))
			w.mu.Lock()
			w.holds++
			w.mu.Unlock()
			continue
		default:
			rec := w.faultOn("lose-trigger-answer drop (admin control)")
			w.control("/_mock/accounts/"+w.account+"/lose-trigger-answer", `{"how": "drop"}`)
			switchOff = func() {
				w.control("/_mock/reset", "{}") // also ends a hold, and any fault
				w.faultOff(rec)
			}
		}
		select {
		case <-stop:
		case <-time.After(time.Duration(3+rng.IntN(13)) * time.Second):
		}
		switchOff()
	}
}

// switchFault switches a -fault of the mock on, and returns what switches it off.
func (w *cliSimWorld) switchFault(spec string) func() {
	f, err := mockservice.ParseFault(spec)
	if err != nil {
		w.t.Errorf("fault %q: %v", spec, err)
		return func() {}
	}
	rec := w.faultOn(spec)
	w.srv.AddFault(f)
	return func() {
		w.srv.ClearFaults()
		w.faultOff(rec)
	}
}

// faultOn and faultOff record when a fault was on.
func (w *cliSimWorld) faultOn(spec string) *cliSimFault {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec := &cliSimFault{spec: spec, on: time.Now()}
	w.faults = append(w.faults, rec)
	return rec
}

func (w *cliSimWorld) faultOff(rec *cliSimFault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rec.off = time.Now()
}

// control posts body to the mock's admin API at path, as a module's test would.
func (w *cliSimWorld) control(path, body string) {
	req, err := http.NewRequestWithContext(w.t.Context(), http.MethodPost, w.url+path, strings.NewReader(body))
	if err != nil {
		w.t.Errorf("admin %s: %v", path, err)
		return
	}
	req.Header.Set("Authorization", "Bearer "+w.srv.AdminToken())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Errorf("admin %s: %v", path, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		w.t.Errorf("admin %s %s: %s", path, body, resp.Status)
	}
}

// progress logs a line a minute.
func (w *cliSimWorld) progress(stop <-chan struct{}) {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			w.t.Logf("%s: %s", w.since(time.Now()), w.summary())
		}
	}
}

// since is how long after the simulation began t was, to the millisecond.
func (w *cliSimWorld) since(t time.Time) time.Duration { return t.Sub(w.began).Round(time.Millisecond) }

// ServeHTTP labels each request with the command whose API key it
// carries, so that the backups it queues name it in the ground truth; it
// counts what the command sent and was answered, and fires the command's
// trap (a signal on a request or an answer).
func (w *cliSimWorld) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	run := w.byKey[r.Header.Get("X-API-Key")]
	w.mu.Unlock()
	if run == nil {
		w.srv.ServeHTTP(rw, r)
		return
	}
	route := cliSimRoute(r)
	faulty, arrived := w.faultHits(route), time.Now()
	n := run.sent(route)
	run.springOnRequest(route, n)
	rec := httptest.NewRecorder()
	w.srv.ServeHTTP(rec, r.WithContext(mockservice.WithQueuedBy(r.Context(), run.label)))
	if route == mockservice.RouteTrigger {
		w.mu.Lock()
		if rec.Code == http.StatusConflict {
			w.conflicts++
		}
		w.mu.Unlock()
		// An answer held back by a signal may never reach the provider: lost, as far as the judge can tell.
		held := run.springOnAnswer(rec.Code)
		copyResponse(rw, rec)
		run.answered(rec.Code, arrived, faulty || held || r.Context().Err() != nil)
		return
	}
	copyResponse(rw, rec)
}

// faultHits says whether a fault that may hit route is on.
func (w *cliSimWorld) faultHits(route mockservice.Route) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.faults {
		if f.off.IsZero() && (!strings.Contains(f.spec, "route=") || strings.Contains(f.spec, "route="+string(route)+",")) {
			return true
		}
	}
	return false
}

// cliSimRoute names a request's route as the mock does.
func cliSimRoute(r *http.Request) mockservice.Route {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
	switch {
	case r.Method == http.MethodPost && len(parts) == 3 && parts[2] == "backup":
		return mockservice.RouteTrigger
	case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "backups":
		return mockservice.RouteListBackups
	case r.Method == http.MethodGet && len(parts) == 2 && parts[0] == "accounts":
		return mockservice.RouteGetAccount
	case len(parts) == 1 && parts[0] == "token":
		return mockservice.RouteToken
	}
	return mockservice.RouteUnknown
}

// register records a command about to run, with its own API key.
func (w *cliSimWorld) register(run *cliSimRun) string {
	key := w.srv.AddKey(mockservice.KeySpec{Name: run.label})
	w.mu.Lock()
	defer w.mu.Unlock()
	w.byKey[key] = run
	w.runs = append(w.runs, run)
	if run.change != nil && len(run.change.attempts) == 1 {
		w.changes = append(w.changes, run.change)
	}
	return key
}

// faultDuring says which faults were on during [from, to].
func (w *cliSimWorld) faultDuring(from, to time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, f := range w.faults {
		if f.on.Before(to) && (f.off.IsZero() || f.off.After(from)) {
			out = append(out, f.spec)
		}
	}
	return out
}

// cliSimWorkspace is one pipeline: a working directory and what its state holds.
type cliSimWorkspace struct {
	w    *cliSimWorld
	name string
	rng  *rand.Rand
	c    *cli
	bin  string
	cmds int

	release      int
	triggerReuse string        // the trigger's reuse_within, "" for none
	lastTrigger  *cliSimChange // the trigger's last change done
	guard        bool          // the configuration holds the guard
	guardReuse   string        // the guard's reuse_within, as created
	open         *cliSimChange
	openCmd      string // "apply" or "destroy": how the open change is attempted
}

func (w *cliSimWorld) newWorkspace(i int) *cliSimWorkspace {
	name := fmt.Sprintf("w%d", i+1)
	dir := filepath.Join(w.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.t.Fatal(err)
	}
	// Each workspace keeps one binary: a state an older one cannot read stays with the newer.
	bin := w.bins[(uint64(i)+w.seed)%uint64(len(w.bins))]
	w.t.Logf("%s runs %s", name, bin)
	return &cliSimWorkspace{w: w, name: name, rng: rand.New(rand.NewPCG(w.seed, uint64(i+1))), bin: bin,
		c: newDevCLI(w.t, bin, w.plugins, dir)}
}

// play runs the workspace's steps until the deadline, then attempts its
// open change once more, without a signal.
func (ws *cliSimWorkspace) play(deadline time.Time) {
	for time.Now().Before(deadline) {
		ws.step(true)
		pause := time.Duration(ws.rng.IntN(1500)) * time.Millisecond
		if ws.rng.Float64() < 0.35 {
			// A pipeline idle for a while: the others run alone on the account.
			pause = time.Duration(5+ws.rng.IntN(35)) * time.Second
		}
		time.Sleep(min(pause, time.Until(deadline)))
	}
	if ws.open != nil {
		ws.step(false)
	}
}

// step attempts the open change again, or begins the next: a release, a
// guard added or removed, a whole destroy, or an apply with nothing to do.
func (ws *cliSimWorkspace) step(signals bool) {
	if ws.open != nil {
		ws.attempt(ws.openCmd, signals)
		return
	}
	// The state, not what was asked, says what a destroy must back up: a
	// guard whose create was stopped may not be there.
	st := ws.saved()
	roll := ws.rng.Float64()
	switch {
	case !st.trigger || roll < 0.6:
		ws.newRelease(st.trigger)
	case roll < 0.85 && st.guard:
		ws.guard = false
		ws.open, ws.openCmd = ws.w.newChange(ws.name+" guard destroy (apply)", "guard"), "apply"
		ws.write()
	case roll < 0.85 && !ws.guard:
		ws.guard, ws.guardReuse = true, ws.pick([]string{"", "10m", "20s"}, []float64{0.4, 0.4, 0.2})
		ws.write()
	case roll < 0.9:
		if st.guard {
			ws.open = ws.w.newChange(ws.name+" guard destroy (destroy)", "guard")
		}
		ws.openCmd = "destroy"
		if ws.open == nil {
			ws.attempt("destroy", signals)
			return
		}
	default:
		// Nothing to do: an apply that must succeed and queue nothing.
	}
	if ws.open != nil {
		ws.attempt(ws.openCmd, signals)
		return
	}
	ws.attempt("apply", signals)
}

// newRelease writes the next release, with a reuse_within of its own, and
// opens its change: a replacement, whose floor is when the previous change
// went ahead, when the state holds the trigger; else a create.
func (ws *cliSimWorkspace) newRelease(replace bool) {
	ws.release++
	ws.triggerReuse = ws.pick([]string{"", "10m", "30s"}, []float64{0.3, 0.5, 0.2})
	c := ws.w.newChange(fmt.Sprintf("%s trigger r%d", ws.name, ws.release), "trigger")
	if replace && ws.lastTrigger != nil {
		c.floor, c.floorWhy = ws.lastTrigger.floorForNext(c.grants.sameSecond)
		c.previous = ws.lastTrigger.done.claimed
	}
	ws.open, ws.openCmd = c, "apply"
	ws.write()
}

// newChange opens a change of a workspace's resource ("trigger" or "guard").
func (w *cliSimWorld) newChange(key, resource string) *cliSimChange {
	return &cliSimChange{key: key, resource: resource, lag: w.lag, grants: w.grants}
}

// pick draws one of values with the given weights.
func (ws *cliSimWorkspace) pick(values []string, weights []float64) string {
	x := ws.rng.Float64()
	for i, p := range weights {
		if x < p {
			return values[i]
		}
		x -= p
	}
	return values[len(values)-1]
}

// write writes the workspace's configuration.
func (ws *cliSimWorkspace) write() {
	var b strings.Builder
	b.WriteString(requiredProviders)
	fmt.Fprintf(&b, "\nresource \"backup_trigger\" \"this\" {\n  account_id          = %q\n  triggers            = { release = \"r%d\" }\n  wait_for_completion = true\n", ws.w.account, ws.release)
	if ws.triggerReuse != "" {
		fmt.Fprintf(&b, "  reuse_within        = %q\n", ws.triggerReuse)
	}
	b.WriteString("  timeouts {\n    create = \"3m\"\n  }\n}\n")
	if ws.guard {
		fmt.Fprintf(&b, "\nresource \"backup_on_destroy\" \"guard\" {\n  account_id = %q\n", ws.w.account)
		if ws.guardReuse != "" {
			fmt.Fprintf(&b, "  reuse_within = %q\n", ws.guardReuse)
		}
		b.WriteString("  timeouts {\n    delete = \"3m\"\n  }\n}\n")
	}
	if err := os.WriteFile(filepath.Join(ws.c.dir, "main.tf"), []byte(b.String()), 0o600); err != nil {
		ws.w.t.Fatal(err)
	}
}

// reuseOf is the reuse_within an attempt of change c reads: the
// configuration's for a trigger, the state's for a guard's destroy.
func (ws *cliSimWorkspace) reuseOf(c *cliSimChange) time.Duration {
	v := ws.triggerReuse
	if c.resource == "guard" {
		v = ws.guardReuse
	}
	d, _ := time.ParseDuration(v)
	return d
}

// attempt runs one command of kind "apply" or "destroy" for the open
// change (or for none), sometimes as a saved plan and its apply,
// sometimes without refresh, with a trap that may signal it, and judges it.
func (ws *cliSimWorkspace) attempt(kind string, signals bool) {
	args := []string{kind, "-auto-approve", "-input=false", "-no-color"}
	mode := ws.rng.Float64()
	if kind == "apply" && mode < 0.15 {
		args = append(args, "-refresh=false")
	}
	var trap *cliSimTrap
	if signals {
		trap = ws.pickTrap(ws.open == nil || len(ws.open.attempts) == 0)
	}
	if kind == "apply" && mode >= 0.85 {
		plan := ws.newRun([]string{"plan", "-input=false", "-no-color", "-out=tfplan"}, nil, nil)
		ws.exec(plan)
		ws.w.judgeRun(plan)
		if plan.exit != 0 {
			return
		}
		args = []string{"apply", "-auto-approve", "-input=false", "-no-color", "tfplan"}
	}
	run := ws.newRun(args, ws.open, trap)
	ws.exec(run)
	if run.change != nil && run.change.resource == "trigger" {
		st := ws.saved()
		switch {
		case run.exit == 0 && st.trigger && !st.tainted:
			run.claimed = st.id
		case st.tainted && st.id == "" && st.triggeredAt == "":
			run.taintedEmpty = true
		}
	}
	ws.w.judgeRun(run)
	if run.exit == 0 && ws.open != nil {
		if ws.open.resource == "trigger" {
			ws.lastTrigger = ws.open
		}
		ws.open = nil
	}
}

// newRun prepares a command of the workspace for change (nil: none).
func (ws *cliSimWorkspace) newRun(args []string, change *cliSimChange, trap *cliSimTrap) *cliSimRun {
	ws.cmds++
	run := &cliSimRun{label: fmt.Sprintf("%s.%d", ws.name, ws.cmds), ws: ws.name, args: args, change: change, trap: trap, w: ws.w,
		requests: map[mockservice.Route]int{}}
	if change != nil {
		run.reuse = ws.reuseOf(change)
		change.attempts = append(change.attempts, run)
	}
	return run
}

// pickTrap draws the signal an attempt gets, if any, and its moment.
func (ws *cliSimWorkspace) pickTrap(first bool) *cliSimTrap {
	p := 0.25
	if first {
		p = 0.5
	}
	if ws.rng.Float64() >= p {
		return nil
	}
	t := &cliSimTrap{sig: syscall.SIGINT, hold: time.Duration(ws.rng.IntN(300)) * time.Millisecond}
	if ws.rng.Float64() < 0.35 {
		t.sig = syscall.SIGKILL
	}
	switch x := ws.rng.Float64(); {
	case x < 0.25:
		t.moment, t.delay = "after", time.Duration(ws.rng.IntN(12000))*time.Millisecond
	case x < 0.5:
		// A replacement's read before its POST is the apply's first or second listing (after a refresh's).
		t.moment, t.route, t.n = "request", mockservice.RouteListBackups, []int{1, 2, 2, 3}[ws.rng.IntN(4)]
	case x < 0.65:
		t.moment, t.route, t.n = "request", mockservice.RouteTrigger, 1+ws.rng.IntN(2)
	case x < 0.7:
		t.moment, t.route, t.n = "request", mockservice.RouteGetAccount, 1+ws.rng.IntN(2)
	case x < 0.75:
		t.moment, t.status = "answer", http.StatusConflict
	case x < 0.82:
		t.moment, t.status, t.delay = "answer", http.StatusConflict, time.Duration(ws.rng.IntN(2500))*time.Millisecond
	case x < 0.87:
		t.moment, t.status = "answer", http.StatusAccepted
	default:
		t.moment, t.status, t.delay = "answer", http.StatusAccepted, time.Duration(ws.rng.IntN(6000))*time.Millisecond
	}
	return t
}

// exec runs a command to its end, arming its trap, and records what happened.
func (ws *cliSimWorkspace) exec(run *cliSimRun) {
	key := ws.w.register(run)
	ctx, cancel := context.WithTimeout(context.Background(), cliSimRunTimeout)
	defer cancel()
	out := &cliSimOutput{}
	run.start = time.Now()
	p, err := ws.c.start(ctx, out, []string{EnvBaseURL + "=" + ws.w.url, EnvAPIKey + "=" + key}, run.args...)
	if err != nil {
		ws.w.t.Fatalf("%s: %v", run.label, err)
	}
	ws.w.mu.Lock()
	run.proc, run.pgid = p, p.cmd.Process.Pid
	ws.w.mu.Unlock()
	if run.trap != nil && run.trap.moment == "after" {
		timer := time.AfterFunc(run.trap.delay, func() { run.fire() })
		defer timer.Stop()
	}
	err = p.wait()
	ws.w.mu.Lock()
	run.end = time.Now()
	ws.w.mu.Unlock()
	run.timedOut = ctx.Err() != nil
	run.exit = 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		run.exit = exitErr.ExitCode()
	} else if err != nil {
		run.exit = -1
	}
	run.completes, run.output = out.completions(), out.String()
}

// cliSimSaved is what a workspace's state holds of its resources.
type cliSimSaved struct {
	trigger, guard bool
	// Of the trigger: its backup id and triggered_at, and whether it is tainted.
	id, triggeredAt string
	tainted         bool
}

// saved reads the workspace's state.
func (ws *cliSimWorkspace) saved() cliSimSaved {
	var out cliSimSaved
	raw, err := os.ReadFile(filepath.Join(ws.c.dir, "terraform.tfstate"))
	if err != nil {
		return out
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Status     string
				Attributes struct {
					ID          string `json:"id"`
					TriggeredAt string `json:"triggered_at"`
				}
			}
		}
	}
	if json.Unmarshal(raw, &st) != nil {
		return out
	}
	for _, r := range st.Resources {
		switch {
		case len(r.Instances) != 1:
		case r.Type == "backup_trigger" && r.Name == "this":
			in := r.Instances[0]
			out.trigger, out.id, out.triggeredAt, out.tainted = true, in.Attributes.ID, in.Attributes.TriggeredAt, in.Status == "tainted"
		case r.Type == "backup_on_destroy" && r.Name == "guard":
			out.guard = true
		}
	}
	return out
}

// cliSimTrap is when a command gets its signal: a delay after it starts
// ("after"), its n-th request of a route ("request", before the mock
// serves it), or its first trigger answered with status ("answer", before
// the answer goes out, or delay after it). hold delays the request or the
// answer once the signal is sent, so that Terraform has it first.
type cliSimTrap struct {
	sig    syscall.Signal
	moment string
	delay  time.Duration
	route  mockservice.Route
	n      int
	status int
	hold   time.Duration
}

func (t *cliSimTrap) String() string {
	name := "SIGINT"
	if t.sig == syscall.SIGKILL {
		name = "SIGKILL"
	}
	switch t.moment {
	case "after":
		return fmt.Sprintf("%s %s after its start", name, t.delay)
	case "request":
		return fmt.Sprintf("%s on its %s request #%d", name, t.route, t.n)
	}
	if t.delay > 0 {
		return fmt.Sprintf("%s %s after a %d to its trigger", name, t.delay, t.status)
	}
	return fmt.Sprintf("%s on a %d to its trigger, before the answer goes out", name, t.status)
}

// cliSimRun is one command the simulation ran.
type cliSimRun struct {
	w      *cliSimWorld
	label  string // workspace.command: its API key queues backups under this label
	ws     string
	args   []string
	change *cliSimChange // the change it attempts; nil: it must queue nothing
	reuse  time.Duration // the reuse_within this attempt reads
	trap   *cliSimTrap
	proc   *cliProcess

	start, end time.Time
	exit       int // -1: killed by a signal
	timedOut   bool
	output     string
	completes  []time.Time // when Terraform printed the trigger's creation or modification complete

	// Under w.mu:
	signal     syscall.Signal // the signal sent, 0 if none
	signalAt   time.Time
	pgid       int // its process group, which its signal goes to
	requests   map[mockservice.Route]int
	posts      int
	lostAnswer bool      // a trigger's answer may not have reached it whole (a fault, a 5xx, a signal)
	answeredAt time.Time // when its last trigger answer was written
	claimed    string
	// taintedEmpty: the state holds the trigger tainted, without a backup,
	// after this attempt (a replacement that queued nothing).
	taintedEmpty bool
}

func (r *cliSimRun) sent(route mockservice.Route) int {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.requests[route]++
	if route == mockservice.RouteTrigger {
		r.posts++
	}
	return r.requests[route]
}

// answered records a trigger's answer, written to a request that arrived
// then: lost when a fault may have hit it, its status is not the service's
// clean 202, 409 or 429, or a signal came while it was served (see also fire).
func (r *cliSimRun) answered(status int, arrived time.Time, faulty bool) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.answeredAt = time.Now()
	clean := status == http.StatusAccepted || status == http.StatusConflict || status == http.StatusTooManyRequests
	if faulty || !clean || (r.signal != 0 && !r.signalAt.Before(arrived)) {
		r.lostAnswer = true
	}
}

func (r *cliSimRun) springOnRequest(route mockservice.Route, n int) {
	if t := r.trap; t != nil && t.moment == "request" && t.route == route && t.n == n && r.fire() {
		time.Sleep(t.hold)
	}
}

// springOnAnswer fires an answer trap; it says whether it held the answer back after a signal.
func (r *cliSimRun) springOnAnswer(status int) bool {
	t := r.trap
	if t == nil || t.moment != "answer" || t.status != status {
		return false
	}
	if t.delay > 0 {
		time.AfterFunc(t.delay, func() { r.fire() })
		return false
	}
	if !r.fire() {
		return false
	}
	time.Sleep(t.hold)
	return true
}

// fire sends the trap's signal to the command's process group, once, and says whether it did.
func (r *cliSimRun) fire() bool {
	r.w.mu.Lock()
	if r.signal != 0 || r.proc == nil || !r.end.IsZero() {
		r.w.mu.Unlock()
		return false
	}
	select {
	case <-r.proc.done:
		r.w.mu.Unlock()
		return false
	default:
	}
	r.signal, r.signalAt = r.trap.sig, time.Now()
	if !r.answeredAt.IsZero() && r.signalAt.Sub(r.answeredAt) < cliSimAnswerRead {
		r.lostAnswer = true // the provider may not have read it yet
	}
	r.w.mu.Unlock()
	r.proc.signal(r.trap.sig)
	return true
}

// cliSimOutput keeps a command's output and when Terraform printed the
// trigger's "Creation complete" or "Modifications complete".
type cliSimOutput struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte
	times   []time.Time
}

var cliSimComplete = regexp.MustCompile(`^backup_trigger\.this: (Creation|Modifications) complete`)

func (o *cliSimOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if o.buf.Len() < 1<<20 {
		o.buf.Write(p)
	}
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		if cliSimComplete.Match(o.partial[:i]) {
			o.times = append(o.times, now)
		}
		o.partial = o.partial[i+1:]
	}
	return len(p), nil
}

func (o *cliSimOutput) completions() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.times)
}

func (o *cliSimOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
