//! A rule in nft's words for `xtnl list`, with the x_tables compat expressions that the
//! iptables front (and iptables-nft) writes decoded through the typed payloads of
//! [`crate::xt`] and the extension registry, instead of `<not understood: ...>`.
//!
//! How each compat form is worded (docs/cli.md, "xtnl list"):
//! - where nft has a native statement for it, in nft's words: `comment "..."` (moved to the
//!   end of the rule, where nft's grammar puts a comment), `dnat to 192.0.2.10:3389`,
//!   `snat to ...`, `masquerade`, `redirect to :8080`, `reject with ...`, `log prefix ...`,
//!   `ct state established,related`, `ct status snat`, `tcp dport { 80, 443 }`, `tcp dport 22`;
//! - any other extension the registry reads: nft's own words for a compat expression
//!   (`xt match "limit"`, `xt target "CONNMARK"`) followed by iptables' options in
//!   parentheses, `xt match "recent" (-m recent --rcheck --seconds 60 ...)`;
//! - an extension xtnl does not know: `xt match "NAME"`, exactly as nft prints it.
//!
//! The native expressions iptables-nft writes for limit, mark, tcp flags, NFLOG and TRACE
//! (`ipt::ext::native`) are in nft's words as well. Expressions that are none of these and
//! that the model does not read stay `<not understood: ...>`.

use serde_json::{Value, json};

use super::super::print;
use super::super::rule::{IptMatch, IptRule, IptTarget, MultiportDir, NatRange, RejectWith};
use super::super::xt_bridge;
use crate::model::{Action, Dir, Family, L4Proto, Match, Opaque, Rule};
use crate::nft::codec::Exprs;
use crate::wire::expr::Expr;

/// The rule as `xtnl list` prints it: nft's words, compat expressions decoded.
pub fn rule_words(rule: &Rule, family: Family) -> String {
    let rule = &target_as_action(rule, family);
    let text = rule.words_with(&|o, proto| opaque_words(o, family, proto));
    // A compat comment goes last, where nft's grammar has it (it matches every packet, so
    // its place does not change what the rule does).
    let (comments, rest): (Vec<&str>, Vec<&str>) = split_words(&text)
        .into_iter()
        .partition(|w| w.starts_with(COMMENT_MARK));
    let mut out: Vec<String> = rest.into_iter().map(str::to_owned).collect();
    out.extend(
        comments
            .into_iter()
            .map(|c| c.trim_start_matches(COMMENT_MARK).to_owned()),
    );
    out.retain(|w| !w.is_empty());
    out.join(" ")
}

/// The decoder keeps a compat target (or the native NFLOG and TRACE) that ends a rule among
/// its opaque matches (where iptables' decoding looks for it), which would print it before
/// the counter; the listing shows it as the action, where the kernel runs it and nft prints
/// it.
fn target_as_action(rule: &Rule, family: Family) -> Rule {
    let mut r = rule.clone();
    if r.action.is_some() {
        return r;
    }
    let Some(Match::Opaque(o)) = r.matches.last_mut() else {
        return r;
    };
    let Some(exprs) = o.parts_mut::<Exprs>() else {
        return r;
    };
    use super::super::ext::native;
    let n = exprs.0.len();
    // A compat target, or the native forms of NFLOG (a `log` with a group) and TRACE.
    let tail = match exprs.0.last() {
        Some(Expr::Target(_)) => 1,
        Some(e) if native::decode_target(e, family).is_some() => 1,
        _ if n >= 2 && native::decode_trace(&exprs.0[n - 2..], family).is_some() => 2,
        _ => return r,
    };
    let target = exprs.0.split_off(n - tail);
    let now_empty = exprs.0.is_empty();
    if now_empty {
        r.matches.pop();
    }
    r.action = Some(Action::Opaque(Opaque::new(Exprs(target))));
    r
}

/// Marks a compat comment's words inside [`Rule::words_with`]'s text so that
/// [`rule_words`] can move them to the end; never printed.
const COMMENT_MARK: &str = "\u{1}";
/// Separates the parts of an opaque part's words.
const PART_SEP: char = '\u{2}';

