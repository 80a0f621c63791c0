#!/usr/bin/env bash
# Compares two xtnl binaries on a CPU-heavy restore and save (issue 25: did the workspace
# split cost anything?). Generates a 20,209-line iptables-restore file (15,100 filter rules
# with -m multiport, -m conntrack and -m comment in 100 chains, 5,000 DNAT rules), then, for
# ROUNDS rounds, alternating the binaries, each in a network namespace of its own
# (`unshare -n`; the host's ruleset is never touched) with a private xtables lock: `restore`
# of the file, then `save`. Prints the median user CPU seconds and wall seconds of each, and
# the ratio B/A; and checks that both leave the same ruleset (iptables-nft-save, comments
# dropped). Needs root.
#
# With --instructions, instead: each binary's restore and save once under valgrind's
# callgrind, printing the instructions the xtnl process itself executed (Ir; the detached
# close's forked children, which inherit the count, are left out) and the ratio B/A. Exact
# and repeatable to a few hundred instructions, so it separates a cost the 10 ms of
# `time` cannot; needs valgrind. --legacy runs both modes on the x_tables backend.
#
#   tools/restore-cpu.sh [--instructions] [--legacy] A_BINARY B_BINARY [ROUNDS]
set -euo pipefail
mode=time backend=()
while [[ ${1:-} == --* ]]; do
    case $1 in
        --instructions) mode=instructions ;;
        --legacy) backend=(--backend legacy) ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
a=$(realpath "$1") b=$(realpath "$2") rounds=${3:-8}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/rules.v4" <<'PY'
import sys
lines = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]"]
lines += [f":C{c} - [0:0]" for c in range(100)]
for c in range(100):
    lines.append(f"-A INPUT -s 192.0.2.{c}/32 -j C{c}")
    for r in range(150):
        lines.append(f"-A C{c} -d 198.51.100.{r % 250}/32 -p tcp -m multiport --dports "
                     f"{1000 + r},{2000 + r} -m conntrack --ctstate NEW,ESTABLISHED "
                     f"-m comment --comment \"rule {c * 150 + r}\" -j ACCEPT")
lines += ["COMMIT", "*nat", ":PREROUTING ACCEPT [0:0]", ":POSTROUTING ACCEPT [0:0]"]
for r in range(5000):
    lines.append(f"-A PREROUTING -d 203.0.113.{r % 250}/32 -p tcp --dport {10000 + r} "
                 f"-j DNAT --to-destination 192.0.2.{r % 250}:{80 + r % 100}")
lines.append("COMMIT")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
if [[ $mode == instructions ]]; then
    # The Ir of the process valgrind started: the log whose parent is none of the logged
    # processes (the detached close forks, and its children inherit the count).
    measure() { # BINARY TAG -> "restore_ir save_ir"
        local out=()
        for step in restore save; do
            local logs="$dir/vg-$2-$step"
            mkdir -p "$logs"
            unshare -n env LOGS="$logs" RULES="$dir/rules.v4" STEP="$step" XTABLES_LOCKFILE="$dir/lock" \
                bash -c 'if [[ $STEP == restore ]]; then
                        valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                            --log-file="$LOGS/%p" "$@" restore <"$RULES" >/dev/null
                    else
                        "$@" restore <"$RULES" >/dev/null
                        valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                            --log-file="$LOGS/%p" "$@" save >/dev/null
                    fi' _ "$1" "${backend[@]}"
            sleep 1 # the detached close's grandchild writes its log last
            local main="" f ppid
            for f in "$logs"/*; do
                ppid=$(grep -o 'Parent PID: [0-9]*' "$f" | grep -o '[0-9]*$')
                [[ -e $logs/$ppid ]] || main=$f
            done
            out+=("$(grep -o 'Collected : [0-9]*' "$main" | grep -o '[0-9]*$')")
        done
        echo "${out[@]}"
    }
    read -r ra sa < <(measure "$a" A)
    read -r rb sb < <(measure "$b" B)
    python3 - "$ra" "$sa" "$rb" "$sb" <<'PY'
import sys
ra, sa, rb, sb = map(int, sys.argv[1:])
print("A: restore %d instructions | save %d instructions" % (ra, sa))
print("B: restore %d instructions | save %d instructions" % (rb, sb))
print("B/A: restore %.4f | save %.4f" % (rb / ra, sb / sa))
PY
    exit 0
fi
round() {
    unshare -n bash -c '
        export XTABLES_LOCKFILE="$2/lock"
        r=$( { /usr/bin/time -f "%U %e" "$1" "${@:3}" restore < "$2/rules.v4" >/dev/null; } 2>&1 | tail -1)
        s=$( { /usr/bin/time -f "%U %e" "$1" "${@:3}" save >/dev/null; } 2>&1 | tail -1)
        echo "$r $s"' _ "$1" "$dir" "${backend[@]}"
}
for _ in $(seq "$rounds"); do
    echo "A $(round "$a")"
    echo "B $(round "$b")"
done >"$dir/results"
saver=iptables-nft-save
[[ ${#backend[@]} -eq 0 ]] || saver=iptables-legacy-save
same() { unshare -n bash -c 'export XTABLES_LOCKFILE="$2/lock"; "$1" "${@:4}" restore < "$2/rules.v4" &&
    "$3" | grep -v "^#" | md5sum' _ "$1" "$dir" "$saver" "${backend[@]}"; }
[[ $(same "$a") == $(same "$b") ]] || { echo "the two binaries leave different rulesets" >&2; exit 1; }
python3 - "$dir/results" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    k, *v = line.split()
    d.setdefault(k, []).append([float(x) for x in v])
med = {k: [statistics.median(c) for c in zip(*rows)] for k, rows in d.items()}
for k in "AB":
    print("%s: restore user %.2f s, wall %.2f s | save user %.2f s, wall %.2f s" % (k, *med[k]))
print("B/A: restore user %.2f, wall %.2f | save user %.2f, wall %.2f"
      % tuple(b / a for a, b in zip(med["A"], med["B"])))
print("same ruleset from both: yes")
PY
