//! The library with and without iptables' extension registry (the cargo feature
//! `extensions`, on by default; `.ci/run` runs this file both ways:
//! `cargo test --test slim` and `cargo test -p xtnl --no-default-features --test slim`).
//!
//! On both backends, in namespaces of their own: rules written by the real iptables-nft and
//! iptables-legacy with extensions the registry reads (conntrack's `--ctdir`, limit, mark,
//! NFLOG, CT, tcp flags) are read back by the library. With the registry, `-S` prints them
//! as the tool does; without it, each such rule is shown on a `#` line (kept whole as the
//! kernel's bytes, never an `-A` line the tool would print differently) and the other rules
//! as the tool prints them. The NAT-host operations then set up a reservation beside those
//! rules, and every table lists under the tool's own `-S` exactly as when the agent's own
//! iptables commands set it up: the foreign rules are untouched and ours are iptables'.
//! And a command line naming a registry extension is refused, naming it and the feature.

mod common;

use common::{agent, in_netns, private_lock_path, run_ok};
use xtnl::backend::{Backend, Opened, open};
use xtnl::ipt::parse::parse;
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Outcome};
use xtnl::seam::Enforcement;

/// Whether this build has the registry (the package's feature, which tests share).
const REGISTRY: bool = cfg!(feature = "extensions");

/// Rules someone else wrote: (table, rule, whether it needs the registry to be read).
const FOREIGN: &[(&str, &str, bool)] = &[
    (
        "filter",
        "-A INPUT -s 192.0.2.0/24 -p tcp -m multiport --dports 22,80 -m comment --comment plain -j ACCEPT",
        false,
    ),
    (
        "filter",
        "-A INPUT -p tcp -m conntrack --ctstate NEW --ctdir ORIGINAL -m limit --limit 5/min -j ACCEPT",
        true,
    ),
    (
        "filter",
        "-A INPUT -m mark --mark 0x1 -j NFLOG --nflog-group 3",
        true,
    ),
    (
        "filter",
        "-A INPUT -m conntrack --ctstate ESTABLISHED -j ACCEPT",
        false,
    ),
    (
        "filter",
        "-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j DROP",
        true,
    ),
    (
        "raw",
        "-A PREROUTING -d 198.51.100.7/32 -j CT --notrack",
        true,
    ),
    ("nat", "-A POSTROUTING -o eth0 -j MASQUERADE", false),
    (
        "nat",
        "-A POSTROUTING -s 203.0.113.0/24 -p udp -m udp --dport 53 -j SNAT --to-source 198.51.100.1",
        false,
    ),
    (
        "nat",
        "-A POSTROUTING -m mark --mark 0x2/0xff -j MASQUERADE",
        true,
    ),
];

fn tool(backend: Backend) -> &'static str {
    match backend {
        Backend::Nft => "iptables-nft",
        Backend::Legacy => "iptables-legacy",
    }
}

fn opened(backend: Backend) -> Opened {
    open(
        backend,
        Family::Ipv4,
        &Enforcement::none(),
        None,
        XtablesLock::new(private_lock_path(), WaitPolicy::Forever),
        LockMode::Always,
    )
    .expect("open the backend")
}

fn words(line: &str) -> Vec<String> {
    xtnl::ipt::parse::split_words(line).expect("words")
}

/// Writes the foreign rules with the real tool.
fn write_foreign(backend: Backend) {
    for (table, rule, _) in FOREIGN {
        let mut args = vec!["-t".to_string(), table.to_string()];
        args.extend(words(rule));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_ok(tool(backend), &args);
    }
}

fn tool_s(backend: Backend, table: &str) -> String {
    run_ok(tool(backend), &["-t", table, "-S"])
}

fn ours_s(o: &mut Opened, table: &str) -> String {
    let inv = parse(&words(&format!("-t {table} -S")), Family::Ipv4).expect("parse -S");
    o.execute(&inv).expect("-S")
}

/// The agent's own commands for the reservation (tests/legacy_nathost.rs).
fn agent_setup(backend: Backend) {
    agent::setup_with(tool(backend));
}

const TABLES: [&str; 3] = ["filter", "raw", "nat"];

/// Each table's `-S` by the tool, after the foreign rules and the agent's reservation.
fn agent_tables(backend: Backend) -> Vec<String> {
    in_netns(move || {
        write_foreign(backend);
        agent_setup(backend);
        TABLES.iter().map(|t| tool_s(backend, t)).collect()
    })
}

