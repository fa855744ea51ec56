#!/usr/bin/env bash
# make stress: the whole suite (acceptance tests included) STRESS_RUNS times,
# each with -race and -shuffle=on, while a CPU hog keeps every core busy, to
# flush out tests that depend on timing or on order. Keeps the log of every
# failed run and prints its failing tests and shuffle seed.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${STRESS_RUNS:-20}
logs=$(mktemp -d "${TMPDIR:-/tmp}/stress-XXXXXX")
hogs=()
cleanup() { [ "${#hogs[@]}" -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$(nproc)"); do
  ( while :; do :; done ) &
  hogs+=("$!")
done
echo "stress: $runs runs of TF_ACC=1 go test -race -shuffle=on ./... beside $(nproc) CPU hogs; logs in $logs"
failed=0
for i in $(seq "$runs"); do
  log="$logs/run-$i.log"
  start=$(date +%s)
  if TF_ACC=1 go test -race -shuffle=on -count=1 -timeout 30m ./... >"$log" 2>&1; then
    echo "run $i: ok ($(( $(date +%s) - start )) s)"
    rm -f "$log"
  else
    failed=$((failed + 1))
    echo "run $i: FAIL ($(( $(date +%s) - start )) s), log $log"
    grep -E -e '-test.shuffle|--- FAIL|^FAIL|panic:|WARNING: DATA RACE|^(FAIL|secrets):' "$log" | head -n 20 | sed 's/^/    /'
  fi
done
echo "stress: $failed of $runs runs failed"
[ "$failed" -eq 0 ]
