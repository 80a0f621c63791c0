//! Messages a front end built from objects of its own (the nft JSON front, `crate::nftjson`):
//! a table, chain, rule, set or element list as the kernel's representation, with what the
//! message does (its [`MessageVerb`]) so that a policy can judge it like any other operation.

#![deny(missing_docs)]

use std::fmt;

use super::refs::TableRef;
use crate::error::{Error, Result};
use crate::model::validate_name;
use crate::transport::Batch;
use crate::wire::expr::Expr;
use crate::wire::nftables::{ChainRepr, RuleRepr, TableRepr};
use crate::wire::set::{ElemRepr, SetDefRepr};

/// What a [`Message`] does, in the vocabulary a policy judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageVerb {
    /// Creates (or updates) a table.
    CreateTable,
    /// Deletes a table with everything in it.
    DeleteTable,
    /// Deletes every rule of a table.
    FlushTable,
    /// Creates (or updates) a regular chain.
    CreateChain,
    /// Creates or changes a base chain (hook, priority, policy).
    BaseChain,
    /// Deletes a chain.
    DeleteChain,
    /// Deletes every rule of a chain.
    FlushChain,
    /// Renames a chain (its new name in the message).
    RenameChain,
    /// Adds a rule.
    AddRule,
    /// Deletes a rule (by handle).
    DeleteRule,
    /// Replaces a rule (by handle).
    ReplaceRule,
    /// Creates a named set or map.
    CreateSet,
    /// Deletes a named set or map.
    DeleteSet,
    /// Adds elements to a set or map.
    AddElement,
    /// Deletes elements of a set or map (flushing it included).
    DeleteElement,
    /// Creates a named stateful object (counter, quota, limit, ct helper); a policy judges
    /// it as a set of its name (`create-set`).
    CreateObject,
    /// Deletes a named stateful object (judged as `delete-set`).
    DeleteObject,
}

/// An anonymous set a rule looks up, created in the same batch just before the rule: the
/// rule's lookups name it by its index in [`MessageBody::Rule::sets`] as `set_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonSetDef {
    /// The set (name `__set%d`, anonymous and constant flags set by the front end).
    pub set: SetDefRepr,
    /// Its elements.
    pub elements: Vec<ElemRepr>,
}

/// The object a [`Message`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageBody {
    /// A table message.
    Table(TableRepr),
    /// A chain message.
    Chain(ChainRepr),
    /// A rule message, with the anonymous sets it looks up.
    Rule {
        /// The rule.
        rule: RuleRepr,
        /// Its anonymous sets, created ahead of it.
        sets: Vec<AnonSetDef>,
    },
    /// A set message (a new set gets a batch id here).
    Set(SetDefRepr),
    /// A named stateful object.
    Object(crate::wire::object::ObjRepr),
    /// Elements of the named set `set` (split into messages that fit).
    Elements {
        /// The set's name.
        set: String,
        /// The elements.
        elements: Vec<ElemRepr>,
    },
}

/// One nf_tables request of a front end: message type, family, creation flags and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// `NFT_MSG_*` (see [`crate::wire::nftables::msg`]).
    pub msg: u8,
    /// `NLM_F_*` creation flags (`CREATE`, `EXCL`, `APPEND`, `REPLACE`).
    pub flags: u16,
    /// The table it is about.
    pub table: TableRef,
    /// The chain or set it is about (`None`: the table).
    pub object: Option<String>,
    /// What it does, for a policy.
    pub verb: MessageVerb,
    /// The message's object.
    pub body: MessageBody,
    /// How error messages and audit records name it (`add chain inet t c`).
    pub desc: String,
}

impl Message {
    /// Whether committing it frees kernel objects.
    pub fn deletes(&self) -> bool {
        matches!(
            self.verb,
            MessageVerb::DeleteTable
                | MessageVerb::FlushTable
                | MessageVerb::DeleteChain
                | MessageVerb::FlushChain
                | MessageVerb::DeleteRule
                | MessageVerb::ReplaceRule
                | MessageVerb::DeleteSet
                | MessageVerb::DeleteElement
                | MessageVerb::DeleteObject
        )
    }

    /// The chain an added rule jumps or goes to (for a policy), from its verdicts.
    pub fn rule_exprs(&self) -> &[Expr] {
        match &self.body {
            MessageBody::Rule { rule, .. } => &rule.exprs,
            _ => &[],
        }
    }

    pub(super) fn encode(&self, b: &mut Batch) -> Result<()> {
        validate_name("table", &self.table.name)?;
        let family = self.table.family.nfproto();
        let desc = self.desc.clone();
        match &self.body {
            MessageBody::Table(t) => {
                b.push(self.msg, family, self.flags, desc, |w| t.emit(w));
            }
            MessageBody::Chain(c) => {
                b.push(self.msg, family, self.flags, desc, |w| c.emit(w));
            }
            MessageBody::Object(o) => {
                b.push(self.msg, family, self.flags, desc, |w| o.emit(w));
            }
            MessageBody::Set(s) => {
                let mut s = s.clone();
                if self.msg == crate::wire::nftables::msg::NEWSET && s.id.is_none() {
                    s.id = Some(b.new_set_id());
                }
                b.push(self.msg, family, self.flags, desc, |w| s.emit(w));
            }
            // No elements: the whole set's (a flush).
            MessageBody::Elements { set, elements } if elements.is_empty() => {
                let list = crate::wire::set::ElemListRepr {
                    family,
                    table: self.table.name.clone(),
                    set: set.clone(),
                    ..Default::default()
                };
                b.push(self.msg, family, self.flags, desc, |w| list.emit(w));
            }
            MessageBody::Elements { set, elements } => {
                super::set::push_elements(
                    b,
                    self.msg,
                    self.flags,
                    &self.table,
                    set,
                    elements,
                    &desc,
                )?;
            }
            MessageBody::Rule { rule, sets } => {
                let mut ids = Vec::with_capacity(sets.len());
                for (i, anon) in sets.iter().enumerate() {
                    let id = b.new_set_id();
                    ids.push(id);
                    let mut s = anon.set.clone();
                    s.id = Some(id);
                    b.push(
                        crate::wire::nftables::msg::NEWSET,
                        family,
                        crate::wire::netlink::NLM_F_CREATE,
                        format!("{desc}: its anonymous set #{i}"),
                        |w| s.emit(w),
                    );
                    let list = crate::wire::set::ElemListRepr {
                        family,
                        table: self.table.name.clone(),
                        set: s.name.clone(),
                        set_id: Some(id),
                        elements: anon.elements.clone(),
                    };
                    b.push(
                        crate::wire::nftables::msg::NEWSETELEM,
                        family,
                        crate::wire::netlink::NLM_F_CREATE,
                        format!("{desc}: the elements of its anonymous set #{i}"),
                        |w| list.emit(w),
                    );
                }
                let mut rule = rule.clone();
                for e in &mut rule.exprs {
                    if let Expr::Lookup(l) = e
                        && let Some(k) = l.set_id
                    {
                        let id = ids.get(k as usize).ok_or_else(|| {
                            Error::InvalidInput(format!(
                                "{desc}: a lookup names anonymous set #{k}, which the rule \
                                 does not have"
                            ))
                        })?;
                        l.set_id = Some(*id);
                    }
                }
                b.push(self.msg, family, self.flags, desc, |w| rule.emit(w));
            }
        }
        Ok(())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.desc)
    }
}
