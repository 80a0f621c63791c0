//! Migration between the chain layout (a chain per reservation in iptables' nat table, as
//! the agent's `iptables` commands make it) and the map layout, each way in one atomic
//! nf_tables transaction: the forwards appear in their new place and vanish from the old
//! one in the same commit, so no packet sees neither or both. Connections already
//! forwarded keep their conntrack NAT binding either way; a new connection meets the new
//! layout.
//!
//! Only what the other layout can say is moved: a reservation chain holding anything but
//! forwards (`-i IF -p tcp|udp --dport N -j DNAT --to-destination A:P`, with a comment or
//! not) is refused by name and nothing changes. iptables-legacy's tables cannot join an
//! nf_tables transaction, so a host on the legacy backend is refused.

use crate::model::ChainPolicy;
use std::collections::BTreeMap;

use super::{FWD_ANY_MAP, FWD_MAP, MapOp, decode_element, layout_present, table};
use crate::error::{Error, Result};
use crate::ipt::{IptMatch, IptTarget, tables};
use crate::model::Family;
use crate::nathost::spec::{Forward, ForwardKey, jump_rule};
use crate::nft::set::SetOp;
use crate::nft::{ChainSpec, Op, RulePosition, Session, TableRef, Transaction};

/// Where the chain layout lives and how its reservations are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainLayout {
    /// IPv4 or IPv6: which family's tables are migrated.
    pub family: Family,
    /// iptables' table (`nat`).
    pub table: String,
    /// The chain that jumps to the reservation chains (`PREROUTING`).
    pub entry: String,
    /// Reservation chains are named `PREFIX...` (`vcld-`).
    pub prefix: String,
    /// Going back to chains: the prefix of the jump comments (`VCL: `); none without.
    pub comment_prefix: Option<String>,
}

impl ChainLayout {
    /// The agent's: `nat`, `PREROUTING`, `vcld-`, comments prefixed `VCL: `.
    pub fn agent(family: Family) -> Self {
        ChainLayout {
            family,
            table: "nat".into(),
            entry: "PREROUTING".into(),
            prefix: "vcld-".into(),
            comment_prefix: Some("VCL: ".into()),
        }
    }
    fn validate(&self) -> Result<()> {
        super::super::check_chain_name(&self.table, &self.entry)?;
        if self.prefix.is_empty() {
            return Err(Error::InvalidInput(
                "migration needs a reservation-chain prefix".into(),
            ));
        }
        Ok(())
    }
}

/// What a migration moved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Migrated {
    /// Reservations moved.
    pub reservations: usize,
    /// Forwards moved.
    pub forwards: usize,
    /// Operations committed (0: nothing to move).
    pub ops: usize,
    /// How many times the migration was planned (more than once when the ruleset changed under
    /// it).
    pub attempts: u32,
}

/// The forward a chain-layout rule says, if it says exactly a forward.
fn forward_of(family: Family, rule: &crate::ipt::IptRule) -> Option<Forward> {
    let key = ForwardKey::of_rule(rule)?;
    let Some(IptTarget::Dnat(range)) = &rule.target else {
        return None;
    };
    let addr = range.addr_min?;
    if range.addr_max.is_some_and(|m| m != addr) {
        return None;
    }
    let ports = range.ports.as_ref().filter(|p| p.is_single())?;
    let comment = rule.matches.iter().find_map(|m| match m {
        IptMatch::Comment(c) => Some(c.clone()),
        _ => None,
    });
    let f = Forward {
        protocol: key.protocol,
        public_port: key.public_port,
        to: std::net::SocketAddr::new(addr, ports.first()),
        in_interface: key.in_interface,
        comment,
    };
    // Only if writing the forward back gives this very rule (nothing else is in it).
    (f.rule(family).ok()?.without_counters() == rule.without_counters()).then_some(f)
}