/// Splits the text into the compat parts' words (which [`opaque_words`] delimits) and the
/// model's words in between.
fn split_words(text: &str) -> Vec<&str> {
    text.split(PART_SEP).map(str::trim).collect()
}

fn opaque_words(o: &Opaque, family: Family, proto: Option<L4Proto>) -> String {
    let Some(exprs) = o.parts::<Exprs>() else {
        return format!("<not understood: {o}>");
    };
    let mut parts = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let flush = |unknown: &mut Vec<String>, parts: &mut Vec<String>| {
        if !unknown.is_empty() {
            parts.push(format!("<not understood: {}>", unknown.join(" ")));
            unknown.clear();
        }
    };
    let mut i = 0;
    while i < exprs.0.len() {
        let e = &exprs.0[i];
        match e {
            Expr::Match(_) | Expr::Target(_) => {
                flush(&mut unknown, &mut parts);
                let w = compat_words(e, family, proto);
                if let CompatWords::Comment(c) = &w {
                    parts.push(format!("{COMMENT_MARK}comment {c:?}"));
                } else {
                    parts.push(w.text());
                }
                i += 1;
            }
            other => match native_words(&exprs.0[i..], family) {
                Some((words, used)) => {
                    flush(&mut unknown, &mut parts);
                    parts.push(words);
                    i += used;
                }
                None => {
                    unknown.push(other.to_string());
                    i += 1;
                }
            },
        }
    }
    flush(&mut unknown, &mut parts);
    if exprs.0.is_empty() {
        // Userdata that is not a comment (see the decoder).
        parts.push(format!("<not understood: {o}>"));
    }
    let sep = PART_SEP.to_string();
    format!("{sep}{}{sep}", parts.join(&sep))
}

/// The native expressions iptables-nft (and xtnl's front) writes for `-m limit`, `-m mark`,
/// `--tcp-flags`, `-j NFLOG` and `-j TRACE` (`ipt::ext::native`), in nft's words; with how
/// many expressions they took.
fn native_words(exprs: &[Expr], family: Family) -> Option<(String, usize)> {
    use super::super::ext::native;
    if let Some(IptTarget::Ext(_)) = native::decode_trace(exprs, family) {
        return Some(("meta nftrace set 1".into(), 2));
    }
    if let Some(IptTarget::Ext(p)) = exprs.first().and_then(|e| native::decode_target(e, family)) {
        let l = crate::xt::nflog::Nflog::decode(&p.info).ok()?;
        let mut w = String::from("log");
        let prefix = l.prefix.text();
        if !prefix.is_empty() {
            w.push_str(&format!(" prefix {prefix:?}"));
        }
        w.push_str(&format!(" group {}", l.group));
        if l.flags & crate::xt::nflog::NFLOG_F_COPY_LEN != 0 {
            w.push_str(&format!(" snaplen {}", l.len));
        }
        if l.threshold != 0 && l.threshold != 1 {
            w.push_str(&format!(" queue-threshold {}", l.threshold));
        }
        return Some((w, 1));
    }
    let (m, used) = native::decode_at(exprs, family)?;
    let IptMatch::Ext(p) = m else { return None };
    let words = match p.name.as_str() {
        "limit" => {
            let Some(Expr::Other(o)) = exprs.first() else {
                return None;
            };
            let (mut rate, mut unit, mut burst) = (0u64, 0u64, 0u32);
            for a in crate::wire::attr::Attrs::new(&o.data) {
                let a = a.ok()?;
                match a.ty {
                    1 => rate = a.u64_be("rate").ok()?,
                    2 => unit = a.u64_be("unit").ok()?,
                    3 => burst = a.u32_be("burst").ok()?,
                    _ => {}
                }
            }
            let unit = match unit {
                1 => "second",
                60 => "minute",
                3600 => "hour",
                86400 => "day",
                604800 => "week",
                _ => return None,
            };
            let mut w = format!("limit rate {rate}/{unit}");
            if burst != 0 && burst != 5 {
                w.push_str(&format!(" burst {burst} packets"));
            }
            w
        }
        "mark" => {
            let m = crate::xt::mark::MarkMatch::decode(&p.info).ok()?;
            let neg = m.invert != 0;
            if m.mask == u32::MAX {
                format!("meta mark {}{:#010x}", op(neg), m.mark)
            } else {
                let eq = if neg { "!=" } else { "==" };
                format!("meta mark & {:#010x} {eq} {:#010x}", m.mask, m.mark)
            }
        }
        "tcp" => {
            let t = crate::xt::Tcp::decode(&p.info).ok()?;
            if t.invflags != 0 {
                return None;
            }
            const NAMES: [&str; 6] = ["fin", "syn", "rst", "psh", "ack", "urg"];
            let names = |bits: u8| {
                let v: Vec<&str> = NAMES
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| bits & (1 << k) != 0)
                    .map(|(_, n)| *n)
                    .collect();
                v.join(",")
            };
            format!("tcp flags {} / {}", names(t.flg_cmp), names(t.flg_mask))
        }
        _ => return None,
    };
    Some((words, used))
}

