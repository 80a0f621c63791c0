use xtnl::model::Family;
use xtnl::nft::{Session, TableRef};

fn main() -> Result<(), xtnl::Error> {
    let mut s = Session::open()?;
    let nat = TableRef::new(Family::Ipv4, "nat");
    for chain in s.list_chains(&nat)? {
        for listed in s.list_rules(&chain.chain)? {
            let exact = listed.rule.is_expressible();
            println!(
                "{} [{}] {} (exact: {exact})",
                chain.chain, listed.handle, listed.rule
            );
        }
    }
    print!("{}", xtnl::ipt::listing::save_table(&mut s, &nat)?);
    Ok(())
}
