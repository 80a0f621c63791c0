#!/usr/bin/env bash
# Runs a real firewall program (firewalld, ufw, fail2ban, ferm) through a life cycle with the
# iptables names pointing either at the real iptables 1.8.9 or at xtnl, and records every
# iptables command it issues (argv, stdin of a restore, stdout, stderr, status), the program's
# own answers, and the rulesets saved at checkpoints. Used by tests/real_programs.rs, which
# runs each program twice (real tools, xtnl) and compares the records.
#
#   tools/real-programs.sh PROGRAM BACKEND TOOLS WORK OUT
#     PROGRAM  firewalld | ufw | fail2ban | ferm
#     BACKEND  nft | legacy          (iptables-nft... or iptables-legacy... behind the names)
#     TOOLS    real | PATH-TO-XTNL   (the real xtables-*-multi, or xtnl linked under the names)
#     WORK     an empty directory for this run's files
#     OUT      the record
#
# Everything runs in new mount, network and PID namespaces made here (unshare -m -n -p):
# /usr/sbin is replaced (in the private mount namespace only) by a directory of links to the
# real /usr/sbin in which the six iptables names are logging wrappers and modprobe/rmmod
# do nothing; /run is a private tmpfs (so the xtables lock and the D-Bus socket are private);
# the program's configuration directory is a copy bind-mounted over the original. firewalld
# gets a private system bus (its own dbus-daemon on a socket under WORK). Nothing of the
# host's ruleset, D-Bus, systemd or configuration is touched; when the run ends (or its time
# runs out) the PID namespace, and with it every daemon started here, goes away.
set -uo pipefail

if [[ ${REALPROGS_STAGE:-} == "" ]]; then
    [[ $# -eq 5 ]] || { echo "usage: $0 PROGRAM BACKEND TOOLS WORK OUT" >&2; exit 2; }
    REALPROGS_HOSTNET=$(readlink /proc/self/ns/net) REALPROGS_STAGE=ns exec unshare --mount --net --pid --fork --mount-proc --propagation private -- bash "$0" "$@"
fi
if [[ $REALPROGS_STAGE == ns ]]; then
    # PID 1 of the namespace: the run below is bounded in time; when this shell ends, the
    # kernel ends every process left in the namespace.
    REALPROGS_STAGE=run timeout -k 5 "${REALPROGS_TIMEOUT:-420}" bash "$0" "$@"
    exit $?
fi

PROGRAM=$1 BACKEND=$2 TOOLS=$3 W=$4 OUT=$5
case $BACKEND in nft | legacy) ;; *) echo "backend must be nft or legacy" >&2; exit 2 ;; esac
[[ -d $W ]] || { echo "no work directory $W" >&2; exit 2; }
W=$(cd "$W" && pwd)
LOG=$W/log
# The same order of everything from one run to the next: no hash seeds at random (ferm's
# Perl hashes, the Python of the others).
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 PYTHONHASHSEED=0
: >"$LOG"

# This must be a network namespace of our own, never the one the run was started in.
[[ -n ${REALPROGS_HOSTNET:-} && $(readlink /proc/self/ns/net) != "$REALPROGS_HOSTNET" ]] || { echo "not in a namespace of our own" >&2; exit 1; }
mount -t tmpfs -o mode=0755 realprogs-run /run || exit 1
ip link set lo up

# /usr/sbin: links to the real one (bind-mounted aside first), with the iptables names as
# logging wrappers.
mkdir -p "$W/orig" "$W/sbin" "$W/targets"
mount --bind /usr/sbin "$W/orig" || exit 1
for f in "$W"/orig/*; do
    case ${f##*/} in
    # only the plain names: a program that looks for a backend's own name (ferm prefers
    # iptables-legacy-restore when it exists) takes the plain one
    ip*tables-nft* | ip*tables-legacy*) ;;
    *) ln -s "$f" "$W/sbin/${f##*/}" ;;
    esac
