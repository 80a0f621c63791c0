use xtnl::nathost::{self, Forward, Reservation};
use xtnl::nft::Session;

// As root: changes table nat of the network namespace it runs in (try it under `unshare -n`).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut s = Session::open()?; // one netlink socket, kept by a long-lived agent
    let mut res = Reservation::new("vcld-5205"); // chain vcld-5205, jumped to from nat PREROUTING
    res.forwards
        .push(Forward::parse_spec("tcp/50443=192.0.2.3:3389")?); // DNAT
    // Creates what is missing (table, base chain, chain, jump, DNAT) as iptables-nft encodes it,
    // in one transaction: all of it or none. Idempotent: a second run finds it all, sends nothing.
    let report = nathost::setup(&mut s, &res)?;
    println!("{:?}, {} change(s)", report.outcome, report.changes.len());
    Ok(())
}
