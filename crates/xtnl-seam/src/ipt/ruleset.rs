//! nf_tables' side of the NAT-host seam: [`crate::nft::Session`] as a
//! [`RulesetBackend`] (a view over one generation of the ruleset, the changes turned into
//! one transaction of operations, re-planned on a conflict). The traits and their neutral
//! types are the seam's ([`crate::seam::ruleset`]); x_tables implements them in the
//! library's `xtnl::legacy`. The NAT-host operations (the library's `xtnl::nathost`)
//! re-export [`check_chain_name`].

use crate::error::{ErrorKind, Result};
use crate::ipt::{compat, tables};
use crate::model::ChainPolicy;
use crate::model::Family;
use crate::nft::{ChainRef, ChainSpec, Op, Reader, RulePosition, Session, TableRef};
use crate::seam::{
    Applied, ChainInfo, Change, Edit, Lookup, RuleEntry, RuleRef, RulesetBackend, TableAccess,
};

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
        let table = &c.table;
        match &c.edit {
            Edit::CreateChain(chain) => {
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
            Edit::Flush(chain) => {
                ops.push(Op::FlushChain(TableRef::new(family, table).chain(chain)));
            }
            Edit::DeleteChain(chain) => {
                ops.push(Op::DeleteChain(TableRef::new(family, table).chain(chain)));
            }
            Edit::Insert {
                chain,
                index: 1,
                rule,
            }
            | Edit::Append { chain, rule } => {
                let t = TableRef::new(family, table);
                let position = if matches!(c.edit, Edit::Insert { .. }) {
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
            Edit::Replace {
                chain,
                at: RuleRef::Id { id, .. },
                rule,
            } => {
                let t = TableRef::new(family, table);
                ops.push(Op::ReplaceEncodedRule {
                    chain: t.chain(chain),
                    handle: *id,
                    rule: compat::encode(&t, rule)?,
                });
            }
            Edit::Delete {
                chain,
                at: RuleRef::Id { id, .. },
            }
            | Edit::DeleteGuessedJump { chain, id, .. } => {
                ops.push(Op::DeleteRule {
                    chain: TableRef::new(family, table).chain(chain),
                    handle: *id,
                });
            }
            _ => return Err(c.unplannable()),
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
                            .any(|c| matches!(c.edit, Edit::DeleteGuessedJump { .. })) =>
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
                            .any(|c| matches!(c.edit, Edit::DeleteChain(_))) =>
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
