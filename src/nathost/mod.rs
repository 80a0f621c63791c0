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
//! Over 600 lines: results, the planners and the verbs of the chain layout; issue 14 splits
//! them (the map layout already lives in `map*.rs`).

mod backend;
pub mod map;
mod overlay;
mod spec;

pub use backend::{
    Applied, ChainInfo, Change, Lookup, RuleEntry, RulesetBackend, TableAccess, check_chain_name,
};
pub use spec::{
    Forward, ForwardKey, ForwardProtocol, HostSetup, MAX_COMMENT, PlacedRule, Reservation,
    rule_from_words,
};

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
    pub outcome: Outcome,
    /// The committed changes, in order.
    pub changes: Vec<Change>,
    /// How many times the plan ran (more than once when the ruleset changed under it).
    pub attempts: u32,
    /// Chains the operation removed (teardown and sweep).
    pub removed_chains: Vec<String>,
}

fn changed_or(changes: &[Change], otherwise: Outcome) -> Outcome {
    if changes.is_empty() {
        otherwise
    } else {
        Outcome::Changed
    }
}

fn missing_chain(table: &str, chain: &str, hint: &str) -> Error {
    Error::NotFound(OpFailure {
        index: 0,
        op: format!("chain {chain} in table {table}"),
        errno: libc::ENOENT,
        ext_ack: None,
    })
    .context(format!(
        "chain {chain} does not exist in table {table}{hint}"
    ))
}

/// Ensures the entry chain exists: a built-in chain iptables has not created yet is created;
/// any other missing chain is an error.
fn ensure_entry(
    table: &str,
    entry: &str,
    found: &Option<ChainInfo>,
    changes: &mut Vec<Change>,
) -> Result<()> {
    if found.is_some() {
        return Ok(());
    }
    if tables::builtin(table, entry).is_some() {
        changes.push(Change::CreateChain {
            table: table.into(),
            chain: entry.into(),
        });
        return Ok(());
    }
    Err(missing_chain(table, entry, " (the entry chain)"))
}

fn delete(table: &str, chain: &str, r: &RuleEntry) -> Change {
    Change::DeleteRule {
        table: table.into(),
        chain: chain.into(),
        id: r.id,
        rule: r.rule.clone(),
    }
}

fn same(a: &IptRule, b: &IptRule) -> bool {
    a.without_counters() == b.without_counters()
}

/// Makes `entry` hold exactly one jump to `target`, equal to `jump`: the first jump to the
/// target is replaced in place when it differs, later ones are deleted. Jumps from other
/// chains are not this operation's business and stay.
fn ensure_single_jump(
    table: &str,
    entry: &str,
    entry_rules: &[RuleEntry],
    target: &str,
    jump: &IptRule,
    changes: &mut Vec<Change>,
) {
    let jumps: Vec<&RuleEntry> = entry_rules
        .iter()
        .filter(|r| r.rule.jump_target() == Some(target))
        .collect();
    let keep = jumps
        .iter()
        .position(|r| same(&r.rule, jump))
        .or(if jumps.is_empty() { None } else { Some(0) });
    match keep {
        None => changes.push(Change::InsertRule {
            table: table.into(),
            chain: entry.into(),
            rule: jump.clone(),
        }),
        Some(k) => {
            if !same(&jumps[k].rule, jump) {
                changes.push(Change::ReplaceRule {
                    table: table.into(),
                    chain: entry.into(),
                    id: jumps[k].id,
                    rule: jump.clone(),
                });
            }
            for (i, r) in jumps.iter().enumerate() {
                if i != k {
                    changes.push(delete(table, entry, r));
                }
            }
        }
    }
}

