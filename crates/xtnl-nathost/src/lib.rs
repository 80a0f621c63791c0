//! NAT-host operations: each of the agent's multi-command sequences (set up a reservation,
//! add or remove a forward, tear a reservation down, sweep orphans, the host's one-time
//! rules) as one plan over a consistent view and one atomic commit. They are idempotent:
//! asked for what is already there, they change nothing and say so.
//!
//! In iptables' tables the rules are written in iptables-nft's encoding, exactly as the
//! agent's `iptables` commands write them, so `iptables -S` shows them and the agent's own
//! commands recognise them (and the other way round).
//!
//! Cost: setting up a new reservation reads its chain, the entry chain and the generation in
//! one round trip and commits in a second; a teardown reads the chain and the entry chain's
//! rules in one and commits in a second, with the kernel's refusal to delete a chain that is
//! still referenced as the check that no jump elsewhere was missed (then the plan runs again
//! with a scan of the whole table). Neither lists the table.
//!
//! The planners of the chain layout are in `plan.rs`, the map layout in `map*.rs`.
//!
//! The operations are written once against [`RulesetBackend`] (the seam's): nf_tables'
//! session, x_tables (the library's `xtnl::legacy`) and [`memory::MemoryRuleset`], the
//! in-memory ruleset of the tests, which this example uses (no kernel, no root). The library
//! re-exports this crate as `xtnl::nathost`.
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_nathost::{Forward, Outcome, Reservation, memory::MemoryRuleset, setup};
//!
//! let mut ruleset = MemoryRuleset::new(Family::Ipv4);
//! let mut res = Reservation::new("vcld-5205");
//! res.forwards.push(Forward::parse_spec("eth1:tcp/50443=192.0.2.10:3389")?);
//! assert_eq!(setup(&mut ruleset, &res)?.outcome, Outcome::Changed);
//! assert_eq!(ruleset.chain_names("nat"), ["PREROUTING", "vcld-5205"]);
//! // Idempotent: asked again, it finds everything there and commits nothing.
//! assert_eq!(setup(&mut ruleset, &res)?.outcome, Outcome::Unchanged);
//! assert_eq!(ruleset.commits, 1);
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `nathost` module, and its files keep the
// `crate::nathost::...`, `crate::seam::...`, `crate::ipt::...` paths they had there (as the
// crates below did).
use crate as nathost;
#[cfg(test)]
use xtnl_core::ErrorKind;
use xtnl_core::{error, limits, model};
use xtnl_nft as nft;
#[cfg(test)]
use xtnl_policy as policy;
use xtnl_seam as seam;
use xtnl_wire as wire;

/// iptables' syntax and iptables-nft's encoding under the library's paths
/// (`crate::ipt::parse`, `crate::ipt::compat`, ...), with which the operations write their
/// rules as iptables-nft does.
mod ipt {
    pub(crate) use xtnl_ipt::{IptMatch, IptRule, IptTarget, parse, print, tables};
    pub(crate) use xtnl_nft::ipt::compat;
}

/// nf_tables' side (`impl RulesetBackend for Session`) is the seam crate's, where Rust's
/// orphan rule puts it; the chain-name check beside it, under its old path.
mod backend {
    pub use crate::seam::ipt::ruleset::check_chain_name;
}
mod host_setup;
pub mod map;
pub mod memory;
#[cfg(test)]
mod memory_tests;
mod overlay;
mod plan;
mod spec;

use plan::*;

/// The seam's traits and types, re-exported where the NAT-host operations use them.
pub use crate::seam::{Applied, ChainInfo, Change, Lookup, RuleEntry, RulesetBackend, TableAccess};
pub use backend::check_chain_name;
pub use host_setup::{HostSetup, PlacedRule};
pub use spec::{Forward, ForwardKey, ForwardProtocol, MAX_COMMENT, Reservation, rule_from_words};

use std::collections::BTreeSet;
use std::net::SocketAddr;

use crate::error::{Error, OpFailure, Result};
use crate::ipt::{IptRule, tables};
use crate::model::Family;

