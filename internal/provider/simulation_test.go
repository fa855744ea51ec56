package provider

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/backup-service/terraform-provider-backup/internal/client"
	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
	"github.com/backup-service/terraform-provider-backup/internal/workflow"
)

// A deterministic simulation of the guards (issue 46): providers driven
// over the plugin protocol, as Terraform drives them, against the mock on
// synctest's virtual time, through seeded random sequences of users'
// operations, interruptions and the service's misbehaviour. After each
// step a checker judges from the mock's ground truth alone (see
// simulation_checker_test.go). Replay a failure with
// make simulate SEED=<seed> STEPS=<steps>.

var (
	simSeed  = flag.Uint64("sim.seed", 0, "simulate the one sequence of this seed (0: sequences from seed 1 on)")
	simSteps = flag.Int("sim.steps", 0, "with -sim.seed, the steps of its sequence; else the steps of all sequences together")
	simFrom  = flag.Uint64("sim.from", 1, "without -sim.seed, the first sequence's seed (a deeper run in parts)")
)

const (
	// simSequenceSteps is the length of each sequence of a run of many.
	simSequenceSteps = 20
	// simDefaultSteps is TestSimulation's run: 1,000 sequences.
	simDefaultSteps = 1000 * simSequenceSteps
	simBaseURL      = "http://127.0.0.1:1"
)

