//! The names a transaction and a listing use for objects: tables, chains, where a rule goes,
//! and a rule already encoded by a front end with an encoding of its own.

#![deny(missing_docs)]

use std::fmt;

use crate::model::{BaseChain, Counters, Family};

use super::codec;

/// A table: family and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableRef {
    /// Its family.
    pub family: Family,
    /// Its name.
    pub name: String,
}

impl TableRef {
    /// The table `name` of `family`.
    pub fn new(family: Family, name: impl Into<String>) -> Self {
        TableRef {
            family,
            name: name.into(),
        }
    }
    /// The chain `name` of this table.
    pub fn chain(&self, name: impl Into<String>) -> ChainRef {
        ChainRef {
            table: self.clone(),
            name: name.into(),
        }
    }
}

impl fmt::Display for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.family, self.name)
    }
}

/// A chain in a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChainRef {
    /// Its table.
    pub table: TableRef,
    /// Its name.
    pub name: String,
}

impl fmt::Display for ChainRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.table, self.name)
    }
}

/// A chain to create: regular (`base: None`) or base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainSpec {
    /// Its name.
    pub name: String,
    /// `Some` for a base chain: its type, hook, priority and policy.
    pub base: Option<BaseChain>,
    /// A base chain's policy counters to set (`NFTA_CHAIN_COUNTERS`): iptables-nft sends
    /// them with every policy it sets (zero unless `restore -c` gave them), which also makes
    /// the kernel count packets that meet the policy. `None`: sent without, so the counts
    /// stay as they are (a chain created so counts nothing).
    pub counters: Option<Counters>,
}

impl ChainSpec {
    /// A regular chain (only reached by jumps and gotos).
    pub fn regular(name: impl Into<String>) -> Self {
        ChainSpec {
            name: name.into(),
            base: None,
            counters: None,
        }
    }
    /// A base chain, attached to a hook.
    pub fn base(name: impl Into<String>, base: BaseChain) -> Self {
        ChainSpec {
            name: name.into(),
            base: Some(base),
            counters: None,
        }
    }
    /// The same chain, setting its policy counters (base chains only; see
    /// [`ChainSpec::counters`]).
    pub fn with_counters(mut self, counters: Counters) -> Self {
        self.counters = Some(counters);
        self
    }
}

/// Where a new rule goes in its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulePosition {
    /// At the end (`nft add rule`, `iptables -A`).
    Append,
    /// At the head (`nft insert rule`, `iptables -I`).
    Head,
    /// Just before the rule with this handle.
    Before(u64),
    /// Just after the rule with this handle.
    After(u64),
}

/// A rule already encoded as expressions, for front ends with an encoding of their own
/// (the iptables-nft encoding in iptables' tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedRule {
    /// The expressions.
    pub exprs: Vec<crate::wire::expr::Expr>,
    /// The userdata (a comment TLV), if any.
    pub userdata: Option<Vec<u8>>,
    /// `NFTA_RULE_COMPAT`: the protocol x_tables extensions check against.
    pub compat: Option<crate::wire::nftables::RuleCompat>,
    /// Anonymous sets the rule looks up, created in the same batch just before it.
    pub sets: Vec<codec::AnonSet>,
}
