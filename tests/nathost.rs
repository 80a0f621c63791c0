//! The NAT-host operations against the real kernel, with iptables-nft as the oracle of what
//! the agent's own commands produce: idempotency of every operation, atomic teardown that
//! removes references from several chains, sweep, round trips per operation, and the
//! agent's command sequence and xtnl's operation giving identical tables.

mod common;

use std::collections::BTreeSet;
use std::process::Output;

use common::{in_netns, nft_ruleset, private_lock_path, run, run_env, run_ok, xtnl_bin};
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Forward, ForwardKey, HostSetup, Outcome, Reservation};
use xtnl::nft::Session;

fn session() -> Session {
    Session::builder()
        .lock(XtablesLock::new(private_lock_path(), WaitPolicy::Forever))
        .open()
        .expect("open session")
}

fn ipt_nat() -> String {
    run_ok("iptables-nft", &["-t", "nat", "-S"])
}

fn xtnl(args: &[&str]) -> Output {
    let lock = private_lock_path();
    run_env(
        xtnl_bin(),
        args,
        &[("XTABLES_LOCKFILE", lock.to_str().unwrap_or("/nonexistent"))],
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn forward(spec: &str, comment: &str) -> Forward {
    let mut f = Forward::parse_spec(spec).expect("forward spec");
    f.comment = Some(comment.to_string());
    f
}

/// The reservation the agent's commands in the notes make (comments in its words).
fn vcl_reservation(chain: &str) -> Reservation {
    let mut r = Reservation::new(chain);
    r.jump_comment = Some(r.described_jump("VCL: "));
    let mut f = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389").expect("spec");
    f.comment = Some(f.described("VCL: "));
    r.forwards.push(f);
    r
}

const GOLDEN_JUMP: &str =
    "VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205";
const GOLDEN_FORWARD: &str = "VCL: forward eth1:tcp/50443 --> 192.0.2.10:3389";

#[test]
fn setup_matches_the_agents_iptables_commands_and_each_recognises_the_other() {
    common::require_kernel!();
    // The agent's own commands (from the notes), through iptables-nft.
    let agent = in_netns(|| {
        run_ok(
            "iptables-nft",
            &["--new-chain", "vcld-5205", "--table", "nat"],
        );
        run_ok(
            "iptables-nft",
            &[
                "--insert",
                "PREROUTING",
                "--table",
                "nat",
                "--jump",
                "vcld-5205",
                "--match",
                "comment",
                "--comment",
                GOLDEN_JUMP,
            ],
        );
        run_ok(
            "iptables-nft",
            &[
                "--insert",
                "vcld-5205",
                "--table",
                "nat",
                "--in-interface",
                "eth1",
                "--protocol",
                "tcp",
                "--match",
                "comment",
                "--comment",
                GOLDEN_FORWARD,
                "--match",
                "tcp",
                "--destination-port",
                "50443",
                "--jump",
                "DNAT",
                "--to-destination",
                "192.0.2.10:3389",
            ],
        );
        let listed = ipt_nat();
        // xtnl sees the agent's reservation as set up already.
        let r = nathost::setup(&mut session(), &vcl_reservation("vcld-5205")).expect("setup");
        assert_eq!(r.outcome, Outcome::Unchanged, "{:?}", r.changes);
        assert_eq!(ipt_nat(), listed);
        listed
    });
    let ours = in_netns(|| {
        let r = nathost::setup(&mut session(), &vcl_reservation("vcld-5205")).expect("setup");
        assert_eq!(r.outcome, Outcome::Changed);
        let listed = ipt_nat();
        // The agent's deletions by spec find xtnl's rules.
        run_ok(
            "iptables-nft",
            &[
                "-t",
                "nat",
                "-C",
                "PREROUTING",
                "-j",
                "vcld-5205",
                "-m",
                "comment",
                "--comment",
                GOLDEN_JUMP,
            ],
        );
        listed
    });
    assert_eq!(ours, agent);
}

#[test]
fn setup_is_idempotent_and_repairs_what_differs() {
    in_netns(|| {
        let mut s = session();
        let res = vcl_reservation("vcld-1");
        assert_eq!(
            nathost::setup(&mut s, &res).expect("setup").outcome,
            Outcome::Changed
        );
        let after = nft_ruleset();
        let again = nathost::setup(&mut s, &res).expect("setup again");
        assert_eq!(again.outcome, Outcome::Unchanged);
        assert!(again.changes.is_empty());
        assert_eq!(nft_ruleset(), after, "an unchanged set-up sent something");

        // Someone adds a second jump and a jump with another comment, and changes the
        // forward's destination: set-up brings back exactly one jump and the forward.
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-j", "vcld-1"],
        );
        run_ok(
            "iptables-nft",
            &[
                "-t",
                "nat",
                "-A",
                "PREROUTING",
                "-m",
                "comment",
                "--comment",
                "x",
                "-j",
                "vcld-1",
            ],
        );
        run_ok("iptables-nft", &["-t", "nat", "-F", "vcld-1"]);
        run_ok(
            "iptables-nft",
            &[
                "-t",
                "nat",
                "-A",
                "vcld-1",
                "-i",
                "eth1",
                "-p",
                "tcp",
                "-m",
                "tcp",
                "--dport",
                "50443",
                "-j",
                "DNAT",
                "--to-destination",
                "192.0.2.99:1",
            ],
        );
        let r = nathost::setup(&mut s, &res).expect("repair");
        assert_eq!(r.outcome, Outcome::Changed);
        let listed = ipt_nat();
        let jumps = listed.lines().filter(|l| l.ends_with("-j vcld-1")).count();
        assert_eq!(jumps, 1, "{listed}");
        assert!(
            listed.contains(GOLDEN_FORWARD.trim_start_matches("VCL: ")),
            "{listed}"
        );
        assert!(!listed.contains("192.0.2.99"), "{listed}");
        assert_eq!(
            nathost::setup(&mut s, &res).expect("setup").outcome,
            Outcome::Unchanged
        );
    });
}

#[test]
fn forward_add_and_remove_are_idempotent() {
    in_netns(|| {
        let mut s = session();
        let f = forward("tcp/50022=192.0.2.10:22", "ssh");
        // A missing chain fails the forward, as it fails the agent's insert.
        let err = nathost::forward_add(&mut s, Family::Ipv4, "nat", "vcld-9", &f)
            .expect_err("missing chain");
        let mut text = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(e) = source {
            text.push_str(&format!(": {e}"));
            source = e.source();
        }
        assert!(
            text.contains("chain vcld-9 does not exist in table nat"),
            "{text}"
        );
        nathost::setup(&mut s, &Reservation::new("vcld-9")).expect("setup");
        let add = |s: &mut Session| {
            nathost::forward_add(s, Family::Ipv4, "nat", "vcld-9", &f).expect("add")
        };
        assert_eq!(add(&mut s).outcome, Outcome::Changed);
        let after = nft_ruleset();
        assert_eq!(add(&mut s).outcome, Outcome::Unchanged);
        assert_eq!(nft_ruleset(), after);
        let key = ForwardKey::parse_spec("tcp/50022").expect("key");
        // A destination that differs removes nothing.
        let other = "192.0.2.11:22".parse().ok();
        let r = nathost::forward_remove(&mut s, Family::Ipv4, "nat", "vcld-9", &key, other)
            .expect("remove other");
        assert_eq!(r.outcome, Outcome::Absent);
        assert_eq!(nft_ruleset(), after);
        let r = nathost::forward_remove(&mut s, Family::Ipv4, "nat", "vcld-9", &key, None)
            .expect("remove");
        assert_eq!(r.outcome, Outcome::Changed);
        assert!(!ipt_nat().contains("50022"));
        let r = nathost::forward_remove(&mut s, Family::Ipv4, "nat", "vcld-9", &key, None)
            .expect("remove again");
        assert_eq!(r.outcome, Outcome::Absent);
        let r = nathost::forward_remove(&mut s, Family::Ipv4, "nat", "nochain", &key, None)
            .expect("remove from a missing chain");
        assert_eq!(r.outcome, Outcome::Absent);
    });
}

#[test]
fn teardown_removes_references_from_several_chains_in_one_commit() {
    in_netns(|| {
        let mut s = session();
        nathost::setup(&mut s, &vcl_reservation("vcld-7")).expect("setup");
        for c in ["a", "b"] {
            run_ok("iptables-nft", &["-t", "nat", "-N", c]);
            run_ok(
                "iptables-nft",
                &["-t", "nat", "-A", c, "-p", "tcp", "-j", "vcld-7"],
            );
            run_ok(
                "iptables-nft",
                &["-t", "nat", "-A", c, "-p", "udp", "-g", "vcld-7"],
            );
        }
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "OUTPUT", "-j", "vcld-7"],
        );
        run_ok("iptables-nft", &["-t", "nat", "-A", "a", "-j", "RETURN"]);
        let before = s.generation().expect("generation");
        let r = nathost::teardown(&mut s, Family::Ipv4, "nat", "vcld-7", "PREROUTING")
            .expect("teardown");
        assert_eq!(r.outcome, Outcome::Changed);
        // One commit: the generation moved by exactly one (a refused attempt moves nothing).
        assert_eq!(s.generation().expect("generation"), before.wrapping_add(1));
        let listed = ipt_nat();
        assert!(!listed.contains("vcld-7"), "{listed}");
        assert!(listed.contains("-A a -j RETURN"), "{listed}");
        let again = nathost::teardown(&mut s, Family::Ipv4, "nat", "vcld-7", "PREROUTING")
            .expect("teardown again");
        assert_eq!(again.outcome, Outcome::Absent);
        assert_eq!(ipt_nat(), listed);
    });
}

