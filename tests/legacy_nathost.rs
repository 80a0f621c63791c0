//! The NAT-host operations on the x_tables backend, against iptables-legacy running the
//! agent's own commands, each side in a network namespace of its own.

mod common;

use common::{in_netns, private_lock_path, run_ok};
use xtnl::legacy::Legacy;
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Forward, Outcome, Reservation};

const JUMP: &str = "VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205";
const FORWARD: &str = "VCL: forward eth1:tcp/50443 --> 192.0.2.10:3389";

fn legacy() -> Legacy {
    Legacy::open(
        Family::Ipv4,
        XtablesLock::new(private_lock_path(), WaitPolicy::Forever),
    )
    .expect("open x_tables")
}

fn reservation() -> Reservation {
    let mut r = Reservation::new("vcld-5205");
    r.jump_comment = Some(r.described_jump("VCL: "));
    let mut f = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389").expect("spec");
    f.comment = Some(f.described("VCL: "));
    r.forwards.push(f);
    r
}

fn nat() -> String {
    run_ok("iptables-legacy", &["-t", "nat", "-S"])
}

#[test]
fn reservation_setup_and_teardown_as_the_agent_does_them_with_iptables_legacy() {
    let agent = in_netns(|| {
        run_ok("iptables-legacy", &["-t", "nat", "-N", "vcld-5205"]);
        run_ok(
            "iptables-legacy",
            &[
                "-t",
                "nat",
                "-I",
                "PREROUTING",
                "-j",
                "vcld-5205",
                "-m",
                "comment",
                "--comment",
                JUMP,
            ],
        );
        run_ok(
            "iptables-legacy",
            &[
                "-t",
                "nat",
                "-I",
                "vcld-5205",
                "-i",
                "eth1",
                "-p",
                "tcp",
                "-m",
                "comment",
                "--comment",
                FORWARD,
                "-m",
                "tcp",
                "--dport",
                "50443",
                "-j",
                "DNAT",
                "--to-destination",
                "192.0.2.10:3389",
            ],
        );
        let listed = nat();
        // xtnl finds the agent's reservation set up already.
        let r = nathost::setup(&mut legacy(), &reservation()).expect("setup");
        assert_eq!(r.outcome, Outcome::Unchanged, "{:?}", r.changes);
        assert_eq!(nat(), listed);
        listed
    });
    let ours = in_netns(|| {
        let mut l = legacy();
        let r = nathost::setup(&mut l, &reservation()).expect("setup");
        assert_eq!(r.outcome, Outcome::Changed);
        let listed = nat();
        // Again: nothing to do.
        let again = nathost::setup(&mut l, &reservation()).expect("setup again");
        assert_eq!(again.outcome, Outcome::Unchanged, "{:?}", again.changes);
        // The agent's check by spec finds xtnl's rule.
        run_ok(
            "iptables-legacy",
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
                JUMP,
            ],
        );
        let t = nathost::teardown(&mut l, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")
            .expect("teardown");
        assert_eq!(t.outcome, Outcome::Changed);
        let after = nat();
        assert!(!after.contains("vcld-5205"), "{after}");
        let t = nathost::teardown(&mut l, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")
            .expect("teardown again");
        assert_eq!(t.outcome, Outcome::Absent);
        listed
    });
    assert_eq!(ours, agent);
}
