use xtnl::model::Family;
use xtnl::nathost::Forward;
use xtnl::nathost::map::{MapLayout, MapOp};
use xtnl::nft::Session;

fn main() -> Result<(), xtnl::Error> {
    let forward = Forward::parse_spec("tcp/50443=192.0.2.3:3389")?;
    let mut h = MapLayout::new(Session::open()?, Family::Ipv4);
    h.run(MapOp::ForwardAdd {
        reservation: "vcld-7".into(),
        forward,
    })?;
    Ok(())
}