//nolint:tparallel // its sequences run on workers of their own, one per core, not as parallel subtests
func TestSimulation(t *testing.T) {
	t.Parallel() // beside the CLI tests, which mostly wait on terraform
	if *simSeed != 0 {
		steps := *simSteps
		if steps <= 0 {
			steps = simSequenceSteps
		}
		if v := runSimulation(t, *simSeed, steps, true); len(v) > 0 {
			t.Fatal(v[0].report)
		}
		return
	}
	total := *simSteps
	switch {
	case total > 0:
	case raceDetector:
		total = simDefaultSteps / 20 // for the races of its goroutines, not for its sequences
	default:
		total = simDefaultSteps
	}
	sequences := max(total/simSequenceSteps, 1)
	type found struct {
		seed  uint64
		after int
	}
	var (
		mu       sync.Mutex
		first    = map[string]found{}
		failures []string
		// failedSeeds, to replay each one
		failedSeeds []uint64
		next        = max(*simFrom, 1)
		last        = next + uint64(sequences) - 1
		done        int
	)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) { // each sequence is deterministic, whatever runs beside it
		wg.Go(func() {
			for {
				mu.Lock()
				if next > last {
					mu.Unlock()
					return
				}
				seed := next
				next++
				mu.Unlock()
				v := runSimulation(t, seed, simSequenceSteps, true)
				mu.Lock()
				done++
				if len(v) > 0 {
					failures = append(failures, v[0].report)
					failedSeeds = append(failedSeeds, seed)
					for _, x := range v {
						if _, ok := first[x.category]; !ok {
							first[x.category] = found{seed, done}
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for cat, f := range first {
		t.Logf("category %s: first found by seed %d (sequence %d)", cat, f.seed, f.after)
	}
	t.Logf("%d sequences of %d steps simulated", done, simSequenceSteps)
	if len(failures) > 0 {
		slices.Sort(failedSeeds)
		t.Fatalf("%d failing sequences (seeds %v); the first:\n%s", len(failures), failedSeeds, failures[0])
	}
}

// runSimulation runs the sequence of seed in its own bubble and returns
// its violations (none when every step passed); runnerClocks puts some
// operations on machines whose clocks are minutes off.
func runSimulation(t *testing.T, seed uint64, steps int, runnerClocks bool) []simViolation {
	var out []simViolation
	t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w := newSimWorld(t, seed)
			if runnerClocks {
				w.runners = rand.New(rand.NewPCG(seed, 0xc10c))
			}
			for i := range steps {
				w.step(i)
				if len(w.violations) > 0 {
					break
				}
			}
			// Requests the service still holds (latency faults) end
			// before the bubble does.
			time.Sleep(2 * mockservice.MaxLatency)
			out = w.violations
			if len(out) > 0 {
				w.attachReport(seed, steps)
				out = w.violations
			}
		})
	})
	return out
}

// simTransport hands each request to the mock in memory, labelled with
// the operation that sends it, so that the mock records who queued what.
// Like a socket, it gives up when the request's context ends, while the
// service may go on processing.
type simTransport struct {
	srv   *mockservice.Server
	label string
}

// simRequestTime is what each request costs in virtual time: an odd
// figure, so that waits of whole seconds and timeouts rarely end at the
// same instant (a select between them would choose at random).
const simRequestTime = 1371 * time.Microsecond

// simRequestTimeout is the client's per-request timeout (see provider).
const simRequestTimeout = 29*time.Second + 317113*time.Microsecond

func (tr *simTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	time.Sleep(simRequestTime)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.WroteRequest != nil {
		// As a socket's transport does once the request is on the wire:
		// the client then knows it may have been processed.
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	in := req.Clone(mockservice.WithQueuedBy(context.WithoutCancel(req.Context()), tr.label))
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.srv.ServeHTTP(rec, in)
	}()
	select {
	case <-done:
		if simTrace {
			fmt.Printf("%s %s %s %s -> %d\n", time.Now().UTC().Format("15:04:05.000"), tr.label, req.Method, req.URL.Path, rec.Code)
		}
		return rec.Result(), nil
	case <-req.Context().Done():
		if simTrace {
			fmt.Printf("%s %s %s %s -> gave up (%v)\n", time.Now().UTC().Format("15:04:05.000"), tr.label, req.Method, req.URL.Path, context.Cause(req.Context()))
		}
		return nil, req.Context().Err()
	}
}

// simRunnerClock is a runner's clock: true (virtual) time, skewed.
type simRunnerClock struct{ skew time.Duration }

func (c simRunnerClock) Now() time.Time                         { return time.Now().Add(c.skew) }
func (c simRunnerClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// simTrace prints every request (SIM_TRACE=1), to read a replay.
var simTrace = os.Getenv("SIM_TRACE") != ""

// simWorld is one sequence: the mock, the users (actors) and what
// Terraform keeps for each of their resources.
type simWorld struct {
	t          *testing.T
	seed       uint64
	rng        *rand.Rand
	srv        *mockservice.Server
	schema     *tfprotov6.GetProviderSchemaResponse
	accounts   []string
	key        string
	offset     time.Duration
	actors     []*simActor
	start      time.Time
	lines      []string
	opCount    int // operations drawn
	violations []simViolation
	changes    map[string]*simChange
	mu         sync.Mutex // guards violations, changes and kills: two operations may overlap
	// runners draws the clock of the machine each operation runs on, from
	// a stream of its own (nil: every machine on true time), so that the
	// steps each seed draws stay as they were.
	runners *rand.Rand
}

// simActor is one user of the key: a pipeline with its own provider
// processes, one backup_trigger and one backup_on_destroy.
type simActor struct {
	id       int
	release  bool // destroy_without_backup names the first account
	trigger  simResource
	guard    simResource
	release2 int // numbers its triggers values
}

// simResource is what Terraform keeps of one resource.
type simResource struct {
	state   tftypes.Value // null: not in the state
	private []byte
	tainted bool
	release string
	// change is the change the state stands for (or is being made);
	// standsUntil is until when a guard's stopped destroy stands for the
	// next one: its state's pending_destroy_backup.counts_until, or, with
	// no record, when it stopped plus its resume_within (on the clock of the
	// machine it stopped on), and resume that resume_within.
	change      *simChange
	standsUntil time.Time
	resume      time.Duration
	// lastWentAhead is when the resource's latest change went ahead.
	lastWentAhead time.Time
}

// simChange is one change a backup is taken for: a trigger's triggers
// value, a guard's destroy, an action's invocation, with its retries.
type simChange struct {
	key   string
	first time.Time // when its first operation began
	// prevWentAhead is when the resource's previous change went ahead
	// (zero: none): the change's backup must be newer.
	prevWentAhead time.Time
	// wentAhead: an operation of the change has been reported successful.
	wentAhead bool
	kills     int
	reuse     time.Duration // the longest reuse_within of its operations
	anyReuse  bool
	// reuseOffset is the service's clock offset at its earliest operation
	// with reuse_within: a record stamped by a clock set back since reads younger.
	reuseOffset time.Duration
	// firstOffset is the service's clock offset at its first operation.
	firstOffset time.Duration
	ops         int
	reported    bool // a duplicate, reported once
}

func newSimWorld(t *testing.T, seed uint64) *simWorld {
	rng := rand.New(rand.NewPCG(seed, 0x51a1a7e))
	w := &simWorld{t: t, seed: seed, rng: rng, changes: map[string]*simChange{}, start: time.Now()}
	pending := time.Duration(1+rng.IntN(20)) * time.Second
	running := []time.Duration{2 * time.Second, 30 * time.Second, 3 * time.Minute, 8 * time.Minute}[rng.IntN(4)]
	w.srv = mockservice.New(mockservice.Options{Seed: seed, Accounts: 2, RateLimit: 10000, PendingFor: pending, RunningFor: running})
	w.key = w.srv.DemoKey()
	w.accounts = w.srv.AccountIDs()
	if rng.IntN(3) == 0 {
		w.offset = time.Duration(rng.IntN(61)-30) * time.Minute
		w.srv.SetClockOffset(w.offset)
	}
	if rng.IntN(3) == 0 {
		w.srv.SetListingLag(time.Duration(1+rng.IntN(20)) * time.Second)
	}
	// Earlier good backups, for reuse_within to find.
	now := time.Now()
	w.srv.AddHistory(w.accounts[0], mockservice.BackupSpec{CreatedAt: now.Add(-3 * time.Hour)},
		mockservice.BackupSpec{CreatedAt: now.Add(-time.Duration(40+rng.IntN(40)) * time.Minute)})
	for i := range pick(rng, 2, 2, 3, 3, 4, 5, 8) {
		w.actors = append(w.actors, &simActor{id: i + 1, release: rng.IntN(4) == 0,
			trigger: simResource{state: tftypes.NewValue(tftypes.Object{}, nil)}, guard: simResource{state: tftypes.NewValue(tftypes.Object{}, nil)}})
	}
	srv, err := serve(newTestProvider(nil))()
	if err != nil {
		t.Fatal(err)
	}
	w.schema, err = srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range w.actors {
		a.trigger.state = tftypes.NewValue(w.schema.ResourceSchemas["backup_trigger"].ValueType(), nil)
		a.guard.state = tftypes.NewValue(w.schema.ResourceSchemas["backup_on_destroy"].ValueType(), nil)
	}
	return w
}

// pick returns one of the choices.
func pick[T any](rng *rand.Rand, choices ...T) T { return choices[rng.IntN(len(choices))] }

// simOp is one user operation of a step.
type simOp struct {
	actor   *simActor
	kind    string // trigger-apply, trigger-refresh, trigger-destroy, guard-apply, guard-refresh, guard-destroy, invoke
	delay   time.Duration
	attrs   map[string]tftypes.Value
	desc    []string
	release string // trigger-apply: the triggers value
	fault   *mockservice.Fault
	stopAt  time.Duration // 0: not interrupted
	kill    bool
	reuse   time.Duration
	waits   bool
	ids     []string // invoke: the accounts
	num     int      // its number in the sequence, for labels
	jitter  float64  // the client's jitter, drawn in order so that it replays
	change  *simChange
	// skew is how far the clock of the machine it runs on is from true
	// time: a pipeline's runs land on different machines.
	skew time.Duration
}

// step draws and runs one step: the service's misbehaviour, then one
// operation, or two of different users overlapping.
func (w *simWorld) step(i int) {
	rng := w.rng
	gap := pick(rng, 0, time.Second, 3*time.Second, 8*time.Second, 30*time.Second, 2*time.Minute, 10*time.Minute, 45*time.Minute, 2*time.Hour)
	time.Sleep(gap)
	line := fmt.Sprintf("step %d at +%s:", i, time.Since(w.start).Round(time.Second))
	if rng.IntN(6) == 0 {
		line += " service: " + w.misbehave()
	}
	n := 1
	if rng.IntN(3) == 0 && len(w.actors) > 1 {
		n = 2
	}
	perm := rng.Perm(len(w.actors))
	ops := make([]*simOp, n)
	for k := range n {
		ops[k] = w.drawOp(w.actors[perm[k]])
		if k > 0 {
			ops[k].delay = ops[k-1].delay + time.Duration(1+rng.IntN(5000))*time.Millisecond + 137*time.Microsecond
		}
		line += " | " + ops[k].String()
	}
	w.lines = append(w.lines, line)
	var wg sync.WaitGroup
	for _, op := range ops {
		wg.Go(func() {
			time.Sleep(op.delay)
			w.run(op)
		})
	}
	wg.Wait()
	w.srv.ClearFaults()
	w.checkHistory()
}

// misbehave changes how the service behaves from now on, and says how.
func (w *simWorld) misbehave() string {
	acc := w.accounts[0]
	switch w.rng.IntN(6) {
	case 0:
		q := pick(w.rng, mockservice.QuirkNone, mockservice.QuirkNone, mockservice.QuirkNone,
			mockservice.QuirkNoCompletedAt, mockservice.QuirkCompletedBeforeCreated, mockservice.QuirkErrorSet, mockservice.QuirkFutureDated)
		w.srv.SetRecordQuirk(acc, q)
		return fmt.Sprintf("record quirk %d", q)
	case 1:
		w.srv.SetAccountFailure(acc, "storage quota exceeded")
		return "backups fail"
	case 2:
		w.srv.SetAccountFailure(acc, "")
		return "backups succeed"
	case 3:
		st := pick(w.rng, mockservice.StatePaused, mockservice.StateActive, mockservice.StateActive)
		w.srv.SetAccountState(acc, st)
		return "account " + string(st)
	case 4:
		if w.rng.IntN(4) == 0 {
			w.srv.DeleteAccount(acc)
			return "account deleted"
		}
		return "nothing"
	default:
		d := time.Duration(w.rng.IntN(61)-30) * time.Minute
		w.offset = d
		w.srv.SetClockOffset(d)
		return fmt.Sprintf("clock offset %s", d)
	}
}

func (op *simOp) String() string {
	s := fmt.Sprintf("a%d %s", op.actor.id, op.kind)
	if op.delay > 0 {
		s += fmt.Sprintf(" (+%s)", op.delay)
	}
	if op.skew != 0 {
		s += fmt.Sprintf(" runner-clock=%+v", op.skew)
	}
	if len(op.desc) > 0 {
		s += " " + strings.Join(op.desc, " ")
	}
	if op.fault != nil {
		s += fmt.Sprintf(" fault=%s×%d", faultName(op.fault.Kind), op.fault.Times)
		if op.fault.Route != "" {
			s += "@" + string(op.fault.Route)
		}
	}
	if op.stopAt > 0 {
		what := "ctrl-c"
		if op.kill {
			what = "kill"
		}
		s += fmt.Sprintf(" %s@%s", what, op.stopAt)
	}
	return s
}

func faultName(k mockservice.FaultKind) string {
	return map[mockservice.FaultKind]string{
		mockservice.FaultServerError: "500-unprocessed", mockservice.FaultAcceptThenError: "500-processed",
		mockservice.FaultOverload: "429", mockservice.FaultLatency: "latency-40s", mockservice.FaultProxyNotFound: "html-404",
		mockservice.FaultShuffledPage: "reversed-page", mockservice.FaultDuplicateItem: "duplicate-item",
	}[k]
}

var simDurations = []string{"", "", "5m", "30m", "1h"}

// drawOp draws an operation of the actor, with its configuration, its
// fault and its interruption.
func (w *simWorld) drawOp(a *simActor) *simOp {
	rng := w.rng
	w.opCount++
	op := &simOp{actor: a, attrs: map[string]tftypes.Value{}, num: w.opCount, jitter: rng.Float64()}
	if w.runners != nil && w.runners.IntN(6) == 0 {
		op.skew = pick(w.runners, -20*time.Minute, -3*time.Minute, 3*time.Minute, 20*time.Minute)
	}
	set := func(name string, v tftypes.Value, shown string) {
		op.attrs[name] = v
		op.desc = append(op.desc, name+"="+shown)
	}
	setString := func(name, v string) {
		if v != "" {
			set(name, tfStr(v), v)
		}
	}
	op.kind = pick(rng, "trigger-apply", "trigger-apply", "trigger-apply", "trigger-refresh", "trigger-destroy",
		"guard-apply", "guard-refresh", "guard-destroy", "guard-destroy", "invoke")
	reuse := pick(rng, simDurations...)
	if reuse != "" {
		op.reuse, _ = time.ParseDuration(reuse)
	}
	timeout := pick(rng, "", "", "30s", "2m", "10m")
	onConflict := pick(rng, "", "wait", "fail")
	switch op.kind {
	case "trigger-apply":
		op.attrs["account_id"] = tfStr(w.accounts[0])
		op.release = a.trigger.release
		if op.release == "" || rng.IntN(2) == 0 {
			a.release2++
			op.release = fmt.Sprintf("v%d", a.release2)
		}
		set("triggers", strMap(map[string]string{"release": op.release}), op.release)
		op.waits = rng.IntN(3) > 0
		set("wait_for_completion", tftypes.NewValue(tftypes.Bool, op.waits), fmt.Sprint(op.waits))
		setString("on_conflict", onConflict)
		setString("reuse_within", reuse)
		if timeout != "" {
			set("timeouts", w.timeouts("backup_trigger", "create", timeout), timeout)
		}
	case "guard-apply", "guard-destroy":
		op.attrs["account_id"] = tfStr(w.accounts[0])
		setString("on_conflict", onConflict)
		setString("reuse_within", reuse)
		setString("resume_within", pick(rng, "", "", "1m", "30m"))
		if timeout != "" {
			set("timeouts", w.timeouts("backup_on_destroy", "delete", timeout), timeout)
		}
		if op.kind == "guard-destroy" {
			// The configuration of the destroyed guard is its state's.
			op.attrs, op.desc = map[string]tftypes.Value{}, nil
			op.reuse = 0
		}
	case "invoke":
		// One account: a second would run in the action's own goroutines,
		// whose requests at one instant no clock orders, and a replay
		// would not reproduce. The draw stays, so that seeds keep their steps.
		op.ids = []string{w.accounts[0]}
		_ = rng.IntN(3)
		set("account_ids", strSet(op.ids...), strings.Join(op.ids, ","))
		op.waits = true
		switch rng.IntN(4) {
		case 0:
			op.waits = false
			set("wait_for_completion", tftypes.NewValue(tftypes.Bool, false), "false")
		case 1:
			set("wait_for_completion", tftypes.NewValue(tftypes.Bool, true), "true")
		}
		setString("on_conflict", onConflict)
		setString("reuse_within", reuse)
		if timeout != "" {
			set("timeouts", w.actionTimeouts(timeout), timeout)
		}
	default:
		op.reuse = 0
	}
	if rng.IntN(2) == 0 {
		f := pick(rng,
			mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger},
			mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteTrigger},
			mockservice.Fault{Kind: mockservice.FaultAcceptThenError, Route: mockservice.RouteTrigger},
			mockservice.Fault{Kind: mockservice.FaultLatency, Route: mockservice.RouteTrigger, Latency: 40 * time.Second},
			mockservice.Fault{Kind: mockservice.FaultOverload, RetryAfter: pick(rng, 0, time.Second, 7*time.Second)},
			mockservice.Fault{Kind: mockservice.FaultServerError, Route: mockservice.RouteListBackups},
			mockservice.Fault{Kind: mockservice.FaultProxyNotFound, Route: pick(rng, mockservice.RouteListBackups, mockservice.RouteGetAccount)},
			mockservice.Fault{Kind: mockservice.FaultShuffledPage, Route: mockservice.RouteListBackups},
			mockservice.Fault{Kind: mockservice.FaultDuplicateItem, Route: mockservice.RouteListBackups},
		)
		f.AccountID = w.accounts[0]
		f.Times = 1 + rng.IntN(3)
		op.fault = &f
	}
	if rng.IntN(4) == 0 && op.kind != "trigger-refresh" && op.kind != "guard-refresh" {
		op.stopAt = pick(rng, 500*time.Millisecond, 3*time.Second, 20*time.Second, 90*time.Second, 8*time.Minute)
		op.kill = rng.IntN(2) == 0
	}
	return op
}

// timeouts is a resource's timeouts block with one value set.
func (w *simWorld) timeouts(typeName, name, v string) tftypes.Value {
	typ := w.schema.ResourceSchemas[typeName].ValueType().(tftypes.Object).AttributeTypes["timeouts"].(tftypes.Object)
	return objectOf(typ, map[string]tftypes.Value{name: tfStr(v)})
}

func (w *simWorld) actionTimeouts(v string) tftypes.Value {
	typ := w.schema.ActionSchemas["backup_trigger"].Schema.ValueType().(tftypes.Object).AttributeTypes["timeouts"].(tftypes.Object)
	return objectOf(typ, map[string]tftypes.Value{"invoke": tfStr(v)})
}

// objectOf is a value of typ with the attributes given, every other null.
func objectOf(typ tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		vals[name] = v
	}
	return tftypes.NewValue(typ, vals)
}

