//! What a caller may change: a TOML policy file, checked against every transaction before
//! anything is sent (see docs/privileged-helper.md).
//!
//! ```toml
//! max_ops = 64                       # operations per transaction
//!
//! [[allow]]                          # reservation chains: anything
//! table = "nat"
//! chains = ["vcld-*"]
//! verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
//!
//! [[allow]]                          # the entry chain: only jumps to reservation chains
//! table = "nat"
//! chains = ["PREROUTING"]
//! verbs = ["add-rule", "delete-rule"]
//! jump_to = ["vcld-*"]
//! ```
//!
//! Everything not allowed by an `[[allow]]` entry is denied. The check works on [`Touch`]es,
//! a backend-neutral description of what an operation changes, so that a backend without
//! nf_tables transactions can call [`Policy::check`] on its own operations.

#![deny(missing_docs)]

pub mod audit;
mod caller;
mod file;
mod sets;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{ChainRef, Op, Reader, Transaction};
use crate::wire::expr::{Expr, ImmediateData, Verdict};

pub use caller::{Caller, accounts};
pub use file::{DEFAULT_POLICY_PATH, POLICY_PATH_ENV, load_file, load_secure};

/// What an operation does to a table or chain, as policy files name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// Create a table (iptables creates its tables on first use). Always allowed for a table
    /// that an entry names.
    CreateTable,
    /// Delete a table.
    DeleteTable,
    /// Delete every rule of every chain of a table.
    FlushTable,
    /// Create a regular chain (or make sure it exists).
    Create,
    /// Delete a chain (a rename deletes the old name and creates the new one).
    Delete,
    /// Delete every rule of a chain.
    Flush,
    /// Create a base chain or change its hook or default verdict (`iptables -P`; iptables
    /// creates its built-in chains on first use).
    Policy,
    /// Add a rule (append, insert, or the new half of a replacement).
    AddRule,
    /// Delete a rule (a replacement deletes one rule and adds another).
    DeleteRule,
    /// Zero rule counters (`iptables -Z`).
    Zero,
    /// Create a named set or map (scoped by `sets = [...]`).
    CreateSet,
    /// Delete a named set or map.
    DeleteSet,
    /// Add elements to a named set or map (a map layout's forwards).
    AddElement,
    /// Delete elements of a named set or map (flushing it included).
    DeleteElement,
}

impl Verb {
    /// Every verb, in the order policy files and messages list them.
    pub const ALL: [Verb; 14] = [
        Verb::CreateTable,
        Verb::DeleteTable,
        Verb::FlushTable,
        Verb::Create,
        Verb::Delete,
        Verb::Flush,
        Verb::Policy,
        Verb::AddRule,
        Verb::DeleteRule,
        Verb::Zero,
        Verb::CreateSet,
        Verb::DeleteSet,
        Verb::AddElement,
        Verb::DeleteElement,
    ];
    /// The verb as policy files spell it (`add-rule`, `create-table`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::CreateTable => "create-table",
            Verb::DeleteTable => "delete-table",
            Verb::FlushTable => "flush-table",
            Verb::Create => "create",
            Verb::Delete => "delete",
            Verb::Flush => "flush",
            Verb::Policy => "policy",
            Verb::AddRule => "add-rule",
            Verb::DeleteRule => "delete-rule",
            Verb::Zero => "zero",
            Verb::CreateSet => "create-set",
            Verb::DeleteSet => "delete-set",
            Verb::AddElement => "add-element",
            Verb::DeleteElement => "delete-element",
        }
    }
    /// The verb spelled `s` in a policy file; `None` if there is no such verb.
    pub fn parse(s: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.as_str() == s)
    }
    /// Verbs on a whole table, which name no chain.
    pub fn is_table_verb(self) -> bool {
        matches!(
            self,
            Verb::CreateTable | Verb::DeleteTable | Verb::FlushTable
        )
    }
    /// Verbs on a named set, whose touch names the set where others name a chain.
    pub fn is_set_verb(self) -> bool {
        matches!(
            self,
            Verb::CreateSet | Verb::DeleteSet | Verb::AddElement | Verb::DeleteElement
        )
    }
    /// Verbs whose rules may jump, so that `jump_to` applies.
    pub fn is_rule_verb(self) -> bool {
        matches!(self, Verb::AddRule | Verb::DeleteRule)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing an operation changes: the unit a policy allows or denies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The family of the table touched.
    pub family: Family,
    /// The table touched.
    pub table: String,
    /// The chain; `None` for table verbs (and zeroing a whole table).
    pub chain: Option<String>,
    /// What the operation does to it.
    pub verb: Verb,
    /// The chain the added (or deleted) rule jumps or goes to.
    pub jump_to: Option<String>,
    /// The handle of the existing rule a `delete-rule` removes, when known only by handle.
    pub handle: Option<u64>,
    /// The rule a `delete-rule` names by handle is not in the generation the check read: the
    /// kernel refuses the delete (ENOENT), so what it jumps to does not matter.
    pub rule_absent: bool,
    /// The operation's index in its transaction and its description (as in error messages).
    pub op_index: usize,
    /// The operation's description, as error messages print it.
    pub op: String,
}

