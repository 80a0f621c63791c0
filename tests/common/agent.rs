//! The VCL agent's reservation `vcld-5205`, as the agent's own iptables commands make it (short
//! options, as iptables.pm writes them) and as the library's NAT-host operations describe it:
//! one fixture for the tests that compare the two on either backend.

use super::run_ok;
use xtnl::nathost::{Forward, Reservation};

/// The reservation's chain in table nat.
pub const CHAIN: &str = "vcld-5205";
/// The comment of the jump from PREROUTING, in the agent's words.
pub const JUMP: &str =
    "VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205";
/// The comment of the reservation's one forward, in the agent's words.
pub const FORWARD: &str = "VCL: forward eth1:tcp/50443 --> 192.0.2.10:3389";

/// The reservation as the library describes it (its comments made in the agent's words).
pub fn reservation() -> Reservation {
    let mut r = Reservation::new(CHAIN);
    r.jump_comment = Some(r.described_jump("VCL: "));
    let mut f = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389").expect("spec");
    f.comment = Some(f.described("VCL: "));
    r.forwards.push(f);
    r
}

/// The jump rule's words after `-t nat -I|-C|-D PREROUTING`.
const JUMP_SPEC: [&str; 6] = ["-j", CHAIN, "-m", "comment", "--comment", JUMP];

/// The agent's set-up through `tool` (`iptables-nft`, `iptables-legacy`, or xtnl under
/// either name): the chain, the jump to it, the forward's DNAT.
pub fn setup_with(tool: &str) {
    run_ok(tool, &["-t", "nat", "-N", CHAIN]);
    let mut jump = vec!["-t", "nat", "-I", "PREROUTING"];
    jump.extend(JUMP_SPEC);
    run_ok(tool, &jump);
    run_ok(
        tool,
        &[
            "-t",
            "nat",
            "-I",
            CHAIN,
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
}

/// The agent's check by spec (`-C PREROUTING`) of the jump through `tool`; panics unless
/// the rule is found.
pub fn check_jump_with(tool: &str) {
    let mut check = vec!["-t", "nat", "-C", "PREROUTING"];
    check.extend(JUMP_SPEC);
    run_ok(tool, &check);
}