/// One compat expression, read.
enum CompatWords {
    /// `comment "..."`.
    Comment(String),
    /// Words of nft's own for it.
    Native(String),
    /// nft's `xt match "NAME"` with iptables' options (empty if xtnl does not know it).
    Xt {
        target: bool,
        name: String,
        iptables: String,
    },
}

impl CompatWords {
    fn text(&self) -> String {
        match self {
            CompatWords::Comment(c) => format!("comment {c:?}"),
            CompatWords::Native(w) => w.clone(),
            CompatWords::Xt {
                target,
                name,
                iptables,
            } => {
                let kind = if *target { "target" } else { "match" };
                if iptables.is_empty() {
                    format!("xt {kind} {name:?}")
                } else {
                    format!("xt {kind} {name:?} ({iptables})")
                }
            }
        }
    }
}

fn compat_words(e: &Expr, family: Family, proto: Option<L4Proto>) -> CompatWords {
    match e {
        Expr::Match(m) => match xt_bridge::match_from_xt(m, family) {
            Some(ipt) => match_words(ipt, proto),
            None => CompatWords::Xt {
                target: false,
                name: m.name.clone(),
                iptables: String::new(),
            },
        },
        Expr::Target(t) => match xt_bridge::target_from_xt(t, family) {
            Some(ipt) => target_words(ipt, family),
            None => CompatWords::Xt {
                target: true,
                name: t.name.clone(),
                iptables: String::new(),
            },
        },
        other => CompatWords::Native(format!("<not understood: {other}>")),
    }
}

fn op(negated: bool) -> &'static str {
    if negated { "!= " } else { "" }
}

/// nft's negation of a bitmask: none of the flags (`ct state ! invalid,new`).
fn flags_op(negated: bool) -> &'static str {
    if negated { "! " } else { "" }
}

fn proto_key(proto: Option<L4Proto>) -> String {
    match proto {
        Some(p @ (L4Proto::Tcp | L4Proto::Udp)) => p.to_string(),
        Some(L4Proto::Other(132)) => "sctp".into(),
        Some(L4Proto::Other(33)) => "dccp".into(),
        Some(L4Proto::Other(136)) => "udplite".into(),
        _ => "th".into(),
    }
}

fn iptables_words(rule: &IptRule) -> String {
    print::rule_spec(rule).trim().to_owned()
}

