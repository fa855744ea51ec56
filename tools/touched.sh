#!/usr/bin/env bash
# The shipped files whose code one waited backup_trigger create runs beyond
# its plan (issue 47's "files one create touches"): coverage of a plan, then
# of a plan and apply, through the simulation's harness. Usage: tools/touched.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
scratch=internal/provider/touched_scratch_test.go
trap 'rm -rf "$out" "$scratch"' EXIT
cp tools/touched_test.go.txt "$scratch"
go test ./internal/provider -run '^TestScratchTouch$' -count=1 -coverpkg=./internal/... -coverprofile="$out/plan" >/dev/null
TOUCH_APPLY=1 go test ./internal/provider -run '^TestScratchTouch$' -count=1 -coverpkg=./internal/... -coverprofile="$out/apply" >/dev/null
mod=$(go list -m)/
awk -v mod="$mod" 'FNR == 1 { next }
	{ n = $NF; $NF = ""; if (FILENAME ~ /apply$/) a[$0] += n; else p[$0] += n }
	END { for (k in a) if (a[k] > p[k]) { f = k; sub(/:.*/, "", f); sub(mod, "", f); print f } }' "$out/plan" "$out/apply" |
	grep -v -e '/mockservice/' -e '/cmd/' | sort -u | awk '{ print } END { print NR " files" }'