// run runs an operation; a killed one is run again, by a new provider
// process, once its runner is killed: everything it returned is lost.
func (w *simWorld) run(op *simOp) {
	for attempt := 0; ; attempt++ {
		killed := op.kill && op.stopAt > 0 && attempt == 0
		if op.fault != nil && attempt == 0 {
			w.srv.AddFault(*op.fault)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if op.stopAt > 0 && attempt == 0 {
			stop := time.AfterFunc(op.stopAt, cancel)
			defer stop.Stop()
		}
		w.runOnce(ctx, op, attempt, killed)
		cancel()
		if !killed {
			return
		}
		w.mu.Lock()
		if op.change != nil {
			op.change.kills++
		}
		w.mu.Unlock()
	}
}

// provider is a new provider process of the actor, configured, whose
// requests carry label.
func (w *simWorld) provider(ctx context.Context, op *simOp, label string) tfprotov6.ProviderServer {
	tr := &simTransport{srv: w.srv, label: label}
	adjust := func(o *client.Options, _ *workflow.Settings) {
		o.HTTPClient = &http.Client{Transport: tr}
		o.Clock = simRunnerClock{op.skew}
		o.Jitter = func() float64 { return op.jitter }
		// Not whole seconds, as the mock's latency (30 s) and the polls are:
		// a request that times out as the service answers it would leave
		// the order of the two to the scheduler, and a replay would differ.
		o.RequestTimeout = simRequestTimeout
	}
	srv, err := serve(newTestProvider(adjust))()
	if err != nil {
		w.t.Fatal(err)
	}
	cfg := map[string]tftypes.Value{"base_url": tfStr(simBaseURL), "api_key": tfStr(w.key)}
	if op.actor.release {
		typ := w.schema.Provider.ValueType().(tftypes.Object).AttributeTypes["destroy_without_backup"].(tftypes.Object)
		cfg["destroy_without_backup"] = objectOf(typ, map[string]tftypes.Value{
			"account_ids": strList(w.accounts[0]), "reason": tfStr("OPS-1: account closed")})
	}
	resp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{
		TerraformVersion: "1.16.0", Config: w.dynamic(w.schema.Provider, objectOf(w.schema.Provider.ValueType().(tftypes.Object), cfg)),
	})
	if err != nil || diagText(resp.Diagnostics) != "" {
		w.t.Fatalf("configure: %v %s", err, diagText(resp.Diagnostics))
	}
	return srv
}