/// Makes `entry` hold exactly one jump to `target`, equal to `jump`. `target_info` is what
/// the plan read of the target (`None`: the plan creates it). Nothing is read when the
/// answer is known: a new or unreferenced target, or a new entry chain, gets the jump
/// inserted; a target whose one reference is the rule it hints at, already equal to `jump`,
/// needs nothing. Otherwise the entry chain is read and put right.
#[allow(clippy::too_many_arguments)]
fn ensure_jump(
    v: &mut dyn TableAccess,
    table: &str,
    entry: &str,
    entry_exists: bool,
    target: &str,
    target_info: Option<&ChainInfo>,
    jump: &IptRule,
    changes: &mut Vec<Change>,
) -> Result<()> {
    let references = target_info.map_or(Some(0), |i| i.references);
    if !entry_exists || references == Some(0) {
        changes.push(Change::InsertRule {
            table: table.into(),
            chain: entry.into(),
            rule: jump.clone(),
        });
        return Ok(());
    }
    if let (Some(1), Some(id)) = (references, target_info.and_then(|i| i.jump_hint))
        && v.rule(table, entry, id)?
            .is_some_and(|g| same(&g.rule, jump))
    {
        return Ok(());
    }
    let entry_rules = v.lookup(table, &[], Some(entry))?.rules;
    ensure_single_jump(table, entry, &entry_rules, target, jump, changes);
    Ok(())
}

/// Makes the chain's forward for `f`'s key equal to `f`: added when missing, replaced in
/// place when it differs, duplicates for the same key deleted.
fn ensure_forward(
    table: &str,
    chain: &str,
    rules: &[RuleEntry],
    f: &Forward,
    rule: IptRule,
    changes: &mut Vec<Change>,
) {
    let key = f.key();
    let holders: Vec<&RuleEntry> = rules
        .iter()
        .filter(|r| ForwardKey::of_rule(&r.rule).as_ref() == Some(&key))
        .collect();
    if holders.is_empty() {
        changes.push(Change::AppendRule {
            table: table.into(),
            chain: chain.into(),
            rule,
        });
        return;
    }
    let keep = holders
        .iter()
        .position(|r| same(&r.rule, &rule))
        .unwrap_or(0);
    if !same(&holders[keep].rule, &rule) {
        changes.push(Change::ReplaceRule {
            table: table.into(),
            chain: chain.into(),
            id: holders[keep].id,
            rule,
        });
    }
    for (i, r) in holders.iter().enumerate() {
        if i != keep {
            changes.push(delete(table, chain, r));
        }
    }
}

/// What one operation's plan decided.
pub(crate) struct Planned {
    changes: Vec<Change>,
    outcome: Outcome,
    removed_chains: Vec<String>,
}

impl Planned {
    fn of(changes: Vec<Change>, otherwise: Outcome) -> Planned {
        let outcome = changed_or(&changes, otherwise);
        Planned {
            changes,
            outcome,
            removed_chains: Vec::new(),
        }
    }
}

fn plan_setup(v: &mut dyn TableAccess, res: &Reservation) -> Result<Planned> {
    let jump = res.jump_rule()?;
    let (table, chain, entry) = (&res.table, &res.chain, &res.entry);
    let look = v.lookup(table, &[chain, entry], Some(chain))?;
    let mut changes = Vec::new();
    ensure_entry(table, entry, &look.chains[1], &mut changes)?;
    match &look.chains[0] {
        None => {
            // The jump right after the chain: it gets the chain's handle + 1, which is what
            // teardown's guess (`ChainInfo::jump_hint`) relies on.
            changes.push(Change::CreateChain {
                table: table.clone(),
                chain: chain.clone(),
            });
            changes.push(Change::InsertRule {
                table: table.clone(),
                chain: entry.clone(),
                rule: jump,
            });
            for f in &res.forwards {
                changes.push(Change::AppendRule {
                    table: table.clone(),
                    chain: chain.clone(),
                    rule: f.rule(res.family)?,
                });
            }
        }
        Some(info) => {
            for f in &res.forwards {
                ensure_forward(
                    table,
                    chain,
                    &look.rules,
                    f,
                    f.rule(res.family)?,
                    &mut changes,
                );
            }
            let entry_exists = look.chains[1].is_some();
            ensure_jump(
                v,
                table,
                entry,
                entry_exists,
                chain,
                Some(info),
                &jump,
                &mut changes,
            )?;
        }
    }
    Ok(Planned::of(changes, Outcome::Unchanged))
}

