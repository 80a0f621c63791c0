#!/usr/bin/env bash
# Runs coreos/go-iptables' own test suite (iptables/iptables_test.go) against the real
# iptables 1.8.9 and against xtnl installed under iptables' names, on both backends, and
# prints each run's test results and counts.
#
#   tools/go-iptables-suite.sh GO-IPTABLES-SOURCE-TREE [XTNL-BINARY]
#
# Not part of CI: the test material is go-iptables' (Apache-2.0) and is not copied into this
# repository; point the script at a checkout (github.com/coreos/go-iptables; it needs only
# Go's standard library: Debian's golang-go, Go 1.19, builds it offline). Root is needed.
#
# Each run is one `go test -v ./iptables/` inside a scratch network namespace (`unshare -n`)
# with PATH leading to a directory where iptables, ip6tables, their -save/-restore and the
# -nft/-legacy names (go-iptables' TestLegacyDetection looks those up) are links to:
#   nft      the real xtables-nft-multi          xtnl-nft     xtnl, XTNL_BACKEND=nft
#   legacy   the real xtables-legacy-multi       xtnl-legacy  xtnl, XTNL_BACKEND=legacy
# (an -nft name always to the nf_tables tool, a -legacy name to the x_tables one).
# XTABLES_LOCKFILE is a private path: the host's /run/xtables.lock is never taken.
# The suite is compiled once (go test -c) outside the namespaces; no network is used.
set -uo pipefail

src=${1:?usage: $0 GO-IPTABLES-SOURCE-TREE [XTNL-BINARY]}
xtnl=${2:-$(cd "$(dirname "$0")/.." && pwd)/target/x86_64-unknown-linux-gnu/release/xtnl}
[ -f "$src/iptables/iptables_test.go" ] || { echo "no $src/iptables/iptables_test.go" >&2; exit 2; }
[ -x "$xtnl" ] || { echo "no xtnl binary at $xtnl (cargo build --release)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root (network namespaces)" >&2; exit 2; }
command -v go >/dev/null || { echo "no go (apt-get install golang-go)" >&2; exit 2; }
xtnl=$(readlink -f "$xtnl")
real_nft=$(readlink -f "$(command -v xtables-nft-multi)")
real_legacy=$(readlink -f "$(command -v xtables-legacy-multi)")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on
export GOCACHE=$work/gocache GOPATH=$work/gopath
(cd "$src" && go test -c -o "$work/iptables.test" ./iptables/) || { echo "go test -c failed" >&2; exit 2; }

names="iptables ip6tables iptables-save ip6tables-save iptables-restore ip6tables-restore"
setup() { # run -> $work/RUN/bin with the links
    local bin=$work/$1/bin nft legacy n
    mkdir -p "$bin"
    case $1 in
        nft) nft=$real_nft; legacy=$real_legacy; plain=$real_nft ;;
        legacy) nft=$real_nft; legacy=$real_legacy; plain=$real_legacy ;;
        xtnl-*) nft=$xtnl; legacy=$xtnl; plain=$xtnl ;;
    esac
    for n in $names; do
        ln -s "$plain" "$bin/$n"
        ln -s "$nft" "$bin/${n/tables/tables-nft}"
        ln -s "$legacy" "$bin/${n/tables/tables-legacy}"
    done
}

declare -A summary
for run in nft xtnl-nft legacy xtnl-legacy; do
    setup $run
    backend=${run#xtnl-}
    echo "=== $run"
    (cd "$src/iptables" && env PATH="$work/$run/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
        XTNL_BACKEND="$backend" XTNL_NO_SERVE=1 XTABLES_LOCKFILE="$work/xtables.lock" \
        timeout 600 unshare -n "$work/iptables.test" -test.v -test.count=1) >"$work/$run.out" 2>&1
    rc=$?
    grep -E '^\s*--- (PASS|FAIL)|^\s+iptables_test.go' "$work/$run.out"
    top=$(grep -cE '^--- PASS' "$work/$run.out"); topall=$(grep -cE '^--- (PASS|FAIL)' "$work/$run.out")
    pass=$(grep -cE '^\s*--- PASS' "$work/$run.out")
    fail=$(grep -cE '^\s*--- FAIL' "$work/$run.out")
    summary[$run]="tests $top/$topall, with subtests $pass/$((pass + fail)) (go test status $rc)"
done
echo
for run in nft xtnl-nft legacy xtnl-legacy; do printf '%-12s %s\n' "$run" "${summary[$run]}"; done
