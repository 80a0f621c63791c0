//! iptables commands applied to an x_tables table in memory, with iptables' checks, phrases
//! and exit statuses (the same ones [`crate::ipt::exec`] uses on nf_tables). Any number of
//! commands applied to one [`Table`] become one `IPT_SO_SET_REPLACE`.

use super::convert;
use super::table::{Carry, Chain, HOOK_NAMES, Table, Verdict};
use crate::error::{Error, OpFailure, Result};
use crate::ipt::IptRule;
use crate::ipt::listing::{self, ChainListing};
use crate::ipt::parse::Command;
use crate::ipt::restore::{Block, Line};
use crate::model::ChainPolicy;
use crate::model::Counters;

const NO_CHAIN: &str = "iptables: No chain/target/match by that name.";
const BAD_RULE: &str = "iptables: Bad rule (does a matching rule exist in that chain?).";

fn failure(errno: i32, op: String) -> OpFailure {
    OpFailure {
        index: 0,
        op,
        errno,
        ext_ack: None,
    }
}

fn not_found(chain: &str, table: &str) -> Error {
    Error::NotFound(failure(
        libc::ENOENT,
        format!("chain {chain} in table {table}"),
    ))
    .context(NO_CHAIN)
}

fn refused(message: &str, detail: String) -> Error {
    Error::Precondition(detail).context(message)
}

fn in_use(message: &str, detail: String, errno: i32) -> Error {
    Error::InUse(failure(errno, detail)).context(message)
}

/// Applies commands to a table, collecting what `-v` prints.
pub struct Applier<'t> {
    pub table: &'t mut Table,
    pub verbose_lines: Vec<String>,
    /// Whether anything changed (a `-C`, or a failed check, changes nothing).
    pub changed: bool,
}

fn policy_verdict(p: ChainPolicy) -> i32 {
    match p {
        ChainPolicy::Accept => super::blob::verdict::ACCEPT,
        ChainPolicy::Drop => super::blob::verdict::DROP,
    }
}

impl<'t> Applier<'t> {
    pub fn new(table: &'t mut Table) -> Self {
        Applier {
            table,
            verbose_lines: Vec::new(),
            changed: false,
        }
    }

    fn family(&self) -> crate::model::Family {
        self.table.family
    }

    fn chain_mut(&mut self, name: &str) -> Result<&mut Chain> {
        let table = self.table.name.clone();
        self.table
            .chain_mut(name)
            .ok_or_else(|| not_found(name, &table))
    }

    fn require(&self, name: &str) -> Result<()> {
        match self.table.chain(name) {
            Some(_) => Ok(()),
            None => Err(not_found(name, &self.table.name)),
        }
    }

    /// iptables checks a jump's target before anything else: status 2.
    fn check_jump(&self, rule: &IptRule) -> Result<()> {
        if let Some(t) = rule.jump_target()
            && self.table.chain(t).is_none_or(|c| c.is_builtin())
        {
            return Err(Error::InvalidInput(format!("Chain '{t}' does not exist")));
        }
        Ok(())
    }

    fn encode(&self, rule: &IptRule) -> Result<super::table::Rule> {
        self.check_jump(rule)?;
        convert::to_rule(self.family(), &self.table.name, rule)
    }

    /// The first rule of `chain` equal to `rule` (ignoring counters); rules holding anything
    /// iptables syntax cannot express never match.
    fn find(&self, chain: &str, rule: &IptRule) -> Option<usize> {
        let want = rule.without_counters();
        let family = self.family();
        self.table.chain(chain)?.rules.iter().position(|r| {
            let have = convert::to_ipt(family, r);
            have.is_expressible() && have.without_counters() == want
        })
    }

    fn change_line(&self, rule: &IptRule) -> String {
        listing::change_line(rule, self.family())
    }

    fn user_chains(&self) -> Vec<String> {
        self.table
            .chains
            .iter()
            .filter(|c| !c.is_builtin())
            .map(|c| c.name.clone())
            .collect()
    }

