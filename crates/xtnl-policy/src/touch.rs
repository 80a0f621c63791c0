//! What a change touches: the backend-neutral [`Touch`]es a [`Policy`](super::Policy)
//! checks. [`touches_of`] is the one place that turns a planned change ([`Planned`]) into
//! them, whatever planned it: nf_tables operations ([`touches_of_op`], [`touches`]), the
//! iptables interpreter's edits and the NAT-host changes (`seam::judge`, for x_tables,
//! nf_tables and the in-memory table), and an x_tables replace's difference. Also here:
//! the chain a rule's expressions jump to ([`exprs_jump`]).

use super::Verb;
use crate::model::Family;
use crate::nft::set::SetOp;
use crate::nft::{Op, Transaction};
use crate::wire::expr::{Expr, ImmediateData, Verdict};

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
    pub(super) fn describe(&self) -> String {
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

/// The rule a planned change deletes (or replaces), as far as the plan knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OldRule {
    /// Read from the view the change was planned on: what it jumps or goes to.
    Jumps(Option<String>),
    /// Known only by its nf_tables handle: the check reads its target in the generation it
    /// commits to ([`super::Policy::check_transaction`]).
    Handle(u64),
    /// Not in the view the plan read: the kernel refuses the deletion, so what it jumps to
    /// does not matter ([`Touch::rule_absent`]).
    Absent,
}

