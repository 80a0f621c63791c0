use xtnl::model::{Action, Family, Interface, L4Proto, NatTarget, PortRange, Rule};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

// As root: changes table nat of the network namespace it runs in (try it under `unshare -n`).
// It writes native nf_tables rules: nft reads them, iptables-nft calls the table incompatible
// (for rules iptables reads, use `nathost`, below, or the iptables front, `xtnl::ipt`). Not
// idempotent: each run inserts the jump and the DNAT again (`nathost::setup` is idempotent).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut s = Session::open()?; // one socket, kept by a long-lived agent
    let nat = TableRef::new(Family::Ipv4, "nat");
    let chain = nat.chain("vcld-5205");
    let mut tx = Transaction::new();
    // Table nat and its PREROUTING as iptables-nft makes them, unless they exist: without
    // this, on a fresh host the commit fails naming the missing table.
    tx.ensure_iptables_chain(Family::Ipv4, "nat", "PREROUTING")
        .ensure_chain(&nat, ChainSpec::regular("vcld-5205"))
        .insert_rule(
            &nat.chain("PREROUTING"),
            Rule::new()
                .counted()
                .action(Action::Jump("vcld-5205".into())),
        )
        .insert_rule(
            &chain,
            Rule::new()
                .in_interface(Interface::new("eth1")?)
                .protocol(L4Proto::Tcp)
                .dport(PortRange::single(50443))
                .counted()
                .action(Action::Dnat(NatTarget {
                    addr: "192.0.2.3".parse()?,
                    ports: Some(PortRange::single(3389)),
                }))
                .comment("VCL: forward eth1:tcp/50443 --> 192.0.2.3:3389"),
        );
    s.commit(&tx)?; // one batch: all or nothing

    // A transaction that depends on what is there: plan from reads, re-planned on conflict.
    s.transact(|r| {
        let pos = r.position_of_index(&chain, 2)?; // the meaning of `iptables -I vcld-5205 2`
        let mut tx = Transaction::new();
        tx.add_rule(&chain, Rule::new().action(Action::Return), pos);
        Ok((tx, ()))
    })?;
    Ok(())
}
