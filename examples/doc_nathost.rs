use xtnl::model::Family;
use xtnl::nathost::{self, Forward, Outcome, Reservation};

fn main() -> Result<(), xtnl::Error> {
    let mut s = xtnl::nft::Session::open()?;
    let mut res = Reservation::new("vcld-5205"); // table nat, entered from PREROUTING
    res.jump_comment = Some(res.described_jump("VCL: "));
    let mut f = Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389")?;
    f.comment = Some(f.described("VCL: "));
    res.forwards.push(f);
    assert_eq!(nathost::setup(&mut s, &res)?.outcome, Outcome::Changed);
    assert_eq!(nathost::setup(&mut s, &res)?.outcome, Outcome::Unchanged); // nothing sent
    nathost::teardown(&mut s, Family::Ipv4, "nat", "vcld-5205", "PREROUTING")?;
    Ok(())
}
