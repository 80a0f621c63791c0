//! Chain vocabulary shared by every backend: the hooks a base chain attaches to, its type,
//! and its policy. nf_tables and x_tables both speak of these (nf_tables as chain
//! attributes, x_tables as the hook entry points and policy rules of a table's blob), so
//! they live in the model, below both backends.

/// Netfilter hooks a base chain can attach to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hook {
    Prerouting,
    Input,
    Forward,
    Output,
    Postrouting,
}

impl Hook {
    pub fn number(self) -> u32 {
        match self {
            Hook::Prerouting => 0,
            Hook::Input => 1,
            Hook::Forward => 2,
            Hook::Output => 3,
            Hook::Postrouting => 4,
        }
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainType {
    Filter,
    Nat,
    Route,
}

impl ChainType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChainType::Filter => "filter",
            ChainType::Nat => "nat",
            ChainType::Route => "route",
        }
    }
    pub fn parse(s: &str) -> Option<ChainType> {
        Some(match s {
            "filter" => ChainType::Filter,
            "nat" => ChainType::Nat,
            "route" => ChainType::Route,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChainPolicy {
    Accept,
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
    pub chain_type: ChainType,
    pub hook: Hook,
    pub priority: i32,
    pub policy: ChainPolicy,
}