fn match_words(m: IptMatch, proto: Option<L4Proto>) -> CompatWords {
    let ports = |p: Option<L4Proto>, name: &str, pm: &super::super::rule::PortsMatch| {
        let mut w = Vec::new();
        if let Some(s) = &pm.sport {
            w.push(format!("{name} sport {}{}", op(s.negated), s.value));
        }
        if let Some(d) = &pm.dport {
            w.push(format!("{name} dport {}{}", op(d.negated), d.value));
        }
        let _ = p;
        w.join(" ")
    };
    match m {
        IptMatch::Comment(c) => CompatWords::Comment(c),
        IptMatch::Tcp(p) => CompatWords::Native(ports(proto, "tcp", &p)),
        IptMatch::Udp(p) => CompatWords::Native(ports(proto, "udp", &p)),
        IptMatch::State(s) | IptMatch::Conntrack(s)
            if s.value.0 != 0 && s.value.0 & !NFT_CT_STATES == 0 =>
        {
            CompatWords::Native(format!(
                "ct state {}{}",
                flags_op(s.negated),
                s.value.to_string().to_ascii_lowercase()
            ))
        }
        IptMatch::State(s) | IptMatch::Conntrack(s)
            if s.value.0 != 0 && s.value.0 & !NFT_CT_STATUS == 0 =>
        {
            // SNAT and DNAT are conntrack status bits in nft: `ct status snat`.
            CompatWords::Native(format!(
                "ct status {}{}",
                flags_op(s.negated),
                s.value.to_string().to_ascii_lowercase()
            ))
        }
        IptMatch::Multiport(mp) if mp.dir != MultiportDir::Either => {
            let d = if mp.dir == MultiportDir::Source {
                "sport"
            } else {
                "dport"
            };
            let list: Vec<String> = mp.ports.iter().map(|p| p.to_string()).collect();
            CompatWords::Native(format!(
                "{} {d} {}{{ {} }}",
                proto_key(proto),
                op(mp.negated),
                list.join(", ")
            ))
        }
        other => {
            let name = match &other {
                IptMatch::Ext(x) => x.name.clone(),
                IptMatch::Multiport(_) => "multiport".into(),
                IptMatch::State(_) => "state".into(),
                IptMatch::Conntrack(_) => "conntrack".into(),
                _ => String::new(),
            };
            let iptables = iptables_words(&IptRule {
                matches: vec![other],
                ..IptRule::default()
            });
            CompatWords::Xt {
                target: false,
                name,
                iptables,
            }
        }
    }
}

/// The conntrack states nft's `ct state` has (invalid, established, related, new,
/// untracked); SNAT and DNAT are `ct status` bits there.
const NFT_CT_STATES: u16 = 0b1_0000_1111;
/// conntrack's SNAT and DNAT "states", which nft's `ct status` has.
const NFT_CT_STATUS: u16 = 0b0_1100_0000;

fn nat_to(r: &NatRange) -> String {
    let addr = |a: std::net::IpAddr| match a {
        std::net::IpAddr::V6(a) if r.ports.is_some() => format!("[{a}]"),
        a => a.to_string(),
    };
    let mut s = String::new();
    if let Some(a) = r.addr_min {
        s.push_str(&addr(a));
        if let Some(b) = r.addr_max.filter(|b| *b != a) {
            s.push('-');
            s.push_str(&addr(b));
        }
    }
    if let Some(p) = r.ports {
        s.push(':');
        s.push_str(&p.to_string());
    }
    s
}

/// nft's words for REJECT's `--reject-with` (nft 1.0.6: `reject with icmp type
/// host-prohibited`; the port-unreachable default is plain `reject`).
fn reject_words(w: RejectWith) -> String {
    use RejectWith::*;
    let (kind, code) = match w {
        TcpReset => return "reject with tcp reset".into(),
        IcmpPortUnreachable | Icmp6PortUnreachable => return "reject".into(),
        IcmpNetUnreachable => ("icmp", "net-unreachable"),
        IcmpHostUnreachable => ("icmp", "host-unreachable"),
        IcmpProtoUnreachable => ("icmp", "prot-unreachable"),
        IcmpNetProhibited => ("icmp", "net-prohibited"),
        IcmpHostProhibited => ("icmp", "host-prohibited"),
        IcmpAdminProhibited => ("icmp", "admin-prohibited"),
        Icmp6NoRoute => ("icmpv6", "no-route"),
        Icmp6AdmProhibited => ("icmpv6", "admin-prohibited"),
        Icmp6AddrUnreachable => ("icmpv6", "addr-unreachable"),
        Icmp6PolicyFail => ("icmpv6", "policy-fail"),
        Icmp6RejectRoute => ("icmpv6", "reject-route"),
    };
    format!("reject with {kind} type {code}")
}