#[test]
fn fresh_setup_and_teardown_take_two_round_trips_each() {
    in_netns(|| {
        let mut s = session();
        // Other reservations around it, as on a NAT host.
        for i in 0..20 {
            nathost::setup(&mut s, &vcl_reservation(&format!("vcld-{i}"))).expect("setup");
        }
        let sent = |s: &mut Session| s.socket().round_trips();
        let t0 = sent(&mut s);
        nathost::setup(&mut s, &vcl_reservation("vcld-500")).expect("setup");
        let t1 = sent(&mut s);
        nathost::teardown(&mut s, Family::Ipv4, "nat", "vcld-500", "PREROUTING").expect("teardown");
        let t2 = sent(&mut s);
        assert_eq!(t1 - t0, 2, "set-up round trips");
        assert_eq!(t2 - t1, 2, "teardown round trips");
        // Asked again for what is there: a read and a look at the one jump, no commit.
        nathost::setup(&mut s, &vcl_reservation("vcld-501")).expect("setup");
        let before = nft_ruleset();
        let t3 = sent(&mut s);
        let r = nathost::setup(&mut s, &vcl_reservation("vcld-501")).expect("again");
        assert_eq!(r.outcome, Outcome::Unchanged);
        assert_eq!(sent(&mut s) - t3, 2, "unchanged set-up round trips");
        assert_eq!(nft_ruleset(), before);
    });
}

