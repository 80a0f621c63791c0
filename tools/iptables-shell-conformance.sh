#!/usr/bin/env bash
# Runs iptables' own shell test cases (iptables/tests/shell/testcases of an iptables source
# tree, e.g. the 1.8.9 release) against the real iptables and against xtnl, each case in a
# scratch network namespace (`unshare -n`, as iptables' run-tests.sh does), and prints one
# line per case and the counts.
#
#   tools/iptables-shell-conformance.sh IPTABLES-SOURCE-TREE [XTNL-BINARY]
#
# Not part of CI: the test material is iptables' (GPL) and is never copied into this
# repository; point the script at an unpacked release. Root is needed (namespaces).
#
# Only cases that drive iptables/ip6tables/-save/-restore are run; a case that uses another
# tool (nft, ebtables, arptables, xtables-monitor, the translators) is listed as "other tool";
# iptables-xml cases run (xtnl provides iptables-xml, issue 24).
# xtnl runs through links named xtables-nft-multi / xtables-legacy-multi (the cases call
# `$XT_MULTI iptables ...`, and some test the name to tell the backends apart); xtnl runs
# `xtnl iptables ARGS` as `iptables ARGS`. The backend is chosen with XTNL_BACKEND.
set -uo pipefail

src=${1:?usage: $0 IPTABLES-SOURCE-TREE [XTNL-BINARY]}
xtnl=${2:-$(cd "$(dirname "$0")/.." && pwd)/target/x86_64-unknown-linux-gnu/release/xtnl}
cases=$src/iptables/tests/shell/testcases
[ -d "$cases" ] || { echo "no $cases" >&2; exit 2; }
[ -x "$xtnl" ] || { echo "no xtnl binary at $xtnl (cargo build --release)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (network namespaces)" >&2; exit 2; }

work=$(mktemp -d)
chmod 755 "$work"   # iptables/0008-unprivileged runs the tools as nobody
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$xtnl" "$work/bin/xtables-nft-multi"
ln -s "$xtnl" "$work/bin/xtables-legacy-multi"
export XTABLES_LOCKFILE=$work/xtables.lock   # never the host's /run/xtables.lock
real_nft=$(command -v xtables-nft-multi)
real_legacy=$(command -v xtables-legacy-multi)

other_tool() { # prints the other tool a case uses, if any
    grep -vE '^\s*#' "$1" \
        | grep -oE '(^|[^-_a-z])(nft|ebtables[a-z-]*|arptables[a-z-]*|xtables-monitor|[a-z0-9]*-translate|ip6?tables-apply)([^-_a-z]|$)' \
        | head -1 | tr -d ' $"();|'
    # `${fam}tables-restore` over "ip ip6 eb" families
    grep -qE 'families\+?=.*\beb\b' "$1" && echo ebtables
}

run_case() { # multi case backend -> rc and output in $work/out
    env XT_MULTI="$1" XTNL_BACKEND="$3" timeout 120 unshare -n "$2" >"$work/out" 2>&1
}

declare -A count
printf '%-62s %-9s %-9s %-9s %-9s\n' case nft xtnl-nft legacy xtnl-leg
for t in $(find "$cases" -type f -executable -regex '.*_[0-9]+' | sort); do
    name=${t#"$cases"/}
    spec=${t##*_}
    tool=$(other_tool "$t" | head -1)
    if [ -n "$tool" ]; then
        printf '%-62s other tool: %s\n' "$name" "$tool"
        count[other]=$((${count[other]:-0} + 1))
        continue
    fi
    line=$(printf '%-62s' "$name")
    reasons=""
    for backend in nft legacy; do
        if [ $backend = nft ]; then real=$real_nft; ours=$work/bin/xtables-nft-multi
        else real=$real_legacy; ours=$work/bin/xtables-legacy-multi; fi
        # nft-only cases skip themselves under legacy (exit 0), as in run-tests.sh.
        run_case "$real" "$t" "$backend"; rc=$?
        if [ "$rc" = "$spec" ]; then r=pass; count[$backend-real]=$((${count[$backend-real]:-0} + 1))
        else r="FAIL($rc)"; fi
        run_case "$ours" "$t" "$backend"; rc=$?
        if [ "$rc" = "$spec" ]; then o=pass; count[$backend-xtnl]=$((${count[$backend-xtnl]:-0} + 1))
        else
            o="FAIL($rc)"
            reasons+="    xtnl-$backend: $(grep -v '^\s*$' "$work/out" | tail -3 | tr '\n' '|' | cut -c1-300)"$'\n'
        fi
        line+=$(printf ' %-9s %-9s' "$r" "$o")
    done
    echo "$line"
    [ -n "$reasons" ] && printf '%s' "$reasons"
    count[run]=$((${count[run]:-0} + 1))
done
echo
echo "cases run: ${count[run]:-0}, using another tool (not run): ${count[other]:-0}"
echo "nft backend:    iptables-nft passes ${count[nft-real]:-0}, xtnl passes ${count[nft-xtnl]:-0}"
echo "legacy backend: iptables-legacy passes ${count[legacy-real]:-0}, xtnl passes ${count[legacy-xtnl]:-0}"
