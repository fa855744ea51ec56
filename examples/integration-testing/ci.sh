#!/usr/bin/env bash
# A CI job for the module in this folder: integration tests against the mock
# Backup Service, offline.
#
#   1. start the mock in the background (-env-file) and source its settings:
#      BACKUP_BASE_URL, BACKUP_API_KEY, BACKUP_MOCK_ADMIN_TOKEN;
#   2. terraform init and terraform test (tests/integration.tftest.hcl: real
#      applies, backups taken and waited for);
#   3. the failure paths, each switched on through the mock's admin API
#      (its failure controls), and each expected to exit 1, since
#      expect_failures cannot catch a provider's error:
#      - an apply on a paused account;
#      - failure-tests/, a terraform test of the guard whose backup fails,
#        which must fail at its last run and only there;
#      - a destroy whose backup fails, with the guarded resource kept, then
#        a second destroy that goes through;
#   4. the mock stops on exit (trap), whatever happened.
#
# TF names the Terraform or OpenTofu binary (default: terraform; terraform
# test needs Terraform 1.7+ or OpenTofu 1.8+). The mock and the provider are
# built from the checkout this folder belongs to (BACKUP_PROVIDER_REPO to use
# another; Go needed), and terraform init installs the provider from a local
# mirror, so nothing is downloaded. In a module's own pipeline, leave out the
# mirror: terraform init installs the released provider.
set -euo pipefail

TF=${TF:-terraform}
here=$(cd "$(dirname "$0")" && pwd)
repo=${BACKUP_PROVIDER_REPO:-$(cd "$here/../.." && pwd)}
work=$(mktemp -d "${TMPDIR:-/tmp}/backup-integration.XXXXXX")
mock_pid=""

cleanup() {
  if [ -n "$mock_pid" ] && kill -0 "$mock_pid" 2>/dev/null; then
    kill "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
    echo "==> stopped the mock"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# says FILE TEXT: FILE holds TEXT, however Terraform wrapped its lines (grep
# reads to the end: with -q, tr could die of SIGPIPE and fail the pipe).
says() { tr -s '[:space:]' ' ' <"$1" | grep -F "$2" >/dev/null; }

step "building the mock and the provider into $work"
# The provider goes into a local mirror as version 0.1.0, the first release,
# for Terraform's and OpenTofu's registry names alike: terraform init
# installs it from there, and reaches no registry (terraform_data is built
# in). A module's own pipeline leaves out TF_CLI_CONFIG_FILE.
# It also downloads the released backup-mock of the provider version it
# pins (see the guide's "Getting the mock") instead of building it here.
os_arch=$(go env GOOS)_$(go env GOARCH)
(cd "$repo" && go build -o "$work/bin/backup-mock" ./internal/cmd/backup-mock)
(cd "$repo" && go build -o "$work/bin/terraform-provider-backup" -ldflags "-X main.version=0.1.0" .)
for host in registry.terraform.io registry.opentofu.org; do
  mkdir -p "$work/mirror/$host/backup-service/backup/0.1.0/$os_arch"
  cp "$work/bin/terraform-provider-backup" "$work/mirror/$host/backup-service/backup/0.1.0/$os_arch/"
done
cat >"$work/terraformrc" <<CFG
provider_installation {
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.terraform.io/backup-service/backup", "registry.opentofu.org/backup-service/backup"]
  }
}
CFG
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

step "starting the mock"
# Short pending and running times keep each waited-for backup to a poll or
# two. The key, the ids and the admin token are new on every run.
"$work/bin/backup-mock" -pending 300ms -running 700ms \
  -env-file "$work/mock.env" >"$work/mock.out" 2>"$work/mock.log" &
mock_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/mock.env" ] && break
  kill -0 "$mock_pid" 2>/dev/null || {
    cat "$work/mock.log" >&2
    fail "the mock did not start"
  }
  sleep 0.1
done
[ -s "$work/mock.env" ] || fail "the mock did not start"
# mock.env: BACKUP_BASE_URL, BACKUP_API_KEY, BACKUP_MOCK_ADMIN_TOKEN.
set -a
# shellcheck disable=SC1091
. "$work/mock.env"
set +a
echo "BACKUP_BASE_URL=$BACKUP_BASE_URL"
account=acc_0123456789abcdef # the module's default account, which the mock serves

