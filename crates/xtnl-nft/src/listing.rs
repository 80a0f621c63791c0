#![deny(missing_docs)]

use crate::model::{BaseChain, ChainPolicy, ChainType, Counters, Hook};
use crate::model::{Family, Rule};
use crate::wire::nftables::{ChainRepr, RuleRepr, TableRepr};

use super::codec;
use super::refs::{ChainRef, TableRef};

/// Elements of the named sets, by set name (what a listing needs to print set lookups).
pub type SetElements = std::collections::HashMap<String, Vec<crate::wire::nftables::SetElem>>;

/// A table as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The table.
    pub table: TableRef,
    /// Its handle, when the kernel reported one.
    pub handle: Option<u64>,
    /// `NFTA_TABLE_FLAGS` (dormant, owner, ...).
    pub flags: u32,
}

impl Table {
    pub(crate) fn from_repr(r: TableRepr) -> Option<Table> {
        Some(Table {
            table: TableRef::new(Family::from_nfproto(r.family)?, r.name),
            handle: r.handle,
            flags: r.flags.unwrap_or(0),
        })
    }
}

/// A chain as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The chain.
    pub chain: ChainRef,
    /// Its handle, when the kernel reported one.
    pub handle: Option<u64>,
    /// Present for base chains whose hook, type and policy xtnl knows.
    pub base: Option<BaseChain>,
    /// True for a base chain of a kind xtnl does not model (netdev hooks, ...).
    pub base_unknown: bool,
    /// The kernel's use count: rules in the chain plus jumps and gotos to it. A chain can
    /// be deleted only when it is zero.
    pub use_count: u32,
    /// A base chain's policy counters, when the kernel keeps them (`NFTA_CHAIN_COUNTERS`:
    /// only for a chain created or updated with counters, as iptables-nft's policies are).
    pub counters: Option<Counters>,
}

impl Chain {
    pub(crate) fn from_repr(r: ChainRepr) -> Option<Chain> {
        let family = Family::from_nfproto(r.family)?;
        let (base, base_unknown) = match &r.hook {
            None => (None, false),
            Some(h) => {
                let b = (|| {
                    Some(BaseChain {
                        chain_type: ChainType::parse(r.chain_type.as_deref()?)?,
                        hook: Hook::from_number(h.hooknum)?,
                        priority: h.priority,
                        policy: ChainPolicy::from_verdict(r.policy?)?,
                    })
                })();
                let unknown = b.is_none();
                (b, unknown)
            }
        };
        Some(Chain {
            chain: TableRef::new(family, r.table).chain(r.name),
            handle: r.handle,
            base,
            base_unknown,
            use_count: r.use_count.unwrap_or(0),
            counters: r.counters.map(|c| Counters {
                packets: c.packets,
                bytes: c.bytes,
            }),
        })
    }
}

/// A rule as listed: where it is, its handle, and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedRule {
    /// The chain it is in.
    pub chain: ChainRef,
    /// Its handle (what deletes and replaces name it by).
    pub handle: u64,
    /// The rule, decoded (with [`crate::model::Opaque`] parts if not fully understood).
    pub rule: Rule,
}

impl ListedRule {
    pub(crate) fn from_repr(r: RuleRepr, sets: &SetElements) -> Option<ListedRule> {
        let family = Family::from_nfproto(r.family)?;
        let rule = codec::decode_with_sets(family, &r.exprs, r.userdata.as_deref(), &|n| {
            sets.get(n).cloned()
        });
        Some(ListedRule {
            chain: TableRef::new(family, r.table).chain(r.chain),
            handle: r.handle?,
            rule,
        })
    }
}

/// A rule as the kernel reported it, undecoded: for front ends that decode their own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRule {
    /// The chain it is in.
    pub chain: ChainRef,
    /// Its handle.
    pub handle: u64,
    /// Its expressions as the kernel reported them.
    pub exprs: Vec<crate::wire::expr::Expr>,
    /// Its userdata (comment), if any.
    pub userdata: Option<Vec<u8>>,
    /// Elements of the anonymous sets the rule looks up, by set name.
    pub sets: SetElements,
}

impl RawRule {
    pub(crate) fn from_repr(r: RuleRepr, sets: &SetElements) -> Option<RawRule> {
        let family = Family::from_nfproto(r.family)?;
        let used = r
            .exprs
            .iter()
            .filter_map(|e| match e {
                crate::wire::expr::Expr::Lookup(l) => {
                    sets.get(&l.set).map(|v| (l.set.clone(), v.clone()))
                }
                _ => None,
            })
            .collect();
        Some(RawRule {
            chain: TableRef::new(family, r.table).chain(r.chain),
            handle: r.handle?,
            exprs: r.exprs,
            userdata: r.userdata,
            sets: used,
        })
    }

    /// Decodes the rule into the model, set lookups included.
    pub fn decode(&self) -> crate::model::Rule {
        codec::decode_with_sets(
            self.chain.table.family,
            &self.exprs,
            self.userdata.as_deref(),
            &|n| self.sets.get(n).cloned(),
        )
    }
}

/// A table's chains and rules, read at one generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSnapshot {
    /// The ruleset generation the snapshot was read at.
    pub generation: u32,
    /// The table's chains, in the kernel's order.
    pub chains: Vec<Chain>,
    /// In chain order as the kernel lists them, each chain's rules in rule order.
    pub rules: Vec<ListedRule>,
}

impl TableSnapshot {
    /// The rules of the chain named `chain`, in order.
    pub fn rules_of<'a>(&'a self, chain: &'a str) -> impl Iterator<Item = &'a ListedRule> + 'a {
        self.rules.iter().filter(move |r| r.chain.name == chain)
    }
}
