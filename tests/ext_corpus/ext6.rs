//! The corpus' part for CONNSECMARK, IDLETIMER, RATEEST and nfacct: each in every table and
//! a chain of each hook it is valid in, IPv4 and IPv6. Written for xtnl from the iptables
//! man pages' option lists. (SECMARK is refused by a kernel without an LSM and LED by one
//! without the LED class, as here: tests/ext_bad_input.rs has them; rateest needs
//! estimators made first: tests/ext_rateest.rs.)
//!
//! IDLETIMER's labels name timers the kernel keeps for the whole machine (one per label,
//! shared by every namespace, `/sys/class/xt_idletimer/timers/LABEL`), so each label here
//! is used with one timer type only, and tests/ext_rateest.rs checks they go away.

use super::{ExtSpec, per_family, placed};

/// The accounting objects the nfacct specs name (made by [`make_objects`]).
pub const NFACCT_OBJECTS: [&str; 2] = ["xtnl-acct", "xtnl_acct2"];

/// Makes the namespace's nfacct objects (`nfacct add`, .ci/run installs it).
pub fn make_objects() {
    for name in NFACCT_OBJECTS {
        let o = std::process::Command::new("nfacct")
            .args(["add", name])
            .output()
            .expect("nfacct (.ci/run installs it)");
        assert!(o.status.success(), "nfacct add {name}: {o:?}");
    }
}

/// (rule, table, chain, IPv4, IPv6)
const SPECS: &[(&str, &str, &str, bool, bool)] = &[
    ("-j CONNSECMARK --save", "mangle", "PREROUTING", true, true),
    ("-j CONNSECMARK --restore", "mangle", "INPUT", true, true),
    (
        "-p tcp -j CONNSECMARK --save",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    ("-j CONNSECMARK --restore", "mangle", "OUTPUT", true, false),
    (
        "-o lo -j CONNSECMARK --save",
        "mangle",
        "POSTROUTING",
        false,
        true,
    ),
    ("-j CONNSECMARK --save", "security", "INPUT", true, true),
    ("-j CONNSECMARK --restore", "security", "OUTPUT", true, true),
    (
        "-j IDLETIMER --timeout 42 --label xtnl-c1",
        "filter",
        "INPUT",
        true,
        true,
    ),
    (
        "-i lo -j IDLETIMER --timeout 1 --label xtnl-c2 --alarm",
        "filter",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j IDLETIMER --timeout 2147482 --label xtnl-c3",
        "filter",
        "OUTPUT",
        true,
        false,
    ),
    (
        "-j IDLETIMER --timeout 0x10 --label xtnl-c1",
        "mangle",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j IDLETIMER --label xtnl_c4.x --timeout 300 --alarm",
        "mangle",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-p udp -j IDLETIMER --timeout 60 --label xtnl-c5-27-bytes-long-label",
        "nat",
        "PREROUTING",
        true,
        true,
    ),
    (
        "-j IDLETIMER --timeout 60 --label xtnl-c1",
        "raw",
        "OUTPUT",
        true,
        true,
    ),
    (
        "-j RATEEST --rateest-name xtnl-r1 --rateest-interval 250.0ms --rateest-ewmalog 500.0ms",
        "filter",
        "INPUT",
        true,
        true,
    ),
    (
        "-j RATEEST --rateest-name xtnl-r2 --rateest-interval 1s --rateest-ewmalog 8s",
        "filter",
        "OUTPUT",
        true,
        true,
    ),
    (
        "-j RATEEST --rateest-name r3 --rateest-interval 300ms --rateest-ewmalog 1.5s",
        "mangle",
        "FORWARD",
        true,
        true,
    ),
    (
        "-j RATEEST --rateest-name r4 --rateest-interval 8000000us --rateest-ewmalog 100s",
        "mangle",
        "PREROUTING",
        true,
        false,
    ),
    (
        "-j RATEEST --rateest-name r5 --rateest-interval 0.5sec --rateest-ewmalog 2000msecs",
        "nat",
        "POSTROUTING",
        true,
        true,
    ),
    (
        "-j RATEEST --rateest-name r6 --rateest-interval 100000 --rateest-ewmalog 1e6",
        "raw",
        "PREROUTING",
        false,
        true,
    ),
];

/// (match, IPv4, IPv6), in every table with its input chain.
const MATCHES: &[(&str, bool, bool)] = &[
    ("-m nfacct --nfacct-name xtnl-acct", true, true),
    ("-m nfacct --nfacct-name xtnl_acct2", true, true),
    ("-p tcp -m nfacct --nfacct-name xtnl-acct", true, false),
];

/// The specs of this part.
pub(super) fn specs() -> Vec<ExtSpec> {
    let mut out = Vec::new();
    placed(&mut out, SPECS);
    for &(m, v4, v6) in MATCHES {
        for (table, chain, target) in [
            ("filter", "INPUT", "-j ACCEPT"),
            ("nat", "PREROUTING", "-j RETURN"),
            ("mangle", "OUTPUT", "-j MARK --set-mark 0x2"),
            ("raw", "PREROUTING", "-j ACCEPT"),
        ] {
            per_family(&mut out, table, chain, format!("{m} {target}"), v4, v6);
        }
    }
    out
}
