#!/usr/bin/env bash
# make release-check: validate .goreleaser.yml, build every release archive
# as a snapshot into dist/, and sign the SHA256SUMS as the release job does,
# with a throwaway RSA key in a temporary GnuPG home; then verify the
# signature with gpg --verify, so the signing step the registry requires is
# run, not only configured. Offline once goreleaser is installed.
set -euo pipefail
goreleaser=$1

GNUPGHOME=$(mktemp -d)
export GNUPGHOME
cleanup() {
  gpgconf --kill all >/dev/null 2>&1 || true
  rm -rf "$GNUPGHOME"
}
trap cleanup EXIT

gpg --batch --quiet --passphrase '' --quick-generate-key \
  "terraform-provider-backup release check (throwaway) <release-check@invalid>" rsa3072 sign 1d
GPG_FINGERPRINT=$(gpg --batch --list-secret-keys --with-colons | awk -F: '$1 == "fpr" { print $10; exit }')
export GPG_FINGERPRINT
echo "throwaway signing key: $GPG_FINGERPRINT"

"$goreleaser" check
"$goreleaser" release --snapshot --clean --skip=publish

shopt -s nullglob
sums=(dist/*_SHA256SUMS)
sigs=(dist/*_SHA256SUMS.sig)
[ ${#sums[@]} -eq 1 ] && [ ${#sigs[@]} -eq 1 ] || { echo "want one SHA256SUMS and one .sig in dist/, got: ${sums[*]} ${sigs[*]}"; exit 1; }
ls -1 dist/*.zip "${sums[0]}" "${sigs[0]}"
grep -q '_manifest.json$' "${sums[0]}" || { echo "the registry manifest is not in ${sums[0]}"; exit 1; }
for z in dist/*.zip; do
  listing=$(unzip -l "$z") # not piped into grep -q: under pipefail, unzip's SIGPIPE would fail the check
  grep -q ' LICENSE$' <<<"$listing" || { echo "$z lacks LICENSE"; exit 1; }
  grep -q "  $(basename "$z")\$" "${sums[0]}" || { echo "$z is not in ${sums[0]}"; exit 1; }
done
(cd dist && sha256sum --quiet -c "$(basename "${sums[0]}")" --ignore-missing)
gpg --batch --verify "${sigs[0]}" "${sums[0]}"
echo "release check: archives, sums and signature verified"
