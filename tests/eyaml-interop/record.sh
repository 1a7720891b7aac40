#!/usr/bin/env bash
# Re-records the eyaml interop corpus (not run by CI; the tests read what it wrote):
#
#   plaintexts.json   what every value of the corpus decrypts to
#   theirs.eyaml      those plaintexts encrypted by Ruby hiera-eyaml 4.2 (`eyaml encrypt`,
#                     string and block output, AES-256-CBC) and by `openssl smime -encrypt`
#                     (AES-128/192/256-CBC, 3DES): tests/secrets.rs decrypts them with ours
#   ours.eyaml        the same encrypted by `hiera-lookup eyaml encrypt` (string and block,
#                     every cipher it writes)
#   ours.decrypted    Ruby hiera-eyaml 4.2's `eyaml decrypt -e ours.eyaml`, verbatim
#   ours.openssl      `openssl smime -decrypt` of each value of ours.eyaml: tests/secrets.rs
#                     checks both give back every plaintext (and that they were made from the
#                     committed ours.eyaml)
#
# Everything is encrypted for the test key pair fixtures/backends/eyaml/keys. Needs the Puppet
# 8.10 oracle (tests/conformance/oracle/puppet8-oracle.sh, set up once as root; PUPPET8=cmd runs
# another `cmd run ...`) and a built hiera-lookup (HIERA_LOOKUP, default target/debug).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
oracle=${PUPPET8:-$root/tests/conformance/oracle/puppet8-oracle.sh}
bin=${HIERA_LOOKUP:-$root/target/debug/hiera-lookup}
keys=$root/fixtures/backends/eyaml/keys
[ -x "$bin" ] || { echo "record.sh: build hiera-lookup first (cargo build)" >&2; exit 2; }

"$oracle" run ruby "$here/record.rb" plaintexts > "$here/plaintexts.json"
"$oracle" run ruby "$here/record.rb" theirs "$keys" > "$here/theirs.eyaml"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "# Recorded by tests/eyaml-interop/record.sh: hiera-lookup eyaml encrypt, for fixtures/backends/eyaml/keys."
  echo "---"
  "$oracle" run ruby "$here/record.rb" plan | while IFS=$'\t' read -r label form cipher b64; do
    printf '%s' "$b64" | base64 -d > "$tmp/plain"
    "$bin" eyaml encrypt -f "$tmp/plain" --output "$form" --label "$label" --cipher "$cipher" \
      --pkcs7-public-key "$keys/public_key.pkcs7.pem"
  done
} > "$here/ours.eyaml"

"$oracle" run ruby "$here/record.rb" check "$keys" "$here/ours.eyaml" > "$here/ours.decrypted"
"$oracle" run ruby "$here/record.rb" openssl "$keys" "$here/ours.eyaml" > "$here/ours.openssl"
echo "record.sh: $(grep -c ENC "$here/theirs.eyaml") values of theirs, $(grep -c '^ours_' "$here/ours.eyaml") of ours"