/// The same with the reservation set up by the library; checks the library's own `-S` of
/// the foreign rules on the way.
fn our_tables(backend: Backend) -> Vec<String> {
    in_netns(move || {
        write_foreign(backend);
        let mut o = opened(backend);
        for table in TABLES {
            let theirs = tool_s(backend, table);
            let ours = ours_s(&mut o, table);
            check_listing(backend, table, &theirs, &ours);
        }
        let r = match &mut o {
            Opened::Nft(s) => nathost::setup(s, &agent::reservation()),
            Opened::Legacy(l) => nathost::setup(l, &agent::reservation()),
        }
        .expect("reservation setup beside the foreign rules");
        assert_eq!(r.outcome, Outcome::Changed, "{:?}", r.changes);
        let again = match &mut o {
            Opened::Nft(s) => nathost::setup(s, &agent::reservation()),
            Opened::Legacy(l) => nathost::setup(l, &agent::reservation()),
        }
        .expect("setup again");
        assert_eq!(again.outcome, Outcome::Unchanged, "{:?}", again.changes);
        // The agent's check by spec finds the library's rule.
        agent::check_jump_with(tool(backend));
        let tables = TABLES.iter().map(|t| tool_s(backend, t)).collect();
        o.close().expect("close");
        tables
    })
}

/// The library's `-S` against the tool's, rule by rule (both list in the kernel's order).
fn check_listing(backend: Backend, table: &str, theirs: &str, ours: &str) {
    let theirs: Vec<&str> = theirs.lines().collect();
    let ours: Vec<&str> = ours.lines().collect();
    assert_eq!(
        theirs.len(),
        ours.len(),
        "{backend:?} {table}:\n{theirs:#?}\n{ours:#?}"
    );
    let mut hidden = 0;
    for (t, o) in theirs.iter().zip(&ours) {
        let needs = FOREIGN
            .iter()
            .find(|(tb, r, _)| *tb == table && r == t)
            .is_some_and(|(_, _, needs)| *needs);
        if REGISTRY || !needs {
            assert_eq!(
                t, o,
                "{backend:?} {table}: the library prints the rule otherwise"
            );
        } else {
            // Kept, shown as a rule iptables syntax cannot say here: never an `-A` line.
            assert!(
                o.starts_with("# handle ") && o.contains("cannot express"),
                "{backend:?} {table}: {t:?} listed as {o:?} without the registry"
            );
            hidden += 1;
        }
    }
    let expect = if REGISTRY {
        0
    } else {
        FOREIGN
            .iter()
            .filter(|(tb, _, n)| *tb == table && *n)
            .count()
    };
    assert_eq!(hidden, expect, "{backend:?} {table}: {ours:#?}");
}

#[test]
fn foreign_extensions_are_kept_and_nat_host_rules_list_as_iptables_nft_lists_them() {
    common::require_kernel!();
    let agent = agent_tables(Backend::Nft);
    let ours = our_tables(Backend::Nft);
    assert_eq!(agent, ours);
}

#[test]
fn foreign_extensions_are_kept_and_nat_host_rules_list_as_iptables_legacy_lists_them() {
    common::require_kernel!();
    let agent = agent_tables(Backend::Legacy);
    let ours = our_tables(Backend::Legacy);
    assert_eq!(agent, ours);
}

#[test]
fn a_registry_extension_on_the_command_line_needs_the_feature() {
    for (line, name) in [
        ("-A INPUT -m conntrack --ctstate NEW -j ACCEPT", "conntrack"),
        ("-A INPUT -m limit --limit 5/min -j ACCEPT", "limit"),
        ("-t raw -A PREROUTING -j CT --notrack", "CT"),
        ("-A INPUT -j NFLOG --nflog-group 3", "NFLOG"),
        ("-A INPUT -p tcp --syn -j DROP", "--syn"),
    ] {
        let got = parse(&words(line), Family::Ipv4);
        match (REGISTRY, got) {
            (true, Ok(_)) => {}
            (false, Err(e)) => {
                let msg = e.to_string();
                assert!(msg.contains(name), "{line}: {msg}");
                if name != "--syn" {
                    assert!(msg.contains("feature `extensions`"), "{line}: {msg}");
                }
            }
            (registry, got) => panic!("{line} (registry {registry}): {got:?}"),
        }
    }
    // What the NAT-host operations write parses in both builds.
    for line in [
        "-t nat -A vcld-5205 -i eth1 -p tcp -m comment --comment x -m tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:3389",
        "-t nat -I PREROUTING -j vcld-5205 -m comment --comment y",
        "-A INPUT -p udp -m multiport --dports 53,67:68 -m state --state NEW -j REJECT",
    ] {
        parse(&words(line), Family::Ipv4).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}
