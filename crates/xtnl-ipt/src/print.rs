//! The text `iptables -S` (1.8.9) prints for a rule, byte for byte: option order, `-m tcp`
//! for port options, `/32` on host addresses, and its quoting of strings.

#![deny(missing_docs)]

use std::fmt::Write;

use super::protocols;
use super::rule::{IptMatch, IptRule, IptTarget, MultiportDir, NatRange, Neg, PortsMatch};
use crate::model::{IpNet, PortRange};

/// iptables' `xtables_save_string`: bare if only `[A-Za-z0-9_-]` (and non-empty), else in
/// double quotes with `"`, `\` and `'` escaped by a backslash.
pub fn save_string(out: &mut String, value: &str) {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    out.push(' ');
    if plain {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '\'') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

fn bang(out: &mut String, negated: bool) {
    if negated {
        out.push_str(" !");
    }
}

fn net(out: &mut String, flag: &str, n: &Neg<IpNet>) {
    bang(out, n.negated);
    let _ = write!(out, " {flag} {}", n.value);
}

fn port_range(p: PortRange) -> String {
    if p.is_single() {
        p.first().to_string()
    } else {
        format!("{}:{}", p.first(), p.last())
    }
}

fn ports(out: &mut String, name: &str, m: &PortsMatch) {
    let _ = write!(out, " -m {name}");
    if let Some(s) = &m.sport {
        bang(out, s.negated);
        let _ = write!(out, " --sport {}", port_range(s.value));
    }
    if let Some(d) = &m.dport {
        bang(out, d.negated);
        let _ = write!(out, " --dport {}", port_range(d.value));
    }
}

/// `addr[-addr][:port[-port]]`; with IPv6 and a port the address part is in brackets
/// (`[a-b]:p`), as iptables' NAT extensions print it.
pub fn nat_range(r: &NatRange) -> String {
    let mut s = String::new();
    if let Some(a) = r.addr_min {
        let brackets = a.is_ipv6() && r.ports.is_some();
        if brackets {
            s.push('[');
        }
        s.push_str(&a.to_string());
        if let Some(b) = r.addr_max.filter(|b| *b != a) {
            s.push('-');
            s.push_str(&b.to_string());
        }
        if brackets {
            s.push(']');
        }
    }
    if let Some(p) = r.ports {
        let _ = write!(s, ":{}", p.first());
        if !p.is_single() {
            let _ = write!(s, "-{}", p.last());
        }
    }
    s
}

fn to_ports(p: PortRange) -> String {
    if p.is_single() {
        p.first().to_string()
    } else {
        format!("{}-{}", p.first(), p.last())
    }
}

/// The rule's options as `iptables -S` prints them after `-A CHAIN` (starting with a space,
/// empty for a rule with no options).
pub fn rule_spec(rule: &IptRule) -> String {
    let mut out = String::new();
    write_matches(&mut out, rule);
    write_target(&mut out, rule.target.as_ref());
    out
}

/// The addresses, interfaces, protocol and matches of [`rule_spec`] (not the target).
fn write_matches(out: &mut String, rule: &IptRule) {
    if let Some(s) = &rule.src {
        net(out, "-s", s);
    }
    if let Some(d) = &rule.dst {
        net(out, "-d", d);
    }
    if let Some(i) = &rule.in_iface {
        bang(out, i.negated);
        let _ = write!(out, " -i {}", i.value);
    }
    if let Some(o) = &rule.out_iface {
        bang(out, o.negated);
        let _ = write!(out, " -o {}", o.value);
    }
    if let Some(p) = &rule.proto {
        bang(out, p.negated);
        let _ = write!(out, " -p {}", protocols::name_of(p.value.number()));
    }
    for m in &rule.matches {
        match m {
            IptMatch::Tcp(p) => ports(out, "tcp", p),
            IptMatch::Udp(p) => ports(out, "udp", p),
            IptMatch::Multiport(mp) => {
                out.push_str(" -m multiport");
                bang(out, mp.negated);
                let flag = match mp.dir {
                    MultiportDir::Source => "--sports",
                    MultiportDir::Destination => "--dports",
                    MultiportDir::Either => "--ports",
                };
                let list: Vec<String> = mp.ports.iter().map(|p| port_range(*p)).collect();
                let _ = write!(out, " {flag} {}", list.join(","));
            }
            IptMatch::Comment(c) => {
                out.push_str(" -m comment --comment");
                save_string(out, c);
            }
            IptMatch::State(s) => {
                out.push_str(" -m state");
                bang(out, s.negated);
                let _ = write!(out, " --state {}", s.value);
            }
            IptMatch::Conntrack(s) => {
                out.push_str(" -m conntrack");
                bang(out, s.negated);
                let _ = write!(out, " --ctstate {}", s.value);
            }
            IptMatch::Opaque(o) => {
                let _ = write!(out, " <not expressible in iptables syntax: {o}>");
            }
            IptMatch::Ext(x) => super::ext::save_match(x, out),
        }
    }
}

/// The target of [`rule_spec`] (nothing for none).
fn write_target(out: &mut String, target: Option<&IptTarget>) {
    match target {
        None => {}
        Some(IptTarget::Accept) => out.push_str(" -j ACCEPT"),
        Some(IptTarget::Drop) => out.push_str(" -j DROP"),
        Some(IptTarget::Return) => out.push_str(" -j RETURN"),
        Some(IptTarget::Jump(c)) => {
            let _ = write!(out, " -j {c}");
        }
        Some(IptTarget::Goto(c)) => {
            let _ = write!(out, " -g {c}");
        }
        Some(IptTarget::Dnat(r)) => {
            let _ = write!(out, " -j DNAT --to-destination {}", nat_range(r));
        }
        Some(IptTarget::Snat(r)) => {
            let _ = write!(out, " -j SNAT --to-source {}", nat_range(r));
        }
        Some(IptTarget::Masquerade(p)) => {
            out.push_str(" -j MASQUERADE");
            if let Some(p) = p {
                let _ = write!(out, " --to-ports {}", to_ports(*p));
            }
        }
        Some(IptTarget::Redirect(p)) => {
            out.push_str(" -j REDIRECT");
            if let Some(p) = p {
                let _ = write!(out, " --to-ports {}", to_ports(*p));
            }
        }
        Some(IptTarget::Reject(w)) => {
            let _ = write!(out, " -j REJECT --reject-with {}", w.name());
        }
        Some(IptTarget::Log(l)) => {
            out.push_str(" -j LOG");
            if let Some(p) = &l.prefix {
                out.push_str(" --log-prefix");
                save_string(out, p);
            }
            if l.level != super::LogOpts::DEFAULT_LEVEL {
                let _ = write!(out, " --log-level {}", l.level);
            }
        }
        Some(IptTarget::Opaque(o)) => {
            let _ = write!(out, " <target not expressible in iptables syntax: {o}>");
        }
        Some(IptTarget::Ext(x)) => super::ext::save_target(x, out),
    }
}

/// `-A CHAIN spec`; with counters (`-S -v`) `-c packets bytes` goes after the matches and
/// before the target, where iptables puts it.
pub fn append_line(chain: &str, rule: &IptRule, with_counters: bool) -> String {
    let mut s = String::new();
    write_append_line(&mut s, chain, rule, with_counters);
    s
}

/// [`append_line`], appended to `out` (a save of many rules writes them into one buffer).
pub fn write_append_line(out: &mut String, chain: &str, rule: &IptRule, with_counters: bool) {
    out.push_str("-A ");
    out.push_str(chain);
    write_matches(out, rule);
    if with_counters {
        let c = rule.counters.unwrap_or_default();
        let _ = write!(out, " -c {} {}", c.packets, c.bytes);
    }
    write_target(out, rule.target.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_follows_xtables_save_string() {
        let q = |v: &str| {
            let mut s = String::new();
            save_string(&mut s, v);
            s
        };
        assert_eq!(q("simple_Comment-1"), " simple_Comment-1");
        assert_eq!(q("x: "), " \"x: \"");
        assert_eq!(q("a \"q\" b\\c"), " \"a \\\"q\\\" b\\\\c\"");
        assert_eq!(q(""), " \"\"");
        assert_eq!(q("it's"), " \"it\\'s\"");
    }
}
