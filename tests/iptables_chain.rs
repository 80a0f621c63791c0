//! `Transaction::ensure_iptables_chain` (issue 21): a transaction creates iptables' table and
//! built-in chain as iptables-nft does when asked, so that the usual first transaction on a
//! fresh host (a chain and a jump from PREROUTING) works; an existing chain keeps its policy;
//! a chain iptables does not have is refused before anything is sent. Compared with what the
//! real iptables-nft makes, in scratch namespaces.

mod common;

use common::{in_netns, nft_ruleset, run_ok};
use xtnl::model::{Action, Family, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

/// A session that never takes the xtables lock (the namespace is the test's own).
fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .expect("open netlink session")
}

/// The chain's own line of `nft list chain` (type, hook, priority, policy).
fn chain_line(family: &str, table: &str, chain: &str) -> String {
    run_ok("nft", &["list", "chain", family, table, chain])
        .lines()
        .find(|l| l.contains("hook"))
        .unwrap_or_else(|| panic!("no base chain line for {table} {chain}"))
        .trim()
        .to_owned()
}

#[test]
fn a_fresh_host_gets_the_table_and_base_chain_iptables_nft_makes() {
    for (family, fam, ipt, table, chain) in [
        (Family::Ipv4, "ip", "iptables-nft", "nat", "PREROUTING"),
        (Family::Ipv4, "ip", "iptables-nft", "filter", "INPUT"),
        (
            Family::Ipv6,
            "ip6",
            "ip6tables-nft",
            "mangle",
            "POSTROUTING",
        ),
        (Family::Ipv4, "ip", "iptables-nft", "raw", "OUTPUT"),
    ] {
        // iptables-nft's own, made by its first use of the chain.
        let theirs = in_netns(move || {
            run_ok(ipt, &["-t", table, "-A", chain, "-j", "ACCEPT"]);
            run_ok(ipt, &["-t", table, "-D", chain, "-j", "ACCEPT"]);
            chain_line(fam, table, chain)
        });
        let ours = in_netns(move || {
            let mut s = session();
            let t = TableRef::new(family, table);
            let mut tx = Transaction::new();
            tx.ensure_iptables_chain(family, table, chain)
                .ensure_chain(&t, ChainSpec::regular("xtnl-a"))
                .append_rule(
                    &t.chain(chain),
                    Rule::new().action(Action::Jump("xtnl-a".into())),
                );
            s.commit(&tx).expect("commit on a fresh host");
            let line = chain_line(fam, table, chain);
            // iptables-nft reads the chain and its policy.
            let listed = run_ok(ipt, &["-t", table, "-S", chain]);
            assert!(
                listed.starts_with(&format!("-P {chain} ACCEPT\n")),
                "{listed}"
            );
            line
        });
        assert_eq!(ours, theirs, "{table} {chain}");
    }
}

#[test]
fn an_existing_chain_keeps_its_policy_and_a_second_run_changes_nothing() {
    in_netns(|| {
        run_ok("iptables-nft", &["-P", "INPUT", "DROP"]);
        run_ok(
            "iptables-nft",
            &["-A", "INPUT", "-s", "192.0.2.1", "-j", "ACCEPT"],
        );
        let before = nft_ruleset();
        let mut s = session();
        let mut tx = Transaction::new();
        tx.ensure_iptables_chain(Family::Ipv4, "filter", "INPUT");
        for _ in 0..2 {
            s.commit(&tx).expect("commit");
            assert_eq!(nft_ruleset(), before);
        }
        let listed = run_ok("iptables-nft", &["-S", "INPUT"]);
        assert!(listed.starts_with("-P INPUT DROP\n"), "{listed}");
    });
}

#[test]
fn a_chain_iptables_does_not_have_is_refused_before_anything_is_sent() {
    in_netns(|| {
        let before = nft_ruleset();
        let mut s = session();
        for (family, table, chain) in [
            (Family::Ipv4, "nat", "FORWARD"),
            (Family::Ipv4, "nosuch", "INPUT"),
            (Family::Inet, "filter", "INPUT"),
        ] {
            let mut tx = Transaction::new();
            tx.ensure_iptables_chain(family, table, chain);
            let e = s.commit(&tx).expect_err("refused").to_string();
            assert!(
                e.contains(&format!("{table} {chain} is not a built-in chain")),
                "{e}"
            );
            assert_eq!(nft_ruleset(), before);
        }
    });
}