func (w *simWorld) dynamic(s *tfprotov6.Schema, v tftypes.Value) *tfprotov6.DynamicValue {
	dv, err := tfprotov6.NewDynamicValue(s.ValueType(), v)
	if err != nil {
		w.t.Fatal(err)
	}
	return &dv
}

func (w *simWorld) value(s *tfprotov6.Schema, dv *tfprotov6.DynamicValue) tftypes.Value {
	if dv == nil {
		return tftypes.NewValue(s.ValueType(), nil)
	}
	v, err := dv.Unmarshal(s.ValueType())
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

// attrValue is one attribute of an object value; null when it has none.
func attrValue(v tftypes.Value, name string) tftypes.Value {
	m := map[string]tftypes.Value{}
	if v.IsNull() || v.As(&m) != nil || !m[name].IsKnown() {
		return tftypes.NewValue(tftypes.DynamicPseudoType, nil)
	}
	return m[name]
}

// attrOf is one attribute of an object value, as a Go string, bool or "".
func attrOf(v tftypes.Value, name string) string {
	a := attrValue(v, name)
	if a.IsNull() {
		return ""
	}
	var s string
	if a.As(&s) == nil {
		return s
	}
	var b bool
	if a.As(&b) == nil {
		return fmt.Sprint(b)
	}
	return ""
}

// proposed is the new state Terraform proposes: the configuration, with
// the prior state's values for computed attributes it leaves out.
func proposed(s *tfprotov6.Schema, prior, config tftypes.Value) tftypes.Value {
	typ := s.ValueType().(tftypes.Object)
	cfg, old := map[string]tftypes.Value{}, map[string]tftypes.Value{}
	_ = config.As(&cfg)
	if !prior.IsNull() {
		_ = prior.As(&old)
	}
	computed := map[string]bool{}
	for _, a := range s.Block.Attributes {
		computed[a.Name] = a.Computed
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		switch v := cfg[name]; {
		case !v.IsNull():
			vals[name] = v
		case computed[name] && !prior.IsNull():
			vals[name] = old[name]
		default:
			vals[name] = tftypes.NewValue(at, nil)
		}
	}
	return tftypes.NewValue(typ, vals)
}

// simResult is what an operation returned to Terraform.
type simResult struct {
	errors   string
	warnings string // shown beside a violation
	state    tftypes.Value
	ok       bool // no error
}

// plan is PlanResourceChange; a null config plans a destroy.
func (w *simWorld) plan(ctx context.Context, srv tfprotov6.ProviderServer, typeName string, res *simResource, config tftypes.Value) (*tfprotov6.PlanResourceChangeResponse, tftypes.Value, string) {
	s := w.schema.ResourceSchemas[typeName]
	prop := tftypes.NewValue(s.ValueType(), nil)
	if !config.IsNull() {
		prop = proposed(s, res.state, config)
	}
	resp, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: w.dynamic(s, res.state), ProposedNewState: w.dynamic(s, prop),
		Config: w.dynamic(s, config), PriorPrivate: res.private,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return resp, w.value(s, resp.PlannedState), diagText(resp.Diagnostics)
}

// apply is ApplyResourceChange of a plan.
func (w *simWorld) apply(ctx context.Context, srv tfprotov6.ProviderServer, typeName string, prior tftypes.Value, plan *tfprotov6.PlanResourceChangeResponse, config tftypes.Value) (simResult, []byte) {
	s := w.schema.ResourceSchemas[typeName]
	resp, err := srv.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: typeName, PriorState: w.dynamic(s, prior), PlannedState: plan.PlannedState,
		Config: w.dynamic(s, config), PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil {
		w.t.Fatal(err)
	}
	errs := diagText(resp.Diagnostics)
	if simTrace {
		fmt.Printf("%s apply %s: status=%s id=%s errors=%q warnings=%q\n", time.Now().UTC().Format("15:04:05.000"), typeName,
			attrOf(w.value(s, resp.NewState), "backup_status"), attrOf(w.value(s, resp.NewState), "id"), errs, diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning))
	}
	return simResult{errors: errs, warnings: diagsOf(resp.Diagnostics, tfprotov6.DiagnosticSeverityWarning), state: w.value(s, resp.NewState), ok: errs == ""}, resp.Private
}

