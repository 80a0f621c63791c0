//! `iptables -S` and `iptables -L` over a consistent snapshot of a table.

use crate::model::ChainPolicy;
use std::fmt::Write;

use super::parse::Invocation;
use super::print;
use super::rule::{IptMatch, IptRule, IptTarget, MultiportDir};
use super::{compat, tables};
use crate::error::{Error, Result};
use crate::model::Counters;
use crate::nft::{Chain, RawRule, Session, TableRef};

/// One chain as iptables lists it (the nf_tables and x_tables backends both fill these).
#[derive(Debug, Clone)]
pub struct ChainListing {
    /// The chain's name.
    pub name: String,
    /// `Some` for built-in (base) chains.
    pub policy: Option<ChainPolicy>,
    /// A built-in chain's policy counters, where the backend keeps them (x_tables).
    pub policy_counters: Option<Counters>,
    /// Jumps and gotos to it (user chains; counted only when the whole table was read).
    pub references: u32,
    /// Each rule with its handle (nf_tables) or position (x_tables).
    pub rules: Vec<(u64, IptRule)>,
}

/// The chains of a table in the order `iptables -S` lists them, with their rules decoded
/// (or one chain: `only`); what the JSON listing is made of.
pub fn chains(
    session: &mut Session,
    table: &TableRef,
    only: Option<&str>,
) -> Result<Vec<ChainListing>> {
    let chains = read(session, table, only)?;
    if let Some(c) = only
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    Ok(chains
        .into_iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
        .collect())
}

/// A chain policy as iptables spells it (`ACCEPT`, `DROP`).
pub fn policy_name(p: ChainPolicy) -> &'static str {
    match p {
        ChainPolicy::Accept => "ACCEPT",
        ChainPolicy::Drop => "DROP",
    }
}

/// Built-ins first in the table's order (absent ones as ACCEPT, as iptables-nft shows a table
/// it has not created yet), then user chains sorted by name.
/// `only`: read the rules of that chain alone (reference counts are then not complete, which
/// `-S` does not print).
fn read(session: &mut Session, table: &TableRef, only: Option<&str>) -> Result<Vec<ChainListing>> {
    let exists = session.list_tables()?.iter().any(|t| &t.table == table);
    let builtins = tables::builtins(&table.name);
    if !exists && builtins.is_none() {
        return Err(Error::NoSuchTable(table.name.clone()));
    }
    let (chains, raw): (Vec<Chain>, Vec<RawRule>) = if exists {
        session.read(|r| {
            // One chain asked for: fetch it alone rather than every chain of the table.
            let chains = match only {
                Some(c) => r.chain(&table.chain(c))?.into_iter().collect(),
                None => r.chains(table)?,
            };
            let exists = |c: &str| chains.iter().any(|x| x.chain.name == c);
            let raw = match only {
                Some(c) if exists(c) => r.raw_rules(table, Some(c))?,
                Some(_) => Vec::new(),
                None => r.raw_rules(table, None)?,
            };
            Ok((chains, raw))
        })?
    } else {
        (Vec::new(), Vec::new())
    };
    // Each rule is decoded once; references are counted in the same pass.
    let mut by_chain: std::collections::HashMap<String, Vec<(u64, IptRule)>> =
        std::collections::HashMap::new();
    let mut references: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for r in &raw {
        let decoded = compat::decode(table, r);
        if let Some(t) = decoded.jump_target() {
            *references.entry(t.to_string()).or_default() += 1;
        }
        by_chain
            .entry(r.chain.name.clone())
            .or_default()
            .push((r.handle, decoded));
    }
    let refs = |name: &str| -> u32 { references.get(name).copied().unwrap_or(0) };
    let mut rules_of =
        |name: &str| -> Vec<(u64, IptRule)> { by_chain.remove(name).unwrap_or_default() };
    let mut out = Vec::new();
    for b in builtins.unwrap_or(&[]) {
        let policy = chains
            .iter()
            .find(|c| c.chain.name == b.name)
            .and_then(|c| c.base.map(|x| x.policy))
            .unwrap_or(ChainPolicy::Accept);
        out.push(ChainListing {
            name: b.name.into(),
            policy: Some(policy),
            policy_counters: None,
            references: 0,
            rules: rules_of(b.name),
        });
    }
    let is_builtin = |n: &str| builtins.is_some_and(|bs| bs.iter().any(|b| b.name == n));
    // Base chains of a table of our own are shown like built-ins.
    for c in chains
        .iter()
        .filter(|c| c.base.is_some() && !is_builtin(&c.chain.name))
    {
        out.push(ChainListing {
            name: c.chain.name.clone(),
            policy: c.base.map(|b| b.policy),
            policy_counters: None,
            references: 0,
            rules: rules_of(&c.chain.name),
        });
    }
    let mut user: Vec<&Chain> = chains
        .iter()
        .filter(|c| c.base.is_none() && !is_builtin(&c.chain.name))
        .collect();
    user.sort_by(|a, b| a.chain.name.as_bytes().cmp(b.chain.name.as_bytes()));
    for c in user {
        out.push(ChainListing {
            name: c.chain.name.clone(),
            policy: None,
            policy_counters: None,
            references: refs(&c.chain.name),
            rules: rules_of(&c.chain.name),
        });
    }
    Ok(out)
}

