#!/usr/bin/env bash
# make docs: regenerate docs/ with tfplugindocs. tfplugindocs renders action
# and list-resource pages only when the Terraform it runs knows them (1.14 or
# newer), and would otherwise drop them without a word; so this picks the
# newest of TF_DOCS_TERRAFORM and the terraform on PATH, and refuses to run
# with anything older than 1.14.
set -euo pipefail
cd "$(dirname "$0")/.."
min=1.14.0
export CHECKPOINT_DISABLE=1

version_of() { "$1" version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([^"]*\)".*/\1/p' | head -n 1; }

best="" best_version=""
for candidate in "${TF_DOCS_TERRAFORM:-}" "$(command -v terraform || true)"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  v=$(version_of "$candidate")
  [ -n "$v" ] || continue
  if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best_version" "$v" | sort -V | tail -n 1)" = "$v" ]; then
    best=$candidate best_version=$v
  fi
done
if [ -z "$best" ]; then
  echo "make docs: no Terraform found; set TF_DOCS_TERRAFORM to a Terraform $min or newer" >&2
  exit 1
fi
if [ "$(printf '%s\n%s\n' "$min" "$best_version" | sort -V | head -n 1)" != "$min" ]; then
  echo "make docs: the newest Terraform found is $best_version ($best), older than $min;" >&2
  echo "  tfplugindocs would silently leave out the pages of actions and list resources." >&2
  echo "  Set TF_DOCS_TERRAFORM to the path of a Terraform $min or newer." >&2
  exit 1
fi
echo "make docs: using Terraform $best_version ($best)"

# tfplugindocs runs whatever "terraform" PATH names.
bindir=$(mktemp -d)
trap 'rm -rf "$bindir"' EXIT
ln -s "$(cd "$(dirname "$best")" && pwd)/$(basename "$best")" "$bindir/terraform"
export PATH="$bindir:$PATH"
tools="go tool -modfile=tools/go.mod"
$tools tfplugindocs generate --provider-name backup --rendered-provider-name "Backup Service"
$tools tfplugindocs validate --provider-name backup
