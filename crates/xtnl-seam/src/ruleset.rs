//! What the NAT-host operations need from a backend: a view of a few chains of a table
//! ([`TableAccess`]), and an atomic commit of changes planned from that view
//! ([`RulesetBackend`]). The operations (the library's `xtnl::nathost`) are written once
//! against them; nf_tables ([`crate::nft::Session`], in [`crate::ipt::ruleset`]), x_tables
//! (`xtnl::legacy::Legacy`) and the in-memory ruleset of the tests
//! (`xtnl::nathost::memory`) implement them. Changes are in iptables terms (tables and
//! chains by name, rules as [`IptRule`]), so the policy check and the audit see the same
//! whichever backend carries them.

use super::{Edit, RuleRef};
use crate::error::{Error, Result};
use crate::ipt::{IptRule, tables};
use crate::model::Family;

/// A chain as a plan sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainInfo {
    /// The chain's name.
    pub name: String,
    /// A base chain (hooked into the stack: PREROUTING, INPUT, ...).
    pub base: bool,
    /// Jumps and gotos to the chain from rules anywhere, when the backend knows without a
    /// scan of the table.
    pub references: Option<u32>,
    /// The id of the rule most likely to be the one jump to this chain, when the backend
    /// can tell without a scan: for nf_tables, the rule created right after the chain, as a
    /// set-up creates the jump. Only a guess: a plan that deletes it must also delete the
    /// chain, so that the commit fails unless the guess was right (see
    /// [`Edit::DeleteGuessedJump`]).
    pub jump_hint: Option<u64>,
}

/// A rule of a chain: its identity for deletion and what it says in iptables terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEntry {
    /// The nf_tables rule handle; for x_tables, the rule's place in the table as read.
    pub id: u64,
    /// The rule.
    pub rule: IptRule,
}

/// Chains looked up by name, with the rules of one of them.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// In the order asked; `None` for a chain (or table) that does not exist.
    pub chains: Vec<Option<ChainInfo>>,
    /// The rules of the chain asked for, in order.
    pub rules: Vec<RuleEntry>,
}

/// A read-only view of the ruleset for planning. Every read of one plan comes from one
/// generation of the ruleset: the commit is refused, and the plan run again, if anything
/// changed in between.
pub trait TableAccess {
    /// The family of the tables seen.
    fn family(&self) -> Family;
    /// Chains by name and the rules of one of them, in one read where the backend can.
    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup>;
    /// One rule of a chain by id; `None` when the chain holds no such rule.
    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>>;
    /// Every chain of a table (empty when the table does not exist).
    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>>;
    /// Every rule of a table, with its chain.
    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>>;
    /// The chain as `lookup(table, &[chain], Some(chain))` finds it, and the first of its
    /// rules that is `rule` (counters aside, [`IptRule::same_rule`]). A view that indexes
    /// the rules answers without copying the chain (a transaction of thousands of
    /// `ensure_rule` stays linear).
    fn find_rule(
        &mut self,
        table: &str,
        chain: &str,
        rule: &IptRule,
    ) -> Result<(Option<ChainInfo>, Option<RuleEntry>)> {
        let look = self.lookup(table, &[chain], Some(chain))?;
        let found = look.rules.into_iter().find(|r| r.rule.same_rule(rule));
        Ok((look.chains.into_iter().next().flatten(), found))
    }
    /// Whether a plan must find every reference to a chain it deletes by scanning the table.
    /// When false, the plan may look where references are expected only: the backend's
    /// commit refuses to delete a chain that is still referenced, and the plan is then run
    /// again with this true.
    fn exhaustive(&self) -> bool;
}

/// One change of a NAT-host plan: an [`Edit`] of a table. A plan's changes span tables
/// (`nat` and `filter`), so each names its own; rules are addressed by stable id
/// ([`RuleRef::Id`]), which the plan's other changes do not move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The table.
    pub table: String,
    /// What changes in it.
    pub edit: Edit,
}

impl Change {
    /// `edit` of `table`.
    pub fn new(table: impl Into<String>, edit: Edit) -> Change {
        Change {
            table: table.into(),
            edit,
        }
    }

    /// Create `chain` ([`Edit::CreateChain`]).
    pub fn create_chain(table: impl Into<String>, chain: impl Into<String>) -> Change {
        Change::new(table, Edit::CreateChain(chain.into()))
    }

