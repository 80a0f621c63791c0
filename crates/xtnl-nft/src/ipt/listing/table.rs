//! `iptables -L`: the table layout of iptables 1.8.9 (`-n`, `-v`, `-x`, `--line-numbers`) and
//! the one-line form `-v` prints for a rule it changes; each module's words come from its
//! extension (`Ext::list`).

use std::fmt::Write;

use super::super::Flavour;
use super::super::parse::Invocation;
use super::super::print;
use super::super::rule::{IptMatch, IptRule, IptTarget, MultiportDir};
use super::{ChainListing, no_chain, policy_name, read};
use crate::error::Result;
use crate::model::Counters;
use crate::nft::{Session, TableRef};

/// `xtables_print_num`: exact (`-x`) 8 wide, else 5 wide with K/M/G/T past 99,999.
fn count(n: u64, exact: bool) -> String {
    if exact {
        return format!("{n:>8} ");
    }
    if n <= 99_999 {
        return format!("{n:>5} ");
    }
    let mut v = (n + 500) / 1000;
    for suffix in ["K", "M", "G"] {
        if v <= 9_999 {
            return format!("{v:>4}{suffix} ");
        }
        v = (v + 500) / 1000;
    }
    format!("{v:>4}T ")
}

/// `xtables_print_num` with `FMT_NOTABLE` (the policy line): no padding.
fn count_notable(n: u64, exact: bool) -> String {
    if exact || n <= 99_999 {
        return format!("{n} ");
    }
    let mut v = (n + 500) / 1000;
    for suffix in ["K", "M", "G"] {
        if v <= 9_999 {
            return format!("{v}{suffix} ");
        }
        v = (v + 500) / 1000;
    }
    format!("{v}T ")
}

/// A port as `-L` prints it: a service name unless `-n`.
fn port_name(port: u16, proto: &str, numeric: bool) -> String {
    if !numeric && let Some(name) = crate::ipt::protocols::service_of(port, proto) {
        return name;
    }
    port.to_string()
}

fn addr_column(
    net: Option<&crate::ipt::Neg<crate::model::IpNet>>,
    numeric: bool,
    v6: bool,
) -> (char, String) {
    match net {
        None => (
            ' ',
            if !numeric {
                "anywhere".into()
            } else if v6 {
                "::/0".into()
            } else {
                "0.0.0.0/0".into()
            },
        ),
        Some(n) => {
            // Without -n the address shows its name (/etc/hosts, then /etc/networks), as
            // iptables' -L (`xtables_ipaddr_to_anyname`), the mask as a number.
            let addr = n.value.addr().to_string();
            let whole = if n.value.is_host() {
                addr.clone()
            } else {
                n.value.to_string()
            };
            let name = (!numeric)
                .then(|| crate::ipt::hosts::any_name(n.value.addr()))
                .flatten();
            let text = match name {
                Some(name) => format!("{name}{}", &whole[addr.len()..]),
                None => whole,
            };
            (if n.negated { '!' } else { ' ' }, text)
        }
    }
}

