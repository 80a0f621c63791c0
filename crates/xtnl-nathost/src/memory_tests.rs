//! The NAT-host planners over the in-memory ruleset: what each operation changes, that a
//! second run changes nothing, and that a failing transaction changes nothing at all.

use std::collections::BTreeSet;

use super::memory::MemoryRuleset;
use crate::ipt::print::append_line;
use crate::model::Family;
use crate::nathost::{self, Forward, ForwardKey, Operation, Outcome, Reservation};

fn reservation(chain: &str, spec: &str) -> Reservation {
    let mut r = Reservation::new(chain);
    r.jump_comment = Some(r.described_jump("VCL: "));
    let f = Forward::parse_spec(spec).expect("forward");
    r.forwards.push(f);
    r
}

fn listed(m: &MemoryRuleset, chain: &str) -> Vec<String> {
    m.rules("nat", chain)
        .iter()
        .map(|r| append_line(chain, r, false))
        .collect()
}

#[test]
fn a_reservation_is_set_up_once_and_torn_down_once() {
    let mut m = MemoryRuleset::new(Family::Ipv4);
    let res = reservation("vcld-5205", "eth1:tcp/50443=192.0.2.10:3389");
    let r = nathost::setup(&mut m, &res).expect("setup");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(m.chain_names("nat"), ["PREROUTING", "vcld-5205"]);
    let jump = listed(&m, "PREROUTING");
    assert_eq!(jump.len(), 1);
    assert!(jump[0].ends_with("-j vcld-5205"), "{jump:?}");
    let dnat = listed(&m, "vcld-5205");
    assert_eq!(dnat.len(), 1);
    assert!(
        dnat[0].contains("--dport 50443") && dnat[0].contains("--to-destination 192.0.2.10:3389"),
        "{dnat:?}"
    );
    // Idempotent: nothing is committed the second time.
    let r = nathost::setup(&mut m, &res).expect("setup again");
    assert_eq!(r.outcome, Outcome::Unchanged);
    assert!(r.changes.is_empty());
    assert_eq!(m.commits, 1);

    // A forward added, then removed by its key.
    let f = Forward::parse_spec("eth1:udp/53=192.0.2.10:53").expect("forward");
    let r = nathost::forward_add(&mut m, Family::Ipv4, "nat", "vcld-5205", &f).expect("add");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(listed(&m, "vcld-5205").len(), 2);
    let key = ForwardKey::parse_spec("eth1:udp/53").expect("key");
    let r = nathost::forward_remove(&mut m, Family::Ipv4, "nat", "vcld-5205", &key, None)
        .expect("remove");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(listed(&m, "vcld-5205").len(), 1);

    let r = nathost::teardown(&mut m, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")
        .expect("teardown");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(r.removed_chains, ["vcld-5205"]);
    assert_eq!(m.chain_names("nat"), ["PREROUTING"]);
    assert!(listed(&m, "PREROUTING").is_empty());
    let r = nathost::teardown(&mut m, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")
        .expect("teardown again");
    assert_eq!(r.outcome, Outcome::Absent);
}

#[test]
fn a_sweep_removes_what_it_does_not_keep() {
    let mut m = MemoryRuleset::new(Family::Ipv4);
    for (chain, port) in [("vcld-1", 1), ("vcld-2", 2), ("vcld-3", 3)] {
        let spec = format!("tcp/5000{port}=192.0.2.{port}:22");
        nathost::setup(&mut m, &reservation(chain, &spec)).expect("setup");
    }
    let keep: BTreeSet<String> = ["vcld-2".to_string()].into();
    let r = nathost::sweep(&mut m, Family::Ipv4, "nat", "vcld-", &keep).expect("sweep");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(m.chain_names("nat"), ["PREROUTING", "vcld-2"]);
    let jumps = listed(&m, "PREROUTING");
    assert_eq!(jumps.len(), 1);
    assert!(jumps[0].ends_with("-j vcld-2"), "{jumps:?}");
}

#[test]
fn a_transaction_that_fails_changes_nothing() {
    let mut m = MemoryRuleset::new(Family::Ipv4);
    nathost::setup(&mut m, &reservation("vcld-1", "tcp/50001=192.0.2.1:22")).expect("setup");
    let before = (m.chain_names("nat"), listed(&m, "PREROUTING"), m.commits);
    // A second reservation, then a forward into a chain that does not exist: the whole
    // transaction is refused before anything is committed.
    let f = Forward::parse_spec("tcp/50002=192.0.2.2:22").expect("forward");
    let ops = [
        Operation::ReservationSetup(reservation("vcld-2", "tcp/50003=192.0.2.3:22")),
        Operation::ForwardAdd {
            table: "nat".into(),
            chain: "missing".into(),
            forward: f,
        },
    ];
    let e = nathost::transact(&mut m, Family::Ipv4, &ops).expect_err("refused");
    assert_eq!(e.to_string(), "operation 1 (forward_add)");
    assert_eq!(
        (m.chain_names("nat"), listed(&m, "PREROUTING"), m.commits),
        before
    );
}

/// Under a policy the in-memory ruleset judges a plan as both kernel backends do
/// (`seam::judge::of_changes`), before anything is applied: the NAT-host policy lets a
/// reservation be set up and torn down, and refuses tearing down a chain outside the
/// reservations (its jump from PREROUTING and its deletion), changing nothing.
#[test]
fn under_a_policy_a_plan_is_judged_before_it_is_applied() {
    let policy = crate::policy::Policy::parse(
        xtnl_policy::fixtures::NAT_HOST_POLICY,
        std::path::Path::new("/etc/xtnl/policy.toml"),
    )
    .expect("policy");
    let mut m = MemoryRuleset::new(Family::Ipv4);
    // Made before the policy: PREROUTING (a `policy` touch the NAT host is not given) and
    // a chain outside the reservations with its jump.
    nathost::setup(
        &mut m,
        &reservation("other", "eth1:tcp/50444=192.0.2.11:22"),
    )
    .expect("other");
    let mut m = m.enforcing(crate::seam::Enforcement::new(
        Some(std::sync::Arc::new(policy)),
        None,
    ));
    let r = nathost::setup(
        &mut m,
        &reservation("vcld-1", "eth1:tcp/50443=192.0.2.10:22"),
    )
    .expect("a reservation is allowed");
    assert_eq!(r.outcome, Outcome::Changed);
    let commits = m.commits;
    let e = nathost::teardown(&mut m, Family::Ipv4, "nat", "other", "PREROUTING")
        .expect_err("a chain outside the reservations is not the agent's");
    assert_eq!(e.kind(), crate::ErrorKind::PolicyDenied, "{e}");
    assert!(
        e.to_string()
            .contains("denied: delete-rule in ip nat PREROUTING (a rule jumping to other)"),
        "{e}"
    );
    assert_eq!(m.commits, commits, "a denied plan commits nothing");
    assert_eq!(m.chain_names("nat"), ["PREROUTING", "other", "vcld-1"]);
    let r = nathost::teardown(&mut m, Family::Ipv4, "nat", "vcld-1", "PREROUTING")
        .expect("a reservation's teardown is allowed");
    assert_eq!(r.outcome, Outcome::Changed);
    assert_eq!(m.chain_names("nat"), ["PREROUTING", "other"]);
}

/// A plan speaks the interpreter's vocabulary ([`crate::seam::Edit`]), but a backend commits
/// only the changes a NAT-host plan makes: one that is not (a policy, a rule by number, an
/// insert past the head) is refused with its text, before anything is applied.
#[test]
fn a_change_no_plan_makes_is_refused_and_changes_nothing() {
    use crate::model::ChainPolicy;
    use crate::nathost::{Change, RulesetBackend};
    use crate::seam::{Edit, RuleRef};
    let mut m = MemoryRuleset::new(Family::Ipv4);
    let res = reservation("vcld-7", "eth1:tcp/50443=192.0.2.10:3389");
    nathost::setup(&mut m, &res).expect("setup");
    let before = (m.chain_names("nat"), listed(&m, "vcld-7"), m.commits);
    let refused = [
        (
            Edit::Policy {
                chain: "PREROUTING".into(),
                policy: ChainPolicy::Drop,
            },
            "-t nat -P PREROUTING DROP",
        ),
        (
            Edit::Delete {
                chain: "vcld-7".into(),
                at: RuleRef::Number(1),
            },
            "-t nat -D vcld-7 1",
        ),
        (
            Edit::Insert {
                chain: "vcld-7".into(),
                index: 2,
                rule: Default::default(),
            },
            "-t nat -I vcld-7 2",
        ),
    ];
    for (edit, text) in refused {
        let fresh = Change::create_chain("nat", "vcld-8");
        let e = m
            .transact(Family::Ipv4, |_| {
                Ok((vec![fresh.clone(), Change::new("nat", edit.clone())], ()))
            })
            .expect_err("refused");
        assert_eq!(
            e.to_string(),
            format!("invalid input: change 1: {text}: not a change a NAT-host plan commits"),
        );
        let after = (m.chain_names("nat"), listed(&m, "vcld-7"), m.commits);
        assert_eq!(after, before);
    }
}