/// Teardown deletes a set-up's jump by its likely handle without listing the entry chain;
/// when the rule there is something else, the kernel refuses the whole commit (the chain
/// stays referenced) and the teardown looks for the jump instead: the other rule survives.
#[test]
fn teardown_never_deletes_a_rule_it_only_guessed_was_the_jump() {
    in_netns(|| {
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-p", "tcp", "-j", "RETURN"],
        );
        run_ok("iptables-nft", &["-t", "nat", "-N", "vcld-8"]);
        // The rule created right after the chain is not its jump.
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-p", "udp", "-j", "ACCEPT"],
        );
        let listed = nft_ruleset();
        let handle_of = |needle: &str| -> u64 {
            listed
                .lines()
                .find(|l| l.contains(needle))
                .and_then(|l| l.rsplit("# handle ").next())
                .and_then(|h| h.trim().parse().ok())
                .unwrap_or_else(|| panic!("{needle} not in {listed}"))
        };
        assert_eq!(
            handle_of("udp"),
            handle_of("chain vcld-8") + 1,
            "the guess must land on the ACCEPT rule for this test to mean anything"
        );
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "PREROUTING", "-j", "vcld-8"],
        );
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "vcld-8", "-j", "RETURN"],
        );
        let mut s = session();
        let before = s.generation().expect("generation");
        let r = nathost::teardown(&mut s, Family::Ipv4, "nat", "vcld-8", "PREROUTING")
            .expect("teardown");
        assert_eq!(r.outcome, Outcome::Changed);
        assert_eq!(s.generation().expect("generation"), before.wrapping_add(1));
        assert_eq!(
            ipt_nat(),
            "-P PREROUTING ACCEPT\n-P INPUT ACCEPT\n-P OUTPUT ACCEPT\n-P POSTROUTING ACCEPT\n-A PREROUTING -p tcp -j RETURN\n-A PREROUTING -p udp -j ACCEPT\n"
        );
    });
}

