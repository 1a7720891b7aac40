#!/usr/bin/env bash
# Whole-process benchmarks: hiera-lookup (and, when installed, `puppet lookup` and the
# Hiera 3 `hiera` CLI) on the generated control repo. Needs hyperfine (apt-get install
# hyperfine) and python3; Puppet is optional.
#
#   benches/run.sh [WORKDIR]     (default /tmp/hiera-lookup-bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${1:-/tmp/hiera-lookup-bench}
cargo build --release --quiet
H=$PWD/target/release/hiera-lookup
mkdir -p "$W"
for n in 50 5000; do
    [ -d "$W/repo$n" ] || python3 benches/gen_control_repo.py "$W/repo$n" --nodes "$n"
done
KEY=profile::common::key00042
NODE=node00042.example.com
export HIERA_LOOKUP_CACHE_DIR="$W/cache"
echo "== single lookup, whole process (first run fills the parse cache)"
for n in 50 5000; do
    (cd "$W/repo$n" && hyperfine -N --warmup 10 --runs 200 --export-json "$W/single$n.json" \
        "$H $KEY --facts facts/$NODE.yaml")
done
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
m = {n: json.load(open(f"{w}/single{n}.json"))["results"][0]["median"] * 1000 for n in (50, 5000)}
print(f"median: 50 nodes {m[50]:.2f} ms, 5000 nodes {m[5000]:.2f} ms, ratio {m[5000] / m[50]:.2f}")
PY
echo "== peak RSS (KiB) of one lookup on the 5,000-node repo"
(cd "$W/repo5000" && /usr/bin/time -f "%M" "$H" $KEY --facts facts/$NODE.yaml 2>&1 >/dev/null | tail -1)
echo "== deep merge of a 20-group user hash across levels"
(cd "$W/repo5000" && hyperfine -N --warmup 5 --runs 100 "$H profile::users::group02 --facts facts/$NODE.yaml")
echo "== batch: --all over 1,000 nodes"
mkdir -p "$W/facts1000"
# sed reads all its input: no SIGPIPE for the producer under pipefail.
find "$W/repo5000/facts" -name '*.yaml' | sort | sed -n '1,1000p' | while read -r f; do ln -sf "$f" "$W/facts1000/"; done
(cd "$W/repo5000" && start=$(date +%s.%N) && lines=$("$H" --facts-dir "$W/facts1000" --all | wc -l) \
    && end=$(date +%s.%N) && python3 -c "import sys; l=$lines; t=$end-$start; print(f'{l} lookups in {t:.2f} s = {l/t:,.0f} lookups/s')")
if command -v puppet >/dev/null; then
    echo "== puppet lookup on the same data (5 runs)"
    P=$(mktemp -d)
    mkdir -p "$P"/{conf,code/environments,var,log,run}
    ln -sfn "$W/repo5000" "$P/code/environments/production"
    (cd "$W/repo5000" && hyperfine -N --warmup 1 --runs 5 \
        "puppet lookup --confdir $P/conf --codedir $P/code --vardir $P/var --logdir $P/log --rundir $P/run --node $NODE --facts facts/$NODE.yaml $KEY")
fi
if command -v hiera >/dev/null; then
    echo "== Hiera 3 CLI (5 runs)"
    cat > "$W/hiera3.yaml" <<Y
:backends: [yaml]
:hierarchy: ["nodes/%{::trusted.certname}", common]
:yaml:
  :datadir: $W/repo5000/data
Y
    (cd "$W/repo5000" && hyperfine -N --warmup 1 --runs 5 "hiera -c $W/hiera3.yaml $KEY ::trusted.certname=$NODE")
fi
