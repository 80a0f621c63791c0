#![deny(missing_docs)]

use std::fmt;

use crate::error::{Error, Result};
use crate::model::{ChainPolicy, Family, Rule, validate_name};
use crate::transport::{Batch, BatchReply, CommitFailure, Transport};
use crate::wire::netlink::{NLM_F_APPEND, NLM_F_CREATE, NLM_F_ECHO, NLM_F_EXCL, NLM_F_REPLACE};
use crate::wire::nftables::{
    ChainCounters, ChainRepr, HookRepr, RuleRef, RuleRepr, SetElemsRepr, SetRepr, TableRepr, msg,
};

use super::codec;
pub use super::refs::{ChainRef, ChainSpec, EncodedRule, RulePosition, TableRef};
use super::set::SetOp;

/// One operation of a transaction.
// Exhaustive (no `#[non_exhaustive]`) since the engine is a crate of its own: the policy
// (xtnl's `policy::touch`) judges every operation in a match the compiler checks, so that a
// new operation cannot go unjudged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Create the table unless it exists.
    EnsureTable(TableRef),
    /// Delete the table with everything in it.
    DeleteTable(TableRef),
    /// Create the chain unless it exists (a base chain's policy is updated).
    EnsureChain {
        /// The chain's table.
        table: TableRef,
        /// The chain.
        chain: ChainSpec,
    },
    /// Create iptables' table and one of its built-in chains as iptables-nft does when a
    /// command first uses them (the base chain with iptables-nft's type, hook and priority,
    /// policy ACCEPT), unless they exist. Unlike [`Op::EnsureChain`], an existing chain is
    /// left as it is, its policy included.
    EnsureIptablesChain(ChainRef),
    /// Create the chain; fails with "already exists" if it does.
    CreateChain {
        /// The chain's table.
        table: TableRef,
        /// The chain.
        chain: ChainSpec,
    },
    /// Delete every rule of the chain.
    FlushChain(ChainRef),
    /// Delete every rule of every chain of the table.
    FlushTable(TableRef),
    /// Delete the chain (it must be empty and unreferenced).
    DeleteChain(ChainRef),
    /// Rename a chain, named by its handle.
    RenameChain {
        /// The chain.
        chain: ChainRef,
        /// Its handle (renames go by handle).
        handle: u64,
        /// The new name.
        new_name: String,
    },
    /// Add a rule a front end encoded itself (iptables-nft's encoding).
    AddEncodedRule {
        /// The chain.
        chain: ChainRef,
        /// The encoded rule.
        rule: EncodedRule,
        /// Where it goes.
        position: RulePosition,
    },
    /// Replace the rule with `handle` by one a front end encoded itself.
    ReplaceEncodedRule {
        /// The chain.
        chain: ChainRef,
        /// The handle of the rule replaced.
        handle: u64,
        /// The encoded rule.
        rule: EncodedRule,
    },
    /// Add a model rule, natively encoded.
    AddRule {
        /// The chain.
        chain: ChainRef,
        /// The rule.
        rule: Rule,
        /// Where it goes.
        position: RulePosition,
    },
    /// Delete the rule with `handle`.
    DeleteRule {
        /// The chain.
        chain: ChainRef,
        /// The rule's handle.
        handle: u64,
    },
    /// Replace the rule with `handle` by a model rule.
    ReplaceRule {
        /// The chain.
        chain: ChainRef,
        /// The handle of the rule replaced.
        handle: u64,
        /// The new rule.
        rule: Rule,
    },
    /// A named set or map, or its elements (see [`super::set`]).
    Set(SetOp),
    /// A message a front end built from objects of its own (the nft JSON front).
    Message(super::message::Message),
}