#[test]
fn sweep_removes_unkept_prefixed_chains_with_their_references() {
    in_netns(|| {
        let mut s = session();
        for i in 1..=5 {
            nathost::setup(&mut s, &vcl_reservation(&format!("vcld-{i}"))).expect("setup");
        }
        run_ok("iptables-nft", &["-t", "nat", "-N", "keepme"]);
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "keepme", "-j", "vcld-4"],
        );
        // A swept chain jumping to another swept chain.
        run_ok(
            "iptables-nft",
            &["-t", "nat", "-A", "vcld-5", "-j", "vcld-3"],
        );
        let keep: BTreeSet<String> = ["vcld-1", "vcld-2"].iter().map(|s| s.to_string()).collect();
        let r = nathost::sweep(&mut s, Family::Ipv4, "nat", "vcld-", &keep).expect("sweep");
        assert_eq!(r.outcome, Outcome::Changed);
        assert_eq!(r.removed_chains, ["vcld-3", "vcld-4", "vcld-5"]);
        let listed = ipt_nat();
        for gone in ["vcld-3", "vcld-4", "vcld-5"] {
            assert!(!listed.contains(gone), "{gone} left: {listed}");
        }
        for kept in [
            "-N vcld-1",
            "-N vcld-2",
            "-N keepme",
            "-j vcld-1",
            "-j vcld-2",
        ] {
            assert!(listed.contains(kept), "{kept} missing: {listed}");
        }
        let again = nathost::sweep(&mut s, Family::Ipv4, "nat", "vcld-", &keep).expect("again");
        assert_eq!(again.outcome, Outcome::Unchanged);
        assert_eq!(ipt_nat(), listed);
    });
}

