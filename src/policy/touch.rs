//! What an operation touches: the backend-neutral [`Touch`]es a [`Policy`](super::Policy)
//! checks, found from nf_tables operations ([`touches_of_op`], [`touches`]) and the chain a
//! rule's expressions jump to ([`exprs_jump`]).

use super::{Verb, sets};
use crate::model::Family;
use crate::nft::{ChainRef, Op, Transaction};
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
        // iptables' table and built-in chain made as iptables-nft makes them; an existing
        // chain's policy is left alone.
        Op::EnsureIptablesChain(c) => vec![
            mk(c.table.family, &c.table.name, None, Verb::CreateTable),
            chain_touch(c, Verb::Create),
        ],
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
        Op::Message(m) => message_touches(m, mk),
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

/// What a front end's own message touches (the nft JSON front): its verb on its table,
/// chain or set; a replacement deletes and adds; a rename deletes the old name and creates
/// the new one.
fn message_touches(
    m: &crate::nft::Message,
    mk: impl Fn(Family, &str, Option<&str>, Verb) -> Touch,
) -> Vec<Touch> {
    use crate::nft::{MessageBody, MessageVerb as V};
    let (family, table) = (m.table.family, m.table.name.as_str());
    let on = |verb: Verb| mk(family, table, m.object.as_deref(), verb);
    let jump = || exprs_jump(m.rule_exprs());
    let handle = match &m.body {
        MessageBody::Rule { rule, .. } => rule.handle,
        _ => None,
    };
    match m.verb {
        V::CreateTable => vec![mk(family, table, None, Verb::CreateTable)],
        V::DeleteTable => vec![mk(family, table, None, Verb::DeleteTable)],
        V::FlushTable => vec![mk(family, table, None, Verb::FlushTable)],
        V::CreateChain => vec![on(Verb::Create)],
        V::BaseChain => vec![on(Verb::Policy)],
        V::DeleteChain => vec![on(Verb::Delete)],
        V::FlushChain => vec![on(Verb::Flush)],
        V::RenameChain => {
            let new = match &m.body {
                MessageBody::Chain(c) => c.name.clone(),
                _ => String::new(),
            };
            vec![
                on(Verb::Delete),
                mk(family, table, Some(&new), Verb::Create),
            ]
        }
        V::AddRule => vec![Touch {
            jump_to: jump(),
            ..on(Verb::AddRule)
        }],
        V::DeleteRule => vec![Touch {
            handle,
            ..on(Verb::DeleteRule)
        }],
        V::ReplaceRule => vec![
            Touch {
                handle,
                ..on(Verb::DeleteRule)
            },
            Touch {
                jump_to: jump(),
                ..on(Verb::AddRule)
            },
        ],
        V::CreateSet => vec![on(Verb::CreateSet)],
        V::DeleteSet => vec![on(Verb::DeleteSet)],
        V::AddElement => vec![on(Verb::AddElement)],
        V::DeleteElement => vec![on(Verb::DeleteElement)],
        V::CreateObject => vec![on(Verb::CreateSet)],
        V::DeleteObject => vec![on(Verb::DeleteSet)],
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