impl Op {
    /// Whether committing it frees kernel objects (see [`super::Session::close_detached`]).
    pub fn deletes(&self) -> bool {
        matches!(
            self,
            Op::DeleteTable(_)
                | Op::FlushChain(_)
                | Op::FlushTable(_)
                | Op::DeleteChain(_)
                | Op::DeleteRule { .. }
                | Op::ReplaceRule { .. }
                | Op::ReplaceEncodedRule { .. }
        ) || matches!(self, Op::Set(s) if s.deletes())
            || matches!(self, Op::Message(m) if m.deletes())
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::EnsureTable(t) => write!(f, "add table {t}"),
            Op::DeleteTable(t) => write!(f, "delete table {t}"),
            Op::EnsureChain { table, chain } => write!(f, "add chain {table} {}", chain.name),
            Op::CreateChain { table, chain } => write!(f, "create chain {table} {}", chain.name),
            Op::EnsureIptablesChain(c) => write!(f, "add table {} and chain {c}", c.table),
            Op::FlushChain(c) => write!(f, "flush chain {c}"),
            Op::FlushTable(t) => write!(f, "flush table {t}"),
            Op::DeleteChain(c) => write!(f, "delete chain {c}"),
            Op::RenameChain {
                chain, new_name, ..
            } => write!(f, "rename chain {chain} to {new_name}"),
            Op::AddRule {
                chain, position, ..
            }
            | Op::AddEncodedRule {
                chain, position, ..
            } => match position {
                RulePosition::Append => write!(f, "add rule {chain}"),
                RulePosition::Head => write!(f, "insert rule {chain}"),
                RulePosition::Before(h) => write!(f, "insert rule {chain} before handle {h}"),
                RulePosition::After(h) => write!(f, "add rule {chain} after handle {h}"),
            },
            Op::DeleteRule { chain, handle } => write!(f, "delete rule {chain} handle {handle}"),
            Op::ReplaceRule { chain, handle, .. }
            | Op::ReplaceEncodedRule { chain, handle, .. } => {
                write!(f, "replace rule {chain} handle {handle}")
            }
            Op::Set(s) => write!(f, "{s}"),
            Op::Message(m) => write!(f, "{m}"),
        }
    }
}

/// Operations committed together: all take effect, or none does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transaction {
    ops: Vec<Op>,
    echo_rules: bool,
}

impl Transaction {
    /// An empty transaction.
    pub fn new() -> Self {
        Self::default()
    }
    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
    /// How many operations it holds.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// Whether it holds no operation (committing it sends nothing).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// Ask the kernel to echo added rules, so that [`super::Committed::rule_handles`] holds
    /// their handles (costs the kernel one notification per rule).
    pub fn want_rule_handles(&mut self, yes: bool) -> &mut Self {
        self.echo_rules = yes;
        self
    }
    /// Adds an operation.
    pub fn push(&mut self, op: Op) -> &mut Self {
        self.ops.push(op);
        self
    }
    /// Adds the operations, in order. Into an empty transaction the vector itself is
    /// moved (no copy: a restore's plan of 100,000 operations is not held twice).
    pub fn append(&mut self, mut ops: Vec<Op>) -> &mut Self {
        if self.ops.is_empty() {
            self.ops = ops;
        } else {
            self.ops.append(&mut ops);
        }
        self
    }
    /// Creates the table unless it exists.
    pub fn ensure_table(&mut self, t: &TableRef) -> &mut Self {
        self.push(Op::EnsureTable(t.clone()))
    }
    /// Creates iptables' table `table` of `family` and its built-in chain `chain` as
    /// iptables-nft does when a command first uses them, unless they exist (an existing
    /// chain keeps its policy): what a transaction needs before it adds a chain or a rule
    /// there on a host where no iptables command ran yet. A table or chain iptables does not
    /// have is refused when the transaction is committed, before anything is sent.
    ///
    /// ```
    /// use xtnl_core::model::Family;
    /// use xtnl_nft::{Op, Transaction};
    /// let mut tx = Transaction::new();
    /// tx.ensure_iptables_chain(Family::Ipv4, "nat", "PREROUTING");
    /// assert_eq!(tx.ops()[0].to_string(), "add table ip nat and chain ip nat PREROUTING");
    /// ```
    pub fn ensure_iptables_chain(&mut self, family: Family, table: &str, chain: &str) -> &mut Self {
        self.push(Op::EnsureIptablesChain(
            TableRef::new(family, table).chain(chain),
        ))
    }
    /// Deletes the table with everything in it.
    pub fn delete_table(&mut self, t: &TableRef) -> &mut Self {
        self.push(Op::DeleteTable(t.clone()))
    }
    /// Creates the chain unless it exists (a base chain's policy is updated).
    pub fn ensure_chain(&mut self, t: &TableRef, chain: ChainSpec) -> &mut Self {
        self.push(Op::EnsureChain {
            table: t.clone(),
            chain,
        })
    }
    /// Creates the chain; "already exists" if it does.
    pub fn create_chain(&mut self, t: &TableRef, chain: ChainSpec) -> &mut Self {
        self.push(Op::CreateChain {
            table: t.clone(),
            chain,
        })
    }
    /// Deletes every rule of the chain.
    pub fn flush_chain(&mut self, c: &ChainRef) -> &mut Self {
        self.push(Op::FlushChain(c.clone()))
    }
    /// Deletes every rule of every chain of the table.
    pub fn flush_table(&mut self, t: &TableRef) -> &mut Self {
        self.push(Op::FlushTable(t.clone()))
    }
    /// Deletes the chain (empty and unreferenced).
    pub fn delete_chain(&mut self, c: &ChainRef) -> &mut Self {
        self.push(Op::DeleteChain(c.clone()))
    }
    /// Adds a model rule at `position`.
    pub fn add_rule(&mut self, c: &ChainRef, rule: Rule, position: RulePosition) -> &mut Self {
        self.push(Op::AddRule {
            chain: c.clone(),
            rule,
            position,
        })
    }
    /// Adds a model rule at the end of the chain.
    pub fn append_rule(&mut self, c: &ChainRef, rule: Rule) -> &mut Self {
        self.add_rule(c, rule, RulePosition::Append)
    }
    /// Adds a model rule at the head of the chain.
    pub fn insert_rule(&mut self, c: &ChainRef, rule: Rule) -> &mut Self {
        self.add_rule(c, rule, RulePosition::Head)
    }
    /// Deletes the rule with `handle`.
    pub fn delete_rule(&mut self, c: &ChainRef, handle: u64) -> &mut Self {
        self.push(Op::DeleteRule {
            chain: c.clone(),
            handle,
        })
    }
    /// Replaces the rule with `handle`.
    pub fn replace_rule(&mut self, c: &ChainRef, handle: u64, rule: Rule) -> &mut Self {
        self.push(Op::ReplaceRule {
            chain: c.clone(),
            handle,
            rule,
        })
    }

