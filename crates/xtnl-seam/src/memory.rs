//! A table in memory behind the seam: the test kit for the interpreter. It holds rules in
//! iptables terms, has the built-in chains iptables gives the table, and answers as the
//! [`Flavour`] it is made with, so the interpreter's checks, messages and edits can be
//! tested without root, without a kernel and in microseconds.
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_ipt::parse::parse;
//! use xtnl_seam::{Flavour, interpret, memory::MemoryTable};
//!
//! let mut t = MemoryTable::new(Family::Ipv4, "filter", Flavour::Nft);
//! let args: Vec<String> = ["-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"]
//!     .iter().map(|s| s.to_string()).collect();
//! interpret(&mut t, &parse(&args, Family::Ipv4).unwrap().command).unwrap();
//! assert_eq!(t.rules("INPUT").len(), 1);
//! ```

use super::{Edit, Flavour, IptTable, RuleRef, chain_rules};
use crate::error::{Error, Result};
use crate::ipt::listing::ChainListing;
use crate::ipt::messages::{self, Msg};
use crate::ipt::parse::{Command, Invocation};
use crate::ipt::tables;
use crate::ipt::{IptRule, IptTarget};
use crate::model::{ChainPolicy, Counters, Family};

/// A chain in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryChain {
    /// Its name.
    pub name: String,
    /// A built-in chain's policy; `None` for a user chain.
    pub policy: Option<ChainPolicy>,
    /// Its rules, in order.
    pub rules: Vec<IptRule>,
}

/// One table in memory, as an [`IptTable`].
#[derive(Debug, Clone)]
pub struct MemoryTable {
    family: Family,
    name: String,
    flavour: Flavour,
    /// Built-in chains first (in the order iptables lists them), then user chains.
    chains: Vec<MemoryChain>,
    /// What `-v` would print.
    pub lines: Vec<String>,
    /// Whether `-v` was given.
    pub verbose: bool,
    /// The user chains that existed when the last restore reset began.
    before_reset: Vec<String>,
    /// When set, what the edits touch is derived as the x_tables backend derives it under
    /// a policy ([`super::judge`]).
    pub judge: Option<super::Judge>,
}

impl MemoryTable {
    /// An empty table with iptables' built-in chains of `name` (policy ACCEPT).
    pub fn new(family: Family, name: &str, flavour: Flavour) -> MemoryTable {
        let chains = tables::builtins(name)
            .unwrap_or(&[])
            .iter()
            .map(|b| MemoryChain {
                name: b.name.to_string(),
                policy: Some(ChainPolicy::Accept),
                rules: Vec::new(),
            })
            .collect();
        MemoryTable {
            family,
            name: name.to_string(),
            flavour,
            chains,
            lines: Vec::new(),
            verbose: false,
            before_reset: Vec::new(),
            judge: None,
        }
    }

    /// The chains, built-ins first, then user chains sorted by name.
    pub fn chains(&self) -> &[MemoryChain] {
        &self.chains
    }

    /// A chain by name.
    pub fn chain(&self, name: &str) -> Option<&MemoryChain> {
        self.chains.iter().find(|c| c.name == name)
    }

    /// The rules of a chain (none for a chain that does not exist).
    pub fn rules(&self, chain: &str) -> &[IptRule] {
        self.chain(chain).map(|c| c.rules.as_slice()).unwrap_or(&[])
    }

    fn chain_mut(&mut self, name: &str) -> Result<&mut MemoryChain> {
        self.chains
            .iter_mut()
            .find(|c| c.name == name)
            .ok_or_else(|| Error::InvalidInput(format!("no chain {name}")))
    }

    fn insert_user_chain(&mut self, c: MemoryChain) {
        let at = self
            .chains
            .iter()
            .position(|x| x.policy.is_none() && x.name.as_bytes() > c.name.as_bytes())
            .unwrap_or(self.chains.len());
        self.chains.insert(at, c);
    }

    fn count_jumps(&self, target: &str) -> usize {
        self.chains
            .iter()
            .flat_map(|c| &c.rules)
            .filter(|r| r.jump_target() == Some(target))
            .count()
    }
}

impl IptTable for MemoryTable {
    type Encoded = ();

    fn flavour(&self) -> Flavour {
        self.flavour
    }

    fn family(&self) -> Family {
        self.family
    }