/// What an operation found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Changes were committed.
    Changed,
    /// Everything asked for was already there; nothing was sent.
    Unchanged,
    /// What was to be removed did not exist (success, for idempotent removal).
    Absent,
}

impl Outcome {
    /// The word JSON output and `xtnl` print for it (`changed`, `unchanged`, `absent`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Changed => "changed",
            Outcome::Unchanged => "unchanged",
            Outcome::Absent => "absent",
        }
    }
}

/// The result of one operation.
#[derive(Debug, Clone)]
pub struct Report {
    /// What the operation found and did.
    pub outcome: Outcome,
    /// The committed changes, in order.
    pub changes: Vec<Change>,
    /// How many times the plan ran (more than once when the ruleset changed under it).
    pub attempts: u32,
    /// Chains the operation removed (teardown and sweep).
    pub removed_chains: Vec<String>,
}

/// One operation of a transaction, as `xtnl apply` takes them. Every kind is idempotent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// Set up a reservation: its chain, its jump from the entry chain, its forwards.
    ReservationSetup(Reservation),
    /// Add one port forward (a DNAT rule) to a reservation chain.
    ForwardAdd {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
        /// The forward to add (replacing one with the same key that goes elsewhere).
        forward: Forward,
    },
    /// Remove one port forward from a reservation chain; absent is success.
    ForwardRemove {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
        /// Which forward: protocol, public port and interface.
        key: ForwardKey,
        /// Remove it only if it goes there; whatever it goes to when `None`.
        to: Option<SocketAddr>,
    },
    /// Remove a reservation: its jump from `entry`, its rules and its chain.
    Teardown {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
        /// The chain that jumps to the reservation chain (`PREROUTING`).
        entry: String,
    },
    /// Tear down every reservation chain named `PREFIX...` that is not in `keep`.
    Sweep {
        /// The table's name (`nat` for the agent).
        table: String,
        /// Reservation chains start with it (`vcld-`).
        prefix: String,
        /// Chains kept whatever their name.
        keep: BTreeSet<String>,
    },
    /// The one-time rules of the NAT host (masquerade, inbound accepts).
    HostSetup(HostSetup),
    /// Create the chain unless it exists.
    CreateChain {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Delete every rule of the chain, keeping it; absent is an error.
    FlushChain {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Flush and delete the chain; absent is success, references are an error.
    DeleteChain {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Add the rule (at the head, or the end) unless an equal rule is in the chain.
    EnsureRule {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule, in iptables terms.
        rule: IptRule,
        /// Insert at the head (`-I`) rather than append (`-A`).
        at_head: bool,
    },
    /// Delete the first rule equal to this one; absent is success.
    DeleteRule {
        /// The table's name (`nat` for the agent).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule, in iptables terms.
        rule: IptRule,
    },
}

impl Operation {
    /// The name `xtnl apply` uses for this kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Operation::ReservationSetup(_) => "reservation_setup",
            Operation::ForwardAdd { .. } => "forward_add",
            Operation::ForwardRemove { .. } => "forward_remove",
            Operation::Teardown { .. } => "teardown",
            Operation::Sweep { .. } => "sweep",
            Operation::HostSetup(_) => "host_setup",
            Operation::CreateChain { .. } => "create_chain",
            Operation::FlushChain { .. } => "flush_chain",
            Operation::DeleteChain { .. } => "delete_chain",
            Operation::EnsureRule { .. } => "ensure_rule",
            Operation::DeleteRule { .. } => "delete_rule",
        }
    }

    /// Checks everything that does not need the kernel.
    pub fn validate(&self, family: Family) -> Result<()> {
        match self {
            Operation::ReservationSetup(r) => {
                if r.family != family {
                    return Err(Error::InvalidInput(
                        "the reservation's family differs from its transaction's".into(),
                    ));
                }
                r.validate()
            }
            Operation::ForwardAdd {
                table,
                chain,
                forward,
            } => {
                check_chain_name(table, chain)?;
                forward.rule(family).map(|_| ())
            }
            Operation::ForwardRemove { table, chain, .. }
            | Operation::CreateChain { table, chain }
            | Operation::FlushChain { table, chain }
            | Operation::DeleteChain { table, chain } => check_chain_name(table, chain),
            Operation::Teardown {
                table,
                chain,
                entry,
            } => {
                check_chain_name(table, chain)?;
                check_chain_name(table, entry)?;
                if tables::builtin(table, chain).is_some() {
                    return Err(Error::InvalidInput(format!(
                        "{chain} is a built-in chain of table {table}: it cannot be torn down"
                    )));
                }
                Ok(())
            }
            Operation::Sweep { table, prefix, .. } => {
                if prefix.is_empty() {
                    return Err(Error::InvalidInput(
                        "sweep needs a chain-name prefix (an empty one would remove every chain)"
                            .into(),
                    ));
                }
                check_chain_name(table, prefix)
            }
            Operation::HostSetup(h) => {
                if h.family != family {
                    return Err(Error::InvalidInput(
                        "the host set-up's family differs from its transaction's".into(),
                    ));
                }
                h.validate()
            }
            Operation::EnsureRule {
                table, chain, rule, ..
            }
            | Operation::DeleteRule { table, chain, rule } => {
                check_chain_name(table, chain)?;
                if !rule.is_expressible() {
                    return Err(Error::InvalidInput(
                        "the rule holds parts iptables syntax cannot express".into(),
                    ));
                }
                // Encoding checks what only the target table allows (DNAT outside nat...).
                compat_check(family, table, rule)
            }
        }
    }

    fn plan(&self, v: &mut dyn TableAccess) -> Result<Planned> {
        match self {
            Operation::ReservationSetup(r) => plan_setup(v, r),
            Operation::ForwardAdd {
                table,
                chain,
                forward,
            } => plan_forward_add(v, table, chain, forward),
            Operation::ForwardRemove {
                table,
                chain,
                key,
                to,
            } => plan_forward_remove(v, table, chain, key, *to),
            Operation::Teardown {
                table,
                chain,
                entry,
            } => plan_teardown(v, table, chain, entry),
            Operation::Sweep {
                table,
                prefix,
                keep,
            } => plan_sweep(v, table, prefix, keep),
            Operation::HostSetup(h) => plan_host_setup(v, h),
            Operation::CreateChain { .. }
            | Operation::FlushChain { .. }
            | Operation::DeleteChain { .. } => plan_chain(v, self),
            Operation::EnsureRule { .. } | Operation::DeleteRule { .. } => plan_rule(v, self),
        }
    }
}

