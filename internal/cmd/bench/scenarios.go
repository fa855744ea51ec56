package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/backup-service/terraform-provider-backup/internal/mockservice"
)

const highRateLimit = 1_000_000

// 1. Refresh cost: plan over 200 triggers with and without refresh.
func benchRefresh(ctx context.Context, h *harness, r *report, runs int) error {
	progress("1/12 refresh cost: 200 backup_trigger resources")
	m, err := startMock(ctx, mockservice.Options{Seed: 1, Accounts: 200, RateLimit: highRateLimit,
		PendingFor: time.Millisecond, RunningFor: time.Millisecond})
	if err != nil {
		return err
	}
	defer m.close()
	w, err := h.workdir("refresh", triggers(m.srv.AccountIDs(), ""), m)
	if err != nil {
		return err
	}
	if _, err := w.run(ctx, "apply", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	// The create saved every backup as pending. Once they have finished,
	// refresh the state once, as any later apply would: otherwise every timed
	// plan would find 200 objects changed outside Terraform, which is not the
	// steady state a pipeline plans against.
	time.Sleep(100 * time.Millisecond)
	if _, err := w.run(ctx, "apply", "-refresh-only", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	td, err := h.workdir("terraform_data", `
resource "terraform_data" "t" {
  count = 200
  input = count.index
}
`, nil)
	if err != nil {
		return err
	}
	if _, err := td.run(ctx, "apply", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	var refresh, noRefresh, noopRefresh, builtin []time.Duration
	noop := []string{"TF_CLI_CONFIG_FILE=" + h.noopCfg}
	for i := range runs {
		// Rotate which goes first, so that none always runs warm.
		kinds := []string{"refresh", "no-refresh", "noop-read"}
		kinds = append(kinds[i%3:], kinds[:i%3]...)
		for _, kind := range kinds {
			args := []string{"plan", "-input=false", "-detailed-exitcode"}
			var env []string
			switch kind {
			case "no-refresh":
				args = append(args, "-refresh=false")
			case "noop-read":
				env = noop
			}
			d, err := w.runWith(ctx, env, args...)
			if err != nil {
				return err
			}
			switch kind {
			case "refresh":
				refresh = append(refresh, d)
			case "no-refresh":
				noRefresh = append(noRefresh, d)
			default:
				noopRefresh = append(noopRefresh, d)
			}
		}
		d, err := td.run(ctx, "plan", "-input=false", "-detailed-exitcode")
		if err != nil {
			return err
		}
		builtin = append(builtin, d)
	}
	m.srv.ResetStats()
	if _, err := w.run(ctx, "plan", "-input=false"); err != nil {
		return err
	}
	reads := m.srv.Stats().TotalRequests()
	ratio := float64(median(refresh)) / float64(median(noRefresh))
	r.line("## 1. Refresh cost")
	r.line("")
	r.line("`terraform plan` over 200 `backup_trigger` resources (state from one apply and one refresh-only apply, once the backups had finished), median of %d runs, the kinds taking turns. "+
		"The floor is the same plan with the provider behind a protocol wrapper whose refresh of a `backup_trigger` sends nothing (`internal/cmd/bench/noopread`): what Terraform and the plugin protocol cost for a refresh.", runs)
	r.line("")
	r.line("| plan | median | runs |")
	r.line("|---|---|---|")
	r.line("| with refresh (%d API requests: a finished trigger's refresh checks its account in the accounts listing the command shares) | %s | %s |", reads, secs(median(refresh)), list(refresh))
	r.line("| `-refresh=false` | %s | %s |", secs(median(noRefresh)), list(noRefresh))
	r.line("| floor: with refresh, reads that do nothing | %s | %s |", secs(median(noopRefresh)), list(noopRefresh))
	r.line("| 200 `terraform_data` (built-in, for context) | %s | %s |", secs(median(builtin)), list(builtin))
	r.line("")
	floor := float64(median(noopRefresh)) / float64(median(noRefresh))
	r.line("Refresh / no refresh: **%.2fx** (goal at most 1.2x): %s. The floor measured in the same run: %.2fx, so our reads add %.0f%% of a plan over reads that do nothing. "+
		"Our plan without refresh / built-in plan: %.2fx (plugin start-up and gRPC).",
		ratio, verdict(ratio <= 1.2), floor, (ratio-floor)*100, float64(median(noRefresh))/float64(median(builtin)))
	r.line("")
	return nil
}

func list(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return strings.Join(s, ", ")
}

// 2. Rate-limit bound: apply 100 triggers at an allowance of 20/s, on a
// fresh mock each run.
func benchRateLimit(ctx context.Context, h *harness, r *report, runs int) error {
	const allowance = 20
	n := max(runs/3, 1)
	r.line("## 2. Rate-limit bound")
	r.line("")
	r.line("`terraform apply` of 100 `backup_trigger` resources (no wait), the key's allowance set to %d requests/s, default parallelism 10; %d runs, each against a fresh mock.", allowance, n)
	r.line("")
	r.line("| run | requests | bound (requests / %d per s) | wall time | ratio | 429s from the allowance | backups queued |", allowance)
	r.line("|---|---|---|---|---|---|---|")
	var ratios []float64
	limited := 0
	for i := range n {
		progress("2/12 rate-limit bound: apply 100 triggers at 20 requests/s (run %d of %d)", i+1, n)
		m, err := startMock(ctx, mockservice.Options{Seed: uint64(20 + i), Accounts: 100, RateLimit: allowance, PendingFor: time.Hour})
		if err != nil {
			return err
		}
		w, err := h.workdir(fmt.Sprintf("ratelimit-%d", i), triggers(m.srv.AccountIDs(), ""), m)
		if err != nil {
			m.close()
			return err
		}
		m.srv.ResetStats()
		d, err := w.run(ctx, "apply", "-auto-approve", "-input=false")
		m.close()
		if err != nil {
			return err
		}
		st := m.srv.Stats()
		bound := time.Duration(float64(st.TotalRequests()) / allowance * float64(time.Second))
		ratio := float64(d) / float64(bound)
		ratios = append(ratios, ratio)
		limited += st.RateLimited
		queued := 0
		for _, q := range st.BackupsQueued {
			queued += q
		}
		r.line("| %d | %d | %s | %s | %.3fx | %d | %d |", i+1, st.TotalRequests(), secs(bound), secs(d), ratio, st.RateLimited, queued)
	}
	slices.Sort(ratios)
	med := ratios[len(ratios)/2]
	r.line("")
	r.line("Median ratio **%.3fx**. Goal: at most 1.15x the bound (%s) and zero 429s (%s).", med, verdict(med <= 1.15), verdict(limited == 0))
	r.line("")
	return nil
}

// 3. Paging: backup_accounts over 10,000 accounts.
func benchPaging(ctx context.Context, h *harness, r *report, _ int) error {
	progress("3/12 paging: backup_accounts over 10,000 accounts")
	m, err := startMock(ctx, mockservice.Options{Seed: 3, Accounts: 10000, RateLimit: highRateLimit})
	if err != nil {
		return err
	}
	defer m.close()
	p, err := h.startDebugProvider(ctx, m)
	if err != nil {
		return err
	}
	defer p.stop()
	w, err := h.workdir("paging", `
data "backup_accounts" "all" {}

output "count" {
  value = length(data.backup_accounts.all.ids)
}
`, m)
	if err != nil {
		return err
	}
	// Reattached: no dev_overrides, and init knows the provider is served.
	w.env = append(withoutCLIConfig(w.env), "TF_REATTACH_PROVIDERS="+p.reattach)
	if _, err := w.run(ctx, "init", "-input=false"); err != nil {
		return err
	}
	base, err := p.peakRSS()
	if err != nil {
		return err
	}
	m.srv.ResetStats()
	d, err := w.run(ctx, "apply", "-auto-approve", "-input=false")
	if err != nil {
		return err
	}
	pages := m.srv.Requests(mockservice.RouteListAccounts)
	peak, err := p.peakRSS()
	if err != nil {
		return err
	}
	r.line("## 3. Paging")
	r.line("")
	r.line("`terraform apply` of a configuration with `data \"backup_accounts\" \"all\" {}` over 10,000 accounts; the provider runs in debug mode so that its peak resident memory (VmHWM) can be read.")
	r.line("")
	r.line("| page requests | expected ceil(10000/50) | wall time | provider peak RSS | provider RSS before the read |")
	r.line("|---|---|---|---|---|")
	r.line("| %d | 200 | %s | %.1f MiB | %.1f MiB |", pages, secs(d), float64(peak)/(1<<20), float64(base)/(1<<20))
	r.line("")
	r.line("Exactly 200 page requests: %s.", verdict(pages == 200))
	r.line("")
	return nil
}

func withoutCLIConfig(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "TF_CLI_CONFIG_FILE=") {
			out = append(out, e)
		}
	}
	return out
}

// 4. Requests per operation.
func benchRequests(ctx context.Context, h *harness, r *report, _ int) error {
	progress("4/12 requests per operation")
	m, err := startMock(ctx, mockservice.Options{Seed: 4, Accounts: 137, AuditLogs: 120, RateLimit: highRateLimit,
		PendingFor: 300 * time.Millisecond, RunningFor: 300 * time.Millisecond})
	if err != nil {
		return err
	}
	defer m.close()
	ids := m.srv.AccountIDs()
	m.srv.AddBackups(ids[1], 120, 0, "")

	type op struct {
		name, config, why string
		args              []string
		want              int
	}
	ops := []op{
		{"create `backup_trigger` (no wait)", triggers(ids[2:3], ""), "GET the first backups page before the trigger (what is listed then is not this trigger's backup); POST the trigger; " +
			"GET the first page again to learn the backup id (the one listed above those; the POST answers with the account)", nil, 3},
		{"create `backup_trigger` with `wait_for_completion` (backup done within the first 2 s poll interval)", triggers(ids[3:4], "  wait_for_completion = true\n"),
			"the three above, then one poll after the first interval; the id lookup doubles as the first look at the status, and the poll's page as the next change's floor", nil, 4},
		{"refresh of one `backup_trigger`", triggers(ids[2:3], ""), "GET the backups page that holds the backup (the first, for a recent one)", []string{"plan", "-input=false"}, 1},
		{"`backup_token`", `data "backup_token" "t" {}`, "GET /token", nil, 1},
		{"`backup_account`", fmt.Sprintf(`data "backup_account" "a" { id = %q }`, ids[0]), "GET the account", nil, 1},
		{"`backup_accounts` (137 accounts)", `data "backup_accounts" "a" {}`, "ceil(137/50) pages", nil, 3},
		{"`backup_audit_logs` (120 records, max_results 1000)", `data "backup_audit_logs" "a" {}`, "ceil(120/50) pages", nil, 3},
		{"`backup_account_backups` (120 backups, max_results 100)", fmt.Sprintf(`data "backup_account_backups" "a" { account_id = %q }`, ids[1]), "ceil(100/50) pages: it stops at max_results", nil, 2},
	}
	r.line("## 4. Requests per operation")
	r.line("")
	r.line("API requests counted by the mock service during one Terraform command (137 accounts, 120 audit records, 120 backups).")
	r.line("")
	r.line("| operation | requests | minimum | why |")
	r.line("|---|---|---|---|")
	for i, o := range ops {
		w, err := h.workdir(fmt.Sprintf("requests-%d", i), o.config, m)
		if err != nil {
			return err
		}
		args := o.args
		if args == nil {
			args = []string{"apply", "-auto-approve", "-input=false"}
		} else if _, err := w.run(ctx, "apply", "-auto-approve", "-input=false"); err != nil { // state to refresh
			return err
		}
		time.Sleep(700 * time.Millisecond) // let earlier backups finish
		m.srv.ResetStats()
		if _, err := w.run(ctx, args...); err != nil {
			return err
		}
		n := m.srv.Stats().TotalRequests()
		mark := ""
		if n != o.want {
			mark = " **(above the minimum)**"
		}
		r.line("| %s | %d%s | %d | %s |", o.name, n, mark, o.want, o.why)
	}
	r.line("")
	return nil
}

// 5. Go benchmarks of the client's hot paths.
func benchGo(ctx context.Context, _ *harness, r *report, _ int) error {
	progress("5/12 go test -bench ./internal/client")
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", "2s", "./internal/client/")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go test -bench: %w\n%s", err, out)
	}
	r.line("## 5. Client hot paths")
	r.line("")
	r.line("`go test -run '^$' -bench . -benchmem -benchtime 2s ./internal/client/`")
	r.line("")
	r.line("```")
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "cpu:") {
			r.line("%s", l)
		}
	}
	r.line("```")
	r.line("")
	return nil
}

