use xtnl::model::Family as Fam;
use xtnl::nft::{Session, TableRef};
use xtnl::nftjson::{self, ApplyNftJson, Listing};
use xtnl_nft_json::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // What a netavark-like agent pipes to `nft -j -f -`, built in Rust.
    let subnets: Set = serde_json::from_str(
        r#"{"family": "inet", "table": "demo", "name": "subnets", "type": "ipv4_addr",
            "flags": ["interval"], "elem": [{"prefix": {"addr": "192.0.2.0", "len": 24}}]}"#,
    )?;
    let doc = Document::new(vec![
        Item::Add(Object::Table(Table::new(Family::Inet, "demo"))),
        Item::Add(Object::Chain(Chain {
            kind: Some("filter".into()),
            hook: Some("input".into()),
            prio: Some(0),
            policy: Some("accept".into()),
            ..Chain::new(Family::Inet, "demo", "input")
        })),
        Item::Add(Object::Set(subnets)),
    ]);
    // One batch: all of it or nothing, with the session's genid retry, policy and audit.
    let mut session = Session::open()?;
    session.apply_nft_json(&doc)?;
    // And back, as `nft -j list table inet demo` prints it.
    let demo = Listing::Table(TableRef::new(Fam::Inet, "demo"));
    let listed = nftjson::list(&mut session, &demo)?;
    println!("{}", nftjson::to_nft_text(&listed)?);
    Ok(())
}
