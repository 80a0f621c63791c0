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
//!
//! The crate sits over the nf_tables engine (`xtnl-nft`): [`Policy`] is the engine's
//! [`Guard`](xtnl_nft::Guard) and [`audit::LineAuditor`] its
//! [`Auditor`](xtnl_nft::Auditor), and the library re-exports it as `xtnl::policy`. A
//! transaction's touches are judged without a session or root (a session runs the same
//! check, [`Policy::check_transaction`], before it sends anything):
//!
//! ```
//! use std::path::Path;
//! use xtnl_core::model::Family;
//! use xtnl_nft::{ChainSpec, TableRef, Transaction};
//! use xtnl_policy::{Policy, touches};
//!
//! let policy = Policy::parse(
//!     r#"
//! [[allow]]
//! table = "nat"
//! chains = ["vcld-*"]
//! verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
//! "#,
//!     Path::new("example.toml"),
//! )?;
//! let nat = TableRef::new(Family::Ipv4, "nat");
//! let mut ok = Transaction::new();
//! ok.create_chain(&nat, ChainSpec::regular("vcld-7"));
//! assert!(policy.check(&touches(&ok)).is_ok());
//!
//! let mut denied = Transaction::new();
//! denied.create_chain(&nat, ChainSpec::regular("other"));
//! let e = policy.check(&touches(&denied)).unwrap_err();
//! assert_eq!(e.kind(), xtnl_core::ErrorKind::PolicyDenied);
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `policy` module, and its files keep the
// `crate::policy::...`, `crate::nft::...` paths they had there (as xtnl-ipt's and
// xtnl-nft's did).
#[cfg(test)]
use crate as policy;
#[cfg(test)]
use xtnl_core::OpFailure;
use xtnl_core::{error, limits, model};
use xtnl_host::privilege;
use xtnl_nft as nft;
use xtnl_wire as wire;

/// iptables' printer and iptables-nft's encoding, under the library's paths
/// (`crate::ipt::print`, `crate::ipt::compat`), with which an audit record names a rule.
mod ipt {
    pub(crate) use xtnl_ipt::print;
    pub(crate) use xtnl_nft::ipt::compat;
}

pub mod audit;
mod caller;
mod file;
#[cfg(feature = "test-fixtures")]
pub mod fixtures;
mod touch;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{ChainRef, Reader, Transaction};

pub use caller::{Caller, accounts};
pub use file::{DEFAULT_POLICY_PATH, POLICY_PATH_ENV, load_file, load_secure};
pub use touch::{
    OldRule, Planned, Touch, VERDICT_MAP, exprs_jump, retargeted, touches, touches_of,
    touches_of_op,
};

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
        // A rename retargets the jumps to the chain: each is judged as deleted and re-added
        // ([`Planned::Rename`]). A rule that may jump anywhere (a verdict map, an expression
        // not decoded) may jump to this chain: it is judged as that, deleted and added again.
        let mut ts = Vec::new();
        for (i, op) in tx.ops().iter().enumerate() {
            let mut jumping: Vec<(String, bool)> = Vec::new();
            let renamed = match op {
                crate::nft::Op::RenameChain { chain, .. } => Some(chain.clone()),
                crate::nft::Op::Message(m) if m.verb == crate::nft::MessageVerb::RenameChain => {
                    m.object.as_ref().map(|c| m.table.chain(c.clone()))
                }
                _ => None,
            };
            if let Some(chain) = renamed {
                let kernel = reader.raw_rules(&chain.table, None)?;
                jumping = touch::jumping_at_rename(&tx.ops()[..i], &kernel, &chain);
            }
            ts.extend(touch::touches_of_op_renaming(i, op, &jumping));
        }
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
