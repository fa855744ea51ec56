package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

// planStepCommits are the builds section 12 sets beside this one.
var planStepCommits = []struct{ commit, what string }{
	// ac7cdab added the lifecycle record, with a plan step that read the
	// state and the record on several attributes.
	{"0ffffd3", "before the record"},
	// The plan step once per resource (issue 42), before reuse_within and
	// reused (issue 41) added two attributes.
	{"81197dc", "one plan step"},
	// Before the lighter house (issue 47): its goal is no slower than then.
	{"22c0497", "before issue 47"},
}

// 12. Plan cost of the record: plans over 1 and 250 triggers with this
// build and with the builds of planStepCommits, each on a state its own
// apply wrote, taking turns so that all see the same host.
func benchPlanStep(ctx context.Context, h *harness, r *report, runs int) error {
	rounds := 3 * runs // one plan is short: more rounds to see a few percent
	r.line("## 12. Plan cost of the record")
	r.line("")
	names := make([]string, len(planStepCommits))
	for i, c := range planStepCommits {
		names[i] = fmt.Sprintf("%s (%s)", c.commit, c.what)
	}
	r.line("`terraform plan` over N `backup_trigger` resources with this build and with the provider as of %s, each built from a temporary worktree. "+
		"Each build plans a state its own apply and refresh-only apply wrote; the builds take turns, %d plans each, and the medians are shown, with their ratio to the first.",
		strings.Join(names, " and "), rounds)
	r.line("")
	header, rule := "| N | plan |", "|---|---|"
	for _, c := range planStepCommits {
		header += " " + c.commit + " |"
		rule += "---|"
	}
	r.line("%s this build |", header)
	r.line("%s---|", rule)
	cfgs := append(append([]string(nil), h.planStepCfgs...), h.cliCfg)
	for _, n := range []int{1, 250} {
		progress("12/12 plan cost of the record: %d triggers, %d builds", n, len(cfgs))
		dirs := make([]*workdir, len(cfgs))
		for i, cfg := range cfgs {
			m, err := startMock(ctx, mockservice.Options{Seed: 120, Accounts: n, RateLimit: highRateLimit,
				PendingFor: time.Millisecond, RunningFor: time.Millisecond})
			if err != nil {
				return err
			}
			defer m.close()
			w, err := h.workdir(fmt.Sprintf("planstep-%d-%d", n, i), triggers(m.srv.AccountIDs()[:n], ""), m)
			if err != nil {
				return err
			}
			w.env = append(w.env, "TF_CLI_CONFIG_FILE="+cfg)
			if _, err := w.run(ctx, "apply", "-auto-approve", "-input=false", "-parallelism=50"); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond) // the backups finish
			if _, err := w.run(ctx, "apply", "-refresh-only", "-auto-approve", "-input=false", "-parallelism=50"); err != nil {
				return err
			}
			dirs[i] = w
		}
		plan := make([][]time.Duration, len(dirs))
		noRefresh := make([][]time.Duration, len(dirs))
		for range rounds {
			for i, w := range dirs {
				d, err := w.run(ctx, "plan", "-input=false", "-detailed-exitcode")
				if err != nil {
					return err
				}
				plan[i] = append(plan[i], d)
				if d, err = w.run(ctx, "plan", "-input=false", "-detailed-exitcode", "-refresh=false"); err != nil {
					return err
				}
				noRefresh[i] = append(noRefresh[i], d)
			}
		}
		for _, kind := range []struct {
			name string
			ds   [][]time.Duration
		}{{"with refresh", plan}, {"`-refresh=false`", noRefresh}} {
			row := fmt.Sprintf("| %d | %s |", n, kind.name)
			first := median(kind.ds[0])
			for i, ds := range kind.ds {
				row += fmt.Sprintf(" %d ms", median(ds).Milliseconds())
				if i > 0 {
					row += fmt.Sprintf(" (%.2fx)", float64(median(ds))/float64(first))
				}
				row += " |"
			}
			r.line("%s", row)
		}
	}
	r.line("")
	r.line("Goal: no slower than before the record (a ratio of at most 1.00x, within the few percent by which medians of one host move).")
	r.line("")
	return nil
}