impl Touch {
    /// A touch of `verb` on `chain` (`None`: the whole table), with no jump target or handle,
    /// operation #0 and an empty description; callers set the public fields that apply.
    pub fn new(family: Family, table: &str, chain: Option<&str>, verb: Verb) -> Touch {
        Touch {
            family,
            table: table.to_owned(),
            chain: chain.map(str::to_owned),
            verb,
            jump_to: None,
            handle: None,
            rule_absent: false,
            op_index: 0,
            op: String::new(),
        }
    }
    fn describe(&self) -> String {
        let mut s = format!("{} in {} {}", self.verb, self.family, self.table);
        if let Some(c) = &self.chain {
            s.push(' ');
            s.push_str(c);
        }
        if self.verb.is_rule_verb() {
            match &self.jump_to {
                Some(j) => s.push_str(&format!(" (a rule jumping to {j})")),
                None => s.push_str(" (a rule that jumps nowhere)"),
            }
        }
        if !self.op.is_empty() {
            s.push_str(&format!(" by operation #{} ({})", self.op_index, self.op));
        }
        s
    }
}

/// What an operation touches: one entry, or two for renames and replacements.
pub fn touches_of_op(index: usize, op: &Op) -> Vec<Touch> {
    let desc = op.to_string();
    let mk = |family: Family, table: &str, chain: Option<&str>, verb: Verb| Touch {
        op_index: index,
        op: desc.clone(),
        ..Touch::new(family, table, chain, verb)
    };
    let chain_touch =
        |c: &ChainRef, verb: Verb| mk(c.table.family, &c.table.name, Some(&c.name), verb);
    match op {
        Op::EnsureTable(t) => vec![mk(t.family, &t.name, None, Verb::CreateTable)],
        Op::DeleteTable(t) => vec![mk(t.family, &t.name, None, Verb::DeleteTable)],
        Op::FlushTable(t) => vec![mk(t.family, &t.name, None, Verb::FlushTable)],
        Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => {
            let verb = if chain.base.is_some() {
                Verb::Policy
            } else {
                Verb::Create
            };
            vec![mk(table.family, &table.name, Some(&chain.name), verb)]
        }
        Op::FlushChain(c) => vec![chain_touch(c, Verb::Flush)],
        Op::DeleteChain(c) => vec![chain_touch(c, Verb::Delete)],
        Op::RenameChain {
            chain, new_name, ..
        } => vec![
            chain_touch(chain, Verb::Delete),
            chain_touch(&chain.table.chain(new_name.clone()), Verb::Create),
        ],
        Op::AddRule { chain, rule, .. } => vec![Touch {
            jump_to: model_jump(rule),
            ..chain_touch(chain, Verb::AddRule)
        }],
        Op::AddEncodedRule { chain, rule, .. } => vec![Touch {
            jump_to: exprs_jump(&rule.exprs),
            ..chain_touch(chain, Verb::AddRule)
        }],
        Op::DeleteRule { chain, handle } => vec![Touch {
            handle: Some(*handle),
            ..chain_touch(chain, Verb::DeleteRule)
        }],
        Op::ReplaceRule {
            chain,
            handle,
            rule,
        } => vec![
            Touch {
                handle: Some(*handle),
                ..chain_touch(chain, Verb::DeleteRule)
            },
            Touch {
                jump_to: model_jump(rule),
                ..chain_touch(chain, Verb::AddRule)
            },
        ],
        Op::Set(s) => sets::touches(index, &desc, s),
        Op::ReplaceEncodedRule {
            chain,
            handle,
            rule,
        } => vec![
            Touch {
                handle: Some(*handle),
                ..chain_touch(chain, Verb::DeleteRule)
            },
            Touch {
                jump_to: exprs_jump(&rule.exprs),
                ..chain_touch(chain, Verb::AddRule)
            },
        ],
    }
}