# admin METHOD PATH [BODY] calls the mock's admin API (admin API v1): the
# per-run token, and JSON on every POST. A refusal (4xx) fails the job,
# with the mock's problem document.
admin() {
  local body=()
  [ $# -lt 3 ] || body=(-d "$3")
  curl -sS --fail-with-body -X "$1" -H "Authorization: Bearer $BACKUP_MOCK_ADMIN_TOKEN" \
    -H "Content-Type: application/json" ${body[@]+"${body[@]}"} "$BACKUP_BASE_URL$2"
}

# The module's folder, copied so that no state is left in the checkout. In
# a module's own pipeline, run in the module's folder.
mkdir -p "$work/module"
cp "$here"/*.tf "$work/module/"
cp -r "$here/tests" "$here/failure-tests" "$work/module/"
tf() { "$TF" -chdir="$work/module" "$@"; }

# fails_with LOG CMD...: runs CMD, which must exit 1 (a provider error:
# expect_failures cannot catch one), keeping its output in LOG.
fails_with() {
  local log=$1 status
  shift
  set +e
  "$@" >"$log" 2>&1
  status=$?
  set -e
  cat "$log"
  [ "$status" -eq 1 ] || fail "$*: exit $status, want 1"
}

step "$TF init and $TF test"
# -test-directory=failure-tests also installs the modules its runs use.
tf init -input=false -no-color -test-directory=failure-tests >"$work/init.log" 2>&1 || {
  cat "$work/init.log"
  fail "init"
}
tf test -no-color
step "what terraform test asked of the mock (GET /_mock/stats), then POST /_mock/reset"
stats=$(admin GET /_mock/stats)
echo "stats: $stats"
# Two releases and the guard's backup at teardown; the same release applied
# again took none.
grep -qF '"backups_queued":{"acc_0123456789abcdef":3}' <<<"$stats" || fail "terraform test queued other than 3 backups"
admin POST /_mock/reset

step "failure path: an apply on a paused account exits 1"
admin POST "/_mock/accounts/$account/state" '{"state": "paused"}'
tf workspace new paused >/dev/null
fails_with "$work/paused.log" tf apply -auto-approve -input=false -no-color
says "$work/paused.log" "is not in a backupable state: paused" || fail "apply on the paused account: no message naming the pause"
admin POST "/_mock/accounts/$account/state" '{"state": "active"}'
echo "ok: exit 1, the pause named"

step "failure path: $TF test -test-directory=failure-tests fails at its last run, and only there"
# Its second run fails the account's next backup through the admin API; the
# third destroys the module, and the guard's backup fails.
fails_with "$work/failure-tests.log" tf test -no-color -test-directory=failure-tests
says "$work/failure-tests.log" 'run "destroy_stops_when_the_backup_fails"... fail' || fail "failure-tests: the destroy did not fail"
says "$work/failure-tests.log" "Failure! 2 passed, 1 failed." || fail "failure-tests: another run failed, or none"
says "$work/failure-tests.log" "quota exceeded at the platform" || fail "failure-tests: no message with the backup's error"
! says "$work/failure-tests.log" "cleaned up manually" || fail "failure-tests: the teardown left resources behind"
echo "ok: exit 1 at the destroy, the backup's error shown, the teardown clean"

step "failure path: a destroy whose backup fails exits 1 and keeps the tenant; the next one goes through"
tf workspace new failing >/dev/null
tf apply -auto-approve -input=false -no-color >"$work/failing-apply.log" 2>&1 || {
  cat "$work/failing-apply.log"
  fail "apply"
}
admin POST "/_mock/accounts/$account/fail-backups" '{"count": 1, "error": "the platform refused the export"}'
fails_with "$work/failing.log" tf destroy -auto-approve -input=false -no-color
says "$work/failing.log" 'ended with status "failed": the platform refused the export' || fail "destroy: no message with the backup's error"
says "$work/failing.log" "The destroy stopped and this resource is kept" || fail "destroy: no message saying the destroy stopped"
tf state list >"$work/state.txt"
grep -qx "terraform_data.tenant" "$work/state.txt" || fail "destroy: the tenant left the state"
grep -qx "backup_on_destroy.tenant" "$work/state.txt" || fail "destroy: the guard left the state"
echo "ok: exit 1, the backup's error shown, terraform_data.tenant and its guard still in the state"
tf destroy -auto-approve -input=false -no-color >"$work/retry.log" 2>&1 || {
  cat "$work/retry.log"
  fail "the second destroy, whose backup succeeds"
}
[ -z "$(tf state list)" ] || fail "the second destroy left resources in the state"
echo "ok: the second destroy took a new backup and went through"

step "what the failure paths asked of the mock (GET /_mock/stats)"
echo "stats: $(admin GET /_mock/stats)"
echo
echo "PASS"