// refresh is ReadResource; it says whether the command may go on.
func (w *simWorld) refresh(ctx context.Context, srv tfprotov6.ProviderServer, typeName string, res *simResource, discard bool) bool {
	s := w.schema.ResourceSchemas[typeName]
	resp, err := srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: w.dynamic(s, res.state), Private: res.private})
	if err != nil {
		w.t.Fatal(err)
	}
	if diagText(resp.Diagnostics) != "" {
		return false
	}
	if !discard {
		res.state, res.private = w.value(s, resp.NewState), resp.Private
	}
	return true
}

// newChange registers a change of what key names.
func (w *simWorld) newChange(key string, prevWentAhead time.Time) *simChange {
	c := &simChange{key: key, first: time.Now(), prevWentAhead: prevWentAhead}
	w.mu.Lock()
	w.changes[key] = c
	w.mu.Unlock()
	return c
}

// use counts an operation of the change, with its reuse_within and the
// service's clock offset.
func (c *simChange) use(reuse, offset time.Duration) {
	c.ops++
	if c.ops == 1 {
		c.firstOffset = offset
	}
	if reuse > 0 {
		if !c.anyReuse || offset < c.reuseOffset {
			c.reuseOffset = offset
		}
		c.anyReuse = true
		c.reuse = max(c.reuse, reuse)
	}
}

