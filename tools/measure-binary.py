#!/usr/bin/env python3
"""Size, start-up and peak memory of xtnl binaries built differently (docs/benchmarks.md,
"The binary's size and start-up after the split"):

    tools/measure-binary.py [--runs N] NAME=PATH...

For each binary: its size, the size of a stripped copy (`strip`) and of a copy stripped of
its debug information only (`strip --strip-debug`, as packaging/build-deb installs it); the
wall time of `xtnl -V` and of one real command sequence, `-t nat -N a`, `-t nat -L -n`,
`-t nat -X a` (nf_tables, in a network namespace of its own: the script re-runs itself under
`unshare -n`), N rounds (default 200) interleaved across the binaries so that the machine's
load falls on each alike, as min, 10th percentile and median; the peak RSS (`/usr/bin/time
-f %M`) and minor page faults (`%R`), medians of 9 runs, of `-V` and `-L -n`. Each binary
is copied to a directory of its own under the name `xtnl`, so that it runs in the mode its
name chooses. Needs root (the namespace), strip (binutils) and /usr/bin/time (time).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

NETNS_ENV = "XTNL_MEASURE_IN_NETNS"


def main():
    args = sys.argv[1:]
    if os.environ.get(NETNS_ENV) != "1":
        # Netfilter is touched only in a namespace made for the purpose.
        env = dict(os.environ, **{NETNS_ENV: "1"})
        os.execvpe("unshare", ["unshare", "-n", sys.executable, os.path.abspath(__file__), *args], env)
    runs = 200
    if args[:1] == ["--runs"]:
        runs = int(args[1])
        args = args[2:]
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    work = tempfile.mkdtemp(prefix="xtnl-measure-")
    bins = {}
    for a in args:
        name, path = a.split("=", 1)
        d = os.path.join(work, name)
        os.mkdir(d)
        b = os.path.join(d, "xtnl")
        shutil.copy(path, b)
        bins[name] = b
    print(f"{'binary':12s} {'size':>10s} {'stripped':>10s} {'no debug':>10s}")
    for name, b in bins.items():
        s, g = b + ".s", b + ".g"
        subprocess.run(["strip", "-o", s, b], check=True)
        subprocess.run(["strip", "--strip-debug", "-o", g, b], check=True)
        print(f"{name:12s} {os.path.getsize(b):10d} {os.path.getsize(s):10d} {os.path.getsize(g):10d}")

    def run(cmd):
        t = time.perf_counter_ns()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        return (time.perf_counter_ns() - t) / 1e6

    cases = {
        "-V": [["-V"]],
        "-N,-L,-X": [["-t", "nat", "-N", "a"], ["-t", "nat", "-L", "-n"], ["-t", "nat", "-X", "a"]],
    }
    res = {(n, c): [] for n in bins for c in cases}
    for _ in range(runs):
        for n, b in bins.items():
            for c, cmds in cases.items():
                res[(n, c)].append(sum(run([b, *cmd]) for cmd in cmds))
    print(f"\nwall time, {runs} interleaved rounds (ms)")
    for c in cases:
        for n in bins:
            v = sorted(res[(n, c)])
            print(f"{c:9s} {n:12s} min {v[0]:7.3f}  p10 {v[len(v) // 10]:7.3f}  median {statistics.median(v):7.3f}")

    def rss(cmd):
        out = subprocess.run(["/usr/bin/time", "-f", "%M %R", *cmd], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, check=True)
        return tuple(int(x) for x in out.stderr.strip().splitlines()[-1].split())

    def median9(cmd):
        v = [rss(cmd) for _ in range(9)]
        return statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)

    print("\npeak RSS (KiB) and minor page faults, median of 9")
    for n, b in bins.items():
        subprocess.run([b, "-t", "nat", "-N", "a"], check=True)
        v, vf = median9([b, "-V"])
        w, wf = median9([b, "-t", "nat", "-L", "-n"])
        subprocess.run([b, "-t", "nat", "-X", "a"], check=True)
        print(f"{n:12s} -V {v:6d} KiB {vf:4d} faults   -L -n {w:6d} KiB {wf:4d} faults")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
