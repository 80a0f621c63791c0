//! A transaction built as a value, its plan printed, then committed as one batch (all or
//! nothing), and a second transaction planned from what is there (re-planned by the session
//! if the ruleset changes under it).
//!
//! Run as root: `cargo run --example transaction_plan`. It creates a network namespace of its
//! own first and changes netfilter only there (never the host's ruleset).

#[path = "../src/scratch.rs"]
mod scratch;

use xtnl::model::{
    Action, BaseChain, ChainPolicy, ChainType, Family, Hook, L4Proto, PortRange, Rule,
};
use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Before anything else: this thread moves to a fresh network namespace.
    scratch::enter_scratch()?;

    let table = TableRef::new(Family::Ipv4, "example");
    let input = table.chain("input");
    let mut tx = Transaction::new();
    tx.ensure_table(&table)
        .ensure_chain(
            &table,
            ChainSpec::base(
                "input",
                BaseChain {
                    chain_type: ChainType::Filter,
                    hook: Hook::Input,
                    priority: 0,
                    policy: ChainPolicy::Accept,
                },
            ),
        )
        .append_rule(
            &input,
            Rule::new()
                .protocol(L4Proto::Tcp)
                .dport(PortRange::single(22))
                .counted()
                .action(Action::Accept)
                .comment("ssh"),
        )
        .append_rule(
            &input,
            Rule::new()
                .protocol(L4Proto::Tcp)
                .dport(PortRange::single(23))
                .action(Action::Drop),
        );

    println!("plan ({} operations):", tx.len());
    for (i, op) in tx.ops().iter().enumerate() {
        println!("  {i}: {op}");
    }
    let mut session = Session::open()?;
    let done = session.commit(&tx)?;
    println!("committed {} operations in one batch", done.ops);

    // Planned from a read: insert before the second rule (what `iptables -I input 2` means).
    let done = session.transact(|r| {
        let pos = r.position_of_index(&input, 2)?;
        let mut tx = Transaction::new();
        tx.add_rule(&input, Rule::new().action(Action::Return), pos);
        Ok((tx, ()))
    })?;
    println!(
        "inserted at position 2 (plan ran {} time(s))",
        done.attempts
    );

    for listed in session.list_rules(&input)? {
        println!("  handle {}: {}", listed.handle, listed.rule);
    }
    Ok(())
}