// runOnce runs one attempt of an operation as Terraform would, and,
// unless its runner is killed, keeps what it returned and checks it.
func (w *simWorld) runOnce(ctx context.Context, op *simOp, attempt int, killed bool) {
	a := op.actor
	label := func() string { return fmt.Sprintf("%s#%d.%d", op.change.key, op.num, attempt) }
	switch op.kind {
	case "trigger-refresh", "guard-refresh":
		res, typeName := &a.trigger, "backup_trigger"
		if op.kind == "guard-refresh" {
			res, typeName = &a.guard, "backup_on_destroy"
		}
		if res.state.IsNull() {
			return
		}
		op.change = &simChange{key: fmt.Sprintf("a%d.refresh", a.id)}
		w.refresh(ctx, w.provider(ctx, op, label()), typeName, res, killed)
	case "trigger-apply":
		w.triggerApply(ctx, op, label, killed)
	case "trigger-destroy":
		res := &a.trigger
		if res.state.IsNull() {
			return
		}
		if op.change == nil {
			op.change = &simChange{key: fmt.Sprintf("a%d.trigger-destroy", a.id)}
		}
		srv := w.provider(ctx, op, label())
		if !w.refresh(ctx, srv, "backup_trigger", res, killed) || res.state.IsNull() {
			return
		}
		plan, _, errs := w.plan(ctx, srv, "backup_trigger", res, tftypes.NewValue(w.schema.ResourceSchemas["backup_trigger"].ValueType(), nil))
		if errs != "" {
			return
		}
		r, private := w.apply(ctx, srv, "backup_trigger", res.state, plan, tftypes.NewValue(w.schema.ResourceSchemas["backup_trigger"].ValueType(), nil))
		if killed {
			return
		}
		if r.ok {
			a.trigger = simResource{state: r.state}
		} else if !r.state.IsNull() {
			res.state, res.private = r.state, private
		}
	case "guard-apply":
		w.guardApply(ctx, op, label, killed)
	case "guard-destroy":
		w.guardDestroy(ctx, op, label, killed)
	case "invoke":
		w.invoke(ctx, op, label, killed)
	}
}