fn matches_text(rule: &IptRule, numeric: bool, flavour: Flavour) -> String {
    let mut s = String::new();
    let proto = rule
        .proto
        .as_ref()
        .map(|p| {
            if p.value == crate::model::L4Proto::Udp {
                "udp"
            } else {
                "tcp"
            }
        })
        .unwrap_or("tcp");
    for m in &rule.matches {
        match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) => {
                let name = if matches!(m, IptMatch::Tcp(_)) {
                    "tcp"
                } else {
                    "udp"
                };
                let _ = write!(s, " {name}");
                for (label, port) in [("spt", &p.sport), ("dpt", &p.dport)] {
                    if let Some(x) = port {
                        let inv = if x.negated { "!" } else { "" };
                        if x.value.is_single() {
                            let _ = write!(
                                s,
                                " {label}:{inv}{}",
                                port_name(x.value.first(), name, numeric)
                            );
                        } else {
                            let _ = write!(
                                s,
                                " {label}s:{inv}{}:{}",
                                port_name(x.value.first(), name, numeric),
                                port_name(x.value.last(), name, numeric)
                            );
                        }
                    }
                }
            }
            IptMatch::Multiport(mp) => {
                let d = match mp.dir {
                    MultiportDir::Source => "sports ",
                    MultiportDir::Destination => "dports ",
                    MultiportDir::Either => "ports ",
                };
                let _ = write!(s, " multiport {d}");
                if mp.negated {
                    s.push_str(" !");
                }
                let list: Vec<String> = mp
                    .ports
                    .iter()
                    .map(|p| {
                        if p.is_single() {
                            port_name(p.first(), proto, numeric)
                        } else {
                            format!(
                                "{}:{}",
                                port_name(p.first(), proto, numeric),
                                port_name(p.last(), proto, numeric)
                            )
                        }
                    })
                    .collect();
                s.push_str(&list.join(","));
            }
            IptMatch::Comment(c) => {
                let _ = write!(s, " /* {c} */");
            }
            IptMatch::State(st) | IptMatch::Conntrack(st) => {
                if st.negated {
                    s.push_str(" !");
                }
                let word = if matches!(m, IptMatch::State(_)) {
                    "state"
                } else {
                    "ctstate"
                };
                let _ = write!(s, " {word} {}", st.value);
            }
            IptMatch::Opaque(o) => {
                let _ = write!(s, " <{o}>");
            }
            IptMatch::Ext(x) => crate::ipt::ext::list_match(x, numeric, flavour, &mut s),
        }
    }
    let ports = |p: &crate::model::PortRange| {
        if p.is_single() {
            p.first().to_string()
        } else {
            format!("{}-{}", p.first(), p.last())
        }
    };
    match &rule.target {
        Some(IptTarget::Dnat(r) | IptTarget::Snat(r)) => {
            let _ = write!(s, " to:{}", print::nat_range(r));
        }
        Some(IptTarget::Masquerade(Some(p))) => {
            let _ = write!(s, " masq ports: {}", ports(p));
        }
        Some(IptTarget::Redirect(Some(p))) => {
            let _ = write!(s, " redir ports {}", ports(p));
        }
        Some(IptTarget::Reject(w)) => {
            let _ = write!(s, " reject-with {}", w.name());
        }
        Some(IptTarget::Log(l)) => {
            s.push_str(" LOG");
            match crate::ipt::ext::level_name(l.level).filter(|_| !numeric) {
                Some(name) => {
                    let _ = write!(s, " level {name}");
                }
                None => {
                    let _ = write!(s, " flags 0 level {}", l.level);
                }
            }
            if let Some(p) = &l.prefix {
                let _ = write!(s, " prefix \"{p}\"");
            }
        }
        Some(IptTarget::Opaque(o)) => {
            let _ = write!(s, " <{o}>");
        }
        Some(IptTarget::Ext(x)) => crate::ipt::ext::list_target(x, numeric, flavour, &mut s),
        _ => {}
    }
    s
}

fn target_name(rule: &IptRule) -> String {
    match &rule.target {
        None => String::new(),
        Some(IptTarget::Accept) => "ACCEPT".into(),
        Some(IptTarget::Drop) => "DROP".into(),
        Some(IptTarget::Return) => "RETURN".into(),
        Some(IptTarget::Jump(c)) | Some(IptTarget::Goto(c)) => c.clone(),
        Some(IptTarget::Dnat(_)) => "DNAT".into(),
        Some(IptTarget::Snat(_)) => "SNAT".into(),
        Some(IptTarget::Masquerade(_)) => "MASQUERADE".into(),
        Some(IptTarget::Redirect(_)) => "REDIRECT".into(),
        Some(IptTarget::Reject(_)) => "REJECT".into(),
        Some(IptTarget::Log(_)) => "LOG".into(),
        Some(IptTarget::Opaque(_)) => String::new(),
        Some(IptTarget::Ext(x)) => crate::ipt::ext::target_name(x),
    }
}

/// The line `iptables -v` prints for a rule it adds, inserts, replaces or deletes (iptables'
/// one-line "print rule" format: numeric, with interfaces, no counters), as the given
/// iptables prints it.
pub fn change_line(rule: &IptRule, family: crate::model::Family, flavour: Flavour) -> String {
    let v6 = family == crate::model::Family::Ipv6;
    let mut out = format!("{} ", target_name(rule));
    let (bang, proto) = match &rule.proto {
        None => (' ', "all".to_string()),
        Some(p) => (
            if p.negated { '!' } else { ' ' },
            crate::ipt::protocols::iptables_name(p.value.number())
                .map(str::to_string)
                .unwrap_or_else(|| p.value.number().to_string()),
        ),
    };
    let _ = write!(out, "{bang}{proto} opt -- ");
    let ifc = |i: &Option<crate::ipt::Neg<crate::model::Interface>>| match i {
        None => "*".to_string(),
        Some(n) => format!("{}{}", if n.negated { "!" } else { "" }, n.value),
    };
    let _ = write!(
        out,
        "in {} out {} ",
        ifc(&rule.in_iface),
        ifc(&rule.out_iface)
    );
    let (sb, src) = addr_column(rule.src.as_ref(), true, v6);
    let (db, dst) = addr_column(rule.dst.as_ref(), true, v6);
    let _ = write!(out, "{sb}{src} {db}-> {dst}  ");
    if matches!(rule.target, Some(IptTarget::Goto(_))) {
        out.push_str("[goto] ");
    }
    out.push_str(&crate::ipt::messages::printing(|| {
        matches_text(rule, true, flavour)
    }));
    out
}