    /// Encodes the transaction as one batch and sends it over `t`: the bytes
    /// [`super::Session::commit`] sends, without the session's policy, audit, lock and
    /// retry. Over a [`crate::transport::Recorder`] it needs no socket and no root: tests
    /// compare the recorded batch with captures of what the kernel accepted.
    pub fn send_over(&self, t: &mut (impl Transport + ?Sized)) -> Result<BatchReply> {
        let mut batch = Batch::new(t, None);
        self.encode(&mut batch)?;
        batch
            .commit_described(t, &|i| describe(&self.ops, i))
            .map_err(|e| match e {
                CommitFailure::Error(e) => e,
                CommitFailure::GenerationChanged => Error::GenerationConflict { attempts: 1 },
            })
    }

    /// Validates and encodes every operation into `batch`. Any invalid operation fails the
    /// whole transaction here, before anything is sent.
    pub(crate) fn encode(&self, batch: &mut Batch) -> Result<()> {
        for i in 0..self.ops.len() {
            self.encode_one(i, batch)?;
        }
        Ok(())
    }

    fn encode_one(&self, i: usize, batch: &mut Batch) -> Result<()> {
        let op = &self.ops[i];
        batch.begin_op(i);
        encode_op(op, self.echo_rules, batch).map_err(|e| match e {
            Error::InvalidInput(m) => Error::InvalidInput(format!("operation #{i} ({op}): {m}")),
            other => other,
        })
    }