fn plan_forward_add(
    v: &mut dyn TableAccess,
    table: &str,
    chain: &str,
    forward: &Forward,
) -> Result<Planned> {
    let rule = forward.rule(v.family())?;
    let look = v.lookup(table, &[chain], Some(chain))?;
    if look.chains[0].is_none() {
        return Err(missing_chain(
            table,
            chain,
            ": set the reservation up first",
        ));
    }
    let mut changes = Vec::new();
    ensure_forward(table, chain, &look.rules, forward, rule, &mut changes);
    Ok(Planned::of(changes, Outcome::Unchanged))
}

fn dnat_goes_to(rule: &IptRule, to: SocketAddr) -> bool {
    match &rule.target {
        Some(crate::ipt::IptTarget::Dnat(n)) => {
            n.addr_min == Some(to.ip())
                && n.addr_max.is_none_or(|a| a == to.ip())
                && n.ports
                    .is_some_and(|p| p.is_single() && p.first() == to.port())
        }
        _ => false,
    }
}

fn plan_forward_remove(
    v: &mut dyn TableAccess,
    table: &str,
    chain: &str,
    key: &ForwardKey,
    to: Option<SocketAddr>,
) -> Result<Planned> {
    let look = v.lookup(table, &[chain], Some(chain))?;
    let mut changes = Vec::new();
    if look.chains[0].is_some() {
        for r in &look.rules {
            if ForwardKey::of_rule(&r.rule).as_ref() == Some(key)
                && to.is_none_or(|to| dnat_goes_to(&r.rule, to))
            {
                changes.push(delete(table, chain, r));
            }
        }
    }
    Ok(Planned::of(changes, Outcome::Absent))
}

fn plan_teardown(
    v: &mut dyn TableAccess,
    table: &str,
    chain: &str,
    entry: &str,
) -> Result<Planned> {
    let flush_and_delete = |mut changes: Vec<Change>| {
        changes.push(Change::FlushChain {
            table: table.into(),
            chain: chain.into(),
        });
        changes.push(Change::DeleteChain {
            table: table.into(),
            chain: chain.into(),
        });
        Planned {
            changes,
            outcome: Outcome::Changed,
            removed_chains: vec![chain.to_string()],
        }
    };
    if !v.exhaustive() {
        // The chain's own rules give its reference count; a set-up's single jump can then
        // be deleted by its likely id, with no scan of the entry chain.
        let look = v.lookup(table, &[chain], Some(chain))?;
        let Some(info) = &look.chains[0] else {
            return Ok(Planned::of(Vec::new(), Outcome::Absent));
        };
        match (info.references, info.jump_hint) {
            (Some(0), _) => return Ok(flush_and_delete(Vec::new())),
            (Some(1), Some(id)) if entry != chain => {
                return Ok(flush_and_delete(vec![Change::DeleteGuessedJump {
                    table: table.into(),
                    chain: entry.into(),
                    id,
                    target: chain.into(),
                }]));
            }
            _ => {}
        }
    }
    let look = if entry == chain {
        v.lookup(table, &[chain], None)?
    } else {
        v.lookup(table, &[chain], Some(entry))?
    };
    if look.chains[0].is_none() {
        return Ok(Planned::of(Vec::new(), Outcome::Absent));
    }
    let refs: Vec<(String, RuleEntry)> = if v.exhaustive() {
        v.all_rules(table)?
            .into_iter()
            .filter(|(c, r)| c != chain && r.rule.jump_target() == Some(chain))
            .collect()
    } else {
        look.rules
            .into_iter()
            .filter(|r| r.rule.jump_target() == Some(chain))
            .map(|r| (entry.to_string(), r))
            .collect()
    };
    Ok(flush_and_delete(
        refs.into_iter()
            .map(|(c, r)| Change::DeleteRule {
                table: table.into(),
                chain: c,
                id: r.id,
                rule: r.rule,
            })
            .collect(),
    ))
}