fn compat_check(family: Family, table: &str, rule: &IptRule) -> Result<()> {
    crate::ipt::compat::encode(&crate::nft::TableRef::new(family, table), rule).map(|_| ())
}

/// What one operation of a committed transaction did.
#[derive(Debug, Clone)]
pub struct OperationResult {
    /// What the operation found and did.
    pub outcome: Outcome,
    /// The changes this operation planned.
    pub changes: Vec<Change>,
    /// Chains this operation removed (teardown and sweep).
    pub removed_chains: Vec<String>,
    /// Handles (nf_tables) of the rules it added, in order.
    pub rule_handles: Vec<u64>,
}

/// Plans every operation, in order, each seeing the ruleset as the ones before it leave it,
/// and commits all of them as one atomic transaction. An operation that cannot be planned
/// fails the whole transaction before anything is sent; the error names the operation.
pub fn transact(
    backend: &mut impl RulesetBackend,
    family: Family,
    ops: &[Operation],
) -> Result<(Vec<OperationResult>, u32)> {
    for (i, op) in ops.iter().enumerate() {
        op.validate(family)
            .map_err(|e| e.context(format!("operation {i} ({})", op.kind())))?;
    }
    let applied = backend.transact(family, |v| {
        let mut overlay = overlay::Overlay::new(v);
        let mut planned = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            let p = op
                .plan(&mut overlay)
                .map_err(|e| e.context(format!("operation {i} ({})", op.kind())))?;
            overlay.push(i, &p.changes);
            planned.push(p);
        }
        let (changes, origins) = overlay.into_changes();
        Ok((changes, (planned, origins)))
    })?;
    let (planned, origins) = applied.value;
    let mut results: Vec<OperationResult> = planned
        .into_iter()
        .map(|p| OperationResult {
            outcome: p.outcome,
            changes: p.changes,
            removed_chains: p.removed_chains,
            rule_handles: Vec::new(),
        })
        .collect();
    for (change, handle) in applied.rule_handles {
        if let Some(r) = origins.get(change).and_then(|&o| results.get_mut(o)) {
            r.rule_handles.push(handle);
        }
    }
    Ok((results, applied.attempts))
}