    /// Delete every rule of `chain` ([`Edit::Flush`]).
    pub fn flush_chain(table: impl Into<String>, chain: impl Into<String>) -> Change {
        Change::new(table, Edit::Flush(chain.into()))
    }

    /// Delete `chain` ([`Edit::DeleteChain`]).
    pub fn delete_chain(table: impl Into<String>, chain: impl Into<String>) -> Change {
        Change::new(table, Edit::DeleteChain(chain.into()))
    }

    /// `rule` at the head of `chain` ([`Edit::Insert`] at 1).
    pub fn insert_rule(
        table: impl Into<String>,
        chain: impl Into<String>,
        rule: IptRule,
    ) -> Change {
        let chain = chain.into();
        Change::new(
            table,
            Edit::Insert {
                chain,
                index: 1,
                rule,
            },
        )
    }

    /// `rule` at the end of `chain` ([`Edit::Append`]).
    pub fn append_rule(
        table: impl Into<String>,
        chain: impl Into<String>,
        rule: IptRule,
    ) -> Change {
        let chain = chain.into();
        Change::new(table, Edit::Append { chain, rule })
    }

    /// The rule `old` of `chain` replaced by `rule` in place ([`Edit::Replace`] by id).
    pub fn replace_rule(
        table: impl Into<String>,
        chain: impl Into<String>,
        old: &RuleEntry,
        rule: IptRule,
    ) -> Change {
        let at = RuleRef::Id {
            id: old.id,
            rule: Box::new(old.rule.clone()),
        };
        let chain = chain.into();
        Change::new(table, Edit::Replace { chain, at, rule })
    }

    /// The rule `old` of `chain` deleted ([`Edit::Delete`] by id).
    pub fn delete_rule(
        table: impl Into<String>,
        chain: impl Into<String>,
        old: RuleEntry,
    ) -> Change {
        let at = RuleRef::Id {
            id: old.id,
            rule: Box::new(old.rule),
        };
        let chain = chain.into();
        Change::new(table, Edit::Delete { chain, at })
    }

    /// The rule `id` of `chain`, believed to be the only jump to `target`, deleted
    /// ([`Edit::DeleteGuessedJump`]).
    pub fn delete_guessed_jump(
        table: impl Into<String>,
        chain: impl Into<String>,
        id: u64,
        target: impl Into<String>,
    ) -> Change {
        let (chain, target) = (chain.into(), target.into());
        Change::new(table, Edit::DeleteGuessedJump { chain, id, target })
    }

    /// The chain the change is to (see [`Edit::chain`]).
    pub fn chain(&self) -> Option<&str> {
        self.edit.chain()
    }

    /// Refuses a change that is not one a NAT-host plan commits: every backend's
    /// [`RulesetBackend::transact`] takes chains created, flushed and deleted, rules
    /// appended, inserted at the head, replaced or deleted by id, and guessed jumps deleted;
    /// the rest of the interpreter's vocabulary (policies, counters, renames, restore's
    /// resets, rules by number) is applied through [`super::IptTable`] only.
    pub fn plannable(&self) -> Result<()> {
        match &self.edit {
            Edit::CreateChain(_)
            | Edit::Flush(_)
            | Edit::DeleteChain(_)
            | Edit::Append { .. }
            | Edit::Insert { index: 1, .. }
            | Edit::Replace {
                at: RuleRef::Id { .. },
                ..
            }
            | Edit::Delete {
                at: RuleRef::Id { .. },
                ..
            }
            | Edit::DeleteGuessedJump { .. } => Ok(()),
            _ => Err(self.unplannable()),
        }
    }

    /// The refusal of a change [`Change::plannable`] refuses.
    pub fn unplannable(&self) -> Error {
        Error::InvalidInput(format!("{self}: not a change a NAT-host plan commits"))
    }
}

