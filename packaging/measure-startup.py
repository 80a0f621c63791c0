#!/usr/bin/env python3
"""Start-up cost of a static and a dynamic xtnl against /bin/true (docs/install.md):
    packaging/measure-startup.py STATIC_XTNL DYNAMIC_XTNL
400 interleaved runs of each (`xtnl version`); prints min, 10th percentile and median.
A dynamic build: CC=/bin/false CARGO_TARGET_DIR=/tmp/dyn packaging/build-deb --out /tmp/dyn-deb
(no libc.a found, so it links dynamically) leaves it in /tmp/dyn/<host triple>/dist/xtnl."""
import subprocess, time, statistics, sys
bins = {"true": ["/bin/true"], "static": [sys.argv[1], "version"], "dynamic": [sys.argv[2], "version"]}
res = {k: [] for k in bins}
for i in range(400):
    for k, cmd in bins.items():
        t = time.perf_counter_ns(); subprocess.run(cmd, stdout=subprocess.DEVNULL); res[k].append((time.perf_counter_ns() - t) / 1e6)
for k, v in res.items():
    v.sort()
    print(f"{k:8s} min {v[0]:.3f} ms  p10 {v[len(v)//10]:.3f}  median {statistics.median(v):.3f} ms")