    fn label(&self) -> String {
        self.name.clone()
    }

    fn verbose(&self) -> bool {
        self.verbose
    }

    fn say(&mut self, line: String) {
        self.lines.push(line);
    }

    fn exists(&mut self, chain: &str) -> Result<bool> {
        Ok(self.chain(chain).is_some())
    }

    fn builtin(&self, chain: &str) -> bool {
        self.chain(chain).is_some_and(|c| c.policy.is_some())
    }

    fn is_base(&mut self, chain: &str) -> Result<bool> {
        Ok(self.builtin(chain))
    }

    fn counted(&mut self, chain: &str) -> Result<bool> {
        Ok(self.chain(chain).is_some())
    }

    fn rule_count(&mut self, chain: &str) -> Result<usize> {
        Ok(self.rules(chain).len())
    }

    fn rule_at(&mut self, chain: &str, index: usize) -> Result<Option<IptRule>> {
        Ok(index
            .checked_sub(1)
            .and_then(|i| self.rules(chain).get(i))
            .cloned())
    }

    fn find(&mut self, chain: &str, rule: &IptRule) -> Result<Option<usize>> {
        let want = rule.without_counters();
        Ok(self
            .rules(chain)
            .iter()
            .position(|r| r.is_expressible() && r.without_counters() == want)
            .map(|i| i + 1))
    }

    fn references(&mut self, chain: &str) -> Result<i64> {
        Ok(self.count_jumps(chain) as i64)
    }

    fn jumped_to(&mut self, chain: &str) -> Result<bool> {
        Ok(self.count_jumps(chain) > 0)
    }

    fn chain_order(&mut self) -> Result<Vec<String>> {
        Ok(self.chains.iter().map(|c| c.name.clone()).collect())
    }

    fn user_chains(&mut self) -> Result<Vec<String>> {
        Ok(self
            .chains
            .iter()
            .filter(|c| c.policy.is_none())
            .map(|c| c.name.clone())
            .collect())
    }

    fn encode(&mut self, rule: &IptRule) -> Result<()> {
        if rule.is_expressible() {
            Ok(())
        } else {
            Err(Error::InvalidInput(
                "a rule iptables syntax cannot express".into(),
            ))
        }
    }

    fn take_judge(&mut self) -> Option<super::Judge> {
        self.judge.take()
    }

    fn put_judge(&mut self, judge: super::Judge) {
        self.judge = Some(judge);
    }

    fn apply(&mut self, edit: &Edit, _: Option<()>) -> Result<()> {
        match edit {
            Edit::Append { chain, rule } => {
                chain_rules::append(&mut self.chain_mut(chain)?.rules, rule.clone());
            }
            Edit::Insert { chain, index, rule } => {
                let rules = &mut self.chain_mut(chain)?.rules;
                chain_rules::insert_at(rules, chain, *index, rule.clone())?;
            }
            Edit::Replace {
                chain,
                at: RuleRef::Number(index),
                rule,
            } => {
                let rules = &mut self.chain_mut(chain)?.rules;
                chain_rules::replace_at(rules, chain, *index, rule.clone())?;
            }
            Edit::Delete {
                chain,
                at: RuleRef::Number(index),
            } => {
                chain_rules::delete_at(&mut self.chain_mut(chain)?.rules, chain, *index)?;
            }
            Edit::CreateChain(chain) => self.insert_user_chain(MemoryChain {
                name: chain.clone(),
                policy: None,
                rules: Vec::new(),
            }),
            Edit::DeleteChain(chain) => self.chains.retain(|c| c.name != *chain),
            Edit::Flush(chain) => self.chain_mut(chain)?.rules.clear(),
            Edit::FlushAll => self.chains.iter_mut().for_each(|c| c.rules.clear()),
            Edit::Zero(chain) => {
                for c in &mut self.chains {
                    if chain.as_ref().is_none_or(|n| *n == c.name) {
                        for r in &mut c.rules {
                            if r.counters.is_some() {
                                r.counters = Some(Counters::default());
                            }
                        }
                    }
                }
            }
            Edit::Policy { chain, policy } => self.chain_mut(chain)?.policy = Some(*policy),
            Edit::Rename { from, to } => {
                let Some(i) = self.chains.iter().position(|c| c.name == *from) else {
                    return Err(Error::InvalidInput(format!("no chain {from}")));
                };
                let mut c = self.chains.remove(i);
                c.name = to.clone();
                self.insert_user_chain(c);
                // Jumps follow the chain (nf_tables by handle, libiptc by rewriting them).
                for r in self.chains.iter_mut().flat_map(|c| c.rules.iter_mut()) {
                    if let Some(IptTarget::Jump(t) | IptTarget::Goto(t)) = &mut r.target
                        && t == from
                    {
                        *t = to.clone();
                    }
                }
            }
            Edit::Reset => {
                self.before_reset = self.user_chains()?;
                for c in &mut self.chains {
                    c.rules.clear();
                    if c.policy.is_some() {
                        c.policy = Some(ChainPolicy::Accept);
                    }
                }
            }
            Edit::DeclareBuiltin { chain, policy, .. } => {
                if let Some(p) = policy {
                    self.chain_mut(chain)?.policy = Some(*p);
                }
            }
            Edit::FinishReset { declared } => {
                let stale: Vec<String> = std::mem::take(&mut self.before_reset)
                    .into_iter()
                    .filter(|n| !declared.contains(n))
                    .collect();
                self.chains.retain(|c| !stale.contains(&c.name));
            }
            Edit::Delete { .. } | Edit::Replace { .. } | Edit::DeleteGuessedJump { .. } => {
                return Err(edit.not_by_number());
            }
        }
        Ok(())
    }
}