fn plan_sweep(
    v: &mut dyn TableAccess,
    table: &str,
    prefix: &str,
    keep: &BTreeSet<String>,
) -> Result<Planned> {
    let doomed: BTreeSet<String> = v
        .chains(table)?
        .into_iter()
        .filter(|c| !c.base && c.name.starts_with(prefix) && !keep.contains(&c.name))
        .map(|c| c.name)
        .collect();
    if doomed.is_empty() {
        return Ok(Planned::of(Vec::new(), Outcome::Unchanged));
    }
    let mut changes: Vec<Change> = v
        .all_rules(table)?
        .into_iter()
        .filter(|(c, r)| {
            !doomed.contains(c) && r.rule.jump_target().is_some_and(|t| doomed.contains(t))
        })
        .map(|(c, r)| Change::DeleteRule {
            table: table.into(),
            chain: c,
            id: r.id,
            rule: r.rule,
        })
        .collect();
    for c in &doomed {
        changes.push(Change::FlushChain {
            table: table.into(),
            chain: c.clone(),
        });
    }
    for c in &doomed {
        changes.push(Change::DeleteChain {
            table: table.into(),
            chain: c.clone(),
        });
    }
    Ok(Planned {
        changes,
        outcome: Outcome::Changed,
        removed_chains: doomed.into_iter().collect(),
    })
}

fn plan_host_setup(v: &mut dyn TableAccess, host: &HostSetup) -> Result<Planned> {
    let rules = host.rules()?;
    let jumps = host.jumps()?;
    let chain = &host.chain;
    let mut changes = Vec::new();
    for table in ["nat", "filter"] {
        let entries: Vec<&PlacedRule> = jumps.iter().filter(|j| j.table == table).collect();
        let mut names: Vec<&str> = vec![chain];
        names.extend(entries.iter().map(|j| j.chain.as_str()));
        let look = v.lookup(table, &names, Some(chain))?;
        let exists = look.chains[0].is_some();
        if !exists {
            changes.push(Change::CreateChain {
                table: table.into(),
                chain: chain.clone(),
            });
        }
        for want in rules.iter().filter(|r| r.table == table) {
            if !look.rules.iter().any(|r| same(&r.rule, &want.rule)) {
                changes.push(Change::AppendRule {
                    table: table.into(),
                    chain: chain.clone(),
                    rule: want.rule.clone(),
                });
            }
        }
        for (j, found) in entries.iter().zip(&look.chains[1..]) {
            ensure_entry(table, &j.chain, found, &mut changes)?;
            let target = look.chains[0].as_ref();
            ensure_jump(
                v,
                table,
                &j.chain,
                found.is_some(),
                chain,
                target,
                &j.rule,
                &mut changes,
            )?;
        }
    }
    Ok(Planned::of(changes, Outcome::Unchanged))
}

