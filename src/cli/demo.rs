//! `xtnl demo`: the main job in miniature. In a scratch network namespace: set up a NAT
//! reservation (chain, jump from PREROUTING, two DNAT forwards) in one transaction, list it,
//! tear it down in one transaction, and print each step with its time.

use std::io::Write;
use std::time::Instant;
use xtnl::model::{BaseChain, ChainPolicy, ChainType, Hook};

use super::io_error;
use super::listing::print_table;
use xtnl::error::Result;
use xtnl::lock::LockMode;
use xtnl::model::{Action, Family, Interface, L4Proto, NatTarget, PortRange, Rule};
use xtnl::nft::{ChainSpec, TableRef, Transaction};

const RESERVATION: &str = "vcld-5205";

fn forward(public: u16, private: &str, port: u16) -> Result<Rule> {
    Ok(Rule::new()
        .in_interface(Interface::new("eth1")?)
        .protocol(L4Proto::Tcp)
        .dport(PortRange::single(public))
        .counted()
        .action(Action::Dnat(NatTarget {
            addr: private
                .parse()
                .map_err(|_| xtnl::Error::InvalidInput(private.into()))?,
            ports: Some(PortRange::single(port)),
        }))
        .comment(format!(
            "VCL: forward eth1:tcp/{public} --> {private}:{port}"
        )))
}

pub(super) fn run(out: &mut impl Write, ctx: &super::context::Ctx) -> Result<()> {
    let step = |out: &mut dyn Write, t: Instant, what: &str| -> Result<()> {
        writeln!(out, "[{:>9.3} ms] {what}", t.elapsed().as_secs_f64() * 1e3).map_err(io_error)
    };
    writeln!(
        out,
        "xtnl demo: a NAT reservation set up and torn down in a scratch network namespace"
    )
    .map_err(io_error)?;

    let t = Instant::now();
    crate::scratch::enter_new()?;
    crate::scratch::refuse_initial()?;
    step(
        out,
        t,
        "entered a new network namespace (unshare CLONE_NEWNET); the host's ruleset is untouched",
    )?;

    let t = Instant::now();
    // The demo's namespace is private: no other process can contend for its ruleset, so the
    // host's xtables lock is left alone.
    let mut s = ctx.session().lock_mode(LockMode::Never).open()?;
    step(out, t, "opened a NETLINK_NETFILTER session")?;

    let nat = TableRef::new(Family::Ipv4, "nat");
    let chain = nat.chain(RESERVATION);
    let mut tx = Transaction::new();
    tx.want_rule_handles(true)
        .ensure_table(&nat)
        .ensure_chain(
            &nat,
            ChainSpec::base(
                "PREROUTING",
                BaseChain { chain_type: ChainType::Nat, hook: Hook::Prerouting, priority: -100, policy: ChainPolicy::Accept },
            ),
        )
        .ensure_chain(&nat, ChainSpec::regular(RESERVATION))
        .insert_rule(
            &nat.chain("PREROUTING"),
            Rule::new().counted().action(Action::Jump(RESERVATION.into())).comment(format!(
                "VCL: jump from nat table PREROUTING chain to reservation NAT chain {RESERVATION}"
            )),
        )
        .insert_rule(&chain, forward(50443, "192.0.2.3", 3389)?)
        .insert_rule(&chain, forward(50022, "192.0.2.3", 22)?);
    let t = Instant::now();
    let done = s.commit(&tx)?;
    let jump_handle = done.rule_handles.first().map(|(_, h)| *h);
    step(
        out,
        t,
        &format!(
            "set up reservation {RESERVATION}: table, PREROUTING, chain, jump, 2 DNAT forwards: \
             1 atomic transaction of {} operations",
            done.ops
        ),
    )?;

    let t = Instant::now();
    let snap = s.snapshot(&nat)?;
    step(
        out,
        t,
        &format!(
            "listed table {nat} ({} chains, {} rules):",
            snap.chains.len(),
            snap.rules.len()
        ),
    )?;
    print_table(out, &nat, &snap, None)?;

    let jump = match jump_handle {
        Some(h) => h,
        None => snap
            .rules_of("PREROUTING")
            .find(|r| r.rule.jump_target() == Some(RESERVATION))
            .map(|r| r.handle)
            .ok_or_else(|| xtnl::Error::InvalidInput("the jump just added is missing".into()))?,
    };
    let mut tx = Transaction::new();
    tx.delete_rule(&nat.chain("PREROUTING"), jump)
        .flush_chain(&chain)
        .delete_chain(&chain);
    let t = Instant::now();
    s.commit(&tx)?;
    step(
        out,
        t,
        &format!(
            "tore down {RESERVATION}: deleted the jump (handle {jump}), flushed and deleted the chain: 1 atomic transaction"
        ),
    )?;

    let t = Instant::now();
    let snap = s.snapshot(&nat)?;
    step(
        out,
        t,
        &format!(
            "listed table {nat} again ({} chains, {} rules):",
            snap.chains.len(),
            snap.rules.len()
        ),
    )?;
    print_table(out, &nat, &snap, None)?;

    let t = Instant::now();
    s.close_detached()?;
    step(
        out,
        t,
        "closed the session (the kernel's deferred reclaim is left to a detached process)",
    )?;
    Ok(())
}
