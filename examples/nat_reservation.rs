//! A NAT reservation through the library, as a NAT-host agent makes one: chain `vcld-5205` in
//! table nat, a jump to it from PREROUTING and a DNAT forward, all in one atomic transaction;
//! then set up again (unchanged: nothing sent) and torn down.
//!
//! Run as root: `cargo run --example nat_reservation`. It creates a network namespace of its
//! own first and changes netfilter only there (never the host's ruleset).

#[path = "../src/scratch.rs"]
mod scratch;

use xtnl::model::Family;
use xtnl::nathost::{self, Forward, Outcome, Reservation};
use xtnl::nft::Session;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Before anything else: this thread moves to a fresh network namespace.
    scratch::enter_scratch()?;

    let mut session = Session::open()?;
    let mut res = Reservation::new("vcld-5205"); // table nat, entered from PREROUTING
    res.jump_comment = Some(res.described_jump("VCL: "));
    let mut forward = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389")?;
    forward.comment = Some(forward.described("VCL: "));
    res.forwards.push(forward);

    let report = nathost::setup(&mut session, &res)?;
    println!(
        "set up: {:?}, {} change(s)",
        report.outcome,
        report.changes.len()
    );
    assert_eq!(report.outcome, Outcome::Changed);

    // Idempotent: the same set-up again finds everything in place and sends nothing.
    let again = nathost::setup(&mut session, &res)?;
    println!("set up again: {:?}", again.outcome);

    // What iptables-nft-save would print: xtnl writes iptables-nft's own encoding.
    let chains = xtnl::seam::ListTables::listings(&mut session, Family::Ipv4, "nat", None)?;
    print!(
        "{}",
        xtnl::ipt::listing::render_save_counters(&chains, false)
    );

    let gone = nathost::teardown(&mut session, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")?;
    println!(
        "torn down: {:?}, removed {:?}",
        gone.outcome, gone.removed_chains
    );
    Ok(())
}
