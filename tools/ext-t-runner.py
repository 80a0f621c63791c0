#!/usr/bin/env python3
"""Runs the rule lines of an iptables source tree's extensions/*.t files against xtnl and
against iptables (nft or legacy) in a scratch network namespace, and reports per module how
often xtnl agrees with iptables.

Developer tool, not part of CI; it reads the upstream test files where they are (the path of
an iptables source tree is its argument) and copies nothing into this repository.

    sudo python3 tools/ext-t-runner.py /path/to/iptables-1.8.9 \
        [--xtnl target/release/xtnl] [--backend nft|legacy] [-v] [--only NAME]

It re-runs itself under `unshare -n`, so it never touches the host's ruleset. xtnl runs
under iptables' names (links in a scratch directory), as the drop-in programs meet. For each rule line and each chain the
.t file lists, in the table it names:

* iptables' verdict: accepted or refused (`-A`), and, if accepted, its `-S` line;
* the line counts as "iptables gets it right" when that verdict is what the .t expects (OK
  with the expected `-S` text, or FAIL);
* xtnl agrees when it accepts/refuses alike and, for accepted rules: xtnl's `-S` equals
  iptables' in both directions (rule written by xtnl, rule written by iptables), iptables
  `-C`/`-D` find the rule xtnl wrote, and xtnl `-C`/`-D` find the rule iptables wrote.
"""