    pub fn apply(&mut self, cmd: &Command) -> Result<()> {
        match cmd {
            Command::Append { chain, rule } => {
                self.require(chain)?;
                let r = self.encode(rule)?;
                self.verbose_lines.push(self.change_line(rule));
                self.chain_mut(chain)?.rules.push(r);
                self.changed = true;
            }
            Command::Insert { chain, index, rule } => {
                self.require(chain)?;
                let r = self.encode(rule)?;
                let line = self.change_line(rule);
                let c = self.chain_mut(chain)?;
                if *index == 0 || *index > c.rules.len() + 1 {
                    return Err(refused(
                        "iptables: Index of insertion too big.",
                        format!("insert at {index} in {chain} of {} rules", c.rules.len()),
                    ));
                }
                c.rules.insert(index - 1, r);
                self.verbose_lines.push(line);
                self.changed = true;
            }
            Command::Delete { chain, rule } | Command::Check { chain, rule } => {
                self.require(chain)?;
                self.check_jump(rule)?;
                let Some(i) = self.find(chain, rule) else {
                    // iptables-legacy 1.8.9 words it by the target: a verdict (or none) gives
                    // "Bad rule", a chain or target extension "No chain/target/match".
                    let verdict = matches!(
                        rule.target,
                        None | Some(
                            crate::ipt::IptTarget::Accept
                                | crate::ipt::IptTarget::Drop
                                | crate::ipt::IptTarget::Return
                        )
                    );
                    return Err(refused(
                        if verdict { BAD_RULE } else { NO_CHAIN },
                        format!("no rule in {chain} equals the given one"),
                    ));
                };
                if matches!(cmd, Command::Check { .. }) {
                    // `-v -C` echoes the rule it found.
                    self.verbose_lines.push(self.change_line(rule));
                    return Ok(());
                }
                self.verbose_lines.push(self.change_line(rule));
                self.chain_mut(chain)?.rules.remove(i);
                self.changed = true;
            }
            Command::DeleteIndex { chain, index } | Command::Replace { chain, index, .. } => {
                self.require(chain)?;
                let new = match cmd {
                    Command::Replace { rule, .. } => Some((rule.clone(), self.encode(rule)?)),
                    _ => None,
                };
                let family = self.family();
                let c = self.chain_mut(chain)?;
                let len = c.rules.len();
                if *index == 0 || *index > len {
                    let what = if new.is_some() {
                        "replacement"
                    } else {
                        "deletion"
                    };
                    return Err(refused(
                        &format!("iptables: Index of {what} too big."),
                        format!("rule {index} of {len} in {chain}"),
                    ));
                }
                let line = match new {
                    Some((rule, r)) => {
                        c.rules[index - 1] = r;
                        listing::change_line(&rule, family)
                    }
                    None => {
                        let old = c.rules.remove(index - 1);
                        listing::change_line(&convert::to_ipt(family, &old), family)
                    }
                };
                self.verbose_lines.push(line);
                self.changed = true;
            }
            Command::NewChain(chain) => {
                if self.table.chain(chain).is_some() {
                    return Err(Error::AlreadyExists(failure(
                        libc::EEXIST,
                        format!("create chain {chain}"),
                    ))
                    .context("iptables: Chain already exists."));
                }
                check_chain_name(chain)?;
                self.table.insert_user_chain(Chain::user(chain));
                self.changed = true;
            }
            Command::DeleteChain(Some(chain)) => {
                self.require(chain)?;
                self.delete_chain(chain)?;
            }
            Command::DeleteChain(None) => {
                let users = self.user_chains();
                for name in &users {
                    self.check_deletable(name)?;
                }
                for name in &users {
                    self.delete_chain(name)?;
                }
            }
            Command::Flush(Some(chain)) => {
                self.require(chain)?;
                self.verbose_lines.push(format!("Flushing chain `{chain}'"));
                self.chain_mut(chain)?.rules.clear();
                self.changed = true;
            }
            Command::Flush(None) => {
                for c in &mut self.table.chains {
                    self.verbose_lines
                        .push(format!("Flushing chain `{}'", c.name));
                    c.rules.clear();
                }
                self.changed = true;
            }
            Command::Zero(chain) => {
                if let Some(c) = chain {
                    self.require(c)?;
                }
                for c in &mut self.table.chains {
                    if chain.as_ref().is_none_or(|n| *n == c.name) {
                        self.verbose_lines
                            .push(format!("Zeroing chain `{}'", c.name));
                        zero(c);
                    }
                }
                self.changed = true;
            }
            Command::Policy { chain, policy } => {
                let builtin = self.table.chain(chain).is_some_and(Chain::is_builtin);
                if !builtin {
                    return Err(refused(
                        "iptables: Bad built-in chain name.",
                        format!("chain {chain}"),
                    ));
                }
                let c = self.chain_mut(chain)?;
                c.policy = policy_verdict(*policy);
                // libiptc sets a policy without counters, so they start again from zero.
                c.policy_carry = Carry::Zero;
                c.policy_counters = Counters::default();
                self.changed = true;
            }
            Command::Rename { from, to } => {
                // iptables checks the new name first: `-E missing existing` is "File exists."
                let clashes = matches!(to.as_str(), "ACCEPT" | "DROP" | "RETURN" | "QUEUE");
                if clashes || self.table.chain(to).is_some() {
                    return Err(Error::AlreadyExists(failure(
                        libc::EEXIST,
                        format!("rename chain {from} to {to}"),
                    ))
                    .context("iptables: File exists."));
                }
                self.require(from)?;
                // libiptc looks up only user chains to rename.
                if self.table.chain(from).is_some_and(Chain::is_builtin) {
                    return Err(not_found(from, &self.table.name));
                }
                check_chain_name(to)?;
                let Some(i) = self.table.chains.iter().position(|c| c.name == *from) else {
                    return Err(not_found(from, &self.table.name));
                };
                let mut c = self.table.chains.remove(i);
                c.name = to.clone();
                // libiptc re-inserts a renamed chain in sorted position.
                self.table.insert_user_chain(c);
                for r in self
                    .table
                    .chains
                    .iter_mut()
                    .flat_map(|c| c.rules.iter_mut())
                {
                    if let Verdict::Jump(t) | Verdict::Goto(t) = &mut r.verdict
                        && t == from
                    {
                        *t = to.clone();
                    }
                }
                self.changed = true;
            }
            Command::ListRules(_) | Command::List(_) => {
                return Err(Error::InvalidInput("listing is not a change".into()));
            }
        }
        Ok(())
    }

