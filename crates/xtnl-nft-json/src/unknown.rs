//! Finding the parts of a document that this crate does not type (the `Other` variants), so
//! that a layer acting on a document can refuse it naming each of them.

use crate::{Elem, ExprObject, Expression, Item, MapLookup, Object, Set, Statement};

/// A part of a document that parsed into an `Other` variant.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    /// Where it is: `nftables[3].rule.expr[1]`.
    pub path: String,
    /// What it is, as it was read.
    pub value: serde_json::Value,
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = self.value.to_string();
        if shown.len() > 200 {
            let mut cut = 200;
            while !shown.is_char_boundary(cut) {
                cut -= 1;
            }
            shown.truncate(cut);
            shown.push_str("...");
        }
        write!(f, "{}: not understood: {}", self.path, shown)
    }
}

fn push(out: &mut Vec<Unknown>, path: &str, value: &serde_json::Value) {
    out.push(Unknown {
        path: path.to_string(),
        value: value.clone(),
    });
}

fn list(items: &[Expression], path: &str, out: &mut Vec<Unknown>) {
    for (i, e) in items.iter().enumerate() {
        e.unknowns(&format!("{path}[{i}]"), out);
    }
}

fn stmts(items: &[Statement], path: &str, out: &mut Vec<Unknown>) {
    for (i, s) in items.iter().enumerate() {
        s.unknowns(&format!("{path}[{i}]"), out);
    }
}

impl Item {
    pub(crate) fn unknowns(&self, path: &str, out: &mut Vec<Unknown>) {
        match self {
            Item::Metainfo(_) => {}
            Item::Add(o) => o.unknowns(&format!("{path}.add"), out),
            Item::Create(o) => o.unknowns(&format!("{path}.create"), out),
            Item::Insert(o) => o.unknowns(&format!("{path}.insert"), out),
            Item::Replace(o) => o.unknowns(&format!("{path}.replace"), out),
            Item::Delete(o) => o.unknowns(&format!("{path}.delete"), out),
            Item::Destroy(o) => o.unknowns(&format!("{path}.destroy"), out),
            Item::Flush(o) => o.unknowns(&format!("{path}.flush"), out),
            Item::Reset(o) => o.unknowns(&format!("{path}.reset"), out),
            Item::List(o) => o.unknowns(&format!("{path}.list"), out),
            Item::Rename(o) => o.unknowns(&format!("{path}.rename"), out),
            Item::Object(o) => o.unknowns(path, out),
            Item::Other(v) => push(out, path, v),
        }
    }
}

impl Object {
    fn unknowns(&self, path: &str, out: &mut Vec<Unknown>) {
        match self {
            Object::Rule(r) => {
                if let Some(expr) = &r.expr {
                    stmts(expr, &format!("{path}.rule.expr"), out);
                }
            }
            Object::Set(s) => set(s, &format!("{path}.set"), out),
            Object::Map(s) => set(s, &format!("{path}.map"), out),
            Object::Meter(s) => set(s, &format!("{path}.meter"), out),
            Object::Element(e) => list(&e.elem, &format!("{path}.element.elem"), out),
            Object::Other(v) => push(out, path, v),
            Object::Table(_)
            | Object::Chain(_)
            | Object::Counter(_)
            | Object::Quota(_)
            | Object::Limit(_)
            | Object::CtHelper(_)
            | Object::CtTimeout(_)
            | Object::CtExpectation(_)
            | Object::Flowtable(_)
            | Object::Ruleset(()) => {}
        }
    }
}

fn set(s: &Set, path: &str, out: &mut Vec<Unknown>) {
    if let Some(crate::SetType::Typeof { of }) = &s.key {
        of.unknowns(&format!("{path}.type.typeof"), out);
    }
    if let Some(crate::SetType::Typeof { of }) = &s.map {
        of.unknowns(&format!("{path}.map.typeof"), out);
    }
    if let Some(st) = &s.stmt {
        stmts(st, &format!("{path}.stmt"), out);
    }
    if let Some(elem) = &s.elem {
        list(elem, &format!("{path}.elem"), out);
    }
}

