//! What the NAT-host operations need from a backend: a view of a few chains of a table, and
//! an atomic commit of changes planned from that view. The operations are written once
//! against [`TableAccess`] and [`RulesetBackend`]; nf_tables ([`crate::nft::Session`]) and
//! x_tables each implement them.

use crate::error::{ErrorKind, Result};
use crate::ipt::{IptRule, compat, tables};
use crate::model::ChainPolicy;
use crate::model::Family;
use crate::nft::{ChainRef, ChainSpec, Op, Reader, RulePosition, Session, TableRef};

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
    /// The rule, decoded into iptables terms.
    pub rule: IptRule,
}

/// Chains looked up by name, with the rules of one of them.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// In the order asked; `None` for a chain (or table) that does not exist.
    pub chains: Vec<Option<ChainInfo>>,
    /// The rules of the chain asked for in `rules_of`, in order (empty when none was asked).
    pub rules: Vec<RuleEntry>,
}

/// A read-only view of the ruleset for planning. Every read of one plan comes from one
/// generation of the ruleset: the commit is refused, and the plan run again, if anything
/// changed in between.
pub trait TableAccess {
    /// The family (IPv4 or IPv6) the backend reads and writes.
    fn family(&self) -> Family;
    /// Chains by name and the rules of one of them, in one read where the backend can.
    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup>;
    /// One rule of a chain by id; `None` when the chain holds no such rule.
    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>>;
    /// Every chain of a table (empty when the table does not exist).
    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>>;
    /// Every rule of a table, with its chain.
    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>>;
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
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Delete every rule of a chain, keeping the chain.
    FlushChain {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Delete a chain and whatever rules it still holds; refused while referenced.
    DeleteChain {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
    },
    /// Insert a rule at the head of a chain (`-I CHAIN`).
    InsertRule {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule, in iptables terms.
        rule: IptRule,
    },
    /// Append a rule to a chain (`-A CHAIN`).
    AppendRule {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule, in iptables terms.
        rule: IptRule,
    },
    /// Replace a rule in place (same position).
    ReplaceRule {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule's id, as read ([`RuleEntry::id`]).
        id: u64,
        /// The rule, in iptables terms.
        rule: IptRule,
    },
    /// Delete one rule by id; `rule` is what it said when read (for the plan's text and the
    /// audit line).
    DeleteRule {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule's id, as read ([`RuleEntry::id`]).
        id: u64,
        /// The rule, in iptables terms.
        rule: IptRule,
    },
    /// Delete the rule `id` of `chain`, believed to be the only jump to `target`. Only ever
    /// planned together with deleting `target`: if the rule is missing, or was not that
    /// jump (the target then stays referenced), the commit fails as a whole and the plan
    /// runs again looking for the jump.
    DeleteGuessedJump {
        /// The table's name (`nat`, `filter`, ...).
        table: String,
        /// The chain's name.
        chain: String,
        /// The rule's id, as read ([`RuleEntry::id`]).
        id: u64,
        /// The chain the rule is believed to jump to (deleted in the same commit).
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
    /// What the plan returned (from its last run).
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

/// How hard a plan looks for references: a guess first, then where they are expected,
/// then everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Search {
    Guess,
    Expected,
    Everywhere,
}

struct NftView<'r, 's> {
    reader: &'r mut Reader<'s>,
    family: Family,
    search: Search,
}

impl NftView<'_, '_> {
    fn table(&self, table: &str) -> TableRef {
        TableRef::new(self.family, table)
    }
}

impl TableAccess for NftView<'_, '_> {
    fn family(&self) -> Family {
        self.family
    }

    fn lookup(&mut self, table: &str, chains: &[&str], rules_of: Option<&str>) -> Result<Lookup> {
        let t = self.table(table);
        let refs: Vec<ChainRef> = chains.iter().map(|c| t.chain(*c)).collect();
        let refs_by: Vec<&ChainRef> = refs.iter().collect();
        let rules_ref = rules_of.map(|c| t.chain(c));
        let (found, raw) = self.reader.chains_and_rules(&refs_by, rules_ref.as_ref())?;
        let rules: Vec<RuleEntry> = raw
            .iter()
            .map(|r| RuleEntry {
                id: r.handle,
                rule: compat::decode(&t, r),
            })
            .collect();
        let chains = found
            .into_iter()
            .map(|c| {
                c.map(|c| {
                    // The kernel counts a chain's own rules and the jumps to it together.
                    let references = (Some(c.chain.name.as_str()) == rules_of)
                        .then(|| c.use_count.saturating_sub(rules.len() as u32));
                    // Handles of a table count up by one per chain, rule or set created, in
                    // the order of the batch: a set-up's jump is the chain's handle + 1.
                    let jump_hint = match self.search {
                        Search::Guess => c.handle.map(|h| h + 1),
                        _ => None,
                    };
                    ChainInfo {
                        name: c.chain.name,
                        base: c.base.is_some() || c.base_unknown,
                        references,
                        jump_hint,
                    }
                })
            })
            .collect();
        Ok(Lookup { chains, rules })
    }

    fn rule(&mut self, table: &str, chain: &str, id: u64) -> Result<Option<RuleEntry>> {
        let t = self.table(table);
        Ok(self.reader.rule(&t.chain(chain), id)?.map(|r| RuleEntry {
            id: r.handle,
            rule: compat::decode(&t, &r),
        }))
    }

    fn chains(&mut self, table: &str) -> Result<Vec<ChainInfo>> {
        let t = self.table(table);
        let chains = match self.reader.chains(&t) {
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(chains
            .into_iter()
            .map(|c| ChainInfo {
                name: c.chain.name,
                base: c.base.is_some() || c.base_unknown,
                references: None,
                jump_hint: None,
            })
            .collect())
    }

    fn all_rules(&mut self, table: &str) -> Result<Vec<(String, RuleEntry)>> {
        let t = self.table(table);
        let raw = match self.reader.raw_rules(&t, None) {
            Ok(r) => r,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(raw
            .iter()
            .map(|r| {
                (
                    r.chain.name.clone(),
                    RuleEntry {
                        id: r.handle,
                        rule: compat::decode(&t, r),
                    },
                )
            })
            .collect())
    }

    fn exhaustive(&self) -> bool {
        self.search == Search::Everywhere
    }
}

/// Turns iptables-level changes into nf_tables operations, with each table created first
/// when a chain is created in it (a no-op when it exists).
/// Returns the operations and, for each, the index of the change it comes from.
pub(crate) fn to_ops(family: Family, changes: &[Change]) -> Result<(Vec<Op>, Vec<usize>)> {
    let mut ops = Vec::with_capacity(changes.len() + 1);
    let mut origin = Vec::with_capacity(changes.len() + 1);
    let mut ensured: Vec<&str> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        match c {
            Change::CreateChain { table, chain } => {
                let t = TableRef::new(family, table);
                if !ensured.contains(&table.as_str()) {
                    ops.push(Op::EnsureTable(t.clone()));
                    ensured.push(table);
                }
                let spec = match tables::builtin(table, chain) {
                    Some(b) => ChainSpec::base(chain.clone(), b.base(ChainPolicy::Accept)),
                    None => ChainSpec::regular(chain.clone()),
                };
                ops.push(Op::CreateChain {
                    table: t,
                    chain: spec,
                });
            }
            Change::FlushChain { table, chain } => {
                ops.push(Op::FlushChain(TableRef::new(family, table).chain(chain)));
            }
            Change::DeleteChain { table, chain } => {
                ops.push(Op::DeleteChain(TableRef::new(family, table).chain(chain)));
            }
            Change::InsertRule { table, chain, rule }
            | Change::AppendRule { table, chain, rule } => {
                let t = TableRef::new(family, table);
                let position = if matches!(c, Change::InsertRule { .. }) {
                    RulePosition::Head
                } else {
                    RulePosition::Append
                };
                ops.push(Op::AddEncodedRule {
                    chain: t.chain(chain),
                    rule: compat::encode(&t, rule)?,
                    position,
                });
            }
            Change::ReplaceRule {
                table,
                chain,
                id,
                rule,
            } => {
                let t = TableRef::new(family, table);
                ops.push(Op::ReplaceEncodedRule {
                    chain: t.chain(chain),
                    handle: *id,
                    rule: compat::encode(&t, rule)?,
                });
            }
            Change::DeleteRule {
                table, chain, id, ..
            }
            | Change::DeleteGuessedJump {
                table, chain, id, ..
            } => {
                ops.push(Op::DeleteRule {
                    chain: TableRef::new(family, table).chain(chain),
                    handle: *id,
                });
            }
        }
        origin.resize(ops.len(), i);
    }
    Ok((ops, origin))
}

impl RulesetBackend for Session {
    fn transact<T>(
        &mut self,
        family: Family,
        mut plan: impl FnMut(&mut dyn TableAccess) -> Result<(Vec<Change>, T)>,
    ) -> Result<Applied<T>> {
        // Under a policy, no guess: the guard reads the real target of every rule deleted by
        // handle, and a wrong guess (a rule that is not the jump) would be judged as that
        // rule, a denial where root without a policy just plans again.
        let mut search = if self.has_guard() {
            Search::Expected
        } else {
            Search::Guess
        };
        loop {
            let mut planned = Vec::new();
            let mut origin = Vec::new();
            let result = Session::transact(self, |reader| {
                let mut view = NftView {
                    reader,
                    family,
                    search,
                };
                let (changes, value) = plan(&mut view)?;
                let mut tx = crate::nft::Transaction::new();
                tx.want_rule_handles(true);
                let (ops, from) = to_ops(family, &changes)?;
                for op in ops {
                    tx.push(op);
                }
                planned = changes;
                origin = from;
                Ok((tx, value))
            });
            match result {
                Ok(c) => {
                    let rule_handles = c
                        .rule_handles
                        .iter()
                        .filter_map(|&(op, h)| Some((*origin.get(op)?, h)))
                        .collect();
                    return Ok(Applied {
                        value: c.value,
                        changes: planned,
                        attempts: c.attempts,
                        rule_handles,
                    });
                }
                // A guessed jump that was not there, or not the only reference: plan again,
                // looking where jumps are expected.
                Err(e)
                    if matches!(e.kind(), ErrorKind::InUse | ErrorKind::NotFound)
                        && search == Search::Guess
                        && planned
                            .iter()
                            .any(|c| matches!(c, Change::DeleteGuessedJump { .. })) =>
                {
                    search = Search::Expected;
                }
                // A chain deletion the kernel refused because references remain that the
                // plan did not look for: plan again, looking everywhere.
                Err(e)
                    if e.kind() == ErrorKind::InUse
                        && search < Search::Everywhere
                        && planned
                            .iter()
                            .any(|c| matches!(c, Change::DeleteChain { .. })) =>
                {
                    search = Search::Everywhere;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Refuses a name that cannot be a chain of `table`: empty, too long, with NUL or control
/// characters or blanks, or starting with `-` or `!` (iptables would read it as an option).
pub fn check_chain_name(table: &str, chain: &str) -> Result<()> {
    crate::limits::check_chain_name(
        crate::limits::NameDialect::command(tables::is_iptables_table(table)),
        table,
        chain,
    )
}