    fn check_deletable(&self, chain: &str) -> Result<()> {
        let Some(c) = self.table.chain(chain) else {
            return Err(not_found(chain, &self.table.name));
        };
        if c.is_builtin() {
            // libiptc refuses with EINVAL, which iptables-legacy prints as it prints any
            // kernel EINVAL.
            return Err(Error::Rejected(failure(
                libc::EINVAL,
                format!("delete built-in chain {chain}"),
            ))
            .context("iptables: Invalid argument. Run `dmesg' for more information."));
        }
        // iptables-legacy checks references before emptiness.
        if self.table.references(chain) > 0 {
            return Err(in_use(
                "iptables: Too many links.",
                format!("delete chain {chain}"),
                libc::EMLINK,
            ));
        }
        if !c.rules.is_empty() {
            return Err(in_use(
                "iptables: Directory not empty.",
                format!("delete chain {chain}"),
                libc::ENOTEMPTY,
            ));
        }
        Ok(())
    }

    fn delete_chain(&mut self, chain: &str) -> Result<()> {
        self.check_deletable(chain)?;
        self.verbose_lines.push(format!("Deleting chain `{chain}'"));
        self.table.chains.retain(|c| c.name != chain);
        self.changed = true;
        Ok(())
    }

    /// An `iptables-restore` block, as iptables-legacy-restore applies it: without
    /// `--noflush`, every chain is flushed and every user chain deleted first (policies
    /// stay unless declared, their counters start from zero); `:CHAIN` declares a policy, or creates (or flushes) a user chain.
    pub fn restore_block(&mut self, block: &Block, noflush: bool) -> Result<()> {
        if !noflush {
            for c in &mut self.table.chains {
                c.rules.clear();
                // iptables-legacy-restore starts every policy's counters again from zero
                // (or from the file's `[p:b]` under -c), declared or not.
                c.policy_carry = Carry::Zero;
                c.policy_counters = Counters::default();
            }
            self.table.chains.retain(Chain::is_builtin);
            self.changed = true;
        }
        for (n, line) in &block.lines {
            let result = match line {
                Line::Chain {
                    name,
                    policy,
                    counters,
                } => self.declare_chain(name, *policy, *counters),
                Line::Command(cmd) => self
                    .apply(cmd)
                    .map_err(|e| crate::ipt::exec::iptables_words(e, cmd)),
            };
            result.map_err(|e| e.context(format!("line {n} failed")))?;
        }
        Ok(())
    }