/// Every touch of a transaction, in operation order.
pub fn touches(tx: &Transaction) -> Vec<Touch> {
    tx.ops()
        .iter()
        .enumerate()
        .flat_map(|(i, op)| touches_of_op(i, op))
        .collect()
}

fn model_jump(rule: &crate::model::Rule) -> Option<String> {
    match &rule.action {
        Some(crate::model::Action::Jump(c) | crate::model::Action::Goto(c)) => Some(c.clone()),
        _ => None,
    }
}

/// Stands for the chain of a verdict-map lookup, which can be any chain of the table: an
/// entry's `jump_to` allows it only with the pattern `*`.
pub const VERDICT_MAP: &str = "*";

/// The chain a rule's expressions jump or go to, as the kernel executes them: expressions run
/// in order and the first verdict met ends the rule, so later verdicts never run. In both
/// encodings (native and iptables-nft's compat) a jump is an `immediate` expression with a
/// chain verdict; `continue` verdicts do not end the rule. A map lookup (kept as an unmodelled
/// `lookup`) may produce a verdict naming any chain: it counts as a jump to
/// [`VERDICT_MAP`].
pub fn exprs_jump(exprs: &[Expr]) -> Option<String> {
    for e in exprs {
        match e {
            Expr::Immediate(i) => match &i.data {
                ImmediateData::Verdict(Verdict::Jump(c) | Verdict::Goto(c)) => {
                    return Some(c.clone());
                }
                ImmediateData::Verdict(Verdict::Continue) => {}
                ImmediateData::Verdict(_) => return None,
                _ => {}
            },
            Expr::Other(o) if o.name == "lookup" => return Some(VERDICT_MAP.to_owned()),
            _ => {}
        }
    }
    None
}

/// A glob over names: `*` any run of characters, `?` one character, everything else itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(String);