/// `iptables -L [chain]` with `-n`, `-v`, `-x`, `--line-numbers`, laid out as iptables 1.8.9
/// prints it. Addresses are never resolved through DNS (iptables would without `-n`).
pub fn list_table(
    session: &mut Session,
    table: &TableRef,
    chain: Option<&str>,
    inv: &Invocation,
) -> Result<String> {
    let chains = read(session, table, None)?;
    render_table(&chains, chain, inv, table.family, Flavour::Nft)
}

/// `-L` of chains read by either backend, as that backend's iptables prints it.
pub fn render_table(
    chains: &[ChainListing],
    chain: Option<&str>,
    inv: &Invocation,
    family: crate::model::Family,
    flavour: Flavour,
) -> Result<String> {
    if let Some(c) = chain
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    let v6 = family == crate::model::Family::Ipv6;
    let (numeric, verbose, exact) = (inv.numeric, inv.verbose, inv.exact);
    let mut out = String::new();
    for (k, c) in chains
        .iter()
        .filter(|c| chain.is_none_or(|n| n == c.name))
        .enumerate()
    {
        if k > 0 {
            out.push('\n');
        }
        let _ = write!(out, "Chain {}", c.name);
        match c.policy {
            Some(p) if verbose => {
                let n = c.policy_counters.unwrap_or_default();
                let _ = writeln!(
                    out,
                    " (policy {} {}packets, {}bytes)",
                    policy_name(p),
                    count_notable(n.packets, exact),
                    count_notable(n.bytes, exact)
                );
            }
            Some(p) => {
                let _ = writeln!(out, " (policy {})", policy_name(p));
            }
            None => {
                let _ = writeln!(out, " ({} references)", c.references);
            }
        }
        if inv.line_numbers {
            let _ = write!(out, "{:<4} ", "num");
        }
        if verbose {
            if exact {
                let _ = write!(out, "{:>8} {:>10} ", "pkts", "bytes");
            } else {
                let _ = write!(out, "{:>5} {:>5} ", "pkts", "bytes");
            }
        }
        let _ = write!(out, "{:<9} ", "target");
        out.push_str(" prot opt");
        if verbose {
            let _ = write!(out, " {:<6} {:<6} ", "in", "out");
        }
        let _ = writeln!(out, " {:<19}  {:<19} ", "source", "destination");
        for (i, (_, r)) in c.rules.iter().enumerate() {
            if inv.line_numbers {
                let _ = write!(out, "{:<4} ", i + 1);
            }
            if verbose {
                let Counters { packets, bytes } = r.counters.unwrap_or_default();
                out.push_str(&count(packets, exact));
                out.push_str(&count(bytes, exact));
            }
            let _ = write!(out, "{:<9} ", target_name(r));
            let (bang, proto) = match &r.proto {
                None => (
                    ' ',
                    if numeric {
                        "0".to_string()
                    } else {
                        "all".to_string()
                    },
                ),
                Some(p) => (
                    if p.negated { '!' } else { ' ' },
                    if numeric {
                        p.value.number().to_string()
                    } else {
                        crate::ipt::protocols::name_of(p.value.number())
                    },
                ),
            };
            let _ = write!(out, "{bang}{proto:<4} -- ");
            if verbose {
                let ifc = |i: &Option<crate::ipt::Neg<crate::model::Interface>>| match i {
                    None => (if numeric { "*" } else { "any" }).to_string(),
                    Some(n) => format!("{}{}", if n.negated { "!" } else { "" }, n.value),
                };
                let _ = write!(out, " {:<6} {:<6} ", ifc(&r.in_iface), ifc(&r.out_iface));
            }
            for net in [r.src.as_ref(), r.dst.as_ref()] {
                let (bang, text) = addr_column(net, numeric, v6);
                let _ = write!(out, "{bang}{text:<19} ");
            }
            if matches!(r.target, Some(IptTarget::Goto(_))) {
                out.push_str("[goto] ");
            }
            out.push_str(&crate::ipt::messages::printing(|| {
                matches_text(r, numeric, flavour)
            }));
            out.push('\n');
        }
    }
    Ok(out)
}
