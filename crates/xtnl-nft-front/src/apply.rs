//! A document's commands into one transaction of [`Message`]s, as `nft -j -f` sends them:
//! tables, chains, rules (statements through the `xtnl-nft-rules` codec, with their
//! anonymous sets), sets and maps with their elements, element lists, and their deletion and
//! flushing. Anything else is refused naming the item, before anything is sent.

use std::collections::HashMap;

use xtnl_nft_json as j;
use xtnl_nft_rules::{SetView, encode_elements, encode_rule};

use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{
    AnonSetDef, Message, MessageBody, MessageVerb as V, Reader, TableRef, Transaction,
};
use crate::wire::netlink::{NLM_F_APPEND, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE};
use crate::wire::nftables::{ChainRepr, HookRepr, RuleRepr, TableRepr, msg, udata as rule_udata};
use crate::wire::set::{ElemRepr, SetDefRepr, flags};

const DELSET: u8 = 11;
const DELSETELEM: u8 = 14;
const DESTROYTABLE: u8 = msg::DESTROYTABLE;
const DESTROYCHAIN: u8 = msg::DESTROYCHAIN;
const DESTROYRULE: u8 = msg::DESTROYRULE;
/// `NFT_MSG_DESTROYSET`, `NFT_MSG_DESTROYSETELEM` (kernel 6.3+).
const DESTROYSET: u8 = 29;
const DESTROYSETELEM: u8 = 30;

/// The command of an item, for messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cmd {
    Add,
    Create,
    Insert,
    Replace,
    Delete,
    Destroy,
    Flush,
}

impl Cmd {
    fn word(self) -> &'static str {
        match self {
            Cmd::Add => "add",
            Cmd::Create => "create",
            Cmd::Insert => "insert",
            Cmd::Replace => "replace",
            Cmd::Delete => "delete",
            Cmd::Destroy => "destroy",
            Cmd::Flush => "flush",
        }
    }
}

/// Plans the document's commands as one transaction, reading what they refer to (the
/// table's sets for rules and elements, rule handles for an `index`, every table for
/// `flush ruleset`) through `r`, at the plan's generation.
///
/// # Errors
/// [`Error::InvalidInput`] naming the item (`nftables[3]: add rule inet t c: ...`) for
/// anything not supported or not valid.
pub fn plan(r: &mut Reader<'_>, doc: &j::Document) -> Result<Transaction> {
    let mut p = Planner {
        r,
        tx: Transaction::new(),
        sets: HashMap::new(),
        dynamic: super::sets::dynamic_sets(doc),
    };
    for (i, item) in doc.nftables.iter().enumerate() {
        p.item(item).map_err(|e| match e {
            Error::InvalidInput(m) => Error::InvalidInput(format!("nftables[{i}]: {m}")),
            other => other,
        })?;
    }
    Ok(p.tx)
}

struct Planner<'a, 'r> {
    r: &'a mut Reader<'r>,
    tx: Transaction,
    /// Sets known per table: read from the kernel, or defined earlier in the document (a
    /// table the document deletes, or `flush ruleset`, leaves an empty entry: its kernel
    /// sets are gone by the time later commands run).
    sets: HashMap<TableRef, HashMap<String, SetView>>,
    /// `(family, table, set)` of the sets the document's rules add to or update.
    dynamic: std::collections::HashSet<(j::Family, String, String)>,
}

fn family_of(f: j::Family, what: &str) -> Result<Family> {
    match f {
        j::Family::Ip => Ok(Family::Ipv4),
        j::Family::Ip6 => Ok(Family::Ipv6),
        j::Family::Inet => Ok(Family::Inet),
        other => Err(Error::InvalidInput(format!(
            "{what}: family {} is not supported by xtnl's nft front (ip, ip6 and inet are)",
            serde_json::to_string(&other)
                .unwrap_or_default()
                .trim_matches('"')
        ))),
    }
}

fn refuse(what: &str, why: &str) -> Error {
    Error::InvalidInput(format!("{what}: {why}"))
}

fn hook_number(name: &str) -> Option<u32> {
    Some(match name {
        "prerouting" => 0,
        "input" => 1,
        "forward" => 2,
        "output" => 3,
        "postrouting" => 4,
        "ingress" => 5,
        _ => return None,
    })
}