impl Pattern {
    /// Checks a pattern from a policy file: not empty, no control characters, at most
    /// [`crate::limits::MAX_NAME_LEN`] bytes; the error says which.
    pub fn new(p: &str) -> std::result::Result<Pattern, String> {
        if p.is_empty() {
            return Err("an empty pattern matches nothing".into());
        }
        if crate::limits::has_control(p) {
            return Err(format!("pattern {p:?} holds a control character"));
        }
        if p.len() > crate::limits::MAX_NAME_LEN {
            return Err(format!(
                "pattern is longer than {} bytes",
                crate::limits::MAX_NAME_LEN
            ));
        }
        Ok(Pattern(p.to_owned()))
    }
    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// Whether `name` matches the pattern (whole name, bytes).
    pub fn matches(&self, name: &str) -> bool {
        glob(self.0.as_bytes(), name.as_bytes())
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Iterative glob match with single-star backtracking: linear in practice, no recursion.
fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// One `[[allow]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allow {
    /// Line of the entry's `[[allow]]` header in the policy file (1-based).
    pub line: usize,
    /// `None`: every family.
    pub family: Option<Family>,
    /// `table = "..."`: the table the entry applies to.
    pub table: String,
    /// `chains = [...]`: patterns of the chains it covers.
    pub chains: Vec<Pattern>,
    /// `verbs = [...]`: what it allows on them.
    pub verbs: Vec<Verb>,
    /// `Some`: rules added or deleted under this entry must jump or go to one of these.
    pub jump_to: Option<Vec<Pattern>>,
    /// Named sets the set verbs (create-set, add-element...) may touch.
    pub sets: Vec<Pattern>,
    /// `Some`: the entry is only for these callers (uids), ...
    pub uids: Option<Vec<u32>>,
    /// ... or members of these groups (gids); both `None`: for every caller.
    pub groups: Option<Vec<u32>>,
    /// `Some`: the entry is only for network namespaces whose name matches one of these;
    /// `None`: only for the namespace xtnl itself runs in.
    pub netns: Option<Vec<Pattern>>,
}

impl Allow {
    fn covers_table(&self, t: &Touch) -> bool {
        self.family.is_none_or(|f| f == t.family) && self.table == t.table
    }
    fn covers_chain(&self, t: &Touch) -> bool {
        if t.verb.is_set_verb() {
            return t
                .chain
                .as_ref()
                .is_some_and(|set| self.sets.iter().any(|p| p.matches(set)));
        }
        match &t.chain {
            None => t.verb.is_table_verb() || self.chains.iter().any(|p| p.as_str() == "*"),
            Some(c) => self.chains.iter().any(|p| p.matches(c)),
        }
    }
    fn covers_jump(&self, t: &Touch) -> bool {
        if !t.verb.is_rule_verb() || t.rule_absent {
            return true;
        }
        match (&self.jump_to, &t.jump_to) {
            (None, None) => true,
            (None, Some(_)) | (Some(_), None) => false,
            (Some(ps), Some(j)) => ps.iter().any(|p| p.matches(j)),
        }
    }
    fn allows(&self, t: &Touch) -> bool {
        // Making sure a table the policy names exists is always allowed: an empty table
        // changes no traffic, and iptables and the NAT-host operations ensure theirs on
        // every change.
        if t.verb == Verb::CreateTable && self.covers_table(t) {
            return true;
        }
        self.covers_table(t)
            && self.verbs.contains(&t.verb)
            && self.covers_chain(t)
            && self.covers_jump(t)
    }
    /// What the entry allows, for denial messages.
    fn summary(&self) -> String {
        let verbs: Vec<&str> = self.verbs.iter().map(|v| v.as_str()).collect();
        let mut s = format!("{} in ", verbs.join(", "));
        if let Some(f) = self.family {
            s.push_str(&format!("{f} "));
        }
        s.push_str(&self.table);
        if !self.chains.is_empty() {
            let chains: Vec<&str> = self.chains.iter().map(Pattern::as_str).collect();
            s.push_str(&format!(" chains {}", chains.join(", ")));
        }
        if !self.sets.is_empty() {
            let sets: Vec<&str> = self.sets.iter().map(Pattern::as_str).collect();
            s.push_str(&format!(" sets {}", sets.join(", ")));
        }
        s.push_str(" only");
        match &self.jump_to {
            Some(j) => {
                let j: Vec<&str> = j.iter().map(Pattern::as_str).collect();
                s.push_str(&format!(" (rules must jump to {})", j.join(", ")));
            }
            None if self.verbs.iter().any(|v| v.is_rule_verb()) => {
                s.push_str(" (rules may not jump)")
            }
            None => {}
        }
        s
    }
}

/// A parsed policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The file it came from, for messages.
    pub path: PathBuf,
    /// `(limit, line)`: operations per transaction.
    pub max_ops: Option<(usize, usize)>,
    /// The `[[allow]]` entries, in file order; a touch is allowed if one of them allows it.
    pub allow: Vec<Allow>,
}

