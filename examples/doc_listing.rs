use xtnl::model::Family;
use xtnl::nft::{Session, TableRef};
use xtnl::seam::ListTables;

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
    // iptables-save's text, through the listing every backend offers (xtnl::seam::ListTables).
    let chains = s.listings(Family::Ipv4, "nat", None)?;
    print!(
        "{}",
        xtnl::ipt::listing::render_save_counters(&chains, false)
    );
    Ok(())
}