    /// [`Transaction::encode`], freeing the encoded rule of every operation from index
    /// `keep` on once it is in the batch (what an auditor reads of the rest is their
    /// `Display`), and handing the freed pages back as the batch grows: the operations and
    /// the batch are not held whole at once. At 80,000 rules the operations are some 10
    /// times the restore file and the batch some 4 times.
    pub(crate) fn encode_releasing(&mut self, batch: &mut Batch, keep: usize) -> Result<()> {
        /// Batch growth between two hand-backs (each walks the heap's free lists).
        const RELEASE_EVERY: usize = 8 << 20;
        let mut released_at = batch.byte_len();
        for i in 0..self.ops.len() {
            self.encode_one(i, batch)?;
            if i < keep {
                continue;
            }
            if let Op::AddEncodedRule { rule, .. } | Op::ReplaceEncodedRule { rule, .. } =
                &mut self.ops[i]
            {
                rule.exprs = Vec::new();
                rule.userdata = None;
            }
            if batch.byte_len() - released_at >= RELEASE_EVERY {
                crate::sys::release_free_heap();
                released_at = batch.byte_len();
            }
        }
        Ok(())
    }
}

/// Operation `i`'s description, for an error naming it (the batch stores none per message).
pub(crate) fn describe(ops: &[Op], i: usize) -> String {
    ops.get(i)
        .map_or_else(|| format!("operation #{i}"), ToString::to_string)
}

/// A chain about to be made or renamed: iptables' bounds in iptables' own tables (so that
/// iptables can name every chain xtnl makes there), nf_tables' elsewhere.
fn check_new_chain(table: &TableRef, name: &str) -> Result<()> {
    let iptables = matches!(table.family, Family::Ipv4 | Family::Ipv6)
        && crate::ipt::tables::is_iptables_table(&table.name);
    crate::limits::check_chain_name(
        crate::limits::NameDialect::new_chain(iptables),
        &table.name,
        name,
    )
}

fn check_table(t: &TableRef) -> Result<()> {
    validate_name("table", &t.name)
}
fn check_chain(c: &ChainRef) -> Result<()> {
    check_table(&c.table)?;
    validate_name("chain", &c.name)
}

fn table_repr(t: &TableRef) -> TableRepr {
    TableRepr {
        family: t.family.nfproto(),
        name: t.name.clone(),
        ..Default::default()
    }
}

fn chain_repr(table: &TableRef, spec: &ChainSpec) -> ChainRepr {
    let mut c = ChainRepr {
        family: table.family.nfproto(),
        table: table.name.clone(),
        name: spec.name.clone(),
        ..Default::default()
    };
    if let Some(b) = &spec.base {
        c.hook = Some(HookRepr {
            hooknum: b.hook.number(),
            priority: b.priority,
            device: None,
        });
        c.policy = Some(b.policy.verdict());
        c.chain_type = Some(b.chain_type.as_str().into());
        c.counters = spec.counters.map(|n| ChainCounters {
            packets: n.packets,
            bytes: n.bytes,
        });
    }
    c
}

fn rule_repr(c: &ChainRef, rule: Option<&Rule>) -> Result<RuleRepr> {
    let mut r = RuleRepr {
        family: c.table.family.nfproto(),
        table: c.table.name.clone(),
        chain: c.name.clone(),
        ..Default::default()
    };
    if let Some(rule) = rule {
        let (exprs, userdata) = codec::encode(rule, c.table.family)?;
        r.exprs = exprs;
        r.userdata = userdata;
    }
    Ok(r)
}