/// The caller words it with its family (`crate::ipt::messages::kernel_words`).
fn no_chain(chain: &str) -> Error {
    Error::NotFound(crate::OpFailure {
        index: 0,
        op: format!("list chain {chain}"),
        errno: libc::ENOENT,
        ext_ack: None,
    })
}

/// `iptables -S [chain]` (with `-v`, counters as `-c packets bytes`). A rule that iptables
/// syntax cannot express is shown on a `#` line with its handle instead of being hidden.
pub fn list_rules(
    session: &mut Session,
    table: &TableRef,
    chain: Option<&str>,
    verbose: bool,
) -> Result<String> {
    let chains = read(session, table, chain)?;
    render_rules(&chains, chain, verbose)
}

/// `-S` of chains read by either backend.
pub(crate) fn render_rules(
    chains: &[ChainListing],
    chain: Option<&str>,
    verbose: bool,
) -> Result<String> {
    if let Some(c) = chain
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    let selected: Vec<&ChainListing> = chains
        .iter()
        .filter(|c| chain.is_none_or(|n| n == c.name))
        .collect();
    let mut out = String::new();
    for c in &selected {
        match c.policy {
            Some(p) => {
                let _ = write!(out, "-P {} {}", c.name, policy_name(p));
                if verbose {
                    let n = c.policy_counters.unwrap_or_default();
                    let _ = write!(out, " -c {} {}", n.packets, n.bytes);
                }
                out.push('\n');
            }
            None => {
                let _ = writeln!(out, "-N {}", c.name);
            }
        }
    }
    write_rules(&mut out, selected.into_iter(), verbose);
    Ok(out)
}

/// The `-A` lines of `chains`; a rule that iptables syntax cannot express goes on a `#` line
/// with its handle (restore ignores it; nothing is hidden).
fn write_rules<'a>(
    out: &mut String,
    chains: impl Iterator<Item = &'a ChainListing>,
    counters: bool,
) {
    for c in chains {
        for (handle, rule) in &c.rules {
            if rule.is_expressible() {
                let _ = writeln!(out, "{}", print::append_line(&c.name, rule, counters));
            } else {
                let _ = writeln!(
                    out,
                    "# handle {handle}: a rule in chain {} that iptables syntax cannot express:{}",
                    c.name,
                    print::rule_spec(rule)
                );
            }
        }
    }
}

/// A table's body in iptables-save format: chain lines, then rules (inexpressible ones as
/// `#` lines with their handle, which restore ignores).
pub fn save_table(session: &mut Session, table: &TableRef) -> Result<String> {
    save_table_counters(session, table, false)
}

/// [`save_table`], with rule counters when `counters` (`save -c`).
pub fn save_table_counters(
    session: &mut Session,
    table: &TableRef,
    counters: bool,
) -> Result<String> {
    let chains = read(session, table, None)?;
    Ok(render_save_counters(&chains, counters))
}

