//! A listing: a few rules put in place with the iptables front (`iptables -t nat -A ...`
//! command lines, parsed and executed through the library), then read back three ways: the
//! tables and chains, each chain's rules in the model (iptables-nft's x_tables matches and
//! targets, which the model does not express, print as `<not understood: ...>` and flag the
//! rule), and iptables-save text, which says everything.
//!
//! Run as root: `cargo run --example listing`. It creates a network namespace of its own first
//! and changes netfilter only there (never the host's ruleset).

#[path = "../src/scratch.rs"]
mod scratch;

use xtnl::ipt::{exec, listing, parse};
use xtnl::model::Family;
use xtnl::nft::{Session, TableRef};
use xtnl::seam::ListTables;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Before anything else: this thread moves to a fresh network namespace.
    scratch::enter_scratch()?;

    let mut session = Session::open()?;
    for line in [
        "-t nat -N vcld-5205",
        "-t nat -A PREROUTING -m comment --comment \"VCL: jump\" -j vcld-5205",
        "-t nat -A vcld-5205 -i eth1 -p tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:3389",
    ] {
        let words = parse::split_words(line)?;
        let invocation = parse::parse(&words, Family::Ipv4)?;
        exec::execute(&mut session, &invocation)?;
    }

    for table in session.list_tables()? {
        println!("table {}", table.table);
    }
    let nat = TableRef::new(Family::Ipv4, "nat");
    for chain in session.list_chains(&nat)? {
        println!("  chain {}", chain.chain);
        for listed in session.list_rules(&chain.chain)? {
            let flag = if listed.rule.is_expressible() {
                ""
            } else {
                " (not expressible in the model: kept opaque)"
            };
            println!("    [{}] {}{flag}", listed.handle, listed.rule);
        }
    }
    // iptables-save's text, from the listing every backend offers.
    let chains = session.listings(Family::Ipv4, "nat", None)?;
    print!("{}", listing::render_save_counters(&chains, false));
    Ok(())
}
