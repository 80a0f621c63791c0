//! Host names in `-s`/`-d` resolved through DNS as iptables resolves them through glibc
//! (issue 24): the same commands run through the real iptables (iptables-nft, then
//! iptables-legacy) and through xtnl under iptables' names, each in a private mount and
//! network namespace (`unshare -m -n`) where `/etc/resolv.conf` and `/etc/hosts` are
//! bind-mounted copies made here and a tiny DNS server (tests/clients/dns_responder.py) answers
//! on a scratch address. Compared: every command's output and status, the rulesets, and the
//! questions the server was asked (name, type, UDP or TCP, in order), so the search list,
//! `ndots`, the servers' order, `attempts` and the TCP retry after a truncated answer are
//! iptables'. The host's resolver files and ruleset are never touched.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::twin::{Side, links, text};
use common::{private_lock_path, require_kernel};

const ZONE: &str = r#"{
 "multi.example": {"A": ["192.0.2.1", "192.0.2.2"], "AAAA": ["2001:db8::1", "2001:db8::2"]},
 "alias.example": {"CNAME": "multi.example"},
 "web.example": {"A": ["198.51.100.7"], "AAAA": ["2001:db8::7"]},
 "big.example": {"truncate": true, "A": ["203.0.113.1", "203.0.113.2", "203.0.113.3"]},
 "broken.example": {"servfail": true},
 "v6only.example": {"AAAA": ["2001:db8::6"]},
 "filed.example": {"A": ["198.51.100.99"]}
}"#;

/// The hosts file of the runs: a name DNS also knows, to show that the file comes first.
const HOSTS: &str = "127.0.0.1 localhost\n::1 localhost\n192.0.2.99 filed.example\n";

/// Two servers: one where nothing listens (a refusal at once), then the responder.
const RESOLV: &str = "nameserver 203.0.113.54\nnameserver 203.0.113.53\nsearch example\n\
                      options timeout:1 attempts:1\n";

/// Only a server that never answers: `attempts` rounds of `timeout` for each name asked.
const RESOLV_SILENT: &str =
    "nameserver 203.0.113.55\nsearch example\noptions timeout:1 attempts:2\n";

/// Run in `unshare -m -n` with D (the files), IPT, IPT6, TAG set: mounts the files, brings
/// up the addresses, starts the responder(s), runs CMDS (a file of shell lines).
const SCRIPT: &str = r###"
set -u
mount --bind "$D/resolv.$TAG" /etc/resolv.conf || exit 90
mount --bind "$D/hosts" /etc/hosts || exit 91
ip link set lo up
for a in 203.0.113.53 203.0.113.54 203.0.113.55; do ip addr add $a/32 dev lo; done
: > "$D/log.$TAG"
python3 "$RESPONDER" 203.0.113.53 "$D/zone.json" "$D/log.$TAG" > "$D/ready.$TAG" 2>&1 &
# a server that takes the questions and never answers
python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("203.0.113.55",53))
print("ready",flush=True)
while True:
    q,_=s.recvfrom(4096); open(sys.argv[1],"a").write("silent\n")' "$D/log.$TAG" > "$D/ready2.$TAG" 2>&1 &
for i in $(seq 100); do grep -q ready "$D/ready.$TAG" && grep -q ready "$D/ready2.$TAG" && break; sleep 0.1; done
. "$D/cmds"
echo "## rulesets"; $IPT -S; $IP6T -S
kill %1 %2
"###;

const CMDS: &str = r###"
for a in "-A INPUT -s multi.example -j ACCEPT" "-A INPUT -s alias.example/24 -j ACCEPT" \
    "-A INPUT -d web -j ACCEPT" "-A INPUT -s big.example -j ACCEPT" \
    "-A INPUT -s nope.example -j ACCEPT" "-A INPUT -s broken.example -j ACCEPT" \
    "-A INPUT -s v6only.example -j ACCEPT" "-A INPUT -s filed.example -j ACCEPT" \
    "-A INPUT -s 192.0.2.5,web.example -d multi.example -j ACCEPT" \
    "-C INPUT -s multi.example -j ACCEPT" "-D INPUT -s multi.example -j ACCEPT" \
    "-C INPUT -s multi.example -j ACCEPT" "-I INPUT 2 -d alias.example. -j ACCEPT" \
    "-R INPUT 1 -s multi.example -j ACCEPT" "-A INPUT -s 198.51..100.7 -j ACCEPT" \
    "-A INPUT -s .web -j ACCEPT" "-A INPUT -d web..example -j ACCEPT" \
    "-A INPUT -s web.example.. -j ACCEPT" \
    "-A INPUT -s aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example -j ACCEPT"; do
  echo "## iptables $a"; $IPT $a; echo rc=$?
done
for a in "-A INPUT -s multi.example -j ACCEPT" "-A INPUT -d alias.example -j ACCEPT" \
    "-A INPUT -s web -j ACCEPT" "-A INPUT -s v6only -j ACCEPT" "-A INPUT -s big.example -j ACCEPT"; do
  echo "## ip6tables $a"; $IP6T $a; echo rc=$?
