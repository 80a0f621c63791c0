#!/usr/bin/env bash
# The nf_tables restore of kube-proxy's table (the files of `xtnl-bench cluster`, made here
# byte for byte the same) measured for xtnl binaries against each other and against
# iptables-nft-restore (issue 22, branch nftcpu3). Each run is in a network namespace of its
# own (`unshare -n`; the host's ruleset is never touched) with a private xtables lock.
#
# Default: for ROUNDS rounds, each tool alternating, the full restore of SERVICES services
# in a fresh namespace, then the `--noflush` partial sync on top of it, each under
# `/usr/bin/time -f %e/%U/%S/%M`; prints every run, then the medians (wall, user, system,
# CPU with its min-max, peak) and iptables-nft-restore's CPU over each binary's, round by
# round.
#
# With --instructions: each binary's full restore and partial sync once under valgrind's
# callgrind, printing the instructions of the process valgrind started (its detached
# close's forked children left out) and the md5 of `xtnl save` after both. Needs root.
#
#   tools/cluster-cpu.sh [--instructions] SERVICES ROUNDS BINARY...
set -euo pipefail
mode=time
if [[ ${1:-} == --instructions ]]; then
    mode=instructions
    shift
fi
n=$1 rounds=$2
shift 2
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
def svc(i): return f"KUBE-SVC-{i:06}"
def sep(i, j): return f"KUBE-SEP-{i:06}E{j}"
def cluster(i): return (f"198.51.100.{i % 254 + 1}", 1024 + i // 254)
def endpoint(i, j):
    k = 2 * i + j
    return (f"203.0.113.{k % 254 + 1}", 1024 + (k // 254) % 60000)
def services(o):
    for i in range(n):
        ip, port = cluster(i)
        o.append(f'-A KUBE-SERVICES -d {ip}/32 -p tcp -m comment --comment "ns{i}/svc{i}:http cluster IP" -m tcp --dport {port} -j {svc(i)}')
def chains(i, o):
    ip, port = cluster(i)
    s = svc(i)
    o.append(f'-A {s} ! -s 192.0.2.0/24 -d {ip}/32 -p tcp -m comment --comment "ns{i}/svc{i}:http cluster IP" -m tcp --dport {port} -j KUBE-MARK-MASQ')
    (a0, p0), (a1, p1) = endpoint(i, 0), endpoint(i, 1)
    o.append(f'-A {s} -m comment --comment "ns{i}/svc{i}:http -> {a0}:{p0}" -m statistic --mode random --probability 0.50000000000 -j {sep(i, 0)}')
    o.append(f'-A {s} -m comment --comment "ns{i}/svc{i}:http -> {a1}:{p1}" -j {sep(i, 1)}')
    for j in range(2):
        e, (a, p) = sep(i, j), endpoint(i, j)
        o.append(f'-A {e} -s {a}/32 -m comment --comment "ns{i}/svc{i}:http" -j KUBE-MARK-MASQ')
        o.append(f'-A {e} -p tcp -m comment --comment "ns{i}/svc{i}:http" -m tcp -j DNAT --to-destination {a}:{p}')
fixed = ['-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
         '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
         '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
         '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully']
def declare(i): return [f":{svc(i)} - [0:0]", f":{sep(i, 0)} - [0:0]", f":{sep(i, 1)} - [0:0]"]
o = ["*nat", ":PREROUTING ACCEPT [0:0]", ":INPUT ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]",
     ":POSTROUTING ACCEPT [0:0]", ":KUBE-SERVICES - [0:0]", ":KUBE-POSTROUTING - [0:0]",
     ":KUBE-MARK-MASQ - [0:0]", ":KUBE-NODEPORTS - [0:0]"]
for i in range(n): o += declare(i)
o += ['-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING']
o += fixed
services(o)
for i in range(n): chains(i, o)
o.append("COMMIT")
open(f"{d}/full", "w").write("\n".join(o) + "\n")
o = ["*nat", ":KUBE-SERVICES - [0:0]", ":KUBE-NODEPORTS - [0:0]", ":KUBE-POSTROUTING - [0:0]",
     ":KUBE-MARK-MASQ - [0:0]"]
for i in range(0, n, 20): o += declare(i)
o += fixed
services(o)
for i in range(0, n, 20): chains(i, o)
o.append("COMMIT")
open(f"{d}/partial", "w").write("\n".join(o) + "\n")
PY
if [[ $mode == instructions ]]; then
    for b in "${bins[@]}"; do
        logs=$dir/vg-$(basename "$b")-$RANDOM
        mkdir -p "$logs/full" "$logs/partial"
        unshare -n env D="$dir" L="$logs" B="$b" bash -c '
            export XTABLES_LOCKFILE=$D/lock
            valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$L/full/%p" \
                "$B" restore <"$D/full" >/dev/null
            valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$L/partial/%p" \
                "$B" restore --noflush <"$D/partial" >/dev/null
            "$B" save | md5sum >"$L/save.md5"'
        sleep 1 # the detached close's grandchild writes its log last
        out=()
        for step in full partial; do
            main=""
            for f in "$logs/$step"/*; do
                ppid=$(grep -o 'Parent PID: [0-9]*' "$f" | grep -o '[0-9]*$')
                [[ -e $logs/$step/$ppid ]] || main=$f
            done
            out+=("$step $(grep -o 'Collected : [0-9]*' "$main" | grep -o '[0-9]*$')")
        done
        echo "$b: ${out[0]} instructions | ${out[1]} instructions | save md5 $(cut -d' ' -f1 "$logs/save.md5")"
    done
    exit 0
fi
for r in $(seq "$rounds"); do
    for b in "${bins[@]}" iptables-nft-restore; do
        unshare -n env D="$dir" B="$b" R="$r" bash -c '
            export XTABLES_LOCKFILE=$D/lock
            if [[ $B == iptables-nft-restore ]]; then cmd=(iptables-nft-restore); else cmd=("$B" restore); fi
            f=$( { /usr/bin/time -f %e/%U/%S/%M "${cmd[@]}" <"$D/full" >/dev/null; } 2>&1 )
            p=$( { /usr/bin/time -f %e/%U/%S/%M "${cmd[@]}" --noflush <"$D/partial" >/dev/null; } 2>&1 )
            echo "$R $B full $f partial $p"'
    done
done | tee "$dir/runs"
python3 - "$dir/runs" <<'PY'
import sys, statistics as st, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
order = []
for l in open(sys.argv[1]):
    p = l.split()
    if p[1] not in order:
        order.append(p[1])
    for shape, val in ((p[2], p[3]), (p[4], p[5])):
        e, u, s, m = val.split("/")
        d[p[1]][shape].append((float(e), float(u), float(s), int(m)))
for shape in ("full", "partial"):
    for t in order:
        v = d[t][shape]
        cpu = [x[1] + x[2] for x in v]
        print(f"{shape:8} {t}: wall {st.median(x[0] for x in v):.2f} user {st.median(x[1] for x in v):.2f} "
              f"sys {st.median(x[2] for x in v):.2f} cpu {st.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) "
              f"peak {st.median(x[3] for x in v) / 1024:.1f} MiB (medians)")
ipt = "iptables-nft-restore"
for shape in ("full", "partial"):
    for t in order:
        if t == ipt:
            continue
        r = [(a[1] + a[2]) / (b[1] + b[2]) for a, b in zip(d[ipt][shape], d[t][shape])]
        print(f"{shape} {t}: iptables-nft-restore's CPU / its CPU, each round: "
              + " ".join(f"{x:.2f}" for x in r) + f" (median {st.median(r):.2f})")
PY