impl Statement {
    fn unknowns(&self, path: &str, out: &mut Vec<Unknown>) {
        let at = |name: &str| format!("{path}.{name}");
        match self {
            Statement::Match(m) => {
                m.left.unknowns(&at("match.left"), out);
                m.right.unknowns(&at("match.right"), out);
            }
            Statement::Queue(Some(q)) => {
                if let Some(num) = &q.num {
                    num.unknowns(&at("queue.num"), out);
                }
            }
            Statement::Vmap(v) => {
                v.key.unknowns(&at("vmap.key"), out);
                v.data.unknowns(&at("vmap.data"), out);
            }
            Statement::Mangle(m) => {
                m.key.unknowns(&at("mangle.key"), out);
                m.value.unknowns(&at("mangle.value"), out);
            }
            Statement::Snat(Some(n))
            | Statement::Dnat(Some(n))
            | Statement::Masquerade(Some(n))
            | Statement::Redirect(Some(n)) => {
                if let Some(addr) = &n.addr {
                    addr.unknowns(&at("nat.addr"), out);
                }
                if let Some(port) = &n.port {
                    port.unknowns(&at("nat.port"), out);
                }
            }
            Statement::Reject(Some(r)) => {
                if let Some(e) = &r.expr {
                    e.unknowns(&at("reject.expr"), out);
                }
            }
            Statement::Set(s) => {
                s.elem.unknowns(&at("set.elem"), out);
                if let Some(st) = &s.stmt {
                    stmts(st, &at("set.stmt"), out);
                }
            }
            Statement::Map(m) => {
                m.elem.unknowns(&at("map.elem"), out);
                m.data.unknowns(&at("map.data"), out);
                if let Some(st) = &m.stmt {
                    stmts(st, &at("map.stmt"), out);
                }
            }
            Statement::Dup(d) => {
                d.addr.unknowns(&at("dup.addr"), out);
                if let Some(dev) = &d.dev {
                    dev.unknowns(&at("dup.dev"), out);
                }
            }
            Statement::Fwd(f) => {
                f.dev.unknowns(&at("fwd.dev"), out);
                if let Some(addr) = &f.addr {
                    addr.unknowns(&at("fwd.addr"), out);
                }
            }
            Statement::Tproxy(t) => {
                if let Some(addr) = &t.addr {
                    addr.unknowns(&at("tproxy.addr"), out);
                }
                if let Some(port) = &t.port {
                    port.unknowns(&at("tproxy.port"), out);
                }
            }
            Statement::Meter(m) => {
                m.key.unknowns(&at("meter.key"), out);
                m.stmt.unknowns(&at("meter.stmt"), out);
            }
            Statement::Other(v) => push(out, path, v),
            Statement::Accept(())
            | Statement::Drop(())
            | Statement::Continue(())
            | Statement::Return(())
            | Statement::Jump(_)
            | Statement::Goto(_)
            | Statement::Queue(None)
            | Statement::Counter(_)
            | Statement::Quota(_)
            | Statement::Limit(_)
            | Statement::Log(_)
            | Statement::Snat(None)
            | Statement::Dnat(None)
            | Statement::Masquerade(None)
            | Statement::Redirect(None)
            | Statement::Reject(None)
            | Statement::CtHelper(_)
            | Statement::CtTimeout(_)
            | Statement::CtExpectation(_)
            | Statement::CtCount(_)
            | Statement::Last(_)
            | Statement::Secmark(_)
            | Statement::Notrack(())
            | Statement::Synproxy(_)
            | Statement::Flow(_)
            | Statement::Xt(_) => {}
        }
    }
}

impl Expression {
    pub(crate) fn unknowns(&self, path: &str, out: &mut Vec<Unknown>) {
        match self {
            Expression::String(_) | Expression::Number(_) | Expression::Bool(_) => {}
            Expression::List(items) => list(items, path, out),
            Expression::Object(o) => o.unknowns(path, out),
        }
    }
}

impl ExprObject {
    fn unknowns(&self, path: &str, out: &mut Vec<Unknown>) {
        let at = |name: &str| format!("{path}.{name}");
        match self {
            ExprObject::Jhash(j) => j.expr.unknowns(&at("jhash.expr"), out),
            ExprObject::Prefix(p) => p.addr.unknowns(&at("prefix.addr"), out),
            ExprObject::Range(v) => list(v, &at("range"), out),
            ExprObject::Set(e) => e.unknowns(&at("set"), out),
            ExprObject::Map(MapLookup { key, data }) => {
                key.unknowns(&at("map.key"), out);
                data.unknowns(&at("map.data"), out);
            }
            ExprObject::Concat(v) => list(v, &at("concat"), out),
            ExprObject::Elem(Elem { val, .. }) => val.unknowns(&at("elem.val"), out),
            ExprObject::And(v) => list(v, &at("&"), out),
            ExprObject::Or(v) => list(v, &at("|"), out),
            ExprObject::Xor(v) => list(v, &at("^"), out),
            ExprObject::Lshift(v) => list(v, &at("<<"), out),
            ExprObject::Rshift(v) => list(v, &at(">>"), out),
            ExprObject::Other(v) => push(out, path, v),
            ExprObject::Payload(_)
            | ExprObject::Exthdr(_)
            | ExprObject::TcpOption(_)
            | ExprObject::IpOption(_)
            | ExprObject::SctpChunk(_)
            | ExprObject::Meta(_)
            | ExprObject::Ct(_)
            | ExprObject::Fib(_)
            | ExprObject::Rt(_)
            | ExprObject::Socket(_)
            | ExprObject::Osf(_)
            | ExprObject::Ipsec(_)
            | ExprObject::Numgen(_)
            | ExprObject::Symhash(_)
            | ExprObject::Accept(())
            | ExprObject::Drop(())
            | ExprObject::Continue(())
            | ExprObject::Return(())
            | ExprObject::Jump(_)
            | ExprObject::Goto(_) => {}
        }
    }
}