done
"###;

const CMDS_SILENT: &str = r###"
echo "## iptables -A INPUT -s quiet -j ACCEPT"; $IPT -A INPUT -s quiet -j ACCEPT; echo rc=$?
"###;

fn scratch_dir(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dropin-dns-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// One run: the output of the commands and the questions the servers were asked.
fn run(dir: &Path, tag: &str, ipt: &str, ip6t: &str, env: &[(&str, &str)]) -> (String, String) {
    let lock = private_lock_path();
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "-n", "bash", "-c", SCRIPT])
        .env("D", dir)
        .env("TAG", tag)
        .env("IPT", ipt)
        .env("IP6T", ip6t)
        .env("XTABLES_LOCKFILE", &lock)
        .env("XTNL_NO_SERVE", "1")
        .env(
            "RESPONDER",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/dns_responder.py"),
        );
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run unshare");
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{tag}: {out}");
    let log = std::fs::read_to_string(dir.join(format!("log.{tag}"))).expect("query log");
    (out, log)
}

fn setup(dir: &Path, resolv: &str, cmds: &str) {
    std::fs::write(dir.join("zone.json"), ZONE).unwrap();
    std::fs::write(dir.join("hosts"), HOSTS).unwrap();
    std::fs::write(dir.join("cmds"), cmds).unwrap();
    for tag in ["real", "xtnl", "xtnl-env"] {
        std::fs::write(dir.join(format!("resolv.{tag}")), resolv).unwrap();
    }
}

fn same_as_iptables(side: Side, resolv: &str, cmds: &str, what: &str) -> (String, String) {
    let dir = scratch_dir(&format!("{what}-{side:?}"));
    setup(&dir, resolv, cmds);
    let names = side.link_names();
    let bin = links(
        &format!("dns-{what}-{side:?}"),
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (real, real_log) = run(
        &dir,
        "real",
        &side.oracle("iptables"),
        &side.oracle("ip6tables"),
        &[],
    );
    let backend = match side {
        Side::Nft => "nft",
        Side::Legacy => "legacy",
    };
    let ours = |n: &str| bin.join(n).to_str().expect("UTF-8").to_owned();
    let (ipt, ip6t) = (ours(&names[0]), ours(&names[1]));
    let (xtnl, xtnl_log) = run(&dir, "xtnl", &ipt, &ip6t, &[("XTNL_BACKEND", backend)]);
    assert_eq!(real, xtnl, "{side:?} {what}: output differs from iptables'");
    assert_eq!(
        real_log, xtnl_log,
        "{side:?} {what}: DNS questions differ from iptables' (glibc's)"
    );
    // the caller's environment does not steer xtnl's resolver (iptables' glibc would take
    // these); the questions stay those asked without them
    let (env_out, env_log) = run(
        &dir,
        "xtnl-env",
        &ipt,
        &ip6t,
        &[
            ("XTNL_BACKEND", backend),
            ("LOCALDOMAIN", "elsewhere.example"),
            ("RES_OPTIONS", "ndots:5 attempts:5 timeout:3"),
            ("HOSTALIASES", "/dev/null"),
        ],
    );
    assert_eq!(
        xtnl, env_out,
        "{side:?} {what}: the environment changed the result"
    );
    assert_eq!(
        xtnl_log, env_log,
        "{side:?} {what}: the environment changed the questions"
    );
    let _ = std::fs::remove_dir_all(&dir);
    (real, real_log)
}

#[test]
fn names_resolve_through_dns_as_iptables_nft() {
    require_kernel!();
    let (out, log) = same_as_iptables(Side::Nft, RESOLV, CMDS, "answers");
    // the comparison is not vacuous: names became rules, the truncated answer went to TCP
    assert!(
        out.contains("-A INPUT -s 203.0.113.3/32 -j ACCEPT"),
        "{out}"
    );
    assert!(
        out.contains("-A INPUT -s 2001:db8::7/128 -j ACCEPT"),
        "{out}"
    );
    assert!(log.contains("tcp big.example A\n"), "{log}");
    assert!(!log.contains("filed.example"), "{log}");
    // names glibc cannot put in a question (an empty label, a label over 63 bytes) are
    // refused without asking any server, as glibc does (the fuzzer found xtnl asking)
    assert!(
        out.contains("host/network `198.51..100.7' not found"),
        "{out}"
    );
    assert!(!log.contains(".."), "{log}");
    assert!(!log.contains("aaaaaaaaaa"), "{log}");
}

#[test]
fn names_resolve_through_dns_as_iptables_legacy() {
    require_kernel!();
    same_as_iptables(Side::Legacy, RESOLV, CMDS, "answers");
}

#[test]
fn timeouts_and_attempts_as_resolv_conf_says() {
    require_kernel!();
    let (out, log) = same_as_iptables(Side::Nft, RESOLV_SILENT, CMDS_SILENT, "silent");
    assert!(out.contains("host/network `quiet' not found"), "{out}");
    // two names (quiet.example, quiet), two attempts each
    assert_eq!(log, "silent\n".repeat(4), "{log}");
}
