#!/usr/bin/env bash
# The weight of the shipped code: lines, code lines and comment lines of the
# Go files the provider binary links from internal/, by package (tests and
# test-only packages are not shipped). Usage: tools/size.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{range .GoFiles}} {{.}}{{end}}{{end}}' . |
	awk -v mod="$mod/" 'index($1, mod "internal/") == 1 { dir = substr($1, length(mod) + 1); for (i = 2; i <= NF; i++) print dir "/" $i }' |
	sort | xargs awk '
FNR == 1 { pkg = FILENAME; sub(/\/[^\/]*$/, "", pkg) }
{ total++; t[pkg]++ }
/^[ \t]*$/ { next }
/^[ \t]*\/\// { comment++; c[pkg]++; next }
{ code++; k[pkg]++ }
END {
	printf "linked from internal/: %d lines, %d code, %d comment\n", total, code, comment
	for (p in t) printf "  %-22s lines %5d  code %5d  comment/code %.2f\n", p, t[p], k[p], c[p] / k[p]
}'
