use xtnl::model::{Action, Family, Interface, L4Proto, NatTarget, PortRange, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

// Native nf_tables rules: nft reads them, iptables-nft calls the table incompatible.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut s = Session::open()?; // one socket, kept by a long-lived agent
    let nat = TableRef::new(Family::Ipv4, "nat");
    let chain = nat.chain("vcld-5205");
    let mut tx = Transaction::new();
    tx.ensure_iptables_chain(Family::Ipv4, "nat", "PREROUTING") // as iptables-nft makes them
        .ensure_chain(&nat, ChainSpec::regular("vcld-5205"))
        .append_rule(
            &chain,
            Rule::new()
                .in_interface(Interface::new("eth1")?)
                .protocol(L4Proto::Tcp)
                .dport(PortRange::single(50443))
                .action(Action::Dnat(NatTarget {
                    addr: "192.0.2.3".parse()?,
                    ports: Some(PortRange::single(3389)),
                })),
        );
    for op in tx.ops() {
        println!("{op}"); // the plan, before anything is sent
    }
    s.commit(&tx)?;
    s.transact(|r| {
        let pos = r.position_of_index(&chain, 1)?; // what `iptables -I vcld-5205 1` means
        let mut tx = Transaction::new();
        tx.add_rule(&chain, Rule::new().action(Action::Return), pos);
        Ok((tx, ()))
    })?;
    Ok(())
}
