//! Runs an iptables [`Invocation`] against nf_tables through a [`Session`]: every command is
//! one transaction planned from a read of the table, so check-then-act sequences that race
//! between separate iptables processes are atomic here.

use super::parse::{Command, Invocation};
use super::rule::IptRule;
use super::tables::{self, Builtin};
use super::{compat, listing};
use crate::error::{Error, Result};
use crate::nft::{
    Chain, ChainSpec, Op, Policy, RawRule, Reader, RulePosition, Session, TableRef, Transaction,
};

const NO_CHAIN: &str = "iptables: No chain/target/match by that name.";
const BAD_RULE: &str = "iptables: Bad rule (does a matching rule exist in that chain?).";

fn not_found(what: String) -> Error {
    Error::NotFound(crate::OpFailure {
        index: 0,
        op: what,
        errno: libc::ENOENT,
        ext_ack: None,
    })
    .context(NO_CHAIN)
}

fn refused(message: &str, detail: String) -> Error {
    Error::Rejected(crate::OpFailure {
        index: 0,
        op: detail,
        errno: libc::EINVAL,
        ext_ack: None,
    })
    .context(message)
}

/// What an iptables table looks like right now: its chains (by name) and, once asked for,
/// its rules decoded the iptables way.
struct TableView {
    table: TableRef,
    chains: Vec<Chain>,
}

impl TableView {
    fn read(r: &mut Reader<'_>, table: &TableRef) -> Result<TableView> {
        let exists = r.tables()?.iter().any(|t| &t.table == table);
        let chains = if exists { r.chains(table)? } else { Vec::new() };
        Ok(TableView {
            table: table.clone(),
            chains,
        })
    }
    fn has(&self, chain: &str) -> bool {
        self.chains.iter().any(|c| c.chain.name == chain)
            || (self.builtins().iter().any(|b| b.name == chain))
    }
    fn builtins(&self) -> &'static [Builtin] {
        tables::builtins(&self.table.name).unwrap_or(&[])
    }
    fn is_builtin(&self, chain: &str) -> bool {
        self.builtins().iter().any(|b| b.name == chain)
    }
    /// Creates the table and whichever built-in chains are missing, the way iptables-nft
    /// does on first use; existing chains (and their policies) are left alone.
    fn ensure_builtins(&self, tx: &mut Transaction) {
        let missing: Vec<&Builtin> = self
            .builtins()
            .iter()
            .filter(|b| !self.chains.iter().any(|c| c.chain.name == b.name))
            .collect();
        if self.chains.is_empty() || !missing.is_empty() {
            tx.ensure_table(&self.table);
        }
        for b in missing {
            tx.ensure_chain(&self.table, ChainSpec::base(b.name, b.base(Policy::Accept)));
        }
    }
    fn require(&self, chain: &str) -> Result<()> {
        if self.has(chain) {
            Ok(())
        } else {
            Err(not_found(format!("chain {chain} in table {}", self.table)))
        }
    }
}

fn rules_of(r: &mut Reader<'_>, view: &TableView, chain: &str) -> Result<Vec<RawRule>> {
    if view.chains.iter().any(|c| c.chain.name == chain) {
        r.raw_rules(&view.table, Some(chain))
    } else {
        Ok(Vec::new()) // a built-in chain not created yet is empty
    }
}

/// The first rule equal to `rule` (ignoring counters); rules holding anything iptables
/// syntax cannot express never match, so they are never deleted blindly.
fn find_rule(raw: &[RawRule], rule: &IptRule, view: &TableView) -> Option<u64> {
    raw.iter()
        .find(|r| {
            let decoded = compat::decode(&view.table, r);
            decoded.is_expressible() && decoded.without_counters() == rule.without_counters()
        })
        .map(|r| r.handle)
}

fn check_jump_target(view: &TableView, rule: &IptRule) -> Result<()> {
    if let Some(t) = rule.jump_target()
        && !view.chains.iter().any(|c| c.chain.name == t)
    {
        return Err(Error::InvalidInput(format!("Chain '{t}' does not exist")));
    }
    Ok(())
}