/// nft's words for LOG: `log prefix "..." level info` (the default level, warn, unsaid).
fn log_words(prefix: Option<&str>, level: u8) -> String {
    const LEVELS: [&str; 8] = [
        "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
    ];
    let mut s = String::from("log");
    if let Some(p) = prefix {
        s.push_str(&format!(" prefix {p:?}"));
    }
    if level != 4 {
        match LEVELS.get(usize::from(level)) {
            Some(name) => s.push_str(&format!(" level {name}")),
            None => s.push_str(&format!(" level {level}")),
        }
    }
    s
}

fn target_words(t: IptTarget, _family: Family) -> CompatWords {
    let ports = |p: Option<crate::model::PortRange>| p.map(|p| format!(" to :{p}"));
    CompatWords::Native(match t {
        IptTarget::Dnat(r) => format!("dnat to {}", nat_to(&r)),
        IptTarget::Snat(r) => format!("snat to {}", nat_to(&r)),
        IptTarget::Masquerade(p) => format!("masquerade{}", ports(p).unwrap_or_default()),
        IptTarget::Redirect(p) => format!("redirect{}", ports(p).unwrap_or_default()),
        IptTarget::Reject(w) => reject_words(w),
        IptTarget::Log(l) => log_words(l.prefix.as_deref(), l.level),
        IptTarget::Accept => "accept".into(),
        IptTarget::Drop => "drop".into(),
        IptTarget::Return => "return".into(),
        IptTarget::Jump(c) => format!("jump {c}"),
        IptTarget::Goto(c) => format!("goto {c}"),
        other => {
            let name = match &other {
                IptTarget::Ext(x) => x.name.clone(),
                _ => String::new(),
            };
            let iptables = iptables_words(&IptRule {
                target: Some(other),
                ..IptRule::default()
            });
            return CompatWords::Xt {
                target: true,
                name,
                iptables,
            };
        }
    })
}

/// The rule's statements as JSON objects, in the order the kernel runs them (`xtnl list
/// --json`'s `expr`): each has a `type` and that statement's fields.
pub fn rule_json(rule: &Rule, family: Family) -> Vec<Value> {
    let rule = &target_as_action(rule, family);
    let mut out = Vec::new();
    let mut proto = None;
    let dir = |d: Dir, s: &str, dst: &str| if d == Dir::Source { s } else { dst }.to_owned();
    for m in &rule.matches {
        out.push(match m {
            Match::Protocol { proto: p, negated } => {
                if !negated {
                    proto = Some(*p);
                }
                json!({"type": "protocol", "protocol": p.to_string(), "negated": negated})
            }
            Match::Address { dir: d, net, negated } => json!({
                "type": "address", "field": dir(*d, "saddr", "daddr"),
                "net": net.to_string(), "negated": negated,
            }),
            Match::Port {
                dir: d,
                ports,
                negated,
            } => json!({
                "type": "port", "protocol": proto_key(proto), "field": dir(*d, "sport", "dport"),
                "ports": [ports.to_string()], "negated": negated,
            }),
            Match::PortSet {
                dir: d,
                ports,
                negated,
            } => json!({
                "type": "port", "protocol": proto_key(proto), "field": dir(*d, "sport", "dport"),
                "ports": ports.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                "negated": negated,
            }),
            Match::InInterface { name, negated } | Match::OutInterface { name, negated } => {
                let key = if matches!(m, Match::InInterface { .. }) {
                    "iifname"
                } else {
                    "oifname"
                };
                json!({"type": "interface", "field": key, "name": name.to_string(), "negated": negated})
            }
            Match::CtState { states, negated } => json!({
                "type": "ct_state",
                "states": states.to_string().split(',').map(str::to_owned).collect::<Vec<_>>(),
                "negated": negated,
            }),
            Match::Opaque(o) => {
                out.extend(opaque_json(o, family, proto));
                continue;
            }
        });
    }
    if let Some(c) = rule.counter {
        out.push(json!({"type": "counter", "packets": c.packets, "bytes": c.bytes}));
    }
    match &rule.action {
        Some(Action::Opaque(o)) => out.extend(opaque_json(o, family, proto)),
        Some(a) => out.push(action_json(a)),
        None => {}
    }
    if let Some(c) = &rule.comment {
        out.push(json!({"type": "comment", "comment": c}));
    }
    out
}

