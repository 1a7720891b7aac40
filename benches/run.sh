#!/usr/bin/env bash
# Whole-process benchmarks: hiera-lookup beside a minimal Rust binary (the yardstick of the
# startup targets), and, when installed, `puppet lookup` and the Hiera 3 `hiera` CLI, on the
# generated control repo. Needs python3 and rustc; Puppet is optional.
#
#   benches/run.sh [WORKDIR]     (default /tmp/hiera-lookup-bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${1:-/tmp/hiera-lookup-bench}
cargo build --release --quiet
T=$PWD/benches/timing.py
mkdir -p "$W"
# Both binaries are timed as installed copies (what `cargo install`, a package or a tarball
# leaves): the linker's own output file sits in the page cache in small pieces, and starting
# from it took 10% longer (same bytes, 253 page faults instead of 240).
H=$W/hiera-lookup
cp target/release/hiera-lookup "$H.new" && mv "$H.new" "$H"
for n in 50 1000 5000; do
    [ -d "$W/repo$n" ] || python3 benches/gen_control_repo.py "$W/repo$n" --nodes "$n"
done
# The yardstick: what a process that only prints costs here, built as the release is.
echo 'fn main() { println!("hi"); }' > "$W/hello.rs"
rustc -O -C lto -C codegen-units=1 -C strip=symbols -o "$W/hello.built" "$W/hello.rs"
cp "$W/hello.built" "$W/hello.new" && mv "$W/hello.new" "$W/hello"
KEY=profile::common::key00042
FACTS=facts/node00042.example.com.yaml
echo "== one lookup, whole process, side by side (ratios to hello; peak RSS per process)"
# Every command is spawned directly (a shell in between would be timed with it); the 50-node
# repo is named by absolute paths from the 5,000-node one.
python3 "$T" --runs 200 --warmup 10 --cwd "$W/repo5000" -- \
    "hello=$W/hello" \
    "lookup-5000-nodes=$H $KEY --facts $FACTS" \
    "lookup-50-nodes=$H $KEY --hiera_config $W/repo50/hiera.yaml --facts $W/repo50/$FACTS" \
    "deep-merge=$H profile::users::group02 --facts $FACTS"
echo "== batch: --all over the 1,000-node repo (per wall and per CPU second: on a shared machine"
echo "   the CPU figure is the one to compare)"
(cd "$W/repo1000" && lines=$(/usr/bin/time -f "%e %U %S" -o "$W/batch-time.txt" "$H" --facts-dir facts --all | wc -l) \
    && read -r wall user sys <"$W/batch-time.txt" \
    && python3 -c "l=$lines; w=$wall; c=$user+$sys; print(f'{l:,} lookups in {w:.2f} s wall, {c:.2f} s CPU = {l/w:,.0f} lookups/s, {l/c:,.0f} per CPU-second')")
if command -v puppet >/dev/null; then
    echo "== puppet lookup on the same data (5 runs)"
    P=$(mktemp -d)
    mkdir -p "$P"/{conf,code/environments,var,log,run}
    ln -sfn "$W/repo5000" "$P/code/environments/production"
    python3 "$T" --runs 5 --warmup 1 --cwd "$W/repo5000" -- "hello=$W/hello" \
        "puppet=puppet lookup --confdir $P/conf --codedir $P/code --vardir $P/var --logdir $P/log --rundir $P/run --node node00042.example.com --facts $FACTS $KEY"
fi
if command -v hiera >/dev/null; then
    echo "== Hiera 3 CLI (5 runs)"
    cat > "$W/hiera3.yaml" <<Y
:backends: [yaml]
:hierarchy: ["nodes/%{::trusted.certname}", common]
:yaml:
  :datadir: $W/repo5000/data
Y
    python3 "$T" --runs 5 --warmup 1 --cwd "$W/repo5000" -- "hello=$W/hello" \
        "hiera3=hiera -c $W/hiera3.yaml $KEY ::trusted.certname=node00042.example.com"
fi