done
NAMES="iptables ip6tables iptables-save ip6tables-save iptables-restore ip6tables-restore"
for n in $NAMES; do
    fam=${n%%-*} rest=
    [[ $n == *-* ]] && rest=-${n#*-}
    target=$fam-$BACKEND$rest
    # called under the backend's own name (xtnl, like xtables-*-multi, goes by argv[0])
    if [[ $TOOLS == real ]]; then
        ln -s "$W/orig/$target" "$W/targets/$target"
    else
        ln -s "$TOOLS" "$W/targets/$target"
    fi
    rm -f "$W/sbin/$n"
    cat >"$W/sbin/$n" <<WRAP
#!/bin/bash
# logging wrapper for $n -> $target
t=\$(mktemp -d "$W/call.XXXXXX")
case $n in
*-restore) cat >"\$t/in"; "$W/targets/$target" "\$@" <"\$t/in" >"\$t/out" 2>"\$t/err" ;;
*) "$W/targets/$target" "\$@" >"\$t/out" 2>"\$t/err" ;;
esac
rc=\$?
{
    printf '\$ %s' "$n"; for a in "\$@"; do printf ' %q' "\$a"; done; printf '\n'
    [[ -f \$t/in ]] && { printf -- '-- stdin\n'; cat "\$t/in"; }
    printf -- '-- stdout\n'; cat "\$t/out"
    printf -- '-- stderr\n'; cat "\$t/err"
    printf -- '-- status %s\n' "\$rc"
} >"\$t/rec"
(flock 9; cat "\$t/rec" >&9) 9>>"$LOG"
cat "\$t/out"; cat "\$t/err" >&2
rm -rf "\$t"
exit \$rc
WRAP
    chmod 755 "$W/sbin/$n"
done
for n in modprobe rmmod; do
    rm -f "$W/sbin/$n"
    printf '#!/bin/sh\nexit 0\n' >"$W/sbin/$n"
    chmod 755 "$W/sbin/$n"
done
mount --bind "$W/sbin" /usr/sbin || exit 1
grep -q 'logging wrapper' /usr/sbin/iptables /sbin/ip6tables-restore || { echo "wrapper not in place" >&2; exit 1; }

# A line of the record for the program's own command and its answer.
note() { (flock 9; printf '%s\n' "$*" >&9) 9>>"$LOG"; }
say() {
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    note "# $* -> status $rc"
    [[ -n $out ]] && note "$out"
    return $rc
}
# The rulesets as the real tools of the backend read them, and nf_tables as nft lists it.
checkpoint() {
    note "=== checkpoint $1"
    local s
    for s in iptables ip6tables; do
        note "--- $s-$BACKEND-save"
        note "$("$W/orig/$s-$BACKEND-save" 2>&1 | grep -v '^#')"
    done
    note "--- nft list ruleset"
    note "$(nft list ruleset 2>&1)"
}
bind_copy() { # bind_copy ORIGINAL: a private copy of a file or directory over it
    local copy=$W/copy${1//\//_}
    cp -a "$1" "$copy" && mount --bind "$copy" "$1" || exit 1
    printf '%s' "$copy"
}
wait_for() { # wait_for SECONDS COMMAND...
    local end=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || return 1
        sleep 0.2
    done
}

case $PROGRAM in
firewalld)
    conf=$(bind_copy /etc/firewalld)
    sed -i 's/^FirewallBackend=.*/FirewallBackend=iptables/' "$conf/firewalld.conf"
    cat >"$W/dbus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$W/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="root"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
    dbus-daemon --config-file="$W/dbus.conf" --nofork --nopidfile --nosyslog >"$W/dbus.out" 2>&1 &
    wait_for 20 test -S "$W/bus" || { note "dbus-daemon did not start"; cat "$W/dbus.out" >&2; exit 1; }
    export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$W/bus
    firewalld --nofork --nopid --log-file "$W/firewalld.log" >"$W/firewalld.out" 2>&1 &
    fw=$!
    wait_for 180 firewall-cmd --state
    say firewall-cmd --state
    checkpoint start
    say firewall-cmd --add-service=http
    say firewall-cmd --add-port=8080/tcp
    say firewall-cmd --add-rich-rule='rule family="ipv4" source address="192.0.2.0/24" port port="2222" protocol="tcp" accept'
    say firewall-cmd --add-rich-rule='rule family="ipv6" source address="2001:db8::/32" reject'
    say firewall-cmd --zone=trusted --add-source=198.51.100.0/24
    say firewall-cmd --add-forward-port=port=2022:proto=tcp:toport=22:toaddr=192.0.2.10
    say firewall-cmd --list-all
    checkpoint runtime
    say firewall-cmd --permanent --add-service=https
    say firewall-cmd --permanent --zone=work --add-port=5000-5010/udp
    say firewall-cmd --reload
    say firewall-cmd --list-all
    checkpoint reload
    say firewall-cmd --panic-on
    checkpoint panic
    say firewall-cmd --panic-off
    kill -TERM "$fw"
    wait "$fw"
    note "# firewalld ended with status $?"
    checkpoint stop
    ;;