fn action_json(a: &Action) -> Value {
    let nat = |kind: &str, t: &crate::model::NatTarget| {
        json!({"type": kind, "addr": t.addr.to_string(), "addr_max": null,
               "ports": t.ports.map(|p| p.to_string())})
    };
    match a {
        Action::Accept => json!({"type": "verdict", "verdict": "accept"}),
        Action::Drop => json!({"type": "verdict", "verdict": "drop"}),
        Action::Return => json!({"type": "verdict", "verdict": "return"}),
        Action::Jump(c) => json!({"type": "verdict", "verdict": "jump", "chain": c}),
        Action::Goto(c) => json!({"type": "verdict", "verdict": "goto", "chain": c}),
        Action::Dnat(t) => nat("dnat", t),
        Action::Snat(t) => nat("snat", t),
        Action::Masquerade { ports } => {
            json!({"type": "masquerade", "ports": ports.map(|p| p.to_string())})
        }
        Action::Redirect { ports } => {
            json!({"type": "redirect", "ports": ports.map(|p| p.to_string())})
        }
        other => json!({"type": "statement", "text": other.to_string()}),
    }
}

fn opaque_json(o: &Opaque, family: Family, proto: Option<L4Proto>) -> Vec<Value> {
    let Some(exprs) = o.parts::<Exprs>() else {
        return vec![json!({"type": "not_understood", "text": o.to_string()})];
    };
    if exprs.0.is_empty() {
        return vec![json!({"type": "not_understood", "text": "userdata that is not a comment"})];
    }
    exprs
        .0
        .iter()
        .map(|e| {
            let (kind, name, rev, ipt) = match e {
                Expr::Match(m) => (
                    "match",
                    &m.name,
                    m.rev,
                    xt_bridge::match_from_xt(m, family).map(|x| IptRule {
                        matches: vec![x],
                        ..IptRule::default()
                    }),
                ),
                Expr::Target(t) => (
                    "target",
                    &t.name,
                    t.rev,
                    xt_bridge::target_from_xt(t, family).map(|x| IptRule {
                        target: Some(x),
                        ..IptRule::default()
                    }),
                ),
                other => return json!({"type": "not_understood", "text": other.to_string()}),
            };
            let mut v = json!({
                "type": "xt", "kind": kind, "name": name, "rev": rev,
                "nft": compat_words(e, family, proto).text(),
                "iptables": ipt.as_ref().map(iptables_words),
            });
            if let Some(r) = &ipt {
                typed_fields(r, &mut v);
            }
            v
        })
        .collect()
}

/// The typed fields of the compat forms with an nft equivalent, next to their words.
fn typed_fields(r: &IptRule, v: &mut Value) {
    let range = |n: &NatRange| {
        json!({"addr": n.addr_min.map(|a| a.to_string()),
               "addr_max": n.addr_max.map(|a| a.to_string()),
               "ports": n.ports.map(|p| p.to_string())})
    };
    let extra = match (r.matches.first(), &r.target) {
        (Some(IptMatch::Comment(c)), _) => json!({"comment": c}),
        (_, Some(IptTarget::Dnat(n) | IptTarget::Snat(n))) => json!({"to": range(n)}),
        (_, Some(IptTarget::Masquerade(p) | IptTarget::Redirect(p))) => {
            json!({"ports": p.map(|p| p.to_string())})
        }
        (_, Some(IptTarget::Reject(w))) => json!({"reject_with": w.name()}),
        (_, Some(IptTarget::Log(l))) => json!({"prefix": l.prefix, "level": l.level}),
        _ => return,
    };
    if let (Some(v), Value::Object(extra)) = (v.as_object_mut(), extra) {
        v.extend(extra);
    }
}