/// The in-memory side of the one dispatch ([`super::dispatch::execute`]), so that a whole
/// invocation (listings, `-L -Z`, `-Z CHAIN N`, changes) runs on it without root: a listing
/// renders this table; every change goes through the interpreter and, like a commit, is
/// all or nothing.
impl super::dispatch::IptCommands for MemoryTable {
    fn flavour(&self) -> Flavour {
        self.flavour
    }

    fn read_listing(
        &mut self,
        family: Family,
        table: &str,
        _only: Option<&str>,
    ) -> Result<Vec<ChainListing>> {
        if family != self.family || table != self.name {
            return Err(Error::NoSuchTable(table.to_string()));
        }
        let references = |name: &str| {
            self.chains
                .iter()
                .flat_map(|c| &c.rules)
                .filter(|r| r.jump_target() == Some(name))
                .count() as u32
        };
        Ok(self
            .chains
            .iter()
            .map(|c| ChainListing {
                name: c.name.clone(),
                policy: c.policy,
                policy_counters: c.policy.map(|_| Counters::default()),
                references: references(&c.name),
                rules: (1..).zip(c.rules.iter().cloned()).collect(),
            })
            .collect())
    }

    fn list_and_zero(&mut self, inv: &Invocation, chain: Option<&str>) -> Result<String> {
        let list = Invocation {
            zero_after_list: false,
            ..inv.clone()
        };
        let mut text = super::dispatch::list(self, &list)?;
        let zero = Invocation {
            command: Command::Zero(chain.map(str::to_string)),
            zero_after_list: false,
            ..inv.clone()
        };
        text.push_str(&super::dispatch::execute(self, &zero)?);
        Ok(text)
    }

    /// As iptables-nft: a missing chain is "Bad rule", a number past the last rule changes
    /// nothing.
    fn zero_rule(&mut self, inv: &Invocation, chain: &str, n: usize) -> Result<String> {
        let Some(c) = self.chains.iter_mut().find(|c| c.name == chain) else {
            return Err(messages::refused(
                inv.family,
                Msg::BadRule,
                format!("zero rule {n} of chain {chain}"),
            ));
        };
        if let Some(r) = n.checked_sub(1).and_then(|i| c.rules.get_mut(i)) {
            r.counters = Some(Counters::default());
        }
        Ok(String::new())
    }

    fn change(&mut self, inv: &Invocation) -> Result<String> {
        let saved = self.chains.clone();
        self.verbose = inv.verbose;
        self.lines.clear();
        if let Err(e) = super::interpret(self, &inv.command) {
            self.chains = saved;
            return Err(super::dispatch::change_words(e, inv));
        }
        let mut out = String::new();
        if inv.verbose {
            for l in self.lines.drain(..) {
                out.push_str(&l);
                out.push('\n');
            }
        }
        Ok(out)
    }
}