func (w *simWorld) triggerApply(ctx context.Context, op *simOp, label func() string, killed bool) {
	a, res := op.actor, &op.actor.trigger
	s := w.schema.ResourceSchemas["backup_trigger"]
	if op.change == nil {
		if res.change == nil || res.release != op.release {
			prev := res.lastWentAhead
			res.change = w.newChange(fmt.Sprintf("a%d.trigger.%d", a.id, op.num), prev)
			res.release = op.release
		}
		op.change = res.change
	}
	op.change.use(op.reuse, w.offset)
	srv := w.provider(ctx, op, label())
	if !res.state.IsNull() && !w.refresh(ctx, srv, "backup_trigger", res, killed) {
		return
	}
	config := objectOf(s.ValueType().(tftypes.Object), op.attrs)
	null := tftypes.NewValue(s.ValueType(), nil)
	start := time.Now()
	replace := res.tainted
	if !res.state.IsNull() && !replace {
		plan, planned, errs := w.plan(ctx, srv, "backup_trigger", res, config)
		switch {
		case errs != "":
			return
		case len(plan.RequiresReplace) > 0:
			replace = true
		case planned.Equal(res.state):
			// Nothing to apply: what depends on the trigger goes ahead on what its state shows.
			if !killed {
				w.triggerDone(op, simResult{state: res.state, ok: true}, start)
			}
			return
		default:
			r, private := w.apply(ctx, srv, "backup_trigger", res.state, plan, config)
			if killed {
				return
			}
			if !r.state.IsNull() {
				res.state, res.private = r.state, private
			}
			w.triggerDone(op, r, start)
			return
		}
	}
	var destroyPlan *tfprotov6.PlanResourceChangeResponse
	if replace {
		p, _, errs := w.plan(ctx, srv, "backup_trigger", res, null)
		if errs != "" {
			return
		}
		destroyPlan = p
	}
	empty := &simResource{state: null}
	createPlan, _, errs := w.plan(ctx, srv, "backup_trigger", empty, config)
	if errs != "" {
		return
	}
	if destroyPlan != nil {
		r, private := w.apply(ctx, srv, "backup_trigger", res.state, destroyPlan, null)
		if !r.ok {
			if !killed && !r.state.IsNull() {
				res.state, res.private = r.state, private
			}
			return
		}
		if !killed {
			res.state, res.private, res.tainted = null, nil, false
		}
	}
	r, private := w.apply(ctx, srv, "backup_trigger", null, createPlan, config)
	if killed {
		return
	}
	res.state, res.private, res.tainted = r.state, private, !r.ok && !r.state.IsNull()
	w.triggerDone(op, r, start)
}

