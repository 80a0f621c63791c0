#!/usr/bin/env python3
"""Start-up of xtnl before and after a change (vendor-notes.md, "Start-up cost of clap, re-measured"):
    mkdir -p /tmp/su/before /tmp/su/after; copy each release binary to /tmp/su/{before,after}/xtnl
    and symlink iptables -> xtnl beside it; then: unshare -n packaging/measure-clap-startup.py 1000
Prints a markdown row per command: median and 10th percentile in ms."""
import subprocess, time, statistics, sys, os
cmds = {}
for d in ("before", "after"):
    b = f"/tmp/su/{d}"
    cmds[f"{d}: iptables -V"] = [f"{b}/iptables", "-V"]
    cmds[f"{d}: iptables -S"] = [f"{b}/iptables", "-S"]
    cmds[f"{d}: xtnl -V"] = [f"{b}/xtnl", "-V"]
    cmds[f"{d}: xtnl version"] = [f"{b}/xtnl", "version"]
    cmds[f"{d}: xtnl list ip"] = [f"{b}/xtnl", "list", "ip"]
cmds["/bin/true"] = ["/bin/true"]
res = {k: [] for k in cmds}
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
env = dict(os.environ, XTABLES_LOCKFILE="/tmp/su/lock")
for i in range(n):
    for k, c in cmds.items():
        t = time.perf_counter_ns(); subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env); res[k].append((time.perf_counter_ns() - t) / 1e6)
for k, v in res.items():
    v.sort()
    print(f"| `{k}` | {statistics.median(v):.3f} | {v[len(v)//10]:.3f} |")
