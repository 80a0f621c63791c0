//! iptables' tables and their built-in chains, as iptables-nft creates them in nf_tables.

#![deny(missing_docs)]

use crate::model::{BaseChain, ChainPolicy, ChainType, Hook};

/// A built-in chain: name, hook, priority and chain type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Its name (`PREROUTING`, ...).
    pub name: &'static str,
    /// Its hook.
    pub hook: Hook,
    /// Its priority, as iptables-nft registers it.
    pub priority: i32,
    /// Its chain type.
    pub chain_type: ChainType,
}

impl Builtin {
    /// Its base-chain description with `policy`.
    pub fn base(&self, policy: ChainPolicy) -> BaseChain {
        BaseChain {
            chain_type: self.chain_type,
            hook: self.hook,
            priority: self.priority,
            policy,
        }
    }
}

const fn b(name: &'static str, hook: Hook, priority: i32, chain_type: ChainType) -> Builtin {
    Builtin {
        name,
        hook,
        priority,
        chain_type,
    }
}

// NF_IP_PRI_RAW -300, MANGLE -150, NAT_DST -100, FILTER 0, SECURITY 50, NAT_SRC 100.
const FILTER: [Builtin; 3] = [
    b("INPUT", Hook::Input, 0, ChainType::Filter),
    b("FORWARD", Hook::Forward, 0, ChainType::Filter),
    b("OUTPUT", Hook::Output, 0, ChainType::Filter),
];
const NAT: [Builtin; 4] = [
    b("PREROUTING", Hook::Prerouting, -100, ChainType::Nat),
    b("INPUT", Hook::Input, 100, ChainType::Nat),
    b("OUTPUT", Hook::Output, -100, ChainType::Nat),
    b("POSTROUTING", Hook::Postrouting, 100, ChainType::Nat),
];
const MANGLE: [Builtin; 5] = [
    b("PREROUTING", Hook::Prerouting, -150, ChainType::Filter),
    b("INPUT", Hook::Input, -150, ChainType::Filter),
    b("FORWARD", Hook::Forward, -150, ChainType::Filter),
    b("OUTPUT", Hook::Output, -150, ChainType::Route),
    b("POSTROUTING", Hook::Postrouting, -150, ChainType::Filter),
];
const RAW: [Builtin; 2] = [
    b("PREROUTING", Hook::Prerouting, -300, ChainType::Filter),
    b("OUTPUT", Hook::Output, -300, ChainType::Filter),
];
// iptables-nft 1.8.9 writes security's chains at 150, not NF_IP_PRI_SECURITY (50), and
// calls a security table with other priorities incompatible (its nft.c, "150, /*
// NF_IP_PRI_SECURITY */"); found by the CONNSECMARK corpus specs.
const SECURITY: [Builtin; 3] = [
    b("INPUT", Hook::Input, 150, ChainType::Filter),
    b("FORWARD", Hook::Forward, 150, ChainType::Filter),
    b("OUTPUT", Hook::Output, 150, ChainType::Filter),
];

/// The built-in chains of one of iptables' tables, in the order `iptables -S` prints them;
/// `None` for a table name iptables does not know.
pub fn builtins(table: &str) -> Option<&'static [Builtin]> {
    Some(match table {
        "filter" => &FILTER,
        "nat" => &NAT,
        "mangle" => &MANGLE,
        "raw" => &RAW,
        "security" => &SECURITY,
        _ => return None,
    })
}

/// The built-in chain `chain` of iptables' table `table`.
pub fn builtin(table: &str, chain: &str) -> Option<Builtin> {
    builtins(table)?.iter().find(|b| b.name == chain).copied()
}

/// Whether `table` is one of iptables' own (where rules use iptables-nft's encoding).
pub fn is_iptables_table(table: &str) -> bool {
    builtins(table).is_some()
}
