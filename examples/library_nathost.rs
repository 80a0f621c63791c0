use xtnl::nathost::{self, Forward, Outcome, Reservation};

// As root: changes table nat of the network namespace it runs in (try it under `unshare -n`).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut session = xtnl::nft::Session::open()?;
    let mut res = Reservation::new("vcld-5205"); // nat, entered from PREROUTING
    res.jump_comment = Some(res.described_jump("VCL: "));
    let mut f = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389")?;
    f.comment = Some(f.described("VCL: "));
    res.forwards.push(f);
    assert_eq!(
        nathost::setup(&mut session, &res)?.outcome,
        Outcome::Changed
    );
    assert_eq!(
        nathost::setup(&mut session, &res)?.outcome,
        Outcome::Unchanged
    ); // sends nothing
    nathost::teardown(
        &mut session,
        xtnl::model::Family::Ipv4,
        "nat",
        "vcld-5205",
        "PREROUTING",
    )?;
    Ok(())
}