ufw)
    conf=$(bind_copy /etc/ufw)
    : >"$conf/sysctl.conf" # ufw's sysctls are not this test's business
    bind_copy /etc/default/ufw >/dev/null
    say ufw --force enable
    say ufw status verbose
    checkpoint enable
    say ufw allow 22/tcp
    say ufw deny from 192.0.2.7
    say ufw limit 2222/tcp
    say ufw allow from 2001:db8::/32 to any port 80 proto tcp
    say ufw reject out to 198.51.100.0/24 port 53 proto udp
    say ufw status numbered
    checkpoint rules
    say ufw delete allow 22/tcp
    say ufw reload
    say ufw status verbose
    checkpoint reload
    say ufw --force disable
    say ufw status
    checkpoint disable
    ;;
fail2ban)
    conf=$(bind_copy /etc/fail2ban)
    rm -f "$conf"/jail.d/*
    cat >"$conf/fail2ban.local" <<CONF
[Definition]
loglevel = INFO
logtarget = $W/fail2ban.log
socket = $W/fail2ban.sock
pidfile = $W/fail2ban.pid
dbfile = :memory:
CONF
    : >"$W/auth.log"
    cat >"$conf/jail.local" <<CONF
[DEFAULT]
banaction = iptables-multiport
banaction_allports = iptables-allports
backend = polling

[sshd]
enabled = true
port = ssh
logpath = $W/auth.log

[xt]
enabled = true
filter = sshd
port = 2222,2223
logpath = $W/auth.log
banaction = iptables-allports
CONF
    f2b() { fail2ban-client -c "$conf" "$@"; }
    say fail2ban-client -c "$conf" -x start
    wait_for 60 f2b ping
    checkpoint start
    say fail2ban-client -c "$conf" set sshd banip 192.0.2.5
    say fail2ban-client -c "$conf" set xt banip 192.0.2.6
    say fail2ban-client -c "$conf" set sshd banip 2001:db8::5
    checkpoint banned
    say fail2ban-client -c "$conf" set sshd unbanip 192.0.2.5
    say fail2ban-client -c "$conf" set sshd unbanip 2001:db8::5
    checkpoint unbanned
    say fail2ban-client -c "$conf" reload
    say fail2ban-client -c "$conf" set xt banip 192.0.2.8
    checkpoint reloaded
    # one jail at a time (a plain stop ends the jails in parallel, in no fixed order)
    say fail2ban-client -c "$conf" stop xt
    say fail2ban-client -c "$conf" stop sshd
    checkpoint jails-stopped
    say fail2ban-client -c "$conf" stop
    wait_for 30 sh -c "! fail2ban-client -c '$conf' ping"
    checkpoint stop
    ;;
ferm)
    cat >"$W/ferm.conf" <<'CONF'
domain (ip ip6) {
    table filter {
        chain INPUT {
            policy DROP;
            mod state state INVALID DROP;
            mod state state (ESTABLISHED RELATED) ACCEPT;
            interface lo ACCEPT;
            proto tcp dport (ssh http https) ACCEPT;
            proto udp dport 5000:5010 REJECT;
        }
        chain FORWARD policy DROP;
        chain (blocked) { LOG log-prefix "blocked: "; DROP; }
    }
}
domain ip {
    table filter chain INPUT saddr 192.0.2.0/24 jump blocked;
    table nat {
        chain POSTROUTING saddr 198.51.100.0/24 outerface eth0 MASQUERADE;
        chain PREROUTING proto tcp dport 2222 DNAT to 192.0.2.10:22;
    }
    table mangle chain PREROUTING proto icmp icmp-type echo-request MARK set-mark 1;
}
domain ip6 table filter chain INPUT {
    saddr 2001:db8::/32 jump blocked;
    proto ipv6-icmp ACCEPT;
}
CONF
    say ferm --slow "$W/ferm.conf"
    checkpoint slow
    say ferm "$W/ferm.conf"
    checkpoint restore
    say ferm --slow --flush "$W/ferm.conf"
    checkpoint slow-flush
    say ferm "$W/ferm.conf"
    say ferm --flush "$W/ferm.conf"
    checkpoint flush
    ;;
*)
    echo "unknown program $PROGRAM" >&2
    exit 2
    ;;
esac
cp "$LOG" "$OUT"