// triggerDone checks a create or update that reported success, and marks
// its change gone ahead.
func (w *simWorld) triggerDone(op *simOp, r simResult, start time.Time) {
	if !r.ok || r.state.IsNull() {
		return
	}
	waits := attrOf(r.state, "wait_for_completion") == "true"
	if waits && attrOf(r.state, "backup_status") != "success" {
		return // an interrupted wait: saved, not gone ahead
	}
	w.checkTrigger(op, attrOf(r.state, "id"), waits, attrOf(r.state, "reused") == "true", start, time.Now())
	if !op.change.wentAhead {
		// The change goes ahead once; a later update of its settings takes
		// no backup and is not a change (the rule's After).
		op.change.wentAhead = true
		op.actor.trigger.lastWentAhead = time.Now()
	}
}

func (w *simWorld) guardApply(ctx context.Context, op *simOp, label func() string, killed bool) {
	a, res := op.actor, &op.actor.guard
	s := w.schema.ResourceSchemas["backup_on_destroy"]
	if op.change == nil {
		op.change = &simChange{key: fmt.Sprintf("a%d.guard-apply.%d", a.id, op.num)}
	}
	srv := w.provider(ctx, op, label())
	if !res.state.IsNull() && !w.refresh(ctx, srv, "backup_on_destroy", res, killed) {
		return
	}
	config := objectOf(s.ValueType().(tftypes.Object), op.attrs)
	plan, planned, errs := w.plan(ctx, srv, "backup_on_destroy", res, config)
	if errs != "" || planned.Equal(res.state) {
		return
	}
	r, private := w.apply(ctx, srv, "backup_on_destroy", res.state, plan, config)
	if killed || r.state.IsNull() {
		return
	}
	created := res.state.IsNull()
	res.state, res.private = r.state, private
	if r.ok {
		// A created or updated guard stands for no stopped destroy.
		res.change, res.standsUntil = nil, time.Time{}
		if created {
			res.lastWentAhead = time.Now()
		}
	}
}

func (w *simWorld) guardDestroy(ctx context.Context, op *simOp, label func() string, killed bool) {
	a, res := op.actor, &op.actor.guard
	if res.state.IsNull() {
		return
	}
	// An attempt that stops before its apply leaves the stopped destroy's
	// record, and so its change, to the next.
	stopped := res.change
	if op.change == nil {
		if res.change == nil || !res.stands(op.skew) {
			res.change = w.newChange(fmt.Sprintf("a%d.guard.%d", a.id, op.num), time.Time{})
		}
		op.change = res.change
	}
	reuse, _ := time.ParseDuration(attrOf(res.state, "reuse_within"))
	op.reuse = reuse
	op.change.use(reuse, w.offset)
	srv := w.provider(ctx, op, label())
	start := time.Now()
	if !w.refresh(ctx, srv, "backup_on_destroy", res, killed) {
		res.change = stopped
		return
	}
	null := tftypes.NewValue(w.schema.ResourceSchemas["backup_on_destroy"].ValueType(), nil)
	plan, _, errs := w.plan(ctx, srv, "backup_on_destroy", res, null)
	if errs != "" {
		res.change = stopped
		return
	}
	res.change = op.change // an attempt that applies: its record is this change's
	r, private := w.apply(ctx, srv, "backup_on_destroy", res.state, plan, null)
	if killed {
		return
	}
	if r.ok {
		w.checkGuard(op, start, time.Now(), r.warnings)
		a.guard = simResource{state: null}
		return
	}
	if !r.state.IsNull() {
		res.state, res.private = r.state, private
	}
	res.resume, _ = time.ParseDuration(attrOf(res.state, "resume_within"))
	res.standsUntil = time.Now().Add(op.skew + res.resume)
	if until, err := time.Parse(time.RFC3339, attrOf(attrValue(res.state, "pending_destroy_backup"), "counts_until")); err == nil {
		res.standsUntil = until
	}
}

// stands says whether a guard's stopped destroy stands for the next one,
// run on a machine whose clock is skew from true time: as documented, until
// its counts_until, and never longer than resume_within from now there.
func (res *simResource) stands(skew time.Duration) bool {
	now := time.Now().Add(skew)
	return !res.standsUntil.IsZero() && !now.After(res.standsUntil) && res.standsUntil.Sub(now) <= res.resume
}

func (w *simWorld) invoke(ctx context.Context, op *simOp, label func() string, killed bool) {
	if op.change == nil {
		op.change = w.newChange(fmt.Sprintf("a%d.action.%d", op.actor.id, op.num), time.Time{})
	}
	op.change.use(op.reuse, w.offset)
	srv := w.provider(ctx, op, label())
	s := w.schema.ActionSchemas["backup_trigger"].Schema
	start := time.Now()
	resp, err := srv.(tfprotov6.ActionServer).InvokeAction(ctx, &tfprotov6.InvokeActionRequest{
		ActionType: "backup_trigger", Config: w.dynamic(s, objectOf(s.ValueType().(tftypes.Object), op.attrs)),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	completed, errs := false, ""
	for ev := range resp.Events {
		if c, ok := ev.Type.(tfprotov6.CompletedInvokeActionEventType); ok {
			completed, errs = true, diagText(c.Diagnostics)
		}
	}
	if killed || !completed || errs != "" {
		return
	}
	w.checkAction(op, start, time.Now())
}
