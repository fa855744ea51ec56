package provider

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Terraform as the simulation plays it. Each behaviour below is the one
// Terraform's own source shows (hashicorp/terraform, main branch of
// August 2026, cited by file and function); the simulation drives the
// provider over the plugin protocol exactly so.
//
// A workspace's configuration, for each workspace:
//
//	resource "backup_trigger" "tN" { account_id, triggers = { release = "vR" }, ... }
//	resource "terraform_data" "migrate_tN" { input = "vR"; depends_on = [backup_trigger.tN] }
//	resource "terraform_data" "data" {}                                  # what the guard guards
//	resource "backup_on_destroy" "guard" { account_id; depends_on = [terraform_data.data] }
//	action "backup_trigger" "now" { config { account_ids = [...] } }
//
// A migration runs after its trigger, so it runs only once the trigger's
// apply returned no error and the command was not stopped: that is when a
// change goes ahead. The guard is destroyed before the data it depends on,
// and the data is destroyed only if the guard's destroy returned no error.
// terraform_data is Terraform's own (builtin) provider: it is played
// without a provider call.

// simPlanMode is the planning mode of a command (plans.Mode).
type simPlanMode int

const (
	simModeNormal      simPlanMode = iota
	simModeDestroy                 // terraform destroy
	simModeRefreshOnly             // terraform apply -refresh-only
	simModeInvoke                  // terraform apply -invoke: refresh-only, and the action
)

// simAction is a planned action on one object (plans.Action).
type simAction int

const (
	simNoOp simAction = iota
	simCreate
	simUpdate
	simDeleteThenCreate
	simCreateThenDelete
	simDelete
)

func (a simAction) String() string {
	return [...]string{"no-op", "create", "update", "replace", "replace (create first)", "delete"}[a]
}

// simObject is one object of the state (states.ResourceInstanceObject):
// its value, its private state and whether it is tainted, and beside them
// the simulation's own record, which the provider never sees.
type simObject struct {
	value   tftypes.Value
	private []byte
	tainted bool
	// chain is the change the object stands for and the operations of it
	// whose results reached it; guard is the guard's configuration it was
	// last applied with (a destroy reads its settings from the state).
	chain *simChain
	guard simGuardConf
}

// simState is a workspace's state: its objects, the deposed objects of
// create_before_destroy replacements, and the builtin terraform_data ones.
type simState struct {
	objects  map[string]*simObject
	deposed  map[string][]*simObject
	migrated map[string]int // terraform_data.migrate_tN: the release it last ran for
	data     bool           // terraform_data.data
}

func newSimState() simState {
	return simState{objects: map[string]*simObject{}, deposed: map[string][]*simObject{}, migrated: map[string]int{}}
}

// clone copies the maps; objects are never changed in place.
func (s simState) clone() simState {
	out := newSimState()
	for k, v := range s.objects {
		out.objects[k] = v
	}
	for k, v := range s.deposed {
		out.deposed[k] = slices.Clone(v)
	}
	for k, v := range s.migrated {
		out.migrated[k] = v
	}
	out.data = s.data
	return out
}

// equal says whether two states hold the same objects.
func (s simState) equal(o simState) bool {
	same := func(a, b *simObject) bool {
		return a.tainted == b.tainted && a.value.Equal(b.value) && bytes.Equal(a.private, b.private)
	}
	if len(s.objects) != len(o.objects) || len(s.deposed) != len(o.deposed) || s.data != o.data || !maps.Equal(s.migrated, o.migrated) {
		return false
	}
	for k, v := range s.objects {
		if w, ok := o.objects[k]; !ok || !same(v, w) {
			return false
		}
	}
	for k, v := range s.deposed {
		if !slices.EqualFunc(v, o.deposed[k], same) {
			return false
		}
	}
	return true
}

// simPlanned is one planned change (plans.ResourceInstanceChange).
type simPlanned struct {
	addr     string
	typeName string
	action   simAction
	before   tftypes.Value
	after    tftypes.Value
	config   tftypes.Value
	// private is the change's Private: what the provider planned from the
	// prior object's private state (none for a tainted object).
	private []byte
	deposed *simObject // a deposed object's delete
	prior   *simObject // the object the change replaces, updates or deletes
}

// simPlan is a saved plan (plans.Plan): the refreshed state it was made
// from, which the apply starts from, and its changes.
type simPlan struct {
	mode    simPlanMode
	conf    simConfig // the configuration it was made from
	prior   simState
	changes map[string]*simPlanned
	deposed []*simPlanned
	// migrate: triggers whose migration runs, with the release it runs for.
	migrate     map[string]int
	dataCreate  bool
	dataDestroy bool
	serial      int // the state it was made from (a saved plan of another is stale)
}

