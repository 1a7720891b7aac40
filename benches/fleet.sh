#!/usr/bin/env bash
# Issue 27's real-fleet benchmark: 3,000 nodes of real Facter output (benches/gen_real_fleet.py
# from benches/realworld/facts) over the realworld control repo, every command side by side with
# the yardstick, Python's json.load of the same files. Rounds run the commands in turn (A B C …
# A B C …) so the machine's drift affects them alike; per command: median wall, median CPU
# (user + sys), peak RSS (GNU time's %M: its child starts small), and the median of the
# run-by-run CPU ratios to the yardstick. Then the md5 of the batch output over the fleet
# (`--facts-dir ../fleet --all`, run from the repo so the "facts" paths do not depend on
# WORKDIR), which later changes must keep. Needs python3, git and /usr/bin/time.
#
#   benches/fleet.sh [WORKDIR]     (default /tmp/hiera-lookup-fleet-bench)
#   NODES=3000 RUNS=3 THREADS= KEY=ntp::servers benches/fleet.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
W=${1:-/tmp/hiera-lookup-fleet-bench}
NODES=${NODES:-3000}
RUNS=${RUNS:-3}
KEY=${KEY:-ntp::servers}
# The machine may be shared: the build yields to everything else.
nice -n 10 cargo build --release --quiet
mkdir -p "$W"
H=$W/hiera-lookup
cp "${CARGO_TARGET_DIR:-target}/release/hiera-lookup" "$H.new" && mv "$H.new" "$H"
if [ "$(find "$W/fleet" -name '*.json' 2>/dev/null | wc -l)" != "$NODES" ]; then
    python3 benches/gen_real_fleet.py "$W/fleet" --nodes "$NODES"
fi
# The control repo, in git, with one line changed in the work tree for `diff HEAD`: a
# common.yaml value every node sees.
rm -rf "$W/repo" && cp -r benches/realworld/env/production "$W/repo" && chmod -R u+w "$W/repo"
git -C "$W/repo" init -q
git -C "$W/repo" add -A
git -C "$W/repo" -c user.name=bench -c user.email=bench@example.com commit -qm base
sed -i "s|^profile::base::timezone: 'UTC'$|profile::base::timezone: 'Etc/UTC'|" "$W/repo/data/common.yaml"
git -C "$W/repo" diff --quiet && { echo "the one-line change did not apply" >&2; exit 2; }
# The same key over a one-level repo: what loading the facts costs, nearly alone.
rm -rf "$W/onelevel" && mkdir -p "$W/onelevel/data"
printf -- '---\nversion: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n' >"$W/onelevel/hiera.yaml"
printf -- "---\n%s:\n  - 0.pool.ntp.org\n" "$KEY" >"$W/onelevel/data/common.yaml"
T=${THREADS:+--threads $THREADS}
echo "== $NODES real nodes ($(du -sh "$W/fleet" | cut -f1) of facts), realworld control repo, $RUNS rounds"
echo "   $(nproc) CPUs; $("$H" --version)"
python3 - "$W" "$RUNS" <<PY
import os, shlex, statistics, subprocess, sys, tempfile, time
W, runs = sys.argv[1], int(sys.argv[2])
H, T, KEY = "$H", "$T", "$KEY"
repo, one = os.path.join(W, "repo"), os.path.join(W, "onelevel")
cmds = [
    ("json.load (yardstick)", repo, ["python3", "-c",
        "import glob, json\nfor p in sorted(glob.glob('../fleet/*.json')):\n    with open(p, 'rb') as f: json.load(f)"]),
    (f"one key ({KEY})", repo, shlex.split(f"{H} --facts-dir ../fleet {T} {KEY}")),
    ("one key, one-level repo", one, shlex.split(f"{H} --facts-dir ../fleet {T} {KEY}")),
    ("--all", repo, shlex.split(f"{H} --facts-dir ../fleet {T} --all")),
    ("--all | head -1", repo, ["sh", "-c", f"{H} --facts-dir ../fleet {T} --all | head -1"]),
    ("lint --facts-dir", repo, shlex.split(f"{H} lint . --facts-dir ../fleet")),
    ("diff HEAD --all, 1 line", repo, shlex.split(f"{H} diff HEAD --facts-dir ../fleet {T} --all")),
]
rep = tempfile.NamedTemporaryFile(prefix="fleet-time", delete=False).name
def run(cwd, argv):
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", rep] + argv, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    # 0 found / no change, 1 not found / changes / findings; 141 is head's SIGPIPE for sh.
    if r.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(argv)} exited with {r.returncode}")
    u, s, m = open(rep).read().split()[-3:]
    return wall, float(u) + float(s), int(m)
res = {name: [] for name, _, _ in cmds}
for _ in range(runs):
    for name, cwd, argv in cmds:
        res[name].append(run(cwd, argv))
os.unlink(rep)
base = res[cmds[0][0]]
print(f"{'run':<26} {'wall med':>9} {'CPU med':>9} {'CPU min':>9} {'peak RSS':>9} {'CPU/yardstick':>14}")
for name, _, _ in cmds:
    r = res[name]
    ratio = statistics.median(x[1] / max(y[1], 1e-3) for x, y in zip(r, base))
    print(f"{name:<26} {statistics.median(x[0] for x in r):8.2f}s {statistics.median(x[1] for x in r):8.2f}s"
          f" {min(x[1] for x in r):8.2f}s {max(x[2] for x in r) / 1024:8.0f}M {ratio:13.1f}x")
PY
echo "== batch output over the fleet (--facts-dir ../fleet --all, from the repo): lines, md5"
(cd "$W/repo" && "$H" --facts-dir ../fleet $T --all >"$W/batch-all.jsonl") || [ $? = 1 ]
echo "$(wc -l <"$W/batch-all.jsonl") lines, md5 $(md5sum <"$W/batch-all.jsonl" | cut -d' ' -f1)"