    fn declare_chain(
        &mut self,
        name: &str,
        policy: Option<ChainPolicy>,
        counters: Option<Counters>,
    ) -> Result<()> {
        if self.table.chain(name).is_some_and(Chain::is_builtin) {
            // `:BUILTIN -` leaves the policy as it is, with or without --noflush (as
            // iptables-legacy-restore; libiptc's flush does not touch policies).
            let Some(policy) = policy else {
                return Ok(());
            };
            self.apply(&Command::Policy {
                chain: name.to_string(),
                policy,
            })?;
            if let Some(c) = counters {
                let chain = self.chain_mut(name)?;
                chain.policy_counters = c;
                chain.policy_carry = Carry::Start(c);
            }
            return Ok(());
        }
        if policy.is_some() {
            return Err(refused(
                "iptables: Bad built-in chain name.",
                format!("policy for user chain {name}"),
            ));
        }
        match self.table.chain_mut(name) {
            Some(c) => c.rules.clear(),
            None => {
                check_chain_name(name)?;
                self.table.insert_user_chain(Chain::user(name));
            }
        }
        self.changed = true;
        Ok(())
    }
}

/// `-Z CHAIN N`: zeroes rule N's counters, as libiptc's `iptc_zero_counter` (past the last
/// rule: "Index of counter too big.", status 1).
pub(crate) fn zero_rule(t: &mut Table, chain: &str, n: usize) -> Result<()> {
    let table = t.name.clone();
    let c = t
        .chains
        .iter_mut()
        .find(|c| c.name == chain)
        .ok_or_else(|| not_found(chain, &table))?;
    let r = n
        .checked_sub(1)
        .and_then(|i| c.rules.get_mut(i))
        .ok_or_else(|| {
            refused(
                "iptables: Index of counter too big.",
                format!("zero rule {n} of chain {chain}"),
            )
        })?;
    r.carry = Carry::Zero;
    r.counters = Counters::default();
    Ok(())
}

fn zero(c: &mut Chain) {
    c.policy_carry = Carry::Zero;
    c.policy_counters = Counters::default();
    for r in &mut c.rules {
        r.carry = Carry::Zero;
        r.counters = Counters::default();
    }
}

/// A user chain's name must fit `xt_error_target.errorname` and must not be a hook name.
fn check_chain_name(name: &str) -> Result<()> {
    crate::limits::check_iptables_chain_name(crate::limits::NameDialect::Iptables, name)?;
    if HOOK_NAMES.contains(&name) {
        return Err(
            Error::AlreadyExists(failure(libc::EEXIST, format!("create chain {name}")))
                .context("iptables: Chain already exists."),
        );
    }
    Ok(())
}

/// The table's chains as iptables-legacy lists them: in the table's order (built-ins in
/// hook order, then user chains as libiptc keeps them, sorted), each rule with its position.
pub fn chain_listings(t: &Table) -> Vec<ChainListing> {
    let refs = t.reference_counts();
    t.chains
        .iter()
        .map(|c| ChainListing {
            name: c.name.clone(),
            policy: c.hook.map(|_| {
                if c.policy == super::blob::verdict::DROP {
                    ChainPolicy::Drop
                } else {
                    ChainPolicy::Accept
                }
            }),
            policy_counters: c.hook.map(|_| c.policy_counters),
            references: refs.get(c.name.as_str()).copied().unwrap_or(0),
            rules: c
                .rules
                .iter()
                .enumerate()
                .map(|(i, r)| (i as u64 + 1, convert::to_ipt(t.family, r)))
                .collect(),
        })
        .collect()
}
