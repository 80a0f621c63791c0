//! Chain vocabulary shared by every backend: the hooks a base chain attaches to, its type,
//! and its policy. nf_tables and x_tables both speak of these (nf_tables as chain
//! attributes, x_tables as the hook entry points and policy rules of a table's blob), so
//! they live in the model, below both backends.

/// Netfilter hooks a base chain can attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hook {
    /// `NF_INET_PRE_ROUTING`: every packet coming in, before routing.
    Prerouting,
    /// `NF_INET_LOCAL_IN`: packets for this host.
    Input,
    /// `NF_INET_FORWARD`: packets routed through this host.
    Forward,
    /// `NF_INET_LOCAL_OUT`: packets this host sends.
    Output,
    /// `NF_INET_POST_ROUTING`: every packet going out, after routing.
    Postrouting,
}

impl Hook {
    /// The `NF_INET_*` hook number.
    pub fn number(self) -> u32 {
        match self {
            Hook::Prerouting => 0,
            Hook::Input => 1,
            Hook::Forward => 2,
            Hook::Output => 3,
            Hook::Postrouting => 4,
        }
    }
    /// The hook of an `NF_INET_*` number, if it is one of the five.
    pub fn from_number(n: u32) -> Option<Hook> {
        Some(match n {
            0 => Hook::Prerouting,
            1 => Hook::Input,
            2 => Hook::Forward,
            3 => Hook::Output,
            4 => Hook::Postrouting,
            _ => return None,
        })
    }
    /// The name nft uses (`prerouting`, `input`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::Prerouting => "prerouting",
            Hook::Input => "input",
            Hook::Forward => "forward",
            Hook::Output => "output",
            Hook::Postrouting => "postrouting",
        }
    }
}

/// What a base chain is for: nf_tables' chain type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainType {
    /// `filter`: any hook.
    Filter,
    /// `nat`: the first packet of each connection, for NAT.
    Nat,
    /// `route`: output packets, rerouted when marks or addresses change.
    Route,
}

impl ChainType {
    /// The name nft uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainType::Filter => "filter",
            ChainType::Nat => "nat",
            ChainType::Route => "route",
        }
    }
    /// The type nft names `s`, if it is one of the three.
    pub fn parse(s: &str) -> Option<ChainType> {
        Some(match s {
            "filter" => ChainType::Filter,
            "nat" => ChainType::Nat,
            "route" => ChainType::Route,
            _ => return None,
        })
    }
}

/// What a base chain does with a packet no rule decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainPolicy {
    /// Let it through.
    Accept,
    /// Drop it.
    Drop,
}

impl ChainPolicy {
    /// The verdict number nf_tables and x_tables store for it (`NF_ACCEPT` 1, `NF_DROP` 0).
    pub fn verdict(self) -> u32 {
        match self {
            ChainPolicy::Accept => 1,
            ChainPolicy::Drop => 0,
        }
    }
    /// The policy of an `NF_ACCEPT`/`NF_DROP` verdict number.
    pub fn from_verdict(v: u32) -> Option<ChainPolicy> {
        match v {
            1 => Some(ChainPolicy::Accept),
            0 => Some(ChainPolicy::Drop),
            _ => None,
        }
    }
}

/// What makes a chain a base chain: its type, hook, priority and policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BaseChain {
    /// Its chain type.
    pub chain_type: ChainType,
    /// The hook it is attached to.
    pub hook: Hook,
    /// Its priority at the hook (lower runs first).
    pub priority: i32,
    /// Its policy.
    pub policy: ChainPolicy,
}