/// Runs the invocation; returns what to print on standard output.
pub fn execute(session: &mut Session, inv: &Invocation) -> Result<String> {
    let table = TableRef::new(inv.family, &inv.table);
    let iptables_table = tables::is_iptables_table(&inv.table);
    let chain_of = |c: &str| table.chain(c);
    let out = String::new();
    match &inv.command {
        Command::ListRules(chain) => {
            return listing::list_rules(session, &table, chain.as_deref(), inv.verbose);
        }
        Command::List(chain) => {
            return listing::list_table(session, &table, chain.as_deref(), inv);
        }
        _ => {}
    }
    if !iptables_table && matches!(inv.command, Command::Policy { .. }) {
        return Err(Error::InvalidInput(format!(
            "table {} is not one of iptables' tables; -P needs a built-in chain",
            inv.table
        )));
    }

    session
        .transact(|r| {
            let view = TableView::read(r, &table)?;
            if !iptables_table
                && view.chains.is_empty()
                && !r.tables()?.iter().any(|t| t.table == table)
            {
                return Err(not_found(format!("table {table}"))
                    .context(format!("table '{}' does not exist", inv.table)));
            }
            let mut tx = Transaction::new();
            if iptables_table {
                view.ensure_builtins(&mut tx);
            }
            match &inv.command {
                Command::Append { chain, rule } | Command::Insert { chain, rule, .. } => {
                    view.require(chain)?;
                    check_jump_target(&view, rule)?;
                    let encoded = compat::encode(&table, rule)?;
                    let position = match &inv.command {
                        Command::Insert { index, .. } if *index > 1 => {
                            let raw = rules_of(r, &view, chain)?;
                            match raw.get(index - 1) {
                                Some(x) => RulePosition::Before(x.handle),
                                None if *index == raw.len() + 1 => RulePosition::Append,
                                None => {
                                    return Err(refused(
                                        "iptables: Index of insertion too big.",
                                        format!(
                                            "insert at {index} in {chain} of {} rules",
                                            raw.len()
                                        ),
                                    ));
                                }
                            }
                        }
                        Command::Insert { .. } => RulePosition::Head,
                        _ => RulePosition::Append,
                    };
                    tx.push(Op::AddEncodedRule {
                        chain: chain_of(chain),
                        rule: encoded,
                        position,
                    });
                }
                Command::Delete { chain, rule } | Command::Check { chain, rule } => {
                    view.require(chain)?;
                    let raw = rules_of(r, &view, chain)?;
                    let Some(handle) = find_rule(&raw, rule, &view) else {
                        return Err(refused(
                            BAD_RULE,
                            format!("no rule in {chain} equals the given one"),
                        ));
                    };
                    if matches!(inv.command, Command::Check { .. }) {
                        return Ok((Transaction::new(), ()));
                    }
                    tx.delete_rule(&chain_of(chain), handle);
                }
                Command::DeleteIndex { chain, index } | Command::Replace { chain, index, .. } => {
                    view.require(chain)?;
                    let raw = rules_of(r, &view, chain)?;
                    let Some(target) = raw.get(index - 1) else {
                        let what = if matches!(inv.command, Command::Replace { .. }) {
                            "replacement"
                        } else {
                            "deletion"
                        };
                        return Err(refused(
                            &format!("iptables: Index of {what} too big."),
                            format!("rule {index} of {} in {chain}", raw.len()),
                        ));
                    };
                    match &inv.command {
                        Command::Replace { rule, .. } => {
                            check_jump_target(&view, rule)?;
                            let encoded = compat::encode(&table, rule)?;
                            tx.push(Op::ReplaceEncodedRule {
                                chain: chain_of(chain),
                                handle: target.handle,
                                rule: encoded,
                            });
                        }
                        _ => {
                            tx.delete_rule(&chain_of(chain), target.handle);
                        }
                    }
                }
                Command::NewChain(chain) => {
                    if view.has(chain) {
                        return Err(Error::AlreadyExists(crate::OpFailure {
                            index: 0,
                            op: format!("create chain {chain}"),
                            errno: libc::EEXIST,
                            ext_ack: None,
                        })
                        .context("iptables: Chain already exists."));
                    }
                    if !iptables_table && view.chains.is_empty() {
                        tx.ensure_table(&table);
                    }
                    tx.create_chain(&table, ChainSpec::regular(chain));
                }
                Command::DeleteChain(chain) => {
                    let victims: Vec<String> = match chain {
                        Some(c) => {
                            view.require(c)?;
                            if view.is_builtin(c) {
                                return Err(refused(
                                    "iptables: Can't delete built-in chain.",
                                    format!("chain {c}"),
                                ));
                            }
                            vec![c.clone()]
                        }
                        None => view
                            .chains
                            .iter()
                            .filter(|c| c.base.is_none() && !c.base_unknown)
                            .map(|c| c.chain.name.clone())
                            .collect(),
                    };
                    for c in &victims {
                        if !rules_of(r, &view, c)?.is_empty() && chain.is_some() {
                            return Err(Error::InUse(crate::OpFailure {
                                index: 0,
                                op: format!("delete chain {c}"),
                                errno: libc::ENOTEMPTY,
                                ext_ack: None,
                            })
                            .context("iptables: Directory not empty."));
                        }
                    }
                    if chain.is_none() {
                        // `-X` alone deletes every user chain; their rules go with them.
                        for c in &victims {
                            tx.flush_chain(&chain_of(c));
                        }
                    }
                    for c in &victims {
                        tx.delete_chain(&chain_of(c));
                    }
                }
                Command::Flush(chain) => match chain {
                    Some(c) => {
                        view.require(c)?;
                        if view.chains.iter().any(|x| &x.chain.name == c) {
                            tx.flush_chain(&chain_of(c));
                        }
                    }
                    None => {
                        if !view.chains.is_empty() {
                            tx.flush_table(&table);
                        }
                    }
                },
                Command::Zero(chain) => {
                    if let Some(c) = chain {
                        view.require(c)?;
                    }
                    // Counters are reset by a read (GETRULE_RESET) outside the transaction.
                }
                Command::Policy { chain, policy } => {
                    let Some(b) = tables::builtin(&inv.table, chain) else {
                        return Err(refused(
                            "iptables: Bad built-in chain name.",
                            format!("chain {chain}"),
                        ));
                    };
                    tx.ensure_chain(&table, ChainSpec::base(b.name, b.base(*policy)));
                }
                Command::Rename { from, to } => {
                    view.require(from)?;
                    if view.is_builtin(from) {
                        return Err(refused(
                            "iptables: Can't rename built-in chain.",
                            format!("chain {from}"),
                        ));
                    }
                    if view.has(to) {
                        return Err(Error::AlreadyExists(crate::OpFailure {
                            index: 0,
                            op: format!("rename chain {from} to {to}"),
                            errno: libc::EEXIST,
                            ext_ack: None,
                        })
                        .context("iptables: File exists."));
                    }
                    let handle = view
                        .chains
                        .iter()
                        .find(|c| &c.chain.name == from)
                        .and_then(|c| c.handle)
                        .ok_or_else(|| not_found(format!("chain {from}")))?;
                    tx.push(Op::RenameChain {
                        chain: chain_of(from),
                        handle,
                        new_name: to.clone(),
                    });
                }
                Command::ListRules(_) | Command::List(_) => {}
            }
            Ok((tx, ()))
        })
        .map_err(|e| iptables_words(e, &inv.command))?;

    if let Command::Zero(chain) = &inv.command {
        session.reset_counters(&table, chain.as_deref())?;
    }
    Ok(out)
}

/// Kernel refusals in the words iptables uses for them (callers match on these).
fn iptables_words(e: Error, cmd: &Command) -> Error {
    if matches!(e, Error::Context { .. }) {
        return e;
    }
    match e.kind() {
        crate::ErrorKind::NotFound => e.context(NO_CHAIN),
        crate::ErrorKind::AlreadyExists => e.context("iptables: Chain already exists."),
        crate::ErrorKind::InUse if matches!(cmd, Command::DeleteChain(_)) => {
            e.context("iptables: Too many links.")
        }
        _ => e,
    }
}
