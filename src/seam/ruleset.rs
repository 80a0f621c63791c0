//! What the NAT-host operations need from a backend: a view of a few chains of a table
//! ([`TableAccess`]), and an atomic commit of changes planned from that view
//! ([`RulesetBackend`]). The operations ([`crate::nathost`]) are written once against them;
//! nf_tables ([`crate::nft::Session`], in `nathost/backend.rs`), x_tables
//! ([`crate::legacy::Legacy`]) and the in-memory ruleset of the tests
//! ([`crate::nathost::memory`]) implement them. Changes are in iptables terms (tables and
//! chains by name, rules as [`IptRule`]), so the policy check and the audit see the same
//! whichever backend carries them.

use crate::error::Result;
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
    /// [`Change::DeleteGuessedJump`]).
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

/// One change of a plan, in iptables terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Create a chain (a built-in one with policy ACCEPT, as iptables creates them).
    CreateChain {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
    },
    /// Delete every rule of a chain.
    FlushChain {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
    },
    /// Delete a chain and whatever rules it still holds; refused while referenced.
    DeleteChain {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
    },
    /// A rule at the head of a chain.
    InsertRule {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// A rule at the end of a chain.
    AppendRule {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
        /// The rule.
        rule: IptRule,
    },
    /// Replace a rule in place (same position).
    ReplaceRule {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
        /// The rule's id ([`RuleEntry::id`]).
        id: u64,
        /// The rule.
        rule: IptRule,
    },
    /// Delete the rule `id` (which says `rule`) of a chain.
    DeleteRule {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
        /// The rule's id ([`RuleEntry::id`]).
        id: u64,
        /// The rule.
        rule: IptRule,
    },
    /// Delete the rule `id` of `chain`, believed to be the only jump to `target`. Only ever
    /// planned together with deleting `target`: if the rule is missing, or was not that
    /// jump (the target then stays referenced), the commit fails as a whole and the plan
    /// runs again looking for the jump.
    DeleteGuessedJump {
        /// The table.
        table: String,
        /// The chain.
        chain: String,
        /// The rule's id ([`RuleEntry::id`]).
        id: u64,
        /// The chain it jumps to, deleted by the same plan.
        target: String,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::ipt::print::append_line;
        match self {
            // iptables creates a built-in chain with policy ACCEPT on first use.
            Change::CreateChain { table, chain } if tables::builtin(table, chain).is_some() => {
                write!(f, "-t {table} -P {chain} ACCEPT")
            }
            Change::CreateChain { table, chain } => write!(f, "-t {table} -N {chain}"),
            Change::FlushChain { table, chain } => write!(f, "-t {table} -F {chain}"),
            Change::DeleteChain { table, chain } => write!(f, "-t {table} -X {chain}"),
            Change::InsertRule { table, chain, rule } => {
                let line = append_line(chain, rule, false);
                write!(f, "-t {table} -I{}", line.trim_start_matches("-A"))
            }
            Change::AppendRule { table, chain, rule } => {
                write!(f, "-t {table} {}", append_line(chain, rule, false))
            }
            Change::ReplaceRule {
                table, chain, rule, ..
            } => {
                let line = append_line(chain, rule, false);
                write!(f, "-t {table} -R{}", line.trim_start_matches("-A"))
            }
            Change::DeleteRule {
                table, chain, rule, ..
            } => {
                let line = append_line(chain, rule, false);
                write!(f, "-t {table} -D{}", line.trim_start_matches("-A"))
            }
            Change::DeleteGuessedJump {
                table,
                chain,
                id,
                target,
            } => write!(f, "-t {table} -D {chain} (rule {id}, its jump to {target})"),
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