/// Refuses `changes` unless each is [`Change::plannable`], naming the first that is not.
pub fn plannable(changes: &[Change]) -> Result<()> {
    for (i, c) in changes.iter().enumerate() {
        c.plannable().map_err(|_| {
            Error::InvalidInput(format!(
                "change {i}: {c}: not a change a NAT-host plan commits"
            ))
        })?;
    }
    Ok(())
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::ipt::print::append_line;
        let table = &self.table;
        // A rule's line with `flag` (and `number`) in place of `-A CHAIN`.
        let line = |f: &mut std::fmt::Formatter<'_>,
                    flag: &str,
                    chain: &str,
                    n: Option<usize>,
                    rule: &IptRule| {
            let line = append_line(chain, rule, false);
            let spec = line.strip_prefix(&format!("-A {chain}")).unwrap_or(&line);
            match n {
                Some(n) => write!(f, "-t {table} {flag} {chain} {n}{spec}"),
                None => write!(f, "-t {table} {flag} {chain}{spec}"),
            }
        };
        match &self.edit {
            // iptables creates a built-in chain with policy ACCEPT on first use.
            Edit::CreateChain(chain) if tables::builtin(table, chain).is_some() => {
                write!(f, "-t {table} -P {chain} ACCEPT")
            }
            Edit::CreateChain(chain) => write!(f, "-t {table} -N {chain}"),
            Edit::Flush(chain) => write!(f, "-t {table} -F {chain}"),
            Edit::DeleteChain(chain) => write!(f, "-t {table} -X {chain}"),
            Edit::Insert {
                chain,
                index: 1,
                rule,
            } => line(f, "-I", chain, None, rule),
            Edit::Insert { chain, index, rule } => line(f, "-I", chain, Some(*index), rule),
            Edit::Append { chain, rule } => line(f, "-A", chain, None, rule),
            Edit::Replace {
                chain,
                at: RuleRef::Id { .. },
                rule,
            } => line(f, "-R", chain, None, rule),
            Edit::Replace {
                chain,
                at: RuleRef::Number(n),
                rule,
            } => line(f, "-R", chain, Some(*n), rule),
            Edit::Delete {
                chain,
                at: RuleRef::Id { rule, .. },
            } => line(f, "-D", chain, None, rule),
            Edit::Delete {
                chain,
                at: RuleRef::Number(n),
            } => write!(f, "-t {table} -D {chain} {n}"),
            Edit::DeleteGuessedJump { chain, id, target } => {
                write!(f, "-t {table} -D {chain} (rule {id}, its jump to {target})")
            }
            Edit::FlushAll => write!(f, "-t {table} -F"),
            Edit::Zero(None) => write!(f, "-t {table} -Z"),
            Edit::Zero(Some(chain)) => write!(f, "-t {table} -Z {chain}"),
            Edit::Policy { chain, policy }
            | Edit::DeclareBuiltin {
                chain,
                policy: Some(policy),
                ..
            } => {
                let p = match policy {
                    crate::model::ChainPolicy::Accept => "ACCEPT",
                    crate::model::ChainPolicy::Drop => "DROP",
                };
                write!(f, "-t {table} -P {chain} {p}")
            }
            Edit::DeclareBuiltin {
                chain,
                policy: None,
                ..
            } => write!(f, "-t {table} :{chain} -"),
            Edit::Rename { from, to } => write!(f, "-t {table} -E {from} {to}"),
            Edit::Reset => write!(
                f,
                "-t {table} (every rule deleted, as a restore without --noflush)"
            ),
            Edit::FinishReset { .. } => {
                write!(f, "-t {table} (the user chains not declared again deleted)")
            }
        }
    }
}

/// What a commit did.
#[derive(Debug, Clone)]
pub struct Applied<T> {
    /// What the plan returned besides its changes.
    pub value: T,
    /// The changes committed (none when the plan found nothing to do).
    pub changes: Vec<Change>,
    /// How many times the plan ran (more than once when the ruleset changed under it).
    pub attempts: u32,
    /// Handles of the rules added, by index in `changes` (nf_tables only).
    pub rule_handles: Vec<(usize, u64)>,
}

/// A backend that commits planned changes atomically.
pub trait RulesetBackend {
    /// Runs `plan` on a view of the ruleset and commits its changes as one atomic
    /// transaction, re-running it when the ruleset changed between the reads and the commit.
    fn transact<T>(
        &mut self,
        family: Family,
        plan: impl FnMut(&mut dyn TableAccess) -> Result<(Vec<Change>, T)>,
    ) -> Result<Applied<T>>;
}
