#!/usr/bin/env bash
# `hiera-lookup diff` on the generated control repo with 1,000 nodes (100 roles, a 5,000-key
# common.yaml), in a git repository: a one-line change in a role file (the diff recomputes
# only the keys that change can touch), and the full `--all` diff of every key (`--no-skip`),
# whose rate is compared with batch mode's. Needs hyperfine and python3.
#
#   benches/diff.sh [WORKDIR]     (default /tmp/hiera-lookup-diff-bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${1:-/tmp/hiera-lookup-diff-bench}
cargo build --release --quiet
H=$PWD/target/release/hiera-lookup
if [ ! -d "$W/repo/.git" ]; then
    rm -rf "$W" && mkdir -p "$W"
    python3 benches/gen_control_repo.py "$W/repo" --nodes 1000 --roles 100 --common-keys 5000
    # Facts stay outside the control repo, as PuppetDB or a fact cache would have them.
    mv "$W/repo/facts" "$W/facts"
    git -C "$W/repo" init -q
    git -C "$W/repo" add -A
    git -C "$W/repo" -c user.name=bench -c user.email=bench@example.com commit -qm base
    sed -i 's/^profile::role::setting03: role007-3$/profile::role::setting03: changed/' "$W/repo/data/roles/role007.yaml"
    git -C "$W/repo" -c user.name=bench -c user.email=bench@example.com commit -qam "one line"
fi
cd "$W/repo"
echo "== one-line change in a role file, 1,000 nodes, --all"
# Exit status 1 (differences found) must not end the script.
"$H" diff HEAD~1 HEAD --facts-dir "$W/facts" --all | head -3 || true
# CPU seconds are the figure to read on a shared machine: median of 5 runs.
cpu() {
    for _ in 1 2 3 4 5; do
        /usr/bin/time -f "%U %S %M" "$@" >/dev/null 2>>"$W/time.txt" || true
    done
    tail -n 5 "$W/time.txt" | awk '{print $1 + $2, $3}' | sort -n | sed -n 3p \
        | awk '{printf "median CPU %.2f s, %d MB peak\n", $1, $2 / 1024}'
    : >"$W/time.txt"
}
: >"$W/time.txt"
echo "-- diff (skips the nodes whose hierarchy reaches no changed file)"
cpu "$H" diff HEAD~1 HEAD --facts-dir "$W/facts" --all
echo "-- the same, every node looked up (--no-skip looks every key up: one key given instead)"
cpu "$H" diff HEAD~1 HEAD --facts-dir "$W/facts" profile::role::setting03 --no-skip
echo "-- batch lookup of that key over the same nodes, for the ratio"
cpu "$H" --facts-dir "$W/facts" profile::role::setting03
hyperfine -N --warmup 2 --runs 10 -i "$H diff HEAD~1 HEAD --facts-dir $W/facts --all"
# Lookups per wall second and per CPU-second (user + system: what a shared machine's load
# does not inflate much), for a command printing a count of lookups on its last line.
rate() {
    local what=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$W/time.txt" "$@" >"$W/count.txt" || true
    python3 - "$what" "$W/count.txt" "$W/time.txt" <<'PY'
import sys
what, count, times = sys.argv[1], open(sys.argv[2]).read().split()[-1], open(sys.argv[3]).read().split()
n, (wall, user, sys_) = int(count), map(float, times[-3:])
cpu = user + sys_
print(f"{what}: {n:,} lookups in {wall:.2f} s wall, {cpu:.2f} s CPU = {n / wall:,.0f} lookups/s, {n / cpu:,.0f} per CPU-second")
PY
}
echo "== the full --all diff (every key of every node, both sides), then batch mode's --all"
rate "diff --all --no-skip" sh -c "'$H' diff HEAD~1 HEAD --facts-dir '$W/facts' --all --no-skip --format json \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)[\"lookups\"])'"
rate "batch --all" sh -c "'$H' --facts-dir '$W/facts' --all | wc -l"
