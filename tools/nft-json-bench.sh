#!/usr/bin/env bash
# `xtnl nft -j -f` against `nft -j -f` (issue 26): wall time and peak memory (max RSS) of
# applying the same libnftables JSON document, in the same run, each round in a fresh
# network namespace (`unshare -n`; the host's ruleset is never touched), alternating the
# two tools. Two documents: a small one (netavark-like: an inet table, 6 chains, 4 sets
# and maps, 19 rules: nft's own JSON of crates/xtnl-nft-json/tests/rulesets/netavark.nft)
# and a 100,000-element interval set of IPv4 prefixes. Prints the medians and the ratios
# xtnl/nft, and checks that both tools leave the same `nft list ruleset`. Needs root.
#
#   tools/nft-json-bench.sh [XTNL_BINARY] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
xtnl=$(realpath "${1:-$here/target/$(rustc -vV | sed -n 's/^host: //p')/release/xtnl}")
rounds=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unshare -n sh -c "nft -f '$here/crates/xtnl-nft-json/tests/rulesets/netavark.nft' && nft -j list ruleset" > "$dir/small.json"
python3 - "$dir/big.json" <<'PY'
import json, sys
elems = [{"prefix": {"addr": f"10.{i >> 8 & 255}.{i & 255}.0", "len": 24}} for i in range(65536)]
elems += [{"prefix": {"addr": f"11.{i >> 8 & 255}.{i & 255}.0", "len": 24}} for i in range(100000 - 65536)]
doc = {"nftables": [
    {"add": {"table": {"family": "inet", "name": "big"}}},
    {"add": {"set": {"family": "inet", "table": "big", "name": "nets", "type": "ipv4_addr",
                     "flags": ["interval"], "elem": elems}}},
]}
json.dump(doc, open(sys.argv[1], "w"))
PY
# One application in a fresh namespace: "seconds max-RSS-KiB", and the ruleset's digest
# (wall time from Python's perf_counter around /usr/bin/time and the tool: /usr/bin/time's
# own 10 ms steps are coarser than the small document's run; max RSS from /usr/bin/time).
one() {
    unshare -n bash -c '
        out=$(XTNL_AUDIT=off python3 -c "
import subprocess, sys, time
t = time.perf_counter()
r = subprocess.run([\"/usr/bin/time\", \"-f\", \"%M\", sys.argv[1], \"-j\", \"-f\", sys.argv[2]],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
print(\"%.4f %s\" % (time.perf_counter() - t, r.stderr.split()[-1]))
" "$1" "$2")
        echo "$out $(nft list ruleset | sha256sum | cut -c1-16)"' _ "$1" "$2"
}
# xtnl under the name nft (a link, as a drop-in install has it).
mkdir "$dir/bin" && ln -s "$xtnl" "$dir/bin/nft"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for doc in small big; do
    : > "$dir/nft.$doc"; : > "$dir/xtnl.$doc"
    for _ in $(seq "$rounds"); do
        one "$(command -v nft)" "$dir/$doc.json" >> "$dir/nft.$doc"
        one "$dir/bin/nft" "$dir/$doc.json" >> "$dir/xtnl.$doc"
    done
    if [ "$(cut -d' ' -f3 "$dir/nft.$doc" | sort -u)" != "$(cut -d' ' -f3 "$dir/xtnl.$doc" | sort -u)" ]; then
        echo "$doc: the two tools left different rulesets" >&2
        exit 1
    fi
    nt=$(cut -d' ' -f1 "$dir/nft.$doc" | median); xt=$(cut -d' ' -f1 "$dir/xtnl.$doc" | median)
    nm=$(cut -d' ' -f2 "$dir/nft.$doc" | median); xm=$(cut -d' ' -f2 "$dir/xtnl.$doc" | median)
    printf '%-6s nft %7.4f s %7d KiB   xtnl %7.4f s %7d KiB   time ratio %.2f  memory ratio %.2f\n' \
        "$doc" "$nt" "$nm" "$xt" "$xm" "$(echo "$xt / $nt" | bc -l)" "$(echo "$xm / $nm" | bc -l)"
done
