#!/bin/sh
# Restore and save of a 10,000-rule ruleset using the extension registry's modules (the
# first round's and the second's: sctp, hashlimit, connlimit, string, ecn, TCPOPTSTRIP), xtnl
# against iptables-nft-restore/-save on the same file, each in a fresh network namespace
# (never the host's). Prints the times and the ratios.
#   sudo sh tools/ext-bench.sh [path/to/xtnl] [rules] [saves]
# With `saves` > 1 each tool saves that many times after its restore and the median is shown
# (a save is some 70 ms, where one run on a shared machine varies by 20 ms or more).
set -eu
X=${1:-target/x86_64-unknown-linux-gnu/release/xtnl}
N=${2:-10000}
R=${3:-1}
F=$(mktemp)
trap 'rm -f "$F"' EXIT
{
  echo '*mangle'
  echo ':PREROUTING ACCEPT [0:0]'
  echo ':INPUT ACCEPT [0:0]'
  echo ':FORWARD ACCEPT [0:0]'
  echo ':OUTPUT ACCEPT [0:0]'
  echo ':POSTROUTING ACCEPT [0:0]'
  echo ':BENCH - [0:0]'
  i=0
  while [ $i -lt "$N" ]; do
    a=$((i / 250)); b=$((i % 250 + 1))
    case $((i % 8)) in
      0) echo "-A BENCH -s 10.$a.$b.0/24 -p tcp -m conntrack --ctstate NEW -m tcp --dport $((i % 60000 + 1)) --tcp-flags FIN,SYN,RST,ACK SYN -j MARK --set-xmark 0x$((i % 256))/0xffffffff" ;;
      1) echo "-A BENCH -d 10.$a.$b.1/32 -m mark --mark 0x4000/0x4000 -m limit --limit 10/sec -j CONNMARK --save-mark --nfmask 0xffffffff --ctmask 0xffffffff" ;;
      2) echo "-A BENCH -m addrtype --dst-type LOCAL -m statistic --mode random --probability 0.50000000000 -m comment --comment \"rule $i\" -j ACCEPT" ;;
      3) echo "-A BENCH -p udp -m udp --dport $((i % 60000 + 1)) -m length --length 0:512 -j DSCP --set-dscp 0x2e" ;;
      4) echo "-A BENCH -m recent --rcheck --seconds 60 --name b$i --mask 255.255.255.255 --rsource -j LOG --log-prefix \"b$i: \" --log-tcp-sequence" ;;
      5) echo "-A BENCH -p sctp -m sctp --dport $((i % 60000 + 1)) --chunk-types any INIT -m hashlimit --hashlimit-upto 20/sec --hashlimit-burst 5 --hashlimit-mode srcip --hashlimit-name bench -j ACCEPT" ;;
      6) echo "-A BENCH -p tcp -m tcp --dport $((i % 60000 + 1)) -m connlimit --connlimit-above 10 --connlimit-mask 32 --connlimit-saddr -m string --string \"GET /$i\" --algo bm --to 65535 -j DROP" ;;
      7) echo "-A BENCH -p tcp -m ecn --ecn-tcp-ece -m dscp --dscp 0x0a -j TCPOPTSTRIP --strip-options 19" ;;
    esac
    i=$((i + 1))
  done
  echo 'COMMIT'
} > "$F"
t() { s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
run() {
  unshare -n sh -c "
    export XTABLES_LOCKFILE=/tmp/xtnl-ext-bench.lock
    t() { s=\$(date +%s%N); \"\$@\" > /dev/null; e=\$(date +%s%N); echo \$(( (e - s) / 1000000 )); }
    r=\$(t $1 < '$F')
    s=\$(i=0; while [ \$i -lt $R ]; do t $2; i=\$((i + 1)); done | sort -n | sed -n $(( (R + 1) / 2 ))p)
    echo \$r \$s"
}
set -- $(run "iptables-nft-restore" "iptables-nft-save") $(run "$X restore" "$X save")
echo "$N rules: iptables-nft-restore $1 ms, xtnl restore $3 ms (x$(echo "scale=2; $1 / $3" | bc)); iptables-nft-save $2 ms, xtnl save $4 ms (x$(echo "scale=2; $2 / $4" | bc))"