/// Moves every reservation chain `PREFIX*` of the table into the map layout: the forwards
/// become elements (membership and comments kept), the jumps and chains go.
pub fn chains_to_map(session: &mut Session, from: &ChainLayout) -> Result<Migrated> {
    from.validate()?;
    let family = from.family;
    let nat = TableRef::new(family, from.table.clone());
    let c = session.transact(|r| {
        let mut tx = Transaction::new();
        if !r.table_exists(&nat)? {
            return Ok((tx, (0, 0)));
        }
        let chains: Vec<String> = r
            .chains(&nat)?
            .into_iter()
            .map(|c| c.chain.name)
            .filter(|n| n.starts_with(&from.prefix))
            .collect();
        if chains.is_empty() {
            return Ok((tx, (0, 0)));
        }
        let rules = r.raw_rules(&nat, None)?;
        let mut by_chain: BTreeMap<&str, Vec<Forward>> =
            chains.iter().map(|c| (c.as_str(), Vec::new())).collect();
        let mut jumps = Vec::new();
        for raw in &rules {
            let rule = crate::ipt::compat::decode(&nat, raw);
            if let Some(target) = rule.jump_target()
                && by_chain.contains_key(target)
            {
                if by_chain.contains_key(raw.chain.name.as_str()) {
                    return Err(Error::InvalidInput(format!(
                        "reservation chain {} jumps to {target}: only forwards can move to the map layout",
                        raw.chain.name
                    )));
                }
                jumps.push((raw.chain.clone(), raw.handle));
                continue;
            }
            let Some(forwards) = by_chain.get_mut(raw.chain.name.as_str()) else {
                continue;
            };
            let f = forward_of(family, &rule).ok_or_else(|| {
                Error::InvalidInput(format!(
                    "rule {} of reservation chain {} is not a plain forward ({}); nothing was \
                     migrated",
                    raw.handle,
                    raw.chain.name,
                    crate::ipt::print::append_line(&raw.chain.name, &rule, false)
                ))
            })?;
            forwards.push(f);
        }
        let ops: Vec<MapOp> = by_chain
            .iter()
            .map(|(c, f)| MapOp::Setup {
                reservation: (*c).to_owned(),
                forwards: f.clone(),
            })
            .collect();
        for op in &ops {
            op.validate(family)?;
        }
        let (map_tx, _) = super::transact_ops(r, family, &ops)?;
        for op in map_tx.ops() {
            tx.push(op.clone());
        }
        for (chain, handle) in jumps {
            tx.delete_rule(&chain, handle);
        }
        for c in by_chain.keys() {
            let cref = nat.chain(*c);
            tx.flush_chain(&cref).delete_chain(&cref);
        }
        let n: usize = by_chain.values().map(Vec::len).sum();
        Ok((tx, (by_chain.len(), n)))
    })?;
    Ok(Migrated {
        reservations: c.value.0,
        forwards: c.value.1,
        ops: c.ops,
        attempts: c.attempts,
    })
}

/// Moves every forward of the map layout back into reservation chains `RESERVATION` of the
/// table, each with one jump from the entry chain, as the agent writes them. The layout's
/// table stays (with its host masquerade); its maps are left empty.
pub fn map_to_chains(session: &mut Session, to: &ChainLayout) -> Result<Migrated> {
    to.validate()?;
    let family = to.family;
    let nat = TableRef::new(family, to.table.clone());
    let entry = tables::builtin(&to.table, &to.entry);
    let c = session.transact(|r| {
        let mut tx = Transaction::new();
        if !layout_present(r, family, false)? {
            return Ok((tx, (0, 0)));
        }
        let mut by_res: BTreeMap<String, Vec<Forward>> = BTreeMap::new();
        let mut doomed: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
        for map in [FWD_MAP, FWD_ANY_MAP] {
            for e in r.elements(&table(family), map)? {
                let f = decode_element(map, &e).ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "an element of map {map} was not written by xtnl ({e}); nothing was migrated"
                    ))
                })?;
                if !f.reservation.starts_with(&to.prefix) {
                    continue;
                }
                doomed.entry(map).or_default().push(e.key.clone());
                by_res.entry(f.reservation).or_default().push(f.forward);
            }
        }
        if by_res.is_empty() {
            return Ok((tx, (0, 0)));
        }
        tx.ensure_table(&nat);
        if let Some(b) = entry {
            tx.ensure_chain(&nat, ChainSpec::base(to.entry.clone(), b.base(ChainPolicy::Accept)));
        }
        let entry_chain = nat.chain(to.entry.clone());
        for (res, forwards) in &by_res {
            let chain = nat.chain(res.clone());
            tx.create_chain(&nat, ChainSpec::regular(res.clone()));
            for f in forwards {
                let rule = crate::ipt::compat::encode(&nat, &f.rule(family)?)?;
                tx.push(Op::AddEncodedRule {
                    chain: chain.clone(),
                    rule,
                    position: RulePosition::Append,
                });
            }
            let comment = to.comment_prefix.as_ref().map(|p| {
                format!(
                    "{p}jump from {} table {} chain to reservation NAT chain {res}",
                    to.table, to.entry
                )
            });
            let jump = jump_rule(family, &to.table, res, comment.as_deref())?;
            tx.push(Op::AddEncodedRule {
                chain: entry_chain.clone(),
                rule: crate::ipt::compat::encode(&nat, &jump)?,
                position: RulePosition::Append,
            });
        }
        for (map, keys) in doomed {
            tx.set_op(SetOp::DeleteElements {
                table: table(family),
                set: map.into(),
                keys,
            });
        }
        let n = by_res.values().map(Vec::len).sum();
        Ok((tx, (by_res.len(), n)))
    })?;
    Ok(Migrated {
        reservations: c.value.0,
        forwards: c.value.1,
        ops: c.ops,
        attempts: c.attempts,
    })
}
