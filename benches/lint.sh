#!/usr/bin/env bash
# Whole-process timings of `hiera-lookup lint` (release build): the realworld control repo
# (the pre-commit case) and the generated 5,000-node repo, without and with its fleet.
# Needs hyperfine (apt-get install hyperfine) and python3.
#
#   benches/lint.sh [WORKDIR]     (default /tmp/hiera-lookup-bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${1:-/tmp/hiera-lookup-bench}
cargo build --release --quiet
H=$PWD/target/release/hiera-lookup
mkdir -p "$W"
[ -d "$W/repo5000" ] || python3 benches/gen_control_repo.py "$W/repo5000" --nodes 5000
RW=$PWD/tests/conformance/layers/realworld
echo "== realworld control repo (9 modules, 101 data files)"
hyperfine -N --warmup 3 --runs 30 -i "$H lint $RW/environments/production" \
    "$H lint $RW/environments/production --facts-dir $RW/facts"
echo "== generated repo: 5,000 node files, 5,000-key common.yaml"
hyperfine -N --warmup 1 --runs 10 -i "$H lint $W/repo5000"
echo "== generated repo with its fleet of 5,000 nodes (--facts-dir)"
hyperfine -N --warmup 1 --runs 3 -i "$H lint $W/repo5000 --facts-dir $W/repo5000/facts"
echo "== peak RSS (KiB) with the fleet"
/usr/bin/time -f "%M" "$H" lint "$W/repo5000" --facts-dir "$W/repo5000/facts" 2>&1 >/dev/null | tail -1