import argparse
import collections
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def run(argv, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def last_rule(text):
    lines = [l for l in text.splitlines() if l.startswith("-A ")]
    return lines[-1] if lines else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--xtnl", default="target/x86_64-unknown-linux-gnu/release/xtnl")
    ap.add_argument("--backend", choices=["nft", "legacy"], default="nft")
    ap.add_argument("--only")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()

    # Always in a network namespace of its own: re-run under `unshare -n` first (exec keeps
    # the process id, which marks the second run).
    if os.environ.get("XTNL_T_RUNNER_NETNS") != str(os.getpid()):
        env = dict(os.environ, XTNL_T_RUNNER_NETNS=str(os.getpid()))
        os.execvpe("unshare", ["unshare", "-n", sys.executable] + sys.argv, env)

    env = dict(os.environ, XTABLES_LOCKFILE="/tmp/xtnl-t-runner-%d.lock" % os.getpid())
    # xtnl runs under iptables' names (links in a scratch directory), as a drop-in: where
    # iptables takes what xtnl's own command line refuses, the names decide (issue 24).
    # The backend: the -legacy names for x_tables, XTNL_BACKEND=nft for nf_tables.
    links = tempfile.mkdtemp(prefix="xtnl-t-runner-")
    for n in ("iptables", "ip6tables"):
        name = n + ("-legacy" if a.backend == "legacy" else "")
        os.symlink(os.path.abspath(a.xtnl), os.path.join(links, name))
    if a.backend == "nft":
        env["XTNL_BACKEND"] = "nft"
    env["XTNL_NO_SERVE"] = "1"
    extdir = os.path.join(a.tree, "extensions")
    files = sorted(f for f in os.listdir(extdir) if f.endswith(".t")
                   and (f.startswith("libxt_") or f.startswith("libipt_") or f.startswith("libip6t_")))
    totals = collections.Counter()
    per = {}
    for f in files:
        module = f[:-2].split("_", 1)[1]
        if a.only and module != a.only:
            continue
        fams = ["4", "6"] if f.startswith("libxt_") else (["6"] if f.startswith("libip6t_") else ["4"])
        table, chains = "filter", ["INPUT", "FORWARD", "OUTPUT"]
        stats = collections.Counter()
        # `%iptables -I ...` lines: rules a module's lines need (RATEEST's estimators for
        # rateest), put back before every write since each case flushes its chain.
        prereqs = []
        lines = open(os.path.join(extdir, f)).read().splitlines()
        for line in lines:
            if not line or line.startswith("#"):
                continue
            if line.startswith("%"):
                w = shlex.split(line[1:])[1:]
                if w[:1] == ["-D"]:
                    prereqs = [p for p in prereqs if p[1:] != w[1:]]
                else:
                    prereqs.append(w)
                continue
            if line.startswith(":"):
                chains = line[1:].split(",")
                continue
            if line.startswith("*"):
                table = line[1:]
                continue
            parts = line.split(";")
            if len(parts) < 3:
                continue
            rule, expect, result = parts[0], parts[1], parts[2]
            only = parts[3] if len(parts) > 3 else ""
            if only == "NFT" and a.backend == "legacy" or only == "LEGACY" and a.backend == "nft":
                continue
            for fam in fams:
                oracle = ("ip6tables-" if fam == "6" else "iptables-") + a.backend
                xt = [os.path.join(links, ("ip6tables" if fam == "6" else "iptables")
                                   + ("-legacy" if a.backend == "legacy" else ""))]
                try:
                    words = shlex.split(rule)
                except ValueError:
                    continue
                def prep():
                    for p in prereqs:
                        run([oracle, "-D"] + p[1:], env)
                        run([oracle] + p, env)
                for chain in chains:
                    stats["lines"] += 1
                    base = ["-t", table]
                    prep()
                    # Some .t rules jump to user chains; create them as the upstream runner does.
                    for c in ("LOG_ACCEPT",):
                        run([oracle] + base + ["-N", c], env)
                    rc, _ = run([oracle] + base + ["-A", chain] + words, env)
                    theirs = last_rule(run([oracle] + base + ["-S", chain], env)[1]) if rc == 0 else None
                    want = None if expect in ("", "=") else expect
                    right = (result == "OK") == (rc == 0)
                    if right and rc == 0:
                        exp_text = "-A %s %s" % (chain, want if want else rule)
                        right = theirs == exp_text
                    stats["iptables_right"] += int(right)
                    xs = None
                    agree = True
                    why = ""
                    if rc == 0:
                        xs = last_rule(run(xt + base + ["-S", chain], env)[1])
                        if xs != theirs:
                            agree, why = False, "read: %s | %s" % (theirs, xs)
                        elif run(xt + base + ["-C", chain] + words, env)[0] != 0:
                            agree, why = False, "xtnl -C"
                        elif run(xt + base + ["-D", chain] + words, env)[0] != 0:
                            agree, why = False, "xtnl -D"
                    run([oracle] + base + ["-F", chain], env)
                    prep()
                    xrc, xout = run(xt + base + ["-A", chain] + words, env)
                    if (xrc == 0) != (rc == 0):
                        agree, why = False, "accept/refuse: iptables %d xtnl %d %s" % (rc, xrc, xout.strip()[:160])
                    elif xrc == 0:
                        ours = last_rule(run([oracle] + base + ["-S", chain], env)[1])
                        if ours != theirs:
                            agree, why = False, "written: %s | %s" % (theirs, ours)
                        elif run([oracle] + base + ["-C", chain] + words, env)[0] != 0:
                            agree, why = False, "iptables -C"
                    run([oracle] + base + ["-F", chain], env)
                    run([oracle] + base + ["-X", "LOG_ACCEPT"], env)
                    if right:
                        stats["agree_of_right"] += int(agree)
                    stats["agree"] += int(agree)
                    if a.v and right and not agree:
                        print("  %s [%s %s %s] %s: %s" % (module, fam, table, chain, rule, why))
        per[module] = per.get(module, collections.Counter()) + stats
        totals += stats
    print("%-14s %6s %9s %9s" % ("module", "lines", "ipt-right", "xtnl-agree"))
    for m in sorted(per):
        s = per[m]
        print("%-14s %6d %9d %9d" % (m, s["lines"], s["iptables_right"], s["agree_of_right"]))
    r = totals["iptables_right"]
    print("total: %d rule lines x chains; iptables right on %d; xtnl agrees on %d of those (%.1f%%)"
          % (totals["lines"], r, totals["agree_of_right"], 100.0 * totals["agree_of_right"] / max(r, 1)))
    shutil.rmtree(links, ignore_errors=True)


if __name__ == "__main__":
    main()
