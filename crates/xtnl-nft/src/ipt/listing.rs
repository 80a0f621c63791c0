//! `iptables -S` and `iptables -L` over a consistent snapshot of a table.

use crate::model::ChainPolicy;
use std::collections::HashMap;
use std::fmt::Write;

use super::print;
use super::rule::IptRule;
use super::{compat, tables};
use crate::error::{Error, Result};
use crate::model::Counters;
use crate::nft::{Chain, RawRule, Session, TableRef};

pub mod nft_words;
pub(crate) mod table;
pub use table::change_line;
pub use table::{list_table, render_table};

/// One chain as iptables lists it (the nf_tables and x_tables backends both fill these).
#[derive(Debug, Clone)]
pub struct ChainListing {
    /// The chain's name.
    pub name: String,
    /// `Some` for built-in (base) chains.
    pub policy: Option<ChainPolicy>,
    /// A built-in chain's policy counters, where the backend keeps them (x_tables always;
    /// nf_tables for a base chain created or updated with counters, `None` read as zero).
    pub policy_counters: Option<Counters>,
    /// Jumps and gotos to it (user chains; counted only when the whole table was read).
    pub references: u32,
    /// Each rule with its handle (nf_tables) or position (x_tables).
    pub rules: Vec<(u64, IptRule)>,
}

/// The chains of a table in the order `iptables -S` lists them, with their rules decoded
/// (or one chain: `only`); what the JSON listing is made of.
pub fn chains(
    session: &mut Session,
    table: &TableRef,
    only: Option<&str>,
) -> Result<Vec<ChainListing>> {
    let chains = read(session, table, only)?;
    if let Some(c) = only
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    Ok(chains
        .into_iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
        .collect())
}

/// A chain policy as iptables spells it (`ACCEPT`, `DROP`).
pub fn policy_name(p: ChainPolicy) -> &'static str {
    match p {
        ChainPolicy::Accept => "ACCEPT",
        ChainPolicy::Drop => "DROP",
    }
}

/// Built-ins first in the table's order (absent ones as ACCEPT, as iptables-nft shows a table
/// it has not created yet), then user chains sorted by name.
/// `only`: read the rules of that chain alone (its references then come from the kernel's
/// use count of the chain, as iptables-nft reads them).
pub fn read(
    session: &mut Session,
    table: &TableRef,
    only: Option<&str>,
) -> Result<Vec<ChainListing>> {
    let exists = session.list_tables()?.iter().any(|t| &t.table == table);
    let builtins = tables::builtins(&table.name);
    if !exists && builtins.is_none() {
        return Err(Error::NoSuchTable(table.name.clone()));
    }
    type ByChain = HashMap<String, Vec<(u64, IptRule)>>;
    let (chains, mut by_chain, references): (Vec<Chain>, ByChain, HashMap<String, u32>) = if exists
    {
        session.read(|r| {
            // One chain asked for: fetch it alone rather than every chain of the table.
            let chains: Vec<Chain> = match only {
                Some(c) => r.chain(&table.chain(c))?.into_iter().collect(),
                None => r.chains(table)?,
            };
            let mut by_chain = ByChain::new();
            let mut references: HashMap<String, u32> = HashMap::new();
            // Each chain's use count by name (a scan of the chains per chain made a save of
            // 150,000 chains quadratic: 116 s for kube-proxy's 50,000 services).
            let use_counts: HashMap<&str, usize> = chains
                .iter()
                .map(|c| (c.chain.name.as_str(), c.use_count as usize))
                .collect();
            // Each rule is decoded as it is read (its raw form freed at once), sorted by
            // chain, and its jump counted.
            let sort = |raw: RawRule| {
                let decoded = compat::decode(table, &raw);
                if let Some(t) = decoded.jump_target() {
                    match references.get_mut(t) {
                        Some(n) => *n += 1,
                        None => {
                            references.insert(t.to_string(), 1);
                        }
                    }
                }
                match by_chain.get_mut(&raw.chain.name) {
                    Some(rules) => rules.push((raw.handle, decoded)),
                    None => {
                        // A chain's use count is its rules and the jumps to it: room
                        // for all of them at once.
                        let room = use_counts
                            .get(raw.chain.name.as_str())
                            .copied()
                            .unwrap_or(1);
                        let mut rules = Vec::with_capacity(room.max(1));
                        rules.push((raw.handle, decoded));
                        by_chain.insert(raw.chain.name, rules);
                    }
                }
            };
            let exists = |c: &str| chains.iter().any(|x| x.chain.name == c);
            match only {
                Some(c) if exists(c) => r.each_raw_rule(table, Some(c), sort)?,
                Some(_) => {}
                None => r.each_raw_rule(table, None, sort)?,
            }
            Ok((chains, by_chain, references))
        })?
    } else {
        (Vec::new(), ByChain::new(), HashMap::new())
    };
    let refs = |name: &str| -> u32 { references.get(name).copied().unwrap_or(0) };
    let mut rules_of =
        |name: &str| -> Vec<(u64, IptRule)> { by_chain.remove(name).unwrap_or_default() };
    let mut out = Vec::new();
    for b in builtins.unwrap_or(&[]) {
        let found = chains.iter().find(|c| c.chain.name == b.name);
        let policy = found
            .and_then(|c| c.base.map(|x| x.policy))
            .unwrap_or(ChainPolicy::Accept);
        out.push(ChainListing {
            name: b.name.into(),
            policy: Some(policy),
            policy_counters: found.and_then(|c| c.counters),
            references: 0,
            rules: rules_of(b.name),
        });
    }
    let is_builtin = |n: &str| builtins.is_some_and(|bs| bs.iter().any(|b| b.name == n));
    // Base chains of a table of our own are shown like built-ins.
    for c in chains
        .iter()
        .filter(|c| c.base.is_some() && !is_builtin(&c.chain.name))
    {
        out.push(ChainListing {
            name: c.chain.name.clone(),
            policy: c.base.map(|b| b.policy),
            policy_counters: c.counters,
            references: 0,
            rules: rules_of(&c.chain.name),
        });
    }
    let mut user: Vec<&Chain> = chains
        .iter()
        .filter(|c| c.base.is_none() && !is_builtin(&c.chain.name))
        .collect();
    user.sort_by(|a, b| a.chain.name.as_bytes().cmp(b.chain.name.as_bytes()));
    for c in user {
        let rules = rules_of(&c.chain.name);
        // One chain read alone: the kernel's use count is its rules and the jumps to it
        // (what iptables-nft prints as references, `use - rules`).
        let references = match only {
            Some(_) => c.use_count.saturating_sub(rules.len() as u32),
            None => refs(&c.chain.name),
        };
        out.push(ChainListing {
            name: c.chain.name.clone(),
            policy: None,
            policy_counters: None,
            references,
            rules,
        });
    }
    Ok(out)
}