/// Runs one operation as its own transaction.
pub fn run_one(backend: &mut impl RulesetBackend, family: Family, op: Operation) -> Result<Report> {
    let (mut results, attempts) = transact(backend, family, std::slice::from_ref(&op))?;
    let r = results
        .pop()
        .ok_or_else(|| Error::InvalidInput("no operation".into()))?;
    Ok(Report {
        outcome: r.outcome,
        changes: r.changes,
        attempts,
        removed_chains: r.removed_chains,
    })
}

/// Sets up a reservation: its chain, exactly one jump to it from the entry chain with its
/// comment, and each of its forwards. Forwards already in the chain under other keys stay.
pub fn setup(backend: &mut impl RulesetBackend, res: &Reservation) -> Result<Report> {
    run_one(
        backend,
        res.family,
        Operation::ReservationSetup(res.clone()),
    )
}

/// Adds one forward to an existing reservation chain (or corrects the one holding its key).
pub fn forward_add(
    backend: &mut impl RulesetBackend,
    family: Family,
    table: &str,
    chain: &str,
    forward: &Forward,
) -> Result<Report> {
    run_one(
        backend,
        family,
        Operation::ForwardAdd {
            table: table.into(),
            chain: chain.into(),
            forward: forward.clone(),
        },
    )
}

/// Removes the forward holding `key` (only if it goes to `to`, when given). A missing chain
/// or forward is success: [`Outcome::Absent`].
pub fn forward_remove(
    backend: &mut impl RulesetBackend,
    family: Family,
    table: &str,
    chain: &str,
    key: &ForwardKey,
    to: Option<SocketAddr>,
) -> Result<Report> {
    run_one(
        backend,
        family,
        Operation::ForwardRemove {
            table: table.into(),
            chain: chain.into(),
            key: key.clone(),
            to,
        },
    )
}

/// Deletes every rule of the table that jumps or goes to `chain`, flushes it and deletes it,
/// in one transaction. References are looked for in `entry` first (where the set-up puts
/// them); the backend's refusal to delete a chain still referenced sends the plan round
/// again with a scan of every chain. A missing chain is success: [`Outcome::Absent`].
pub fn teardown(
    backend: &mut impl RulesetBackend,
    family: Family,
    table: &str,
    chain: &str,
    entry: &str,
) -> Result<Report> {
    run_one(
        backend,
        family,
        Operation::Teardown {
            table: table.into(),
            chain: chain.into(),
            entry: entry.into(),
        },
    )
}

/// Removes every chain of `table` named `prefix...` that is not in `keep`, with every rule
/// that jumps to one, in one transaction.
pub fn sweep(
    backend: &mut impl RulesetBackend,
    family: Family,
    table: &str,
    prefix: &str,
    keep: &BTreeSet<String>,
) -> Result<Report> {
    run_one(
        backend,
        family,
        Operation::Sweep {
            table: table.into(),
            prefix: prefix.into(),
            keep: keep.clone(),
        },
    )
}

/// Ensures the NAT host's one-time rules: its chain in nat and filter holding the
/// masquerade and accept rules, and one jump to it from nat POSTROUTING and filter INPUT and
/// FORWARD. Rules already there (in any order) stay; missing ones are appended.
pub fn host_setup(backend: &mut impl RulesetBackend, host: &HostSetup) -> Result<Report> {
    run_one(backend, host.family, Operation::HostSetup(host.clone()))
}