fn encode_op(op: &Op, echo_rules: bool, b: &mut Batch) -> Result<()> {
    if let Op::Set(s) = op {
        return s.encode(b);
    }
    if let Op::Message(m) = op {
        return m.encode(b);
    }
    // A message's description is its operation's, made by `Session` only on a refusal
    // (`Batch::commit_described`), never per message.
    let replace_flags = NLM_F_REPLACE | if echo_rules { NLM_F_ECHO } else { 0 };
    match op {
        Op::EnsureTable(t) | Op::DeleteTable(t) => {
            check_table(t)?;
            let repr = table_repr(t);
            let (m, flags) = match op {
                Op::EnsureTable(_) => (msg::NEWTABLE, NLM_F_CREATE),
                _ => (msg::DELTABLE, 0),
            };
            b.push_op(m, t.family.nfproto(), flags, |w| repr.emit(w));
        }
        Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => {
            check_table(table)?;
            check_new_chain(table, &chain.name)?;
            let repr = chain_repr(table, chain);
            let flags = match op {
                Op::CreateChain { .. } => NLM_F_CREATE | NLM_F_EXCL,
                _ => NLM_F_CREATE,
            };
            b.push_op(msg::NEWCHAIN, table.family.nfproto(), flags, |w| {
                repr.emit(w)
            });
        }
        Op::EnsureIptablesChain(c) => {
            check_chain(c)?;
            let builtin = match c.table.family {
                Family::Ipv4 | Family::Ipv6 => crate::ipt::tables::builtin(&c.table.name, &c.name),
                _ => None,
            }
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "{c} is not a built-in chain of iptables' tables (filter, nat, mangle, raw, \
                     security) in family ip or ip6"
                ))
            })?;
            let table = table_repr(&c.table);
            b.push_op(msg::NEWTABLE, c.table.family.nfproto(), NLM_F_CREATE, |w| {
                table.emit(w)
            });
            let spec = ChainSpec::base(c.name.clone(), builtin.base(ChainPolicy::Accept));
            let mut chain = chain_repr(&c.table, &spec);
            // No policy: a new base chain's is ACCEPT, and an existing one keeps its own.
            chain.policy = None;
            b.push_op(msg::NEWCHAIN, c.table.family.nfproto(), NLM_F_CREATE, |w| {
                chain.emit(w)
            });
        }
        Op::FlushChain(c) => {
            check_chain(c)?;
            let repr = rule_repr(c, None)?;
            b.push_op(msg::DELRULE, c.table.family.nfproto(), 0, |w| repr.emit(w));
        }
        Op::FlushTable(t) => {
            check_table(t)?;
            let name = t.name.clone();
            b.push_op(msg::DELRULE, t.family.nfproto(), 0, |w| {
                w.strz(crate::wire::nftables::NFTA_RULE_TABLE, &name);
            });
        }
        Op::DeleteChain(c) => {
            check_chain(c)?;
            let repr = chain_repr(&c.table, &ChainSpec::regular(&c.name));
            b.push_op(msg::DELCHAIN, c.table.family.nfproto(), 0, |w| repr.emit(w));
        }
        Op::RenameChain {
            chain,
            handle,
            new_name,
        } => {
            check_chain(chain)?;
            check_new_chain(&chain.table, new_name)?;
            let mut repr = chain_repr(&chain.table, &ChainSpec::regular(new_name));
            repr.handle = Some(*handle);
            b.push_op(msg::NEWCHAIN, chain.table.family.nfproto(), 0, |w| {
                repr.emit(w)
            });
        }
        Op::AddRule {
            chain,
            rule,
            position,
        } => {
            check_chain(chain)?;
            let repr = with_sets(b, chain, &native(chain, rule)?, op);
            push_add(b, chain, repr, *position, echo_rules);
        }
        Op::AddEncodedRule {
            chain,
            rule,
            position,
        } if rule.sets.is_empty() => {
            check_chain(chain)?;
            // Encoded from the operation's own parts: nothing to rewrite (no set ids).
            let (flags, position) = add_flags(*position, echo_rules);
            let r = RuleRef {
                table: &chain.table.name,
                chain: &chain.name,
                handle: None,
                position,
                exprs: &rule.exprs,
                userdata: rule.userdata.as_deref(),
                compat: rule.compat,
            };
            b.push_op(msg::NEWRULE, chain.table.family.nfproto(), flags, |w| {
                r.emit(w)
            });
        }
        Op::AddEncodedRule {
            chain,
            rule,
            position,
        } => {
            check_chain(chain)?;
            let repr = with_sets(b, chain, rule, op);
            push_add(b, chain, repr, *position, echo_rules);
        }
        Op::DeleteRule { chain, handle } => {
            check_chain(chain)?;
            let mut repr = rule_repr(chain, None)?;
            repr.handle = Some(*handle);
            b.push_op(msg::DELRULE, chain.table.family.nfproto(), 0, |w| {
                repr.emit(w)
            });
        }
        Op::ReplaceRule {
            chain,
            handle,
            rule,
        } => {
            check_chain(chain)?;
            let mut repr = with_sets(b, chain, &native(chain, rule)?, op);
            repr.handle = Some(*handle);
            b.push_op(
                msg::NEWRULE,
                chain.table.family.nfproto(),
                replace_flags,
                |w| repr.emit(w),
            );
        }
        Op::ReplaceEncodedRule {
            chain,
            handle,
            rule,
        } => {
            check_chain(chain)?;
            let mut repr = with_sets(b, chain, rule, op);
            repr.handle = Some(*handle);
            b.push_op(
                msg::NEWRULE,
                chain.table.family.nfproto(),
                replace_flags,
                |w| repr.emit(w),
            );
        }
        Op::Set(_) | Op::Message(_) => {}
    }
    Ok(())
}