fn plan_chain(v: &mut dyn TableAccess, op: &Operation) -> Result<Planned> {
    let (table, chain) = match op {
        Operation::CreateChain { table, chain }
        | Operation::FlushChain { table, chain }
        | Operation::DeleteChain { table, chain } => (table.as_str(), chain.as_str()),
        _ => return Err(misrouted(op)),
    };
    let look = v.lookup(table, &[chain], Some(chain))?;
    let exists = look.chains[0].is_some();
    let t = table.to_string();
    let c = chain.to_string();
    Ok(match op {
        Operation::CreateChain { .. } if exists => Planned::of(Vec::new(), Outcome::Unchanged),
        Operation::CreateChain { .. } => Planned::of(
            vec![Change::CreateChain { table: t, chain: c }],
            Outcome::Unchanged,
        ),
        Operation::FlushChain { .. } if !exists => {
            return Err(missing_chain(table, chain, ""));
        }
        Operation::FlushChain { .. } if look.rules.is_empty() => {
            Planned::of(Vec::new(), Outcome::Unchanged)
        }
        Operation::FlushChain { .. } => Planned::of(
            vec![Change::FlushChain { table: t, chain: c }],
            Outcome::Unchanged,
        ),
        Operation::DeleteChain { .. } if !exists => Planned::of(Vec::new(), Outcome::Absent),
        _ => {
            if tables::builtin(table, chain).is_some() {
                return Err(Error::InvalidInput(format!(
                    "{chain} is a built-in chain of table {table}: it cannot be deleted"
                )));
            }
            Planned {
                changes: vec![
                    Change::FlushChain {
                        table: t.clone(),
                        chain: c.clone(),
                    },
                    Change::DeleteChain { table: t, chain: c },
                ],
                outcome: Outcome::Changed,
                removed_chains: vec![chain.to_string()],
            }
        }
    })
}

fn plan_rule(v: &mut dyn TableAccess, op: &Operation) -> Result<Planned> {
    let (table, chain, rule) = match op {
        Operation::EnsureRule {
            table, chain, rule, ..
        }
        | Operation::DeleteRule { table, chain, rule } => (table.as_str(), chain.as_str(), rule),
        _ => return Err(misrouted(op)),
    };
    let look = v.lookup(table, &[chain], Some(chain))?;
    let mut changes = Vec::new();
    let existing = look.rules.iter().find(|r| same(&r.rule, rule));
    match op {
        Operation::EnsureRule { at_head, .. } => {
            if look.chains[0].is_none() {
                if tables::builtin(table, chain).is_none() {
                    return Err(missing_chain(table, chain, ""));
                }
                changes.push(Change::CreateChain {
                    table: table.into(),
                    chain: chain.into(),
                });
            }
            if existing.is_none() {
                let (table, chain, rule) = (table.into(), chain.into(), rule.clone());
                changes.push(if *at_head {
                    Change::InsertRule { table, chain, rule }
                } else {
                    Change::AppendRule { table, chain, rule }
                });
            }
            Ok(Planned::of(changes, Outcome::Unchanged))
        }
        _ => {
            if let Some(r) = existing {
                changes.push(delete(table, chain, r));
            }
            Ok(Planned::of(changes, Outcome::Absent))
        }
    }
}

fn misrouted(op: &Operation) -> Error {
    Error::InvalidInput(format!(
        "internal error: {} sent to the wrong planner",
        op.kind()
    ))
}

/// One operation of a transaction, as `xtnl apply` takes them. Every kind is idempotent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    ReservationSetup(Reservation),
    ForwardAdd {
        table: String,
        chain: String,
        forward: Forward,
    },
    ForwardRemove {
        table: String,
        chain: String,
        key: ForwardKey,
        to: Option<SocketAddr>,
    },
    Teardown {
        table: String,
        chain: String,
        entry: String,
    },
    Sweep {
        table: String,
        prefix: String,
        keep: BTreeSet<String>,
    },
    HostSetup(HostSetup),
    /// Create the chain unless it exists.
    CreateChain {
        table: String,
        chain: String,
    },
    FlushChain {
        table: String,
        chain: String,
    },
    /// Flush and delete the chain; absent is success, references are an error.
    DeleteChain {
        table: String,
        chain: String,
    },
    /// Add the rule (at the head, or the end) unless an equal rule is in the chain.
    EnsureRule {
        table: String,
        chain: String,
        rule: IptRule,
        at_head: bool,
    },
    /// Delete the first rule equal to this one; absent is success.
    DeleteRule {
        table: String,
        chain: String,
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
    pub outcome: Outcome,
    /// The changes this operation planned.
    pub changes: Vec<Change>,
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
