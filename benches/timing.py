#!/usr/bin/env python3
"""Times whole processes side by side: every command runs in turn (A B C A B C ...), so the
machine's drift affects them alike, and ratios to the first command are taken run by run.

    benches/timing.py [--runs N] [--warmup N] [--cwd DIR] -- NAME=COMMAND NAME=COMMAND ...

For each command: the median and minimum wall time (posix_spawn to wait4), CPU time (user +
system, the kernel's accounting of the child alone) and peak RSS (see `peak_rss`),
the median of the run-by-run wall-time ratios to the first command (the yardstick), and the
ratio of total CPU times (a millisecond process's CPU time is too coarse to pair). Output goes to
/dev/null. Uses only the standard library.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import time


def run_once(argv, cwd, devnull):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        start = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                            (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - start
    finally:
        os.chdir(old)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{shlex.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def peak_rss(argv, cwd):
    """The command's peak RSS in KiB. A child's ru_maxrss counts the memory of the process it
    was spawned from (here: this Python, 10-15 MB) until it execs, so it is taken from GNU
    time's report, whose child starts from a 2 MB process; without /usr/bin/time, the largest
    ru_maxrss of the timed runs (an upper bound)."""
    if not os.path.exists("/usr/bin/time"):
        return None
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(r.stderr.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--cwd", default=".")
    ap.add_argument("commands", nargs="+")
    a = ap.parse_args()
    cmds = []
    for c in a.commands:
        name, _, line = c.partition("=")
        cmds.append((name, shlex.split(line)))
    devnull = os.open(os.devnull, os.O_WRONLY)
    for _ in range(a.warmup):
        for _, argv in cmds:
            run_once(argv, a.cwd, devnull)
    res = {name: [] for name, _ in cmds}
    for _ in range(a.runs):
        for name, argv in cmds:
            res[name].append(run_once(argv, a.cwd, devnull))
    base = cmds[0][0]
    print(f"{'command':<28} {'wall med':>9} {'wall min':>9} {'cpu med':>9} {'peak RSS':>9}"
          f" {'wall/' + base:>12} {'cpu/' + base:>11}")
    for name, argv in cmds:
        r = res[name]
        wall = [x[0] for x in r]
        cpu = [x[1] for x in r]
        rss = max(peak_rss(argv, a.cwd) or 0 for _ in range(3)) or max(x[2] for x in r)
        ratio_w = statistics.median(x[0] / y[0] for x, y in zip(r, res[base]))
        # CPU times are coarse for millisecond processes: compare their totals.
        ratio_c = sum(cpu) / max(sum(y[1] for y in res[base]), 1e-9)
        print(f"{name:<28} {statistics.median(wall) * 1000:8.2f}ms {min(wall) * 1000:8.2f}ms"
              f" {statistics.median(cpu) * 1000:8.2f}ms {rss / 1024:8.1f}M"
              f" {ratio_w:12.2f} {ratio_c:11.2f}")


if __name__ == "__main__":
    main()
