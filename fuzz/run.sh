#!/usr/bin/env bash
# Runs the fuzz targets for a set time each, one at a time (the machine has 2 cores).
#
#   fuzz/run.sh TARGET SECONDS     one target
#   fuzz/run.sh all SECONDS        every target in turn
#
# The stable toolchain is used with RUSTC_BOOTSTRAP=1, which lets it accept the -Z flags
# cargo-fuzz passes (sanitizer=address, coverage instrumentation); no nightly needed.
# Seeds come from fuzz/seeds/TARGET (in the repository); new inputs that libFuzzer finds go
# to fuzz/corpus/TARGET (not committed). A crash stops the run and leaves its input in
# fuzz/artifacts/TARGET/; the executions count of each run is printed at the end and kept
# in fuzz/logs/TARGET.log.
#
# Limits: 2048 MB RSS per process and 256 MB per single allocation (-rss_limit_mb,
# -malloc_limit_mb), and 64 KiB inputs (a netlink datagram from a dump is at most 32 KiB;
# iptables command lines and restore lines are far shorter).
set -euo pipefail
cd "$(dirname "$0")"

TARGETS=(ipt_parse restore_parse nft_decode xt_decode json_parse xt_blob ext_decode nft_json_plan)
target=${1:?usage: fuzz/run.sh TARGET|all SECONDS}
secs=${2:?usage: fuzz/run.sh TARGET|all SECONDS}

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1

run_one() {
    local t=$1
    mkdir -p "corpus/$t" "artifacts/$t" logs
    echo "== $t for ${secs}s"
    set +e
    # Built first (crates may be fetched), then run in a network namespace of its own with
    # no interfaces up: a host name in a fuzzed `-s`/`-d` goes to xtnl's DNS resolver, which
    # must not ask the host's nameservers (their timeouts read as hangs, and the inputs
    # would leave the machine). There every question fails at once (ENETUNREACH).
    cargo fuzz build -O "$t" >"logs/$t.build.log" 2>&1 || { tail -20 "logs/$t.build.log"; return 1; }
    CARGO_NET_OFFLINE=true unshare -n cargo fuzz run -O "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=256 \
        -max_len=65536 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" >"logs/$t.log" 2>&1
    local status=$?
    set -e
    grep -E '^(#[0-9]+.*DONE|stat::|.*(panicked|ERROR|SUMMARY|Test unit written))' "logs/$t.log" || true
    local execs
    execs=$(grep -m1 'stat::number_of_executed_units' "logs/$t.log" | awk '{print $2}')
    echo "$t: ${execs:-?} executions in ${secs}s, exit status $status"
    return "$status"
}

if [[ $target == all ]]; then
    failed=0
    for t in "${TARGETS[@]}"; do
        run_one "$t" || failed=1
    done
    exit "$failed"
fi
run_one "$target"
