#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): the static binary of the release the action
# is used at (`uses: OWNER/hiera-lookup@vX.Y.Z`), checked against the release's SHA256SUMS;
# else (a branch, a commit, a release without binaries) a build of the action's own checkout.
# Either way the binary ends up on the job's PATH.
set -euo pipefail
repo=${HIERA_LOOKUP_ACTION_REPOSITORY:?}
ref=${HIERA_LOOKUP_ACTION_REF:?}
src=${HIERA_LOOKUP_ACTION_PATH:?}
dest=${RUNNER_TEMP:-/tmp}/hiera-lookup-bin
mkdir -p "$dest"
case "$(uname -m)" in
  x86_64) target=x86_64-unknown-linux-musl ;;
  aarch64 | arm64) target=aarch64-unknown-linux-musl ;;
  *) target= ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -n "$target" && "$(uname -s)" == Linux ]] && command -v gh >/dev/null \
  && gh release download "$ref" --repo "$repo" --dir "$work" \
    --pattern "hiera-lookup-*-$target.tar.gz" --pattern SHA256SUMS 2>/dev/null; then
  (cd "$work" && sha256sum --check --ignore-missing --strict SHA256SUMS)
  tar -xzf "$work"/hiera-lookup-*-"$target".tar.gz -C "$work"
  install -m 0755 "$work"/hiera-lookup-*-"$target"/hiera-lookup "$dest/hiera-lookup"
  echo "hiera-lookup: the $ref release's $target binary"
else
  echo "hiera-lookup: no release binary for $ref; building the action's checkout (about 10 minutes)"
  cargo install --locked --path "$src" --root "$work/root"
  install -m 0755 "$work/root/bin/hiera-lookup" "$dest/hiera-lookup"
fi
"$dest/hiera-lookup" --version
echo "$dest" >> "${GITHUB_PATH:-/dev/null}"
