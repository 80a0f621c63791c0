//! The planners of the chain layout: each operation's changes, decided on a view of the
//! ruleset ([`TableAccess`]) in iptables terms, for any backend.

use super::*;

pub(super) fn changed_or(changes: &[Change], otherwise: Outcome) -> Outcome {
    if changes.is_empty() {
        otherwise
    } else {
        Outcome::Changed
    }
}

pub(super) fn missing_chain(table: &str, chain: &str, hint: &str) -> Error {
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
pub(super) fn ensure_entry(
    table: &str,
    entry: &str,
    found: &Option<ChainInfo>,
    changes: &mut Vec<Change>,
) -> Result<()> {
    if found.is_some() {
        return Ok(());
    }
    if tables::builtin(table, entry).is_some() {
        changes.push(Change::create_chain(table, entry));
        return Ok(());
    }
    Err(missing_chain(table, entry, " (the entry chain)"))
}

pub(super) fn delete(table: &str, chain: &str, r: &RuleEntry) -> Change {
    Change::delete_rule(table, chain, r.clone())
}

pub(super) fn same(a: &IptRule, b: &IptRule) -> bool {
    a.same_rule(b)
}

/// Makes `entry` hold exactly one jump to `target`, equal to `jump`: the first jump to the
/// target is replaced in place when it differs, later ones are deleted. Jumps from other
/// chains are not this operation's business and stay.
pub(super) fn ensure_single_jump(
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
        None => changes.push(Change::insert_rule(table, entry, jump.clone())),
        Some(k) => {
            if !same(&jumps[k].rule, jump) {
                changes.push(Change::replace_rule(table, entry, jumps[k], jump.clone()));
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
pub(super) fn ensure_jump(
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
        changes.push(Change::insert_rule(table, entry, jump.clone()));
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
pub(super) fn ensure_forward(
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
        changes.push(Change::append_rule(table, chain, rule));
        return;
    }
    let keep = holders
        .iter()
        .position(|r| same(&r.rule, &rule))
        .unwrap_or(0);
    if !same(&holders[keep].rule, &rule) {
        changes.push(Change::replace_rule(table, chain, holders[keep], rule));
    }
    for (i, r) in holders.iter().enumerate() {
        if i != keep {
            changes.push(delete(table, chain, r));
        }
    }
}

/// What one operation's plan decided.
pub(crate) struct Planned {
    pub(super) changes: Vec<Change>,
    pub(super) outcome: Outcome,
    pub(super) removed_chains: Vec<String>,
}

impl Planned {
    pub(super) fn of(changes: Vec<Change>, otherwise: Outcome) -> Planned {
        let outcome = changed_or(&changes, otherwise);
        Planned {
            changes,
            outcome,
            removed_chains: Vec::new(),
        }
    }
}

pub(super) fn plan_setup(v: &mut dyn TableAccess, res: &Reservation) -> Result<Planned> {
    let jump = res.jump_rule()?;
    let (table, chain, entry) = (&res.table, &res.chain, &res.entry);
    let look = v.lookup(table, &[chain, entry], Some(chain))?;
    let mut changes = Vec::new();
    ensure_entry(table, entry, &look.chains[1], &mut changes)?;
    match &look.chains[0] {
        None => {
            // The jump right after the chain: it gets the chain's handle + 1, which is what
            // teardown's guess (`ChainInfo::jump_hint`) relies on.
            changes.push(Change::create_chain(table.clone(), chain.clone()));
            changes.push(Change::insert_rule(table.clone(), entry.clone(), jump));
            for f in &res.forwards {
                changes.push(Change::append_rule(
                    table.clone(),
                    chain.clone(),
                    f.rule(res.family)?,
                ));
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

pub(super) fn plan_forward_add(
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

pub(super) fn dnat_goes_to(rule: &IptRule, to: SocketAddr) -> bool {
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

pub(super) fn plan_forward_remove(
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

pub(super) fn plan_teardown(
    v: &mut dyn TableAccess,
    table: &str,
    chain: &str,
    entry: &str,
) -> Result<Planned> {
    let flush_and_delete = |mut changes: Vec<Change>| {
        changes.push(Change::flush_chain(table, chain));
        changes.push(Change::delete_chain(table, chain));
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
                return Ok(flush_and_delete(vec![Change::delete_guessed_jump(
                    table, entry, id, chain,
                )]));
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
            .map(|(c, r)| Change::delete_rule(table, c, r))
            .collect(),
    ))
}

pub(super) fn plan_sweep(
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
        .map(|(c, r)| Change::delete_rule(table, c, r))
        .collect();
    for c in &doomed {
        changes.push(Change::flush_chain(table, c.clone()));
    }
    for c in &doomed {
        changes.push(Change::delete_chain(table, c.clone()));
    }
    Ok(Planned {
        changes,
        outcome: Outcome::Changed,
        removed_chains: doomed.into_iter().collect(),
    })
}

pub(super) fn plan_host_setup(v: &mut dyn TableAccess, host: &HostSetup) -> Result<Planned> {
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
            changes.push(Change::create_chain(table, chain.clone()));
        }
        for want in rules.iter().filter(|r| r.table == table) {
            if !look.rules.iter().any(|r| same(&r.rule, &want.rule)) {
                changes.push(Change::append_rule(table, chain.clone(), want.rule.clone()));
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

pub(super) fn plan_chain(v: &mut dyn TableAccess, op: &Operation) -> Result<Planned> {
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
        Operation::CreateChain { .. } => {
            Planned::of(vec![Change::create_chain(t, c)], Outcome::Unchanged)
        }
        Operation::FlushChain { .. } if !exists => {
            return Err(missing_chain(table, chain, ""));
        }
        Operation::FlushChain { .. } if look.rules.is_empty() => {
            Planned::of(Vec::new(), Outcome::Unchanged)
        }
        Operation::FlushChain { .. } => {
            Planned::of(vec![Change::flush_chain(t, c)], Outcome::Unchanged)
        }
        Operation::DeleteChain { .. } if !exists => Planned::of(Vec::new(), Outcome::Absent),
        _ => {
            if tables::builtin(table, chain).is_some() {
                return Err(Error::InvalidInput(format!(
                    "{chain} is a built-in chain of table {table}: it cannot be deleted"
                )));
            }
            Planned {
                changes: vec![
                    Change::flush_chain(t.clone(), c.clone()),
                    Change::delete_chain(t, c),
                ],
                outcome: Outcome::Changed,
                removed_chains: vec![chain.to_string()],
            }
        }
    })
}

pub(super) fn plan_rule(v: &mut dyn TableAccess, op: &Operation) -> Result<Planned> {
    let (table, chain, rule) = match op {
        Operation::EnsureRule {
            table, chain, rule, ..
        }
        | Operation::DeleteRule { table, chain, rule } => (table.as_str(), chain.as_str(), rule),
        _ => return Err(misrouted(op)),
    };
    // One lookup in the index of the transaction's view, not a copy of the chain: a
    // transaction of thousands of rules into one chain stays linear.
    let (found, existing) = v.find_rule(table, chain, rule)?;
    let existing = existing.as_ref();
    let mut changes = Vec::new();
    match op {
        Operation::EnsureRule { at_head, .. } => {
            if found.is_none() {
                if tables::builtin(table, chain).is_none() {
                    return Err(missing_chain(table, chain, ""));
                }
                changes.push(Change::create_chain(table, chain));
            }
            if existing.is_none() {
                let rule = rule.clone();
                changes.push(if *at_head {
                    Change::insert_rule(table, chain, rule)
                } else {
                    Change::append_rule(table, chain, rule)
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

pub(super) fn misrouted(op: &Operation) -> Error {
    Error::InvalidInput(format!(
        "internal error: {} sent to the wrong planner",
        op.kind()
    ))
}