/// A model rule in its native encoding.
fn native(c: &ChainRef, rule: &Rule) -> Result<EncodedRule> {
    let n = codec::encode_native(rule, c.table.family)?;
    Ok(EncodedRule {
        exprs: n.exprs,
        userdata: n.userdata,
        compat: None,
        sets: n.sets,
    })
}

/// Creates the rule's anonymous sets in the batch, ahead of the rule, and points the rule's
/// lookups at their batch ids.
fn with_sets(b: &mut Batch, c: &ChainRef, rule: &EncodedRule, op: &Op) -> RuleRepr {
    let mut repr = encoded_repr(c, rule);
    let family = c.table.family.nfproto();
    let mut ids = Vec::with_capacity(rule.sets.len());
    let desc = if rule.sets.is_empty() {
        String::new()
    } else {
        op.to_string()
    };
    for set in &rule.sets {
        let id = b.new_set_id();
        ids.push(id);
        let flags = SetRepr::F_ANONYMOUS
            | SetRepr::F_CONSTANT
            | if set.interval { SetRepr::F_INTERVAL } else { 0 };
        let s = SetRepr {
            table: c.table.name.clone(),
            name: codec::ANON_SET_NAME.into(),
            flags,
            key_type: SetRepr::KEY_INET_SERVICE,
            key_len: 2,
            id,
            size: set.elements.len() as u32,
        };
        b.push(
            msg::NEWSET,
            family,
            NLM_F_CREATE,
            format!("{desc}: its port set"),
            |w| s.emit(w),
        );
        let e = SetElemsRepr {
            table: c.table.name.clone(),
            set: codec::ANON_SET_NAME.into(),
            set_id: Some(id),
            elements: set.elements.clone(),
        };
        b.push(
            msg::NEWSETELEM,
            family,
            NLM_F_CREATE,
            format!("{desc}: the port set's elements"),
            |w| e.emit(w),
        );
    }
    for e in &mut repr.exprs {
        if let crate::wire::expr::Expr::Lookup(l) = e
            && let Some(id) = l.set_id.and_then(|k| ids.get(k as usize))
        {
            l.set_id = Some(*id);
        }
    }
    repr
}

fn encoded_repr(c: &ChainRef, rule: &EncodedRule) -> RuleRepr {
    RuleRepr {
        family: c.table.family.nfproto(),
        table: c.table.name.clone(),
        chain: c.name.clone(),
        exprs: rule.exprs.clone(),
        userdata: rule.userdata.clone(),
        compat: rule.compat,
        ..Default::default()
    }
}

/// A new rule's flags and `NFTA_RULE_POSITION` for `position`.
fn add_flags(position: RulePosition, echo: bool) -> (u16, Option<u64>) {
    let mut flags = NLM_F_CREATE;
    let at = match position {
        RulePosition::Append => {
            flags |= NLM_F_APPEND;
            None
        }
        RulePosition::Head => None,
        RulePosition::Before(h) => Some(h),
        RulePosition::After(h) => {
            flags |= NLM_F_APPEND;
            Some(h)
        }
    };
    if echo {
        flags |= NLM_F_ECHO;
    }
    (flags, at)
}

fn push_add(
    b: &mut Batch,
    chain: &ChainRef,
    mut repr: RuleRepr,
    position: RulePosition,
    echo: bool,
) {
    let (flags, at) = add_flags(position, echo);
    if at.is_some() {
        repr.position = at;
    }
    b.push_op(msg::NEWRULE, chain.table.family.nfproto(), flags, |w| {
        repr.emit(w)
    });
}

impl From<SetOp> for Op {
    fn from(s: SetOp) -> Op {
        Op::Set(s)
    }
}

impl Transaction {
    /// Adds a set operation.
    pub fn set_op(&mut self, op: SetOp) -> &mut Self {
        self.push(Op::Set(op))
    }
}