// simProcess is one provider plugin process. Terraform starts one per
// provider configuration for each graph walk, so plan and apply never
// share one (internal/terraform/eval_context_builtin.go,
// (*BuiltinEvalContext).InitProvider, called by each walk's provider node).
type simProcess struct {
	a      *simAttempt
	srv    tfprotov6.ProviderServer
	ctx    context.Context // every call's: a Ctrl-C cancels it after StopProvider, a kill at once
	cancel context.CancelFunc
	dead   atomic.Bool // killed: it sends nothing more
	name   string
}

// call is the context of one call, labelled so that a backup it queues
// names the operation (see simTransport).
func (p *simProcess) call(label string) context.Context {
	return withSimLabel(p.ctx, label)
}

// stop is a Ctrl-C: Terraform calls StopProvider on each provider
// (internal/terraform/context.go, (*Context).watchStop), whose plugin
// server calls the provider's StopProvider and then cancels every call's
// context (terraform-plugin-go, tf6server (*server).StopProvider).
func (p *simProcess) stop() {
	_, _ = p.srv.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{})
	p.cancel()
}

// kill is a SIGKILL of the runner: the process vanishes, and what it was
// doing with it; requests already sent still reach the service.
func (p *simProcess) kill() {
	p.dead.Store(true)
	p.cancel()
}

// simNodeStagger spaces the nodes a walk starts at once: Terraform runs
// independent nodes concurrently (internal/dag, (*Walker).Update), in no
// order, and an odd spacing keeps each replay's order.
const simNodeStagger = 2311 * time.Microsecond

// plan is a plan walk of the attempt's command in mode, from the
// workspace's state; nil when it failed or was stopped.
func (a *simAttempt) plan(mode simPlanMode) *simPlan {
	ws := a.cmd.ws
	st := ws.state.clone()
	refresh := !a.cmd.noRefresh
	if mode == simModeDestroy && refresh && len(st.objects)+countDeposed(st) > 0 {
		// A destroy first refreshes in a normal plan of its own walk
		// (internal/terraform/context_plan.go, (*Context).destroyPlan).
		p := a.process("refresh")
		ok := a.refresh(p, &st)
		p.close()
		if !ok {
			return nil
		}
		refresh = false
	}
	p := a.process("plan")
	defer p.close()
	if refresh && !a.refresh(p, &st) {
		return nil
	}
	plan := &simPlan{mode: mode, conf: a.conf, prior: st, changes: map[string]*simPlanned{}, migrate: map[string]int{}, serial: ws.serial}
	var ok bool
	switch mode {
	case simModeRefreshOnly:
		ok = true
	case simModeInvoke:
		ok = a.planAction(p)
	case simModeDestroy:
		ok = a.planDestroyAll(p, plan)
	default:
		ok = a.planNormal(p, plan)
	}
	// A stop halts the walk (internal/terraform/hook_stop.go): no plan.
	if !ok || a.halted() {
		return nil
	}
	return plan
}

func countDeposed(st simState) int {
	n := 0
	for _, d := range st.deposed {
		n += len(d)
	}
	return n
}

