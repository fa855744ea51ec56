#!/usr/bin/env bash
# make demo: build the provider, start the mock Backup Service on a free
# loopback port, and apply examples/demo with Terraform through a throwaway
# CLI configuration (dev_overrides). Offline; cleans up even when interrupted.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/backup-demo.XXXXXX")
mock_pid=""

cleanup() {
  if [ -n "$mock_pid" ] && kill -0 "$mock_pid" 2>/dev/null; then
    kill "$mock_pid" 2>/dev/null || true
    wait "$mock_pid" 2>/dev/null || true
    echo "==> Stopped the mock service"
  fi
  rm -rf "$work"
  echo "==> Removed $work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n==> %s\n' "$*"; }

command -v terraform >/dev/null || { echo "terraform is not on PATH (1.5 or newer is needed)" >&2; exit 1; }

step "Building the provider and the mock service into $work/bin"
mkdir -p "$work/bin" "$work/config"
(cd "$root" && go build -o "$work/bin/terraform-provider-backup" -ldflags "-X main.version=demo" .)
(cd "$root" && go build -o "$work/bin/backup-mock" ./internal/cmd/backup-mock)

step "Starting the mock Backup Service on a free loopback port"
"$work/bin/backup-mock" -seed 7 -accounts 6 -pending 1s -running 2s -env-file "$work/mock.env" >"$work/mock.out" 2>"$work/mock.log" &
mock_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/mock.env" ] && break
  kill -0 "$mock_pid" 2>/dev/null || { cat "$work/mock.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$work/mock.env" ] || { echo "the mock service did not start" >&2; exit 1; }
set -a
# shellcheck disable=SC1091
. "$work/mock.env"
set +a
echo "    BACKUP_BASE_URL=$BACKUP_BASE_URL"
echo "    BACKUP_API_KEY=(the mock's demo key, kept in the environment)"

step "Writing a throwaway Terraform CLI configuration with dev_overrides"
cat >"$work/terraformrc" <<CFG
provider_installation {
  dev_overrides {
    "backup-service/backup" = "$work/bin"
  }
  direct {}
}
CFG
export TF_CLI_CONFIG_FILE="$work/terraformrc"
export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
cp "$root"/examples/demo/*.tf "$work/config/"
echo "    $TF_CLI_CONFIG_FILE"

# without_override_warning drops Terraform's "development overrides"
# warning whole, however its text wraps: from its first line through the
# paragraph that begins "The behavior may therefore" and the blank (or box
# closing) line that ends it.
without_override_warning() {
  awk '
    /Warning: Provider development overrides are in effect/ { skip = 1; next }
    skip == 1 { if ($0 ~ /The behavior may therefore/) skip = 2; next }
    skip == 2 { if ($0 ~ /^[[:space:]│]*$/ || $0 ~ /^╵/) skip = 0; next }
    { print }
  '
}

# run_terraform runs terraform, filtered, and stops the demo at once when it
# fails or is interrupted. Terraform exits normally after a Ctrl-C, so bash
# runs no INT trap of its own: the exit status is what tells.
run_terraform() {
  local status
  set +e
  terraform -chdir="$work/config" "$@" -input=false -no-color 2>&1 | without_override_warning
  status=${PIPESTATUS[0]}
  set -e
  return "$status"
}

step "terraform apply examples/demo (reads the key and the accounts, takes a backup and waits for it)"
run_terraform apply -auto-approve || { status=$?; echo "==> terraform apply stopped (exit $status); the demo stops here"; exit "$status"; }

step "Applying again: nothing to change, and no new backup"
if run_terraform plan -detailed-exitcode >"$work/replan.txt"; then
  echo "    No changes."
else
  status=$?
  cat "$work/replan.txt"
  exit "$status"
fi

step "What the mock service saw"
if command -v curl >/dev/null; then
  # The admin API wants the per-run token the mock wrote to mock.env.
  curl -fsS -H "Authorization: Bearer $BACKUP_MOCK_ADMIN_TOKEN" "$BACKUP_BASE_URL/_mock/stats"
else
  echo "    (install curl to see $BACKUP_BASE_URL/_mock/stats)"
fi