impl Policy {
    /// Parses a policy document; `path` is only used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Policy> {
        file::parse(text, path)
    }

    /// Checks a transaction's size: `ops` operations.
    pub fn check_size(&self, ops: usize) -> Result<()> {
        if let Some((limit, line)) = self.max_ops
            && ops > limit
        {
            return Err(Error::PolicyDenied(format!(
                "policy {}:{line} allows at most {limit} operations per transaction; denied: a \
                 transaction of {ops} operations",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Allows the touches if every one is allowed by some entry; otherwise names the first
    /// one denied and the policy line closest to allowing it.
    pub fn check(&self, touches: &[Touch]) -> Result<()> {
        for t in touches {
            if !self.allow.iter().any(|a| a.allows(t)) {
                return Err(self.denial(t));
            }
        }
        Ok(())
    }

    /// Whether checking this delete-rule touch needs the jump target of the rule it deletes:
    /// always when the rule is named by handle (by number, by spec, in a restore file, in a
    /// JSON document, or a replacement), whatever the entries say. An entry without
    /// `jump_to` allows deleting only rules that jump nowhere, and one with it only rules
    /// that jump to its chains; neither can be judged without the rule's real target.
    pub fn needs_jump_target(&self, t: &Touch) -> bool {
        t.verb == Verb::DeleteRule && t.jump_to.is_none() && t.handle.is_some() && !t.rule_absent
    }

    fn denial(&self, t: &Touch) -> Error {
        let path = self.path.display();
        let score = |a: &Allow| {
            u8::from(a.covers_chain(t)) * 4
                + u8::from(a.verbs.contains(&t.verb)) * 2
                + u8::from(a.covers_jump(t))
        };
        let best = self
            .allow
            .iter()
            .filter(|a| a.covers_table(t))
            .max_by(|a, b| score(a).cmp(&score(b)).then(b.line.cmp(&a.line)));
        let message = match best {
            Some(a) => format!(
                "policy {path}:{} allows {}; denied: {}",
                a.line,
                a.summary(),
                t.describe()
            ),
            None => format!(
                "policy {path} allows nothing in table {} {}; denied: {}",
                t.family,
                t.table,
                t.describe()
            ),
        };
        Error::PolicyDenied(message)
    }

    /// Checks a transaction as a session commits it: its size, then every touch, reading
    /// (through the plan's reader, so in the same generation as the commit) the jump target
    /// of every rule deleted or replaced by handle. A handle the chain does not hold is not a
    /// denial: the kernel refuses the delete itself (ENOENT), which the NAT-host plans take
    /// as "the guess was wrong, plan again".
    pub fn check_transaction(&self, tx: &Transaction, reader: &mut Reader<'_>) -> Result<()> {
        self.check_size(tx.len())?;
        let mut ts = touches(tx);
        let mut cache: std::collections::HashMap<ChainRef, Vec<crate::nft::RawRule>> =
            std::collections::HashMap::new();
        for t in &mut ts {
            if !self.needs_jump_target(t) {
                continue;
            }
            let (Some(chain), Some(handle)) = (&t.chain, t.handle) else {
                continue;
            };
            let table = crate::nft::TableRef::new(t.family, t.table.clone());
            let cref = table.chain(chain.clone());
            if !cache.contains_key(&cref) {
                let rules = reader.raw_rules(&table, Some(chain))?;
                cache.insert(cref.clone(), rules);
            }
            match cache
                .get(&cref)
                .and_then(|rules| rules.iter().find(|r| r.handle == handle))
            {
                Some(r) => t.jump_to = exprs_jump(&r.exprs),
                None => t.rule_absent = true,
            }
        }
        self.check(&ts)
    }
}

impl crate::nft::Guard for Policy {
    fn check_transaction(&self, tx: &Transaction, reader: &mut Reader<'_>) -> Result<()> {
        Policy::check_transaction(self, tx, reader)
    }
    fn check_zero(&self, table: &crate::nft::TableRef, chain: Option<&str>) -> Result<()> {
        let t = Touch {
            op: match chain {
                Some(c) => format!("zero counters {table} {c}"),
                None => format!("zero counters {table}"),
            },
            ..Touch::new(table.family, &table.name, chain, Verb::Zero)
        };
        self.check(&[t])
    }
}

#[cfg(test)]
mod tests;