// 6. Refresh at scale: plan over N triggers, one per account, after every
// account received `history` newer backups and one account was deleted, at
// an allowance of 20 requests per second. The state is seeded at a
// generous allowance; the plans are measured at 20/s.
func benchRefreshAtScale(ctx context.Context, h *harness, r *report, _ int) error {
	const allowance = 20
	type row struct {
		n, history                  int
		reqs, reqsBefore            int
		plan, planBefore, noRefresh time.Duration
	}
	var rows []row
	for _, n := range []int{250, 1000, 5000} {
		for _, history := range []int{0, 120} {
			progress("6/12 refresh at scale: %d triggers, %d newer backups per account", n, history)
			m, err := startMock(ctx, mockservice.Options{Seed: 6, Accounts: n + 3, RateLimit: highRateLimit,
				PendingFor: time.Millisecond, RunningFor: time.Millisecond})
			if err != nil {
				return err
			}
			ids := m.srv.AccountIDs()[:n]
			w, err := h.workdir(fmt.Sprintf("scale-%d-%d", n, history), triggers(ids, ""), m)
			if err != nil {
				m.close()
				return err
			}
			for _, args := range [][]string{
				{"apply", "-auto-approve", "-input=false", "-parallelism=50"},
				{"apply", "-refresh-only", "-auto-approve", "-input=false", "-parallelism=50"},
			} {
				if _, err := w.run(ctx, args...); err != nil {
					m.close()
					return err
				}
			}
			for _, id := range ids {
				m.srv.AddRecentBackups(id, history)
			}
			m.srv.DeleteAccount(ids[0])
			m.srv.SetRateLimit(allowance)
			time.Sleep(time.Second) // a fresh rate-limit window
			rw := row{n: n, history: history}
			plan := []string{"plan", "-input=false"}
			if rw.noRefresh, err = w.run(ctx, append(plan, "-refresh=false")...); err != nil {
				m.close()
				return err
			}
			m.srv.ResetStats()
			if rw.plan, err = w.run(ctx, plan...); err != nil {
				m.close()
				return err
			}
			rw.reqs = m.srv.Stats().TotalRequests()
			// Before: every trigger paged its account's backups. Measured
			// where it takes minutes, not hours; above, the count is exact
			// arithmetic: N x (1 + history/50), rounded up per trigger.
			if n*(1+history/50) <= 3000 {
				time.Sleep(time.Second)
				m.srv.ResetStats()
				if rw.planBefore, err = w.runWith(ctx, []string{"TF_CLI_CONFIG_FILE=" + h.pagedCfg}, plan...); err != nil {
					m.close()
					return err
				}
				rw.reqsBefore = m.srv.Stats().TotalRequests()
			} else {
				rw.reqsBefore = -(n * ((history + 1 + 49) / 50))
			}
			m.close()
			rows = append(rows, rw)
		}
	}
	r.line("## 6. Refresh at scale")
	r.line("")
	r.line("`terraform plan` over N `backup_trigger` resources, one per account (N+2 accounts), after every account received `history` newer backups and one account was deleted, "+
		"at an allowance of %d requests per second (state seeded at a generous allowance; one run each). Before: the provider built from commit 8f717f8, whose refresh paged every trigger's backups. "+
		"Bound: `-refresh=false` + requests / allowance + 2 s.", allowance)
	r.line("")
	r.line("| N | history | requests | plan | `-refresh=false` | ratio | bound | before: requests | before: plan |")
	r.line("|---|---|---|---|---|---|---|---|---|")
	for _, rw := range rows {
		bound := rw.noRefresh + time.Duration(float64(rw.reqs)/allowance*float64(time.Second)) + 2*time.Second
		before, beforePlan := fmt.Sprint(rw.reqsBefore), secs(rw.planBefore)
		if rw.reqsBefore < 0 {
			before, beforePlan = fmt.Sprintf("%d (computed)", -rw.reqsBefore), fmt.Sprintf("≥ %.0f s (requests / allowance)", float64(-rw.reqsBefore)/allowance)
		}
		r.line("| %d | %d | %d | %s | %s | %.2fx | %s (%s) | %s | %s |", rw.n, rw.history, rw.reqs, secs(rw.plan), secs(rw.noRefresh),
			float64(rw.plan)/float64(rw.noRefresh), secs(bound), verdict(rw.plan <= bound), before, beforePlan)
	}
	r.line("")
	r.line("Requests per refresh: at most %d account reads, then one listing of every account (⌈A/50⌉ pages), plus one page per trigger still in progress; none of it grows with the backups' history.", 8)
	r.line("")
	return nil
}