// refresh reads every object, tainted and deposed ones included, with its
// private state (internal/terraform/node_resource_abstract_instance.go,
// (*NodeAbstractResourceInstance).refresh): a null answer removes it; an
// error fails the plan.
func (a *simAttempt) refresh(p *simProcess, st *simState) bool {
	type read struct {
		addr string
		obj  *simObject
		dep  int // -1: current
	}
	var reads []read
	for _, addr := range sortedKeys(st.objects) {
		reads = append(reads, read{addr, st.objects[addr], -1})
	}
	for _, addr := range sortedKeys(st.deposed) {
		for i, d := range st.deposed[addr] {
			reads = append(reads, read{addr, d, i})
		}
	}
	var mu sync.Mutex
	ok := true
	a.parallel(len(reads), func(i int) {
		r := reads[i]
		typeName := typeOf(r.addr)
		s := a.w.schema.ResourceSchemas[typeName]
		a.w.noteRefresh(a.cmd.ws, r.addr)
		resp, err := p.srv.ReadResource(p.call(a.label(r.addr, "read")), &tfprotov6.ReadResourceRequest{
			TypeName: typeName, CurrentState: a.w.dynamic(s, r.obj.value), Private: r.obj.private,
		})
		if err != nil {
			a.w.t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if errs := diagText(resp.Diagnostics); errs != "" {
			ok = false
			a.fail("refresh of %s: %s", r.addr, errs)
			return
		}
		next := *r.obj
		next.value, next.private = a.w.value(s, resp.NewState), resp.Private
		switch {
		case r.dep >= 0 && next.value.IsNull():
			st.deposed[r.addr] = slices.DeleteFunc(slices.Clone(st.deposed[r.addr]), func(o *simObject) bool { return o == r.obj })
		case r.dep >= 0:
			st.deposed[r.addr] = slices.Clone(st.deposed[r.addr])
			st.deposed[r.addr][slices.Index(st.deposed[r.addr], r.obj)] = &next
		case next.value.IsNull():
			delete(st.objects, r.addr)
		default:
			st.objects[r.addr] = &next
		}
	})
	return ok && !a.halted()
}

// planNormal plans each resource of the configuration, and the deletes
// of deposed objects.
func (a *simAttempt) planNormal(p *simProcess, plan *simPlan) bool {
	conf := a.conf
	type job struct {
		addr   string
		config tftypes.Value
		cbd    bool
	}
	var jobs []job
	for _, c := range conf.triggers {
		jobs = append(jobs, job{c.addr, a.w.triggerConfig(c), c.cbd})
	}
	if g := conf.guard; g != nil && g.present {
		jobs = append(jobs, job{simGuardAddr, a.w.guardConfig(g), false})
	} else if obj := plan.prior.objects[simGuardAddr]; obj != nil {
		jobs = append(jobs, job{simGuardAddr, tftypes.Value{}, false}) // removed from the configuration: destroyed
	}
	var mu sync.Mutex
	ok := true
	a.parallel(len(jobs), func(i int) {
		j := jobs[i]
		obj := plan.prior.objects[j.addr]
		var ch *simPlanned
		var errs string
		if j.config.Type() == nil {
			ch, errs = a.planDestroy(p, j.addr, obj, nil)
		} else {
			ch, errs = a.planResource(p, j.addr, obj, j.config, j.cbd)
		}
		if simTrace && ch != nil {
			fmt.Printf("%s %s planned %s (tainted=%v) %q\n", time.Now().UTC().Format("15:04:05.000"), a.label(j.addr, "plan"), ch.action,
				obj != nil && obj.tainted, errs)
		}
		mu.Lock()
		defer mu.Unlock()
		if errs != "" {
			ok = false
			a.fail("plan of %s: %s", j.addr, errs)
			return
		}
		if ch != nil && ch.action != simNoOp {
			plan.changes[j.addr] = ch
		}
	})
	for _, addr := range sortedKeys(plan.prior.deposed) {
		for _, d := range plan.prior.deposed[addr] {
			ch, errs := a.planDestroy(p, addr, d, d)
			if errs != "" {
				a.fail("plan of %s (deposed): %s", addr, errs)
				return false
			}
			plan.deposed = append(plan.deposed, ch)
		}
	}
	for _, c := range conf.triggers {
		if plan.prior.migrated[c.addr] != c.release {
			plan.migrate[c.addr] = c.release
		}
	}
	present := conf.guard != nil && conf.guard.present
	plan.dataCreate = present && !plan.prior.data
	plan.dataDestroy = !present && plan.prior.data
	return ok
}

// planResource plans one resource of the configuration
// (internal/terraform/node_resource_abstract_instance.go,
// (*NodeAbstractResourceInstance).plan). An object that is not tainted is
// planned with its private state; a replacement is planned again from a
// null prior with the first plan's planned private state, which becomes
// the change's. A tainted object is planned as a create, with no private
// state at all (priorPrivate is set only for a status other than
// states.ObjectTainted), and the create is made a replacement: so its
// Delete, given the change's Private, gets no private state.
func (a *simAttempt) planResource(p *simProcess, addr string, obj *simObject, config tftypes.Value, cbd bool) (*simPlanned, string) {
	typeName := typeOf(addr)
	s := a.w.schema.ResourceSchemas[typeName]
	null := tftypes.NewValue(s.ValueType(), nil)
	ch := &simPlanned{addr: addr, typeName: typeName, config: config, before: null, prior: obj}
	replace := simDeleteThenCreate
	if cbd {
		replace = simCreateThenDelete
	}
	if obj == nil || obj.tainted {
		resp, errs := a.planCall(p, typeName, addr, null, config, nil)
		if errs != "" {
			return nil, errs
		}
		ch.action, ch.after, ch.private = simCreate, a.w.value(s, resp.PlannedState), resp.PlannedPrivate
		if obj != nil {
			ch.action, ch.before = replace, obj.value
		}
		return ch, ""
	}
	resp, errs := a.planCall(p, typeName, addr, obj.value, config, obj.private)
	if errs != "" {
		return nil, errs
	}
	planned := a.w.value(s, resp.PlannedState)
	ch.before = obj.value
	switch {
	case len(resp.RequiresReplace) > 0:
		again, errs := a.planCall(p, typeName, addr, null, config, resp.PlannedPrivate)
		if errs != "" {
			return nil, errs
		}
		ch.action, ch.after, ch.private = replace, a.w.value(s, again.PlannedState), again.PlannedPrivate
	case planned.Equal(obj.value):
		ch.action = simNoOp
	default:
		ch.action, ch.after, ch.private = simUpdate, planned, resp.PlannedPrivate
	}
	return ch, ""
}

// planDestroy plans an object's delete with its own private state,
// tainted or not (internal/terraform/node_resource_abstract_instance.go,
// (*NodeAbstractResourceInstance).planDestroy).
func (a *simAttempt) planDestroy(p *simProcess, addr string, obj, deposed *simObject) (*simPlanned, string) {
	typeName := typeOf(addr)
	s := a.w.schema.ResourceSchemas[typeName]
	null := tftypes.NewValue(s.ValueType(), nil)
	resp, err := p.srv.PlanResourceChange(p.call(a.label(addr, "plan")), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: a.w.dynamic(s, obj.value), ProposedNewState: a.w.dynamic(s, null),
		Config: a.w.dynamic(s, null), PriorPrivate: obj.private,
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	if errs := diagText(resp.Diagnostics); errs != "" {
		return nil, errs
	}
	return &simPlanned{addr: addr, typeName: typeName, action: simDelete, before: obj.value, after: null, config: null,
		private: resp.PlannedPrivate, deposed: deposed, prior: obj}, ""
}

// planCall is one PlanResourceChange of a configuration from a prior value.
func (a *simAttempt) planCall(p *simProcess, typeName, addr string, prior, config tftypes.Value, private []byte) (*tfprotov6.PlanResourceChangeResponse, string) {
	s := a.w.schema.ResourceSchemas[typeName]
	resp, err := p.srv.PlanResourceChange(p.call(a.label(addr, "plan")), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: a.w.dynamic(s, prior), ProposedNewState: a.w.dynamic(s, proposed(s, prior, config)),
		Config: a.w.dynamic(s, config), PriorPrivate: private,
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	return resp, diagText(resp.Diagnostics)
}

// planDestroyAll is terraform destroy's plan: every object deleted.
func (a *simAttempt) planDestroyAll(p *simProcess, plan *simPlan) bool {
	for _, addr := range sortedKeys(plan.prior.objects) {
		ch, errs := a.planDestroy(p, addr, plan.prior.objects[addr], nil)
		if errs != "" {
			a.fail("destroy plan of %s: %s", addr, errs)
			return false
		}
		plan.changes[addr] = ch
	}
	for _, addr := range sortedKeys(plan.prior.deposed) {
		for _, d := range plan.prior.deposed[addr] {
			ch, errs := a.planDestroy(p, addr, d, d)
			if errs != "" {
				a.fail("destroy plan of %s (deposed): %s", addr, errs)
				return false
			}
			plan.deposed = append(plan.deposed, ch)
		}
	}
	plan.dataDestroy = plan.prior.data
	return true
}

// planAction is -invoke's PlanAction (internal/terraform/node_action_invoke.go).
func (a *simAttempt) planAction(p *simProcess) bool {
	s := a.w.schema.ActionSchemas["backup_trigger"].Schema
	resp, err := p.srv.(tfprotov6.ActionServer).PlanAction(p.call(a.label(simActionAddr, "plan")), &tfprotov6.PlanActionRequest{
		ActionType: "backup_trigger", Config: a.w.dynamic(s, a.w.actionConfig(a.conf.action)),
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	if errs := diagText(resp.Diagnostics); errs != "" {
		a.fail("plan of the action: %s", errs)
		return false
	}
	return true
}

// apply is the apply walk of a plan, in a provider process of its own.
// The state is written after each node; a local backend's state file is
// then written at once, a remote one every 20 s and at the end
// (internal/backend/local/hook_state.go, (*StateHook).PostStateUpdate;
// internal/states/statemgr/filesystem.go, (*Filesystem).WriteState;
// internal/command/command.go, DefaultStatePersistInterval).
func (a *simAttempt) apply(plan *simPlan) {
	a.conf = plan.conf
	a.work = plan.prior.clone()
	a.firstWrite = time.Time{}
	p := a.process("apply")
	defer p.close()
	var jobs []func()
	switch plan.mode {
	case simModeNormal:
		for _, c := range plan.conf.triggers {
			ch, migrate := plan.changes[c.addr], plan.migrate[c.addr]
			if ch != nil || migrate != 0 {
				jobs = append(jobs, func() { a.applyTrigger(p, c, ch, migrate) })
			}
		}
		if ch := plan.changes[simGuardAddr]; ch != nil || plan.dataCreate || plan.dataDestroy {
			jobs = append(jobs, func() { a.applyGuard(p, ch, plan) })
		}
	case simModeDestroy:
		for _, c := range plan.conf.triggers {
			if ch := plan.changes[c.addr]; ch != nil || a.work.migrated[c.addr] != 0 {
				jobs = append(jobs, func() { a.destroyTrigger(p, c, ch) })
			}
		}
		if ch := plan.changes[simGuardAddr]; ch != nil || plan.dataDestroy {
			jobs = append(jobs, func() { a.applyGuard(p, ch, plan) })
		}
	case simModeInvoke:
		jobs = append(jobs, func() { a.invoke(p) })
	}
	for _, ch := range plan.deposed {
		jobs = append(jobs, func() { a.deleteNode(p, ch) })
	}
	a.parallel(len(jobs), func(i int) { jobs[i]() })
	if !a.killed.Load() {
		// Whatever happened, the final state is written
		// (internal/backend/local/backend_apply.go, opApply).
		a.persist()
	}
}

// applyTrigger runs a trigger's nodes: its change, then its migration.
func (a *simAttempt) applyTrigger(p *simProcess, c *simTriggerConf, ch *simPlanned, migrate int) {
	ok := true
	if ch != nil {
		switch ch.action {
		case simDeleteThenCreate:
			// The destroy node, then the create node, in one walk: one
			// process (internal/terraform/node_resource_destroy.go and
			// node_resource_apply_instance.go).
			ok = a.deleteNode(p, ch)
			if ok {
				ok, _ = a.createNode(p, ch)
			}
		case simCreateThenDelete:
			ok = a.createFirst(p, ch)
		case simCreate:
			ok, _ = a.createNode(p, ch)
		case simUpdate:
			ok = a.updateNode(p, ch)
		}
	}
	if ok && migrate != 0 && !a.halted() {
		a.runMigration(c, migrate)
	}
}

// destroyTrigger destroys a trigger's migration, then the trigger.
func (a *simAttempt) destroyTrigger(p *simProcess, c *simTriggerConf, ch *simPlanned) {
	if a.halted() {
		return
	}
	a.write(func(st *simState) { delete(st.migrated, c.addr) })
	if ch != nil && a.deleteNode(p, ch) {
		a.w.forgetTrigger(a.cmd.ws, c.addr)
	}
}

// applyGuard runs the guard's nodes: the data before the guard on a
// create, the guard before the data on a delete.
func (a *simAttempt) applyGuard(p *simProcess, ch *simPlanned, plan *simPlan) {
	if plan.dataCreate {
		if a.halted() {
			return
		}
		a.write(func(st *simState) { st.data = true })
	}
	ok := true
	if ch != nil {
		switch ch.action {
		case simCreate:
			ok, _ = a.createNode(p, ch)
		case simUpdate:
			ok = a.updateNode(p, ch)
		case simDelete:
			ok = a.deleteNode(p, ch)
		}
	}
	if plan.dataDestroy && ok && !a.halted() {
		// The data goes only after its guard's destroy returned no error.
		a.write(func(st *simState) { st.data = false })
		if ch != nil && ch.action == simDelete {
			a.w.guardAhead(a)
		}
	}
}

// runMigration is the trigger's dependent: its change goes ahead.
func (a *simAttempt) runMigration(c *simTriggerConf, release int) {
	obj := a.current(c.addr)
	if simTrace {
		fmt.Printf("%s %s migrates to v%d\n", time.Now().UTC().Format("15:04:05.000"), a.label(c.addr, "migration"), release)
	}
	a.w.triggerAhead(a, c, obj)
	a.write(func(st *simState) { st.migrated[c.addr] = release })
}

// current is the working state's object at addr.
func (a *simAttempt) current(addr string) *simObject {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.work.objects[addr]
}

// createFirst is create_before_destroy's replacement: the prior object is
// deposed, the new one created, then the deposed one deleted, planned anew
// from its own private state; a create that failed and left no object
// restores the deposed one ((*NodeApplyableResourceInstance).managedResourceExecute;
// internal/terraform/node_resource_destroy_deposed.go,
// (*NodeDestroyDeposedResourceInstanceObject).Execute).
func (a *simAttempt) createFirst(p *simProcess, ch *simPlanned) bool {
	var old *simObject
	a.write(func(st *simState) {
		if old = st.objects[ch.addr]; old != nil {
			st.deposed[ch.addr] = append(slices.Clone(st.deposed[ch.addr]), old)
			delete(st.objects, ch.addr)
		}
	})
	ok, applied := a.createNode(p, ch)
	switch {
	case old == nil:
	case ok:
		if a.halted() {
			return ok
		}
		plan, errs := a.planDestroy(p, ch.addr, old, old)
		if errs != "" {
			a.fail("destroy of %s (deposed): %s", ch.addr, errs)
			return false
		}
		a.deleteNode(p, plan)
	case applied:
		// states.SyncState.MaybeRestoreResourceInstanceDeposed
		a.write(func(st *simState) {
			if st.objects[ch.addr] == nil {
				st.objects[ch.addr] = old
				st.deposed[ch.addr] = slices.DeleteFunc(slices.Clone(st.deposed[ch.addr]), func(o *simObject) bool { return o == old })
			}
		})
	}
	return ok
}

// deleteNode applies a planned delete (a destroy node, or the destroy half
// of a replacement): ApplyResourceChange with the change's Private, which
// for a replacement is what reducePlan kept of the replace change
// (internal/plans/changes.go, (*ResourceInstanceChange).Simplify). It says
// whether the object is gone.
func (a *simAttempt) deleteNode(p *simProcess, ch *simPlanned) bool {
	if a.halted() {
		return false
	}
	s := a.w.schema.ResourceSchemas[ch.typeName]
	null := tftypes.NewValue(s.ValueType(), nil)
	op := a.w.newResOp(a, ch.addr, simOpDelete, ch.prior)
	resp, err := p.srv.ApplyResourceChange(p.call(op.label), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: ch.typeName, PriorState: a.w.dynamic(s, ch.before), PlannedState: a.w.dynamic(s, null),
		Config: a.w.dynamic(s, null), PlannedPrivate: ch.private,
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	if !a.returned(op, resp.Diagnostics) {
		return false
	}
	newVal := a.w.value(s, resp.NewState)
	errs := diagText(resp.Diagnostics)
	// internal/terraform/node_resource_abstract_instance.go, apply: an
	// error keeps the object the provider returned (the prior one when it
	// returned none); no error and null removes it.
	a.write(func(st *simState) {
		switch {
		case ch.deposed != nil && errs == "" && newVal.IsNull():
			st.deposed[ch.addr] = slices.DeleteFunc(slices.Clone(st.deposed[ch.addr]), func(o *simObject) bool { return o == ch.deposed })
		case ch.deposed != nil:
			if i := slices.Index(st.deposed[ch.addr], ch.deposed); i >= 0 && !newVal.IsNull() {
				next := *ch.deposed
				next.value, next.private = newVal, resp.Private
				st.deposed[ch.addr] = slices.Clone(st.deposed[ch.addr])
				st.deposed[ch.addr][i] = &next
			}
		case errs == "" && newVal.IsNull():
			delete(st.objects, ch.addr)
		case !newVal.IsNull():
			next := *ch.prior
			next.value, next.private = newVal, resp.Private
			next.chain = a.w.stoppedDestroy(op, ch.prior)
			st.objects[ch.addr] = &next
		}
	}, op)
	return errs == ""
}

// createNode applies a create, or a replacement's create half. The apply
// node plans it again first, from the state as it is: the replaced object
// is gone (or deposed), so the plan has no prior state and no private
// state ((*NodeApplyableResourceInstance).managedResourceExecute); that
// plan must agree with the saved one. An error taints the object the
// provider returned ((*NodeApplyableResourceInstance).taintInstanceState).
func (a *simAttempt) createNode(p *simProcess, ch *simPlanned) (ok, applied bool) {
	if a.halted() {
		return false, false
	}
	s := a.w.schema.ResourceSchemas[ch.typeName]
	null := tftypes.NewValue(s.ValueType(), nil)
	again, errs := a.planCall(p, ch.typeName, ch.addr, null, ch.config, nil)
	if errs != "" {
		a.fail("apply-time plan of %s: %s", ch.addr, errs)
		return false, false
	}
	planned := a.w.value(s, again.PlannedState)
	if why := conforms(ch.after, planned); why != "" {
		a.w.violate(a, "inconsistent-plan", "the plan of %s at apply differs from the saved plan: %s", ch.addr, why)
		return false, false
	}
	if a.halted() { // the plan's PostDiff hook halts a stopped walk
		return false, false
	}
	op := a.w.newResOp(a, ch.addr, simOpCreate, ch.prior)
	a.w.noteCreate(a, op, ch)
	resp, err := p.srv.ApplyResourceChange(p.call(op.label), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: ch.typeName, PriorState: a.w.dynamic(s, null), PlannedState: again.PlannedState,
		Config: a.w.dynamic(s, ch.config), PlannedPrivate: again.PlannedPrivate,
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	if !a.returned(op, resp.Diagnostics) {
		return false, true
	}
	newVal := a.w.value(s, resp.NewState)
	if !newVal.IsNull() {
		a.w.mu.Lock() // the checker reads it across operations (queuedUnsaved)
		op.took = attrOf(newVal, "id")
		a.w.mu.Unlock()
	}
	errs = diagText(resp.Diagnostics)
	if why := conforms(planned, newVal); errs == "" && why != "" {
		a.w.violate(a, "inconsistent-result", "the new state of %s differs from its plan: %s", ch.addr, why)
		errs = why
	}
	if !newVal.IsNull() {
		obj := &simObject{value: newVal, private: resp.Private, tainted: errs != ""}
		obj.chain, obj.guard = a.w.created(op, ch), a.guardConf()
		a.write(func(st *simState) { st.objects[ch.addr] = obj }, op)
		a.w.noteCreatedObject(a, op)
	} else {
		a.write(func(*simState) {}, op)
		a.w.noteCreatedNothing(a, op)
	}
	return errs == "", true
}

// updateNode applies an update, planned again at apply from the object's
// value and private state.
func (a *simAttempt) updateNode(p *simProcess, ch *simPlanned) bool {
	if a.halted() {
		return false
	}
	s := a.w.schema.ResourceSchemas[ch.typeName]
	obj := a.current(ch.addr)
	again, errs := a.planCall(p, ch.typeName, ch.addr, obj.value, ch.config, obj.private)
	if errs != "" {
		a.fail("apply-time plan of %s: %s", ch.addr, errs)
		return false
	}
	planned := a.w.value(s, again.PlannedState)
	if why := conforms(ch.after, planned); why != "" || len(again.RequiresReplace) > 0 {
		a.w.violate(a, "inconsistent-plan", "the plan of %s at apply differs from the saved plan: %s %v", ch.addr, why, again.RequiresReplace)
		return false
	}
	if a.halted() {
		return false
	}
	op := a.w.newResOp(a, ch.addr, simOpUpdate, obj)
	resp, err := p.srv.ApplyResourceChange(p.call(op.label), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: ch.typeName, PriorState: a.w.dynamic(s, obj.value), PlannedState: again.PlannedState,
		Config: a.w.dynamic(s, ch.config), PlannedPrivate: again.PlannedPrivate,
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	if !a.returned(op, resp.Diagnostics) {
		return false
	}
	newVal := a.w.value(s, resp.NewState)
	errs = diagText(resp.Diagnostics)
	if why := conforms(planned, newVal); errs == "" && why != "" {
		a.w.violate(a, "inconsistent-result", "the new state of %s differs from its plan: %s", ch.addr, why)
		errs = why
	}
	if !newVal.IsNull() {
		next := &simObject{value: newVal, private: resp.Private}
		next.chain, next.guard = a.w.updated(op, obj), a.guardConf()
		a.write(func(st *simState) { st.objects[ch.addr] = next }, op)
	}
	return errs == ""
}

// invoke is -invoke's apply: the action's invocation.
func (a *simAttempt) invoke(p *simProcess) {
	if a.halted() {
		return
	}
	s := a.w.schema.ActionSchemas["backup_trigger"].Schema
	op := a.w.newResOp(a, simActionAddr, simOpInvoke, nil)
	resp, err := p.srv.(tfprotov6.ActionServer).InvokeAction(p.call(op.label), &tfprotov6.InvokeActionRequest{
		ActionType: "backup_trigger", Config: a.w.dynamic(s, a.w.actionConfig(a.conf.action)),
	})
	if err != nil {
		a.w.t.Fatal(err)
	}
	var diags []*tfprotov6.Diagnostic
	completed := false
	for ev := range resp.Events {
		if c, ok := ev.Type.(tfprotov6.CompletedInvokeActionEventType); ok {
			completed, diags = true, c.Diagnostics
		}
	}
	if !a.returned(op, diags) {
		return
	}
	if !completed {
		a.fail("the invocation sent no completion")
		return
	}
	if diagText(diags) == "" && !a.halted() {
		a.w.actionAhead(a, op)
	}
}

// guardConf is the guard's configuration this command applies.
func (a *simAttempt) guardConf() simGuardConf {
	if g := a.conf.guard; g != nil {
		return *g
	}
	return simGuardConf{}
}

// returned records an operation's end and says whether its result reached
// Terraform (the runner was not killed meanwhile).
func (a *simAttempt) returned(op *simResOp, diags []*tfprotov6.Diagnostic) bool {
	op.end = time.Now()
	if simTrace {
		fmt.Printf("%s %s returned (killed=%v) errors=%q warnings=%q\n", op.end.UTC().Format("15:04:05.000"), op.label, a.killed.Load(),
			diagText(diags), diagsOf(diags, tfprotov6.DiagnosticSeverityWarning))
	}
	if a.killed.Load() {
		return false
	}
	op.returned = true
	op.errs = diagText(diags)
	op.warnings = diagsOf(diags, tfprotov6.DiagnosticSeverityWarning)
	if op.errs != "" {
		a.fail("%s %s: %s", op.kind, op.addr, op.errs)
	}
	return true
}

// write changes the working state, as a node's writeResourceInstanceState
// and the PostStateUpdate hook do, and persists it as the backend does.
// ops are the operations whose results it holds.
func (a *simAttempt) write(change func(*simState), ops ...*simResOp) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.killed.Load() {
		return
	}
	change(&a.work)
	a.unsaved = append(a.unsaved, ops...)
	now := time.Now()
	if a.firstWrite.IsZero() {
		a.firstWrite = now
	}
	if !a.cmd.ws.remote || now.Sub(a.lastPersist()) >= simPersistInterval || a.stopped.Load() {
		a.persistLocked()
	}
}

// simPersistInterval is a remote backend's DefaultStatePersistInterval.
const simPersistInterval = 20 * time.Second

func (a *simAttempt) lastPersist() time.Time {
	if a.persisted.IsZero() {
		return a.firstWrite
	}
	return a.persisted
}

func (a *simAttempt) persist() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.persistLocked()
}

func (a *simAttempt) persistLocked() {
	ws := a.cmd.ws
	if !ws.state.equal(a.work) {
		// A state written with other contents takes the next serial, which
		// makes a plan saved from the one before stale
		// (internal/states/statemgr/filesystem.go, (*Filesystem).writeState).
		ws.serial++
	}
	ws.state = a.work.clone()
	a.persisted = time.Now()
	for _, op := range a.unsaved {
		op.saved = true
	}
	a.unsaved = nil
}

// halted: the stop hook halts every node not yet begun once the command
// is stopped (internal/terraform/hook_stop.go, (*stopHook).hook), and a
// killed runner does nothing more.
func (a *simAttempt) halted() bool { return a.stopped.Load() || a.killed.Load() }

// parallel runs n nodes at once, spaced by simNodeStagger, and waits.
func (a *simAttempt) parallel(n int, node func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * simNodeStagger)
			node(i)
		})
	}
	wg.Wait()
}

// conforms says how actual breaks planned, Terraform's check of a plan
// made again at apply and of a new state
// (internal/plans/objchange/compatible.go, AssertObjectCompatible): a
// known planned attribute must keep its value.
func conforms(planned, actual tftypes.Value) string {
	if planned.Type() == nil || planned.IsNull() {
		return ""
	}
	p, v := map[string]tftypes.Value{}, map[string]tftypes.Value{}
	if planned.As(&p) != nil || actual.IsNull() || actual.As(&v) != nil {
		return "not an object"
	}
	for _, name := range sortedKeys(p) {
		if p[name].IsFullyKnown() && !p[name].Equal(v[name]) {
			return fmt.Sprintf("%s planned %s, got %s", name, p[name], v[name])
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// typeOf is the resource type of an address.
func typeOf(addr string) string {
	if addr == simGuardAddr {
		return simGuardType
	}
	return simTriggerType
}

// proposed is the new state Terraform proposes: the configuration, with
// the prior state's values for computed attributes it leaves out
// (internal/plans/objchange/objchange.go, ProposedNew).
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