impl Planner<'_, '_> {
    fn item(&mut self, item: &j::Item) -> Result<()> {
        let (cmd, obj) = match item {
            j::Item::Metainfo(_) => return Ok(()),
            j::Item::Add(o) | j::Item::Object(o) => (Cmd::Add, o),
            j::Item::Create(o) => (Cmd::Create, o),
            j::Item::Insert(o) => (Cmd::Insert, o),
            j::Item::Replace(o) => (Cmd::Replace, o),
            j::Item::Delete(o) => (Cmd::Delete, o),
            j::Item::Destroy(o) => (Cmd::Destroy, o),
            j::Item::Flush(o) => (Cmd::Flush, o),
            j::Item::Reset(_) => {
                return Err(refuse("reset", "not supported by xtnl's nft front yet"));
            }
            j::Item::List(_) => {
                return Err(refuse(
                    "list",
                    "a listing inside a document is not supported (use xtnl nft -j list)",
                ));
            }
            j::Item::Rename(o) => return self.rename(o),
            j::Item::Other(v) => return Err(refuse(&v.to_string(), "not understood")),
        };
        match obj {
            j::Object::Table(t) => self.table(cmd, t),
            j::Object::Chain(c) => self.chain(cmd, c),
            j::Object::Rule(rule) => self.rule(cmd, rule),
            j::Object::Set(s) | j::Object::Map(s) => self.set(cmd, s),
            j::Object::Element(e) => self.elements(cmd, e),
            j::Object::Ruleset(()) if cmd == Cmd::Flush => self.flush_ruleset(),
            j::Object::Counter(_)
            | j::Object::Quota(_)
            | j::Object::Limit(_)
            | j::Object::CtHelper(_)
                if matches!(cmd, Cmd::Add | Cmd::Create | Cmd::Delete | Cmd::Destroy) =>
            {
                self.object(cmd, obj)
            }
            other => {
                let name = serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v.as_object().and_then(|o| o.keys().next().cloned()))
                    .unwrap_or_default();
                Err(refuse(
                    &format!("{} {name}", cmd.word()),
                    "not supported by xtnl's nft front yet (tables, chains, rules, sets, maps \
                     and elements are)",
                ))
            }
        }
    }

    fn object(&mut self, cmd: Cmd, obj: &j::Object) -> Result<()> {
        let (fam, kind) = match obj {
            j::Object::Counter(c) => (c.family, "counter"),
            j::Object::Quota(q) => (q.family, "quota"),
            j::Object::Limit(l) => (l.family, "limit"),
            j::Object::CtHelper(h) => (h.family, "ct helper"),
            _ => return Err(refuse(cmd.word(), "not a named object")),
        };
        let what = format!("{} {kind}", cmd.word());
        let family = family_of(fam, &what)?;
        let data = matches!(cmd, Cmd::Add | Cmd::Create);
        let Some((table, repr)) = super::objects::obj_repr(family, obj, data, &what)? else {
            return Err(refuse(&what, "not a named object"));
        };
        let desc = format!("{what} {table} {}", repr.name);
        let (m, fl, verb) = match cmd {
            Cmd::Add => (crate::wire::object::NEWOBJ, NLM_F_CREATE, V::CreateObject),
            Cmd::Create => (
                crate::wire::object::NEWOBJ,
                NLM_F_CREATE | NLM_F_EXCL,
                V::CreateObject,
            ),
            Cmd::Delete => (crate::wire::object::DELOBJ, 0, V::DeleteObject),
            _ => (crate::wire::object::DESTROYOBJ, 0, V::DeleteObject),
        };
        self.push(Message {
            msg: m,
            flags: fl,
            object: Some(repr.name.clone()),
            table,
            verb,
            body: MessageBody::Object(repr),
            desc,
        });
        Ok(())
    }

    fn push(&mut self, m: Message) {
        self.tx.push(crate::nft::Op::Message(m));
    }

    fn table(&mut self, cmd: Cmd, t: &j::Table) -> Result<()> {
        let name = t.name.clone().ok_or_else(|| {
            refuse(
                &format!("{} table", cmd.word()),
                "a table by handle is not supported; name it",
            )
        })?;
        let family = family_of(t.family, &format!("{} table {name}", cmd.word()))?;
        let table = TableRef::new(family, name.clone());
        let desc = format!("{} table {table}", cmd.word());
        if t.comment.is_some() {
            return Err(refuse(
                &desc,
                "table comments are not supported by xtnl's nft front yet",
            ));
        }
        let mut repr = TableRepr {
            family: family.nfproto(),
            name,
            ..Default::default()
        };
        let (m, fl, verb) = match cmd {
            Cmd::Add | Cmd::Create => {
                if let Some(f) = &t.flags {
                    let list = match f {
                        j::OneOrMany::One(s) => vec![s.clone()],
                        j::OneOrMany::Many(v) => v.clone(),
                    };
                    let mut bits = 0;
                    for f in list {
                        match f.as_str() {
                            "dormant" => bits |= 1,
                            other => {
                                return Err(refuse(
                                    &desc,
                                    &format!("table flag {other:?} is not supported"),
                                ));
                            }
                        }
                    }
                    repr.flags = Some(bits);
                }
                let excl = if cmd == Cmd::Create { NLM_F_EXCL } else { 0 };
                (msg::NEWTABLE, NLM_F_CREATE | excl, V::CreateTable)
            }
            Cmd::Delete => (msg::DELTABLE, 0, V::DeleteTable),
            Cmd::Destroy => (DESTROYTABLE, 0, V::DeleteTable),
            Cmd::Flush => (msg::DELRULE, 0, V::FlushTable),
            _ => return Err(refuse(&desc, "not a command for a table")),
        };
        if cmd == Cmd::Delete || cmd == Cmd::Destroy {
            self.sets.insert(table.clone(), HashMap::new());
        }
        let body = if cmd == Cmd::Flush {
            MessageBody::Rule {
                rule: RuleRepr {
                    family: family.nfproto(),
                    table: table.name.clone(),
                    ..Default::default()
                },
                sets: Vec::new(),
            }
        } else {
            MessageBody::Table(repr)
        };
        self.push(Message {
            msg: m,
            flags: fl,
            table,
            object: None,
            verb,
            body,
            desc,
        });
        Ok(())
    }

    fn flush_ruleset(&mut self) -> Result<()> {
        // Every table, each deleted by name, so that a policy judges each one.
        for t in self.r.table_reprs(None)? {
            let Some(family) = Family::from_nfproto(t.family) else {
                return Err(refuse(
                    "flush ruleset",
                    &format!(
                        "the ruleset has table {} of family {}, which xtnl's nft front does not \
                         support",
                        t.name, t.family
                    ),
                ));
            };
            let table = TableRef::new(family, t.name.clone());
            self.sets.insert(table.clone(), HashMap::new());
            self.push(Message {
                msg: msg::DELTABLE,
                flags: 0,
                desc: format!("flush ruleset: delete table {table}"),
                table,
                object: None,
                verb: V::DeleteTable,
                body: MessageBody::Table(TableRepr {
                    family: t.family,
                    name: t.name,
                    ..Default::default()
                }),
            });
        }
        Ok(())
    }

    fn chain(&mut self, cmd: Cmd, c: &j::Chain) -> Result<()> {
        let name = c.name.clone().ok_or_else(|| {
            refuse(
                &format!("{} chain", cmd.word()),
                "a chain by handle is not supported; name it",
            )
        })?;
        let family = family_of(c.family, &format!("{} chain {}", cmd.word(), c.table))?;
        let table = TableRef::new(family, c.table.clone());
        let desc = format!("{} chain {table} {name}", cmd.word());
        if c.comment.is_some() || c.newname.is_some() {
            return Err(refuse(
                &desc,
                "chain comments and newname are not supported here",
            ));
        }
        let mut repr = ChainRepr {
            family: family.nfproto(),
            table: table.name.clone(),
            name: name.clone(),
            ..Default::default()
        };
        let (m, fl, verb) = match cmd {
            Cmd::Add | Cmd::Create => {
                let base = c.hook.is_some() || c.kind.is_some() || c.prio.is_some();
                let mut verb = V::CreateChain;
                if base {
                    let hook = c
                        .hook
                        .as_deref()
                        .ok_or_else(|| refuse(&desc, "a base chain needs a hook"))?;
                    let hooknum = hook_number(hook)
                        .ok_or_else(|| refuse(&desc, &format!("unknown hook {hook:?}")))?;
                    if hooknum == 5 || c.dev.is_some() {
                        return Err(refuse(
                            &desc,
                            "ingress chains and devices are not supported in family ip, ip6 and inet here",
                        ));
                    }
                    repr.hook = Some(HookRepr {
                        hooknum,
                        priority: c
                            .prio
                            .ok_or_else(|| refuse(&desc, "a base chain needs a prio"))?,
                        device: None,
                    });
                    repr.chain_type = Some(c.kind.clone().unwrap_or_else(|| "filter".into()));
                    verb = V::BaseChain;
                }
                if let Some(p) = &c.policy {
                    if !base {
                        return Err(refuse(&desc, "a policy needs a base chain"));
                    }
                    repr.policy = Some(match p.as_str() {
                        "accept" => 1,
                        "drop" => 0,
                        other => return Err(refuse(&desc, &format!("unknown policy {other:?}"))),
                    });
                }
                let excl = if cmd == Cmd::Create { NLM_F_EXCL } else { 0 };
                (msg::NEWCHAIN, NLM_F_CREATE | excl, verb)
            }
            Cmd::Delete => (msg::DELCHAIN, 0, V::DeleteChain),
            Cmd::Destroy => (DESTROYCHAIN, 0, V::DeleteChain),
            Cmd::Flush => (msg::DELRULE, 0, V::FlushChain),
            _ => return Err(refuse(&desc, "not a command for a chain")),
        };
        let body = if cmd == Cmd::Flush {
            MessageBody::Rule {
                rule: RuleRepr {
                    family: family.nfproto(),
                    table: table.name.clone(),
                    chain: name.clone(),
                    ..Default::default()
                },
                sets: Vec::new(),
            }
        } else {
            MessageBody::Chain(repr)
        };
        self.push(Message {
            msg: m,
            flags: fl,
            table,
            object: Some(name),
            verb,
            body,
            desc,
        });
        Ok(())
    }

    fn rename(&mut self, o: &j::Object) -> Result<()> {
        let j::Object::Chain(c) = o else {
            return Err(refuse("rename", "only chains are renamed"));
        };
        let (Some(name), Some(new)) = (&c.name, &c.newname) else {
            return Err(refuse("rename chain", "needs name and newname"));
        };
        let family = family_of(c.family, "rename chain")?;
        let table = TableRef::new(family, c.table.clone());
        let desc = format!("rename chain {table} {name} to {new}");
        let handle = self
            .r
            .chain(&table.chain(name.clone()))?
            .and_then(|ch| ch.handle)
            .ok_or_else(|| refuse(&desc, "No such file or directory (no such chain)"))?;
        self.push(Message {
            msg: msg::NEWCHAIN,
            flags: 0,
            object: Some(name.clone()),
            verb: V::RenameChain,
            body: MessageBody::Chain(ChainRepr {
                family: family.nfproto(),
                table: table.name.clone(),
                name: new.clone(),
                handle: Some(handle),
                ..Default::default()
            }),
            table,
            desc,
        });
        Ok(())
    }

    /// The sets of `table` the codec may look up: the kernel's (read once per table), with
    /// those the document defined or deleted applied.
    fn sets_of(&mut self, table: &TableRef) -> Result<&mut HashMap<String, SetView>> {
        if !self.sets.contains_key(table) {
            let mut m = HashMap::new();
            if self.r.table_exists(table)? {
                for def in self.r.sets(table)? {
                    m.insert(def.name.clone(), SetView::from_def(&def, Vec::new()));
                }
            }
            self.sets.insert(table.clone(), m);
        }
        Ok(self.sets.entry(table.clone()).or_default())
    }

    fn rule(&mut self, cmd: Cmd, rule: &j::Rule) -> Result<()> {
        let family = family_of(rule.family, &format!("{} rule", cmd.word()))?;
        let table = TableRef::new(family, rule.table.clone());
        let chain = table.chain(rule.chain.clone());
        let desc = format!("{} rule {chain}", cmd.word());
        let mut repr = RuleRepr {
            family: family.nfproto(),
            table: table.name.clone(),
            chain: chain.name.clone(),
            ..Default::default()
        };
        let (m, fl, verb) = match cmd {
            Cmd::Delete | Cmd::Destroy => {
                let h = rule
                    .handle
                    .ok_or_else(|| refuse(&desc, "a rule is deleted by its handle"))?;
                repr.handle = Some(h);
                let m = if cmd == Cmd::Delete {
                    msg::DELRULE
                } else {
                    DESTROYRULE
                };
                (m, 0, V::DeleteRule)
            }
            Cmd::Add | Cmd::Create | Cmd::Insert | Cmd::Replace => {
                let stmts = rule
                    .expr
                    .as_deref()
                    .ok_or_else(|| refuse(&desc, "a rule needs \"expr\""))?;
                let views = self.sets_of(&table)?;
                let enc = encode_rule(family.nfproto(), stmts, views)
                    .map_err(|e| refuse(&desc, &e.to_string()))?;
                repr.exprs = enc.exprs;
                if let Some(c) = &rule.comment {
                    repr.userdata =
                        Some(rule_udata::encode_comment(c).ok_or_else(|| {
                            refuse(&desc, "the comment is longer than 254 bytes")
                        })?);
                }
                let sets: Vec<AnonSetDef> = enc
                    .anon_sets
                    .into_iter()
                    .map(|a| AnonSetDef {
                        set: SetDefRepr {
                            family: family.nfproto(),
                            table: table.name.clone(),
                            ..a.def
                        },
                        elements: a.elements,
                    })
                    .collect();
                let body_sets = sets;
                let (m, fl, verb) = match cmd {
                    Cmd::Replace => {
                        repr.handle = Some(
                            rule.handle
                                .ok_or_else(|| refuse(&desc, "replace needs the rule's handle"))?,
                        );
                        (msg::NEWRULE, NLM_F_REPLACE, V::ReplaceRule)
                    }
                    _ => {
                        // As nft 1.0.6 places rules: `add` goes after the rule at `index`,
                        // else at the end (its `handle` and `position` are not read, so that
                        // a listing's handles re-applied elsewhere do not matter); `insert`
                        // goes before the rule of `handle` or at `index`, else at the head.
                        let at = match (cmd, rule.handle, rule.index) {
                            (Cmd::Insert, Some(h), _) => Some(h),
                            (_, _, Some(i)) => Some(self.handle_at(&chain, i, &desc)?),
                            _ => None,
                        };
                        repr.position = at;
                        let append = match cmd {
                            Cmd::Insert => 0,
                            _ => NLM_F_APPEND,
                        };
                        (msg::NEWRULE, NLM_F_CREATE | append, V::AddRule)
                    }
                };
                self.push(Message {
                    msg: m,
                    flags: fl,
                    table,
                    object: Some(chain.name.clone()),
                    verb,
                    body: MessageBody::Rule {
                        rule: repr,
                        sets: body_sets,
                    },
                    desc,
                });
                return Ok(());
            }
            Cmd::Flush => return Err(refuse(&desc, "flush applies to tables, chains and sets")),
        };
        self.push(Message {
            msg: m,
            flags: fl,
            table,
            object: Some(chain.name.clone()),
            verb,
            body: MessageBody::Rule {
                rule: repr,
                sets: Vec::new(),
            },
            desc,
        });
        Ok(())
    }

    /// The handle of the rule at `index` (0: the first) of the chain, as nft reads it.
    fn handle_at(&mut self, chain: &crate::nft::ChainRef, index: u64, desc: &str) -> Result<u64> {
        let rules = self.r.raw_rules(&chain.table, Some(&chain.name))?;
        usize::try_from(index)
            .ok()
            .and_then(|i| rules.get(i))
            .map(|r| r.handle)
            .ok_or_else(|| {
                refuse(
                    desc,
                    &format!("No such file or directory: no rule at index {index}"),
                )
            })
    }

    fn set(&mut self, cmd: Cmd, s: &j::Set) -> Result<()> {
        let name = s.name.clone().ok_or_else(|| {
            refuse(
                &format!("{} set", cmd.word()),
                "a set by handle is not supported; name it",
            )
        })?;
        let family = family_of(s.family, &format!("{} set {name}", cmd.word()))?;
        let table = TableRef::new(family, s.table.clone());
        let desc = format!("{} set {table} {name}", cmd.word());
        match cmd {
            Cmd::Delete | Cmd::Destroy => {
                if let Some(m) = self.sets.get_mut(&table) {
                    m.remove(&name);
                }
                let m = if cmd == Cmd::Delete {
                    DELSET
                } else {
                    DESTROYSET
                };
                self.push(Message {
                    msg: m,
                    flags: 0,
                    table: table.clone(),
                    object: Some(name.clone()),
                    verb: V::DeleteSet,
                    body: MessageBody::Set(SetDefRepr {
                        family: family.nfproto(),
                        table: table.name.clone(),
                        name,
                        ..Default::default()
                    }),
                    desc,
                });
                return Ok(());
            }
            Cmd::Flush => {
                self.push(Message {
                    msg: DELSETELEM,
                    flags: 0,
                    table,
                    object: Some(name.clone()),
                    verb: V::DeleteElement,
                    body: MessageBody::Elements {
                        set: name,
                        elements: Vec::new(),
                    },
                    desc,
                });
                return Ok(());
            }
            Cmd::Add | Cmd::Create => {}
            _ => return Err(refuse(&desc, "not a command for a set")),
        }
        let mut def = super::sets::set_def(s, family, &name, &desc)?;
        if self
            .dynamic
            .contains(&(s.family, s.table.clone(), name.clone()))
        {
            def.flags |= flags::EVAL;
        }
        let view = SetView::from_def(&def, Vec::new());
        let excl = if cmd == Cmd::Create { NLM_F_EXCL } else { 0 };
        self.sets_of(&table)?.insert(name.clone(), view.clone());
        self.push(Message {
            msg: msg::NEWSET,
            flags: NLM_F_CREATE | excl,
            table: table.clone(),
            object: Some(name.clone()),
            verb: V::CreateSet,
            body: MessageBody::Set(def),
            desc: desc.clone(),
        });
        if let Some(elem) = &s.elem {
            let elements =
                encode_elements(&view, elem).map_err(|e| refuse(&desc, &e.to_string()))?;
            self.push(Message {
                msg: msg::NEWSETELEM,
                flags: NLM_F_CREATE,
                table,
                object: Some(name.clone()),
                verb: V::AddElement,
                body: MessageBody::Elements {
                    set: name,
                    elements,
                },
                desc: format!("{desc}: its elements"),
            });
        }
        Ok(())
    }

    fn elements(&mut self, cmd: Cmd, e: &j::Element) -> Result<()> {
        let family = family_of(e.family, &format!("{} element", cmd.word()))?;
        let table = TableRef::new(family, e.table.clone());
        let desc = format!("{} element {table} {}", cmd.word(), e.name);
        let view = self
            .sets_of(&table)?
            .get(&e.name)
            .cloned()
            .ok_or_else(|| refuse(&desc, "No such file or directory (no such set)"))?;
        let elements: Vec<ElemRepr> =
            encode_elements(&view, &e.elem).map_err(|err| refuse(&desc, &err.to_string()))?;
        let (m, fl, verb) = match cmd {
            Cmd::Add => (msg::NEWSETELEM, NLM_F_CREATE, V::AddElement),
            Cmd::Create => (msg::NEWSETELEM, NLM_F_CREATE | NLM_F_EXCL, V::AddElement),
            Cmd::Delete => (DELSETELEM, 0, V::DeleteElement),
            Cmd::Destroy => (DESTROYSETELEM, 0, V::DeleteElement),
            _ => return Err(refuse(&desc, "not a command for elements")),
        };
        self.push(Message {
            msg: m,
            flags: fl,
            table,
            object: Some(e.name.clone()),
            verb,
            body: MessageBody::Elements {
                set: e.name.clone(),
                elements,
            },
            desc,
        });
        Ok(())
    }
}
