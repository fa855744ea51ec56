#!/usr/bin/env bash
# make mutation-sim: each mutant of tools/sim_mutants.py applied alone to a
# copy of the tracked tree, then TestSimulation's 1,000 sequences (make
# test's) on it; a line per mutant says which categories caught it first,
# or "ok" when it lived. Slow: about a minute per mutant on 2 quiet cores;
# SIM_MUTANTS="0 3" runs those alone. Exits 1 when a mutant no longer applies
# (its text renamed away): tools/sim_mutants.py then needs mending.
set -u
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
decayed=0 # a mutant whose text the code no longer holds: tools/sim_mutants.py needs mending
n=$(python3 -c "import sys; sys.path.insert(0, '$root/tools'); from sim_mutants import M; print(len(M))")
for i in ${SIM_MUTANTS:-$(seq 0 $((n - 1)))}; do
  rm -rf "$work/tree" && mkdir -p "$work/tree"
  (cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$work/tree")
  name=$(python3 - "$i" "$root/tools" "$work/tree" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from sim_mutants import M
name, f, old, new = M[int(sys.argv[1])]
p = sys.argv[3] + "/" + f
s = open(p).read()
if s.count(old) != 1:
    print("NOT APPLIED: " + name)
else:
    open(p, "w").write(s.replace(old, new))
    print(name)
PY
)
  case "$name" in "NOT APPLIED"*) echo "[$i] $name"; decayed=1; continue ;; esac
  if ! build=$(cd "$work/tree" && go vet ./internal/... 2>&1); then
    echo "[$i] $name :: DOES NOT BUILD: $(echo "$build" | head -3 | tr '\n' ' ')"
    continue
  fi
  res=$(cd "$work/tree" && go test ./internal/provider -run '^TestSimulation$' -count=1 -timeout 0 2>&1 |
    grep -E 'category|failing sequences|^ok' | cut -c1-160 | tr '\n' ' ')
  echo "[$i] $name :: $res"
done
exit "$decayed"