/// A table's body in iptables-save format, from chains read by either backend.
pub(crate) fn render_save(chains: &[ChainListing]) -> String {
    render_save_counters(chains, false)
}

/// [`render_save`], with `[packets:bytes]` before each rule when `counters` (`save -c`).
pub(crate) fn render_save_counters(chains: &[ChainListing], counters: bool) -> String {
    let mut out = String::new();
    for c in chains {
        match c.policy {
            Some(p) => {
                let n = c.policy_counters.unwrap_or_default();
                let _ = writeln!(
                    out,
                    ":{} {} [{}:{}]",
                    c.name,
                    policy_name(p),
                    n.packets,
                    n.bytes
                );
            }
            None => {
                let _ = writeln!(out, ":{} - [0:0]", c.name);
            }
        }
    }
    if counters {
        write_rules_counted(&mut out, chains.iter());
    } else {
        write_rules(&mut out, chains.iter(), false);
    }
    out
}

/// The rules as `iptables-save -c` prints them: `[packets:bytes] -A ...`.
fn write_rules_counted<'a>(out: &mut String, chains: impl Iterator<Item = &'a ChainListing>) {
    for c in chains {
        for (handle, rule) in &c.rules {
            if rule.is_expressible() {
                let n = rule.counters.unwrap_or_default();
                let line = print::append_line(&c.name, rule, false);
                let _ = writeln!(out, "[{}:{}] {line}", n.packets, n.bytes);
            } else {
                write_rules(
                    out,
                    std::iter::once(&ChainListing {
                        rules: vec![(*handle, rule.clone())],
                        ..c.clone()
                    }),
                    false,
                );
            }
        }
    }
}

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

/// syslog's `prioritynames`, first name per level (what LOG prints).
fn level_name(level: u8) -> Option<&'static str> {
    [
        "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
    ]
    .get(level as usize)
    .copied()
}

/// A port as `-L` prints it: a service name unless `-n`.
fn port_name(port: u16, proto: &str, numeric: bool) -> String {
    if !numeric && let Some(name) = super::protocols::service_of(port, proto) {
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
            let text = if n.value.is_host() {
                n.value.addr().to_string()
            } else {
                n.value.to_string()
            };
            (if n.negated { '!' } else { ' ' }, text)
        }
    }
}

fn matches_text(rule: &IptRule, numeric: bool) -> String {
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
            // `-L` words differ per extension; the save form says the same thing.
            IptMatch::Ext(x) => {
                let mut t = String::new();
                super::ext::save_match(x, &mut t);
                s.push_str(t.strip_prefix(" -m").unwrap_or(&t));
            }
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
            match level_name(l.level).filter(|_| !numeric) {
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
        Some(IptTarget::Ext(x)) => {
            let mut t = String::new();
            super::ext::save_target(x, &mut t);
            let name = format!(" -j {}", super::ext::target_name(x));
            s.push_str(t.strip_prefix(&name).unwrap_or(&t));
        }
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
        Some(IptTarget::Ext(x)) => super::ext::target_name(x),
    }
}

/// The line `iptables -v` prints for a rule it adds, inserts, replaces or deletes (iptables'
/// one-line "print rule" format: numeric, with interfaces, no counters).
pub fn change_line(rule: &IptRule, family: crate::model::Family) -> String {
    let v6 = family == crate::model::Family::Ipv6;
    let mut out = format!("{} ", target_name(rule));
    let (bang, proto) = match &rule.proto {
        None => (' ', "all".to_string()),
        Some(p) => (
            if p.negated { '!' } else { ' ' },
            super::protocols::iptables_name(p.value.number())
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
    out.push_str(&matches_text(rule, true));
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
    render_table(&chains, chain, inv, table.family)
}

/// `-L` of chains read by either backend.
pub(crate) fn render_table(
    chains: &[ChainListing],
    chain: Option<&str>,
    inv: &Invocation,
    family: crate::model::Family,
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
            out.push_str(&matches_text(r, numeric));
            out.push('\n');
        }
    }
    Ok(out)
}
