//! The restore files of the cluster benchmark: kube-proxy's nat table for N services
//! (issue 22). Per service: a KUBE-SERVICES rule matching its cluster IP and port; a
//! KUBE-SVC chain (a masquerade mark for traffic from outside the pod range, a statistic
//! split, a fallback); two KUBE-SEP chains (a mark for hairpin traffic, a DNAT). That is 8N
//! rules and 3N chains, plus 7 rules in the fixed chains. The partial sync is what
//! kube-proxy's `--noflush` sync sends: KUBE-SERVICES rewritten whole and the chains of
//! 1 service in 20.
//!
//! Addresses are documentation ranges only: cluster IPs in 198.51.100.0/24 told apart by
//! port, endpoints in 203.0.113.0/24, the pod range 192.0.2.0/24.

use std::fmt::Write;

fn svc(i: usize) -> String {
    format!("KUBE-SVC-{i:06}")
}

fn sep(i: usize, j: usize) -> String {
    format!("KUBE-SEP-{i:06}E{j}")
}

/// Service `i`'s cluster IP and port.
fn cluster(i: usize) -> (String, usize) {
    (format!("198.51.100.{}", i % 254 + 1), 1024 + i / 254)
}

/// Endpoint `j` of service `i`.
fn endpoint(i: usize, j: usize) -> (String, usize) {
    let k = 2 * i + j;
    (
        format!("203.0.113.{}", k % 254 + 1),
        1024 + (k / 254) % 60000,
    )
}

fn services(n: usize, out: &mut String) {
    for i in 0..n {
        let (ip, port) = cluster(i);
        let _ = writeln!(
            out,
            "-A KUBE-SERVICES -d {ip}/32 -p tcp -m comment --comment \"ns{i}/svc{i}:http cluster IP\" -m tcp --dport {port} -j {}",
            svc(i)
        );
    }
}

fn service_chains(i: usize, out: &mut String) {
    let (ip, port) = cluster(i);
    let s = svc(i);
    let _ = writeln!(
        out,
        "-A {s} ! -s 192.0.2.0/24 -d {ip}/32 -p tcp -m comment --comment \"ns{i}/svc{i}:http cluster IP\" -m tcp --dport {port} -j KUBE-MARK-MASQ"
    );
    let (a0, p0) = endpoint(i, 0);
    let (a1, p1) = endpoint(i, 1);
    let _ = writeln!(
        out,
        "-A {s} -m comment --comment \"ns{i}/svc{i}:http -> {a0}:{p0}\" -m statistic --mode random --probability 0.50000000000 -j {}",
        sep(i, 0)
    );
    let _ = writeln!(
        out,
        "-A {s} -m comment --comment \"ns{i}/svc{i}:http -> {a1}:{p1}\" -j {}",
        sep(i, 1)
    );
    for j in 0..2 {
        let e = sep(i, j);
        let (a, p) = endpoint(i, j);
        let _ = writeln!(
            out,
            "-A {e} -s {a}/32 -m comment --comment \"ns{i}/svc{i}:http\" -j KUBE-MARK-MASQ"
        );
        let _ = writeln!(
            out,
            "-A {e} -p tcp -m comment --comment \"ns{i}/svc{i}:http\" -m tcp -j DNAT --to-destination {a}:{p}"
        );
    }
}

const FIXED: &str = "\
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment \"kubernetes service traffic requiring SNAT\" -j MASQUERADE --random-fully
";

/// The whole table: what kube-proxy's full sync restores.
pub fn full(n: usize) -> String {
    let mut o = String::with_capacity(n * 900);
    o.push_str(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n\
         :POSTROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-POSTROUTING - [0:0]\n\
         :KUBE-MARK-MASQ - [0:0]\n:KUBE-NODEPORTS - [0:0]\n",
    );
    for i in 0..n {
        let _ = writeln!(
            o,
            ":{} - [0:0]\n:{} - [0:0]\n:{} - [0:0]",
            svc(i),
            sep(i, 0),
            sep(i, 1)
        );
    }
    o.push_str(
        "-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n\
         -A OUTPUT -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n\
         -A POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n",
    );
    o.push_str(FIXED);
    services(n, &mut o);
    for i in 0..n {
        service_chains(i, &mut o);
    }
    o.push_str("COMMIT\n");
    o
}

/// The partial sync, applied with `--noflush` on top of [`full`].
pub fn partial(n: usize) -> String {
    let mut o = String::with_capacity(n * 200);
    o.push_str(
        "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-POSTROUTING - [0:0]\n\
         :KUBE-MARK-MASQ - [0:0]\n",
    );
    for i in (0..n).step_by(20) {
        let _ = writeln!(
            o,
            ":{} - [0:0]\n:{} - [0:0]\n:{} - [0:0]",
            svc(i),
            sep(i, 0),
            sep(i, 1)
        );
    }
    o.push_str(FIXED);
    services(n, &mut o);
    for i in (0..n).step_by(20) {
        service_chains(i, &mut o);
    }
    o.push_str("COMMIT\n");
    o
}

/// The rules a save of the table holds after [`full`] (and after [`partial`] on top).
pub fn rule_count(n: usize) -> usize {
    8 * n + 7
}