/// The caller words it with its family (`crate::ipt::messages::kernel_words`).
pub(super) fn no_chain(chain: &str) -> Error {
    Error::NotFound(crate::OpFailure {
        index: 0,
        op: format!("list chain {chain}"),
        errno: libc::ENOENT,
        ext_ack: None,
    })
}

/// `iptables -S [chain]` (with `-v`, counters as `-c packets bytes`). A rule that iptables
/// syntax cannot express is shown on a `#` line with its handle instead of being hidden.
pub fn list_rules(
    session: &mut Session,
    table: &TableRef,
    chain: Option<&str>,
    verbose: bool,
) -> Result<String> {
    let chains = read(session, table, chain)?;
    render_rules(&chains, chain, verbose)
}

/// `-S` of chains read by either backend.
pub fn render_rules(chains: &[ChainListing], chain: Option<&str>, verbose: bool) -> Result<String> {
    if let Some(c) = chain
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    let selected: Vec<&ChainListing> = chains
        .iter()
        .filter(|c| chain.is_none_or(|n| n == c.name))
        .collect();
    let mut out = String::new();
    for c in &selected {
        match c.policy {
            Some(p) => {
                let _ = write!(out, "-P {} {}", c.name, policy_name(p));
                if verbose {
                    let n = c.policy_counters.unwrap_or_default();
                    let _ = write!(out, " -c {} {}", n.packets, n.bytes);
                }
                out.push('\n');
            }
            None => {
                let _ = writeln!(out, "-N {}", c.name);
            }
        }
    }
    write_rules(&mut out, selected.into_iter(), verbose);
    Ok(out)
}

/// The `-A` lines of `chains`; a rule that iptables syntax cannot express goes on a `#` line
/// with its handle (restore ignores it; nothing is hidden).
fn write_rules<'a>(
    out: &mut String,
    chains: impl Iterator<Item = &'a ChainListing>,
    counters: bool,
) {
    for c in chains {
        for (handle, rule) in &c.rules {
            if rule.is_expressible() {
                crate::ipt::messages::printing(|| {
                    print::write_append_line(out, &c.name, rule, counters)
                });
                out.push('\n');
            } else {
                let _ = writeln!(
                    out,
                    "# handle {handle}: a rule in chain {} that iptables syntax cannot express:{}",
                    c.name,
                    print::rule_spec(rule)
                );
            }
        }
    }
}

/// A table's body in iptables-save format, from chains read by either backend, with
/// `[packets:bytes]` before each rule when `counters` (`save -c`).
pub fn render_save_counters(chains: &[ChainListing], counters: bool) -> String {
    // Room for the usual rule line at once, rather than copying the text as it grows.
    let rules: usize = chains.iter().map(|c| c.rules.len()).sum();
    let mut out = String::with_capacity(64 * (chains.len() + 1) + 160 * rules);
    for c in chains {
        write_save_chain(&mut out, &c.name, c.policy.map(|p| (p, c.policy_counters)));
    }
    for c in chains {
        for (handle, rule) in &c.rules {
            write_save_rule(&mut out, &c.name, *handle, rule, counters);
        }
    }
    out
}

/// A chain's line in iptables-save format: `:NAME POLICY [packets:bytes]` for a built-in
/// chain (`policy`), `:NAME - [0:0]` for a user chain.
pub fn write_save_chain(
    out: &mut String,
    name: &str,
    policy: Option<(ChainPolicy, Option<Counters>)>,
) {
    match policy {
        Some((p, n)) => {
            let n = n.unwrap_or_default();
            let _ = writeln!(
                out,
                ":{name} {} [{}:{}]",
                policy_name(p),
                n.packets,
                n.bytes
            );
        }
        None => {
            let _ = writeln!(out, ":{name} - [0:0]");
        }
    }
}

/// A rule's line in iptables-save format (`[packets:bytes] -A ...` when `counters`: `save
/// -c`); a rule that iptables syntax cannot express goes on a `#` line with its handle
/// (restore ignores it; nothing is hidden).
pub fn write_save_rule(out: &mut String, chain: &str, handle: u64, rule: &IptRule, counters: bool) {
    if !rule.is_expressible() {
        let _ = writeln!(
            out,
            "# handle {handle}: a rule in chain {chain} that iptables syntax cannot express:{}",
            print::rule_spec(rule)
        );
        return;
    }
    if counters {
        let n = rule.counters.unwrap_or_default();
        let _ = write!(out, "[{}:{}] ", n.packets, n.bytes);
    }
    crate::ipt::messages::printing(|| print::write_append_line(out, chain, rule, false));
    out.push('\n');
}