#[test]
fn host_setup_is_idempotent_and_iptables_lists_it() {
    in_netns(|| {
        let mut s = session();
        let host = HostSetup {
            family: Family::Ipv4,
            chain: "vcl-nat_host".into(),
            public_interface: "eth1".into(),
            private_interface: "eth0".into(),
            private_network: "10.0.0.0/20".parse().expect("net"),
            public_address: "203.0.113.1".parse().expect("addr"),
            port_ranges: vec![
                xtnl::model::PortRange::new(5700, 6500).expect("range"),
                xtnl::model::PortRange::new(49152, 65535).expect("range"),
            ],
            comment_prefix: "VCL: ".into(),
        };
        assert_eq!(
            nathost::host_setup(&mut s, &host).expect("host").outcome,
            Outcome::Changed
        );
        let after = nft_ruleset();
        assert_eq!(
            nathost::host_setup(&mut s, &host).expect("again").outcome,
            Outcome::Unchanged
        );
        assert_eq!(nft_ruleset(), after);
        let nat = ipt_nat();
        assert!(nat.contains("-A vcl-nat_host ! -d 10.0.0.0/20 -o eth1 -m comment --comment \"VCL: change IP of outbound eth1 packets to NAT host IP address 203.0.113.1\" -j MASQUERADE"), "{nat}");
        assert!(nat.contains("-A POSTROUTING"), "{nat}");
        let filter = run_ok("iptables-nft", &["-S"]);
        assert!(filter.contains("-m multiport --dports 5700:6500,49152:65535 -m state --state NEW,RELATED,ESTABLISHED -j ACCEPT"), "{filter}");
        assert_eq!(filter.matches("-j vcl-nat_host").count(), 2, "{filter}");
        // iptables-nft can delete what xtnl wrote, by spec.
        run_ok(
            "iptables-nft",
            &[
                "-D",
                "vcl-nat_host",
                "-i",
                "eth0",
                "-o",
                "eth1",
                "-m",
                "comment",
                "--comment",
                "VCL: forward traffic from private eth0 to public eth1",
                "-j",
                "ACCEPT",
            ],
        );
        assert_eq!(
            nathost::host_setup(&mut s, &host).expect("repair").outcome,
            Outcome::Changed
        );
        assert_eq!(nft_ruleset().lines().count(), after.lines().count());
    });
}

#[test]
fn cli_operations_report_their_outcome_and_refuse_bad_input_untouched() {
    in_netns(|| {
        let setup = [
            "reservation",
            "setup",
            "vcld-3",
            "--forward",
            "eth1:tcp/50443=192.0.2.10:3389",
            "--comment-prefix",
            "VCL: ",
        ];
        let o = xtnl(&setup);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        assert!(stdout(&o).starts_with("changed\n"), "{}", stdout(&o));
        let o = xtnl(&setup);
        assert_eq!(stdout(&o), "unchanged\n");
        let before = nft_ruleset();
        for bad in [
            &[
                "reservation",
                "setup",
                "vcld-3",
                "--forward",
                "tcp/0=192.0.2.1:1",
            ][..],
            &[
                "reservation",
                "setup",
                "vcld-3",
                "--forward",
                "tcp/65536=192.0.2.1:1",
            ],
            &[
                "reservation",
                "setup",
                "vcld-3",
                "--forward",
                "sctp/1=192.0.2.1:1",
            ],
            &[
                "reservation",
                "setup",
                "vcld-3",
                "--forward",
                "tcp/22=2001:db8::1:22",
            ],
            &["reservation", "setup", "a-chain-name-longer-than-28-bytes"],
            &["reservation", "setup", "PREROUTING"],
            &["forward", "add", "vcld-3", "tcp/22"],
            &["teardown", "OUTPUT"],
            &["sweep", "--prefix", "", "--keep", ""],
            &["sweep", "--prefix", "vcld-"],
            &["teardown", "vcld-3", "--bogus"],
        ] {
            let o = xtnl(bad);
            assert_eq!(o.status.code(), Some(2), "{bad:?}: {o:?}");
            assert!(!o.stderr.is_empty(), "{bad:?} printed no reason");
        }
        assert_eq!(nft_ruleset(), before, "bad input changed the kernel");
        let o = xtnl(&["teardown", "vcld-3", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["outcome"], "changed");
        assert_eq!(v["removed_chains"][0], "vcld-3");
        let o = xtnl(&["teardown", "vcld-3"]);
        assert_eq!(
            (o.status.code(), stdout(&o)),
            (Some(0), "absent\n".to_string())
        );
        assert!(
            run("iptables-nft", &["-t", "nat", "-S", "vcld-3"])
                .status
                .code()
                != Some(0)
        );
    });
}
