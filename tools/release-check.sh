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
"$goreleaser" check -f .goreleaser-mock.yml
"$goreleaser" release --snapshot --clean --skip=publish
"$goreleaser" release --snapshot --clean --skip=publish -f .goreleaser-mock.yml

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

# The provider's set is what the registry expects, and only that: one zip
# per platform of .goreleaser.yml and the manifest in its SHA256SUMS,
# nothing of the mock's release among them.
platforms="darwin_amd64 darwin_arm64 freebsd_386 freebsd_amd64 freebsd_arm freebsd_arm64 linux_386 linux_amd64 linux_arm linux_arm64 windows_386 windows_amd64 windows_arm64"  # no windows_arm: Go 1.26 dropped the port
version=$(basename "${sums[0]}" _SHA256SUMS); version=${version#terraform-provider-backup_}
want=$(for p in $platforms; do echo "terraform-provider-backup_${version}_$p.zip"; done; echo "terraform-provider-backup_${version}_manifest.json")
got=$(awk '{ print $2 }' "${sums[0]}" | sort)
[ "$got" = "$(sort <<<"$want")" ] || { echo "the provider's SHA256SUMS is not the registry's set:"; diff <(sort <<<"$want") <(echo "$got"); exit 1; }
zips=$(cd dist && ls -1 *.zip | sort)
[ "$zips" = "$(grep '\.zip$' <<<"$want" | sort)" ] || { echo "dist/ holds other archives than the provider's:"; echo "$zips"; exit 1; }

# The mock's release: an archive per platform and a checksums file of its
# own, listing exactly those archives.
msums=dist-mock/backup-mock_${version}_SHA256SUMS
[ -f "$msums" ] || { echo "no $msums"; exit 1; }
mwant=$(for p in $platforms; do case $p in windows_*) echo "backup-mock_${version}_$p.zip" ;; *) echo "backup-mock_${version}_$p.tar.gz" ;; esac; done | sort)
mgot=$(awk '{ print $2 }' "$msums" | sort)
[ "$mgot" = "$mwant" ] || { echo "the mock's checksums file is not its archive set:"; diff <(echo "$mwant") <(echo "$mgot"); exit 1; }
(cd dist-mock && sha256sum --quiet -c "$(basename "$msums")")
[ -f "$msums.sig" ] || { echo "no $msums.sig: the mock's sums are not signed"; exit 1; }
gpg --batch --verify "$msums.sig" "$msums"
ls -1 "$msums" "$msums.sig" dist-mock/backup-mock_*.tar.gz dist-mock/backup-mock_*.zip
echo "release check: provider archives, sums and signature verified; the mock's archives, sums and signature apart"
