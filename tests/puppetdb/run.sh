#!/usr/bin/env bash
# Runs hiera-lookup against a REAL PuppetDB 8.4 and records its answers for CI.
#
#   tests/puppetdb/run.sh            start PuppetDB (HTTP 8080, HTTPS 8081) on loopback, load the
#                                    real-world fact sets of ../shared/realworld/facts and
#                                    tests/puppetdb/facts (a node with trusted pp_role: web),
#                                    run the lookups below over HTTPS with PuppetDB's client
#                                    certificate and over plain HTTP through record-proxy.py,
#                                    check both agree, write tests/puppetdb/recorded.jsonl (the
#                                    HTTP exchanges) and tests/puppetdb/expected/ (our outputs),
#                                    then stop PuppetDB (KEEP=1 leaves it running).
#
# Needs ../shared/tools/puppetdb (PUPPETDB=path to override; see its header: it runs PuppetDB
# and PostgreSQL from the Puppet 8 chroot, as root). tests/puppetdb.rs replays the recording
# from a loopback HTTPS server with certificates made at test time: CI needs no PuppetDB.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$HERE/../.." && pwd -P)
PUPPETDB=${PUPPETDB:-$REPO/../shared/tools/puppetdb}
[[ -x $PUPPETDB ]] || PUPPETDB=/work/shared/tools/puppetdb
FACTS=${FACTS:-$(dirname "$PUPPETDB")/../realworld/facts}
PROXY_PORT=${PROXY_PORT:-18080}

cargo build --quiet --manifest-path "$REPO/Cargo.toml"
BIN=$REPO/target/debug/hiera-lookup
export HIERA_LOOKUP_PUPPET_CONF=/dev/null

"$PUPPETDB" setup >/dev/null
"$PUPPETDB" start --tls-port 8081
cleanup() {
    [[ -n ${proxy_pid:-} ]] && kill "$proxy_pid" 2>/dev/null || true
    [[ ${KEEP:-0} == 1 ]] || "$PUPPETDB" stop
}
trap cleanup EXIT
"$PUPPETDB" load-facts "$FACTS" | tail -n 2
"$PUPPETDB" load-facts --no-trusted "$HERE/facts" | tail -n 2

HTTP=$("$PUPPETDB" url)
HTTPS=$("$PUPPETDB" url --tls)
SSL=$("$PUPPETDB" url --ssl-dir)
TLS=(--puppetdb-cacert "$SSL/ca.pem" --puppetdb-cert "$SSL/client.pem" --puppetdb-key "$SSL/client.key")

rec=$(mktemp)
python3 "$HERE/record-proxy.py" "$PROXY_PORT" "$HTTP" "$rec" &
proxy_pid=$!
for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/$PROXY_PORT) 2>/dev/null && break
    sleep 0.1
done

# name | arguments (the PuppetDB URL and TLS flags are added)
LOOKUPS=(
    "node-trusted-role|--node web01.example.com profile::ntp::servers"
    "node-trusted-whoami|--node web01.example.com whoami"
    "node-debian|--node facter4-11-debian-13-x86-64.example.com profile::ntp::servers"
    "node-unknown|--node nosuch.example.com profile::ntp::servers"
    "all-active|profile::ntp::servers"
    "query-redhat|--nodes-query 'inventory[certname] { facts.os.family = \"RedHat\" }' whoami"
    "query-bad|--nodes-query 'inventory[certname] { facts.os.family = ' whoami"
    "query-none|--nodes-query 'inventory[certname] { facts.os.family = \"Plan9\" }' whoami"
)
out=$HERE/expected.new
rm -rf "$out"
mkdir -p "$out"
fail=0
cd "$HERE/case"
for l in "${LOOKUPS[@]}"; do
    name=${l%%|*}
    eval "args=(${l#*|})"
    rc=0
    "$BIN" --hiera_config hiera.yaml --puppetdb "$HTTPS" "${TLS[@]}" "${args[@]}" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
    echo "$rc" >"$out/$name.status"
    rc2=0
    "$BIN" --hiera_config hiera.yaml --puppetdb "http://127.0.0.1:$PROXY_PORT" "${args[@]}" >"$out/$name.http.out" 2>"$out/$name.http.err" || rc2=$?
    sed -i "s#http://127.0.0.1:$PROXY_PORT#<PUPPETDB>#g" "$out/$name.http.err"
    sed -i "s#$HTTPS#<PUPPETDB>#g" "$out/$name.err"
    if [[ $rc != "$rc2" ]] || ! cmp -s "$out/$name.out" "$out/$name.http.out" || ! cmp -s "$out/$name.err" "$out/$name.http.err"; then
        echo "DIFFER $name: https exit $rc, http exit $rc2"
        fail=1
    fi
    rm -f "$out/$name.http.out" "$out/$name.http.err"
    printf '%-22s exit %s, %3s lines' "$name" "$rc" "$(wc -l <"$out/$name.out")"
    if [[ -s $out/$name.err ]]; then printf ', stderr: %s' "$(head -c 150 "$out/$name.err")"; fi
    printf '\n'
    head -n 2 "$out/$name.out" | cut -c1-200 | sed 's/^/    /'
done
# TLS failures, for real: no client certificate, and a CA that did not sign PuppetDB's.
for l in "tls-no-client-cert|--puppetdb-cacert $SSL/ca.pem" "tls-wrong-ca|--puppetdb-cacert $SSL/client.pem --puppetdb-cert $SSL/client.pem --puppetdb-key $SSL/client.key"; do
    name=${l%%|*}
    eval "args=(${l#*|})"
    rc=0
    "$BIN" --hiera_config hiera.yaml --puppetdb "$HTTPS" "${args[@]}" --node web01.example.com whoami 2>&1 || rc=$?
    echo "$name: exit $rc"
done
kill "$proxy_pid"
proxy_pid=
cp "$rec" "$HERE/recorded.jsonl"
rm -f "$rec"
rm -rf "$HERE/expected"
mv "$out" "$HERE/expected"
echo "recorded $(wc -l <"$HERE/recorded.jsonl") PuppetDB exchanges in tests/puppetdb/recorded.jsonl"
exit $fail