/// One planned change of one table, as the policy judges it, whichever vocabulary planned
/// it: an nf_tables operation ([`touches_of_op`]), an edit of the iptables interpreter or a
/// NAT-host change (`seam::judge`, which x_tables, nf_tables' NAT-host plans and the
/// in-memory table use), or what an x_tables replace changes. [`touches_of`] is the one
/// place that turns it into the [`Touch`]es a [`Policy`](super::Policy) checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned<'a> {
    /// Make sure the table exists (iptables and the NAT-host operations ensure theirs).
    EnsureTable,
    /// Delete the table.
    DeleteTable,
    /// Delete every rule of every chain of the table.
    FlushTable,
    /// Create a chain (or make sure it exists); `base`: a base chain, which sets a policy.
    CreateChain {
        /// The chain.
        chain: &'a str,
        /// A base chain (an iptables built-in), judged as `policy`.
        base: bool,
    },
    /// Delete a chain.
    DeleteChain(&'a str),
    /// Delete every rule of a chain.
    FlushChain(&'a str),
    /// Set a base chain's policy.
    Policy(&'a str),
    /// Zero the counters of a chain, or of the whole table.
    Zero(Option<&'a str>),
    /// Add a rule (append or insert) that jumps or goes to `jump_to`.
    AddRule {
        /// The chain.
        chain: &'a str,
        /// The chain the new rule jumps or goes to.
        jump_to: Option<String>,
    },
    /// Delete a rule.
    DeleteRule {
        /// The chain.
        chain: &'a str,
        /// The rule deleted.
        old: OldRule,
    },
    /// Replace a rule: the old one deleted, the new one added.
    ReplaceRule {
        /// The chain.
        chain: &'a str,
        /// The rule replaced.
        old: OldRule,
        /// The chain the new rule jumps or goes to.
        jump_to: Option<String>,
    },
    /// Rename a chain: the old name deleted, the new one created, and each chain in
    /// `jumping` holds a rule that then jumps to the new name (`true`: a rule that may jump
    /// anywhere, [`VERDICT_MAP`]), judged as that jump deleted and added again.
    Rename {
        /// The chain's name.
        from: &'a str,
        /// Its new name.
        to: &'a str,
        /// The chains whose rules jump to it, in the order they are judged.
        jumping: &'a [(String, bool)],
    },
    /// A set verb ([`Verb::is_set_verb`]) on the named set or map.
    Set {
        /// The set.
        name: &'a str,
        /// What is done to it.
        verb: Verb,
    },
}

/// What `change` of `family` `table` touches: one entry, two for a replacement or a rename
/// (and two more per retargeted jump of a rename). The touches name operation #0 with no
/// description; the caller numbers and names them.
pub fn touches_of(family: Family, table: &str, change: &Planned<'_>) -> Vec<Touch> {
    let mk = |chain: Option<&str>, verb: Verb| Touch::new(family, table, chain, verb);
    let deleted = |chain: &str, old: &OldRule| {
        let mut t = mk(Some(chain), Verb::DeleteRule);
        match old {
            OldRule::Jumps(j) => t.jump_to = j.clone(),
            OldRule::Handle(h) => t.handle = Some(*h),
            OldRule::Absent => t.rule_absent = true,
        }
        t
    };
    let added = |chain: &str, jump_to: &Option<String>| Touch {
        jump_to: jump_to.clone(),
        ..mk(Some(chain), Verb::AddRule)
    };
    match change {
        Planned::EnsureTable => vec![mk(None, Verb::CreateTable)],
        Planned::DeleteTable => vec![mk(None, Verb::DeleteTable)],
        Planned::FlushTable => vec![mk(None, Verb::FlushTable)],
        Planned::CreateChain { chain, base } => {
            let verb = if *base { Verb::Policy } else { Verb::Create };
            vec![mk(Some(chain), verb)]
        }
        Planned::DeleteChain(c) => vec![mk(Some(c), Verb::Delete)],
        Planned::FlushChain(c) => vec![mk(Some(c), Verb::Flush)],
        Planned::Policy(c) => vec![mk(Some(c), Verb::Policy)],
        Planned::Zero(c) => vec![mk(*c, Verb::Zero)],
        Planned::AddRule { chain, jump_to } => vec![added(chain, jump_to)],
        Planned::DeleteRule { chain, old } => vec![deleted(chain, old)],
        Planned::ReplaceRule {
            chain,
            old,
            jump_to,
        } => vec![deleted(chain, old), added(chain, jump_to)],
        Planned::Rename { from, to, jumping } => {
            let mut out = vec![mk(Some(from), Verb::Delete), mk(Some(to), Verb::Create)];
            for (c, anywhere) in jumping.iter() {
                let (old, new) = if *anywhere {
                    (VERDICT_MAP, VERDICT_MAP)
                } else {
                    (*from, *to)
                };
                out.extend(retargeted(family, table, c, old, new));
            }
            out
        }
        Planned::Set { name, verb } => vec![mk(Some(name), *verb)],
    }
}

/// What an operation touches: one entry, or two for renames and replacements.
pub fn touches_of_op(index: usize, op: &Op) -> Vec<Touch> {
    touches_of_op_renaming(index, op, &[])
}

/// [`touches_of_op`], with the chains whose rules a rename retargets ([`Planned::Rename`]).
pub(super) fn touches_of_op_renaming(
    index: usize,
    op: &Op,
    jumping: &[(String, bool)],
) -> Vec<Touch> {
    let desc = op.to_string();
    planned_of_op(op, jumping)
        .into_iter()
        .flat_map(|(t, p)| touches_of(t.family, &t.name, &p))
        .map(|t| Touch {
            op_index: index,
            op: desc.clone(),
            ..t
        })
        .collect()
}

/// What an operation changes, in the one vocabulary the policy judges ([`Planned`]), each
/// change with its table: one, or two for iptables' table and built-in chain made at once
/// ([`Op::EnsureIptablesChain`]). A rule deleted or replaced is known by its handle.
/// `jumping`: the chains whose rules a rename retargets ([`Planned::Rename`]).
fn planned_of_op<'a>(
    op: &'a Op,
    jumping: &'a [(String, bool)],
) -> Vec<(&'a crate::nft::TableRef, Planned<'a>)> {
    let handle = |h: &u64| OldRule::Handle(*h);
    let one = match op {
        Op::EnsureTable(t) => (t, Planned::EnsureTable),
        Op::DeleteTable(t) => (t, Planned::DeleteTable),
        Op::FlushTable(t) => (t, Planned::FlushTable),
        Op::EnsureChain { table, chain } | Op::CreateChain { table, chain } => (
            table,
            Planned::CreateChain {
                chain: &chain.name,
                base: chain.base.is_some(),
            },
        ),
        // iptables' table and built-in chain made as iptables-nft makes them; an existing
        // chain's policy is left alone.
        Op::EnsureIptablesChain(c) => {
            let chain = Planned::CreateChain {
                chain: &c.name,
                base: false,
            };
            return vec![(&c.table, Planned::EnsureTable), (&c.table, chain)];
        }
        Op::FlushChain(c) => (&c.table, Planned::FlushChain(&c.name)),
        Op::DeleteChain(c) => (&c.table, Planned::DeleteChain(&c.name)),
        Op::RenameChain {
            chain, new_name, ..
        } => (
            &chain.table,
            Planned::Rename {
                from: &chain.name,
                to: new_name,
                jumping,
            },
        ),
        Op::AddRule { chain, rule, .. } => (
            &chain.table,
            Planned::AddRule {
                chain: &chain.name,
                jump_to: model_jump(rule),
            },
        ),
        Op::AddEncodedRule { chain, rule, .. } => (
            &chain.table,
            Planned::AddRule {
                chain: &chain.name,
                jump_to: exprs_jump(&rule.exprs),
            },
        ),
        Op::DeleteRule { chain, handle: h } => (
            &chain.table,
            Planned::DeleteRule {
                chain: &chain.name,
                old: handle(h),
            },
        ),
        Op::ReplaceRule {
            chain,
            handle: h,
            rule,
        } => (
            &chain.table,
            Planned::ReplaceRule {
                chain: &chain.name,
                old: handle(h),
                jump_to: model_jump(rule),
            },
        ),
        Op::ReplaceEncodedRule {
            chain,
            handle: h,
            rule,
        } => (
            &chain.table,
            Planned::ReplaceRule {
                chain: &chain.name,
                old: handle(h),
                jump_to: exprs_jump(&rule.exprs),
            },
        ),
        Op::Set(s) => (s.table(), set_planned(s)),
        Op::Message(m) => (&m.table, message_planned(m, jumping)),
    };
    vec![one]
}

/// What a front end's own message (the nft JSON front) changes, in the one vocabulary the
/// policy judges ([`Planned`]): its verb on its table, chain or set; a replacement deletes
/// and adds; a rename deletes the old name, creates the new one and retargets the jumps to
/// it (`jumping`, as for [`Op::RenameChain`]). Named objects (counters, quotas, limits)
/// are judged as sets of their name: the policy has no verbs of their own for them.
fn message_planned<'a>(m: &'a crate::nft::Message, jumping: &'a [(String, bool)]) -> Planned<'a> {
    use crate::nft::{MessageBody, MessageVerb as V};
    let object = m.object.as_deref().unwrap_or("");
    let old = match &m.body {
        MessageBody::Rule { rule, .. } => rule.handle.map_or(OldRule::Jumps(None), OldRule::Handle),
        _ => OldRule::Jumps(None),
    };
    let jump_to = || exprs_jump(m.rule_exprs());
    let set = |verb: Verb| Planned::Set { name: object, verb };
    match m.verb {
        V::CreateTable => Planned::EnsureTable,
        V::DeleteTable => Planned::DeleteTable,
        V::FlushTable => Planned::FlushTable,
        V::CreateChain => Planned::CreateChain {
            chain: object,
            base: false,
        },
        V::BaseChain => Planned::CreateChain {
            chain: object,
            base: true,
        },
        V::DeleteChain => Planned::DeleteChain(object),
        V::FlushChain => Planned::FlushChain(object),
        V::RenameChain => {
            let to = match &m.body {
                MessageBody::Chain(c) => c.name.as_str(),
                _ => "",
            };
            Planned::Rename {
                from: object,
                to,
                jumping,
            }
        }
        V::AddRule => Planned::AddRule {
            chain: object,
            jump_to: jump_to(),
        },
        V::DeleteRule => Planned::DeleteRule { chain: object, old },
        V::ReplaceRule => Planned::ReplaceRule {
            chain: object,
            old,
            jump_to: jump_to(),
        },
        V::CreateSet | V::CreateObject => set(Verb::CreateSet),
        V::DeleteSet | V::DeleteObject => set(Verb::DeleteSet),
        V::AddElement => set(Verb::AddElement),
        V::DeleteElement => set(Verb::DeleteElement),
    }
}

/// What renaming `from` to `to` does to a rule of `chain` that jumps or goes to `from`: it
/// then jumps to `to`, so it is judged as that jump deleted and the new one added (a rename
/// must not turn a jump the policy allowed into one it would refuse). Both backends add
/// these for every such rule, ordered by chain name.
pub fn retargeted(family: Family, table: &str, chain: &str, from: &str, to: &str) -> [Touch; 2] {
    let mk = |verb: Verb, jump: &str| Touch {
        jump_to: Some(jump.to_owned()),
        ..Touch::new(family, table, Some(chain), verb)
    };
    [mk(Verb::DeleteRule, from), mk(Verb::AddRule, to)]
}

/// The chains holding a rule that jumps to `chain` when an operation renames it, for
/// [`Planned::Rename`]: the kernel's rules (`kernel`, read in the generation the commit
/// carries) that the operations before it (`earlier`) did not delete, replace or flush, and
/// the rules those operations added, as the batch leaves the table when the rename runs
/// (a jump added earlier in the same transaction is retargeted too, as on x_tables, where
/// the judge reads the view the earlier edits changed). `true`: a rule that may jump
/// anywhere ([`VERDICT_MAP`]). Sorted by chain, once each.
pub(super) fn jumping_at_rename(
    earlier: &[Op],
    kernel: &[crate::nft::RawRule],
    chain: &crate::nft::ChainRef,
) -> Vec<(String, bool)> {
    let table = &chain.table;
    let mut gone: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut flushed: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut all_flushed = false;
    // (chain, where the rule jumps) of the rules the earlier operations added.
    let mut added: Vec<(&str, Option<String>)> = Vec::new();
    // What each earlier operation plans, as the policy judges it (nf_tables operations and
    // a front end's own messages alike).
    let planned = earlier
        .iter()
        .flat_map(|op| planned_of_op(op, &[]))
        .filter(|(t, _)| *t == table);
    for (_, p) in planned {
        match p {
            Planned::DeleteRule {
                old: OldRule::Handle(h),
                ..
            } => {
                gone.insert(h);
            }
            Planned::ReplaceRule {
                chain: c,
                old,
                jump_to,
            } => {
                if let OldRule::Handle(h) = old {
                    gone.insert(h);
                }
                added.push((c, jump_to));
            }
            Planned::AddRule { chain: c, jump_to } => added.push((c, jump_to)),
            // A chain deleted loses its rules first (the kernel's `nf_tables_delchain`).
            Planned::FlushChain(c) | Planned::DeleteChain(c) => {
                flushed.insert(c);
                added.retain(|(a, _)| *a != c);
            }
            Planned::FlushTable | Planned::DeleteTable => {
                all_flushed = true;
                added.clear();
            }
            _ => {}
        }
    }
    let of = |in_chain: &str, jump: Option<&str>| match jump {
        Some(j) if j == chain.name => Some((in_chain.to_owned(), false)),
        Some(VERDICT_MAP) => Some((in_chain.to_owned(), true)),
        _ => None,
    };
    let mut out: Vec<(String, bool)> = kernel
        .iter()
        .filter(|r| !all_flushed && !gone.contains(&r.handle))
        .filter(|r| !flushed.contains(r.chain.name.as_str()))
        .filter_map(|r| of(&r.chain.name, exprs_jump(&r.exprs).as_deref()))
        .chain(added.iter().filter_map(|(c, j)| of(c, j.as_deref())))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// What an operation on a named set changes: a set verb, with the set's name where chain
/// touches name a chain (an `[[allow]]` entry scopes them with `sets = [...]`).
fn set_planned(op: &SetOp) -> Planned<'_> {
    let verb = match op {
        SetOp::Ensure { .. } => Verb::CreateSet,
        SetOp::Delete { .. } => Verb::DeleteSet,
        SetOp::AddElements { .. } => Verb::AddElement,
        SetOp::DeleteElements { .. } | SetOp::Flush { .. } => Verb::DeleteElement,
    };
    Planned::Set {
        name: op.set_name(),
        verb,
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
/// entry's `jump_to` allows it only with the pattern `*`. Expressions the decoder does not
/// know, and verdicts it cannot name, count the same way: unknown means refused.
pub const VERDICT_MAP: &str = "*";

/// `NFT_REG_VERDICT`: a lookup whose data goes there is a verdict map.
const REG_VERDICT: u32 = 0;

/// Kernel expressions that never set a chain verdict (jump or goto), whatever their
/// attributes: kept raw (as [`Expr::Other`]) they still cannot jump. Every other raw
/// expression (`immediate` and `lookup` in a form not modelled, `numgen` and `hash`, which
/// older kernels let look a map up, and names this list does not know) counts as a jump to
/// [`VERDICT_MAP`].
const NEVER_JUMPS: &[&str] = &[
    "payload",
    "meta",
    "cmp",
    "range",
    "bitwise",
    "byteorder",
    "counter",
    "ct",
    "reject",
    "log",
    "redir",
    "nat",
    "masq",
    "match",
    "target",
    "limit",
    "quota",
    "connlimit",
    "fib",
    "exthdr",
    "socket",
    "tproxy",
    "osf",
    "xfrm",
    "rt",
    "dynset",
    "objref",
    "queue",
    "dup",
    "fwd",
    "notrack",
    "flow_offload",
    "last",
    "synproxy",
    "tunnel",
    "secmark",
    "cmpxchg",
];

/// The chain a rule's expressions jump or go to, as the kernel executes them: expressions run
/// in order and the first verdict met ends the rule, so later verdicts never run. In both
/// encodings (native and iptables-nft's compat) a jump is an `immediate` expression with a
/// chain verdict; `continue` verdicts do not end the rule. A verdict-map lookup (`ip saddr
/// vmap { 192.0.2.1 : jump admin }`: a `lookup` whose data goes to the verdict register) may
/// produce a verdict naming any chain of the table, and so may an expression the decoder
/// kept raw unless it is one that never jumps, and a verdict code it cannot name: each
/// counts as a jump to [`VERDICT_MAP`], which only `jump_to = ["*"]` allows.
pub fn exprs_jump(exprs: &[Expr]) -> Option<String> {
    for e in exprs {
        match e {
            Expr::Immediate(i) => match &i.data {
                ImmediateData::Verdict(Verdict::Jump(c) | Verdict::Goto(c)) => {
                    return Some(c.clone());
                }
                ImmediateData::Verdict(Verdict::Continue) => {}
                ImmediateData::Verdict(Verdict::Unknown(_)) => {
                    return Some(VERDICT_MAP.to_owned());
                }
                ImmediateData::Verdict(_) => return None,
                _ => {}
            },
            Expr::Lookup(l) if l.dreg == Some(REG_VERDICT) => {
                return Some(VERDICT_MAP.to_owned());
            }
            Expr::Other(o) if !NEVER_JUMPS.contains(&o.name.as_str()) => {
                return Some(VERDICT_MAP.to_owned());
            }
            _ => {}
        }
    }
    None
}
