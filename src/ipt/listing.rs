//! `iptables -S` and `iptables -L` over a consistent snapshot of a table.

use std::fmt::Write;

use super::parse::Invocation;
use super::print;
use super::rule::{IptMatch, IptRule, IptTarget, MultiportDir};
use super::{compat, tables};
use crate::error::{Error, Result};
use crate::model::Counters;
use crate::nft::{Chain, Policy, RawRule, Session, TableRef};

/// One chain as iptables lists it.
struct ChainListing {
    name: String,
    /// `Some` for built-in (base) chains.
    policy: Option<Policy>,
    references: u32,
    rules: Vec<(u64, IptRule)>,
}

fn policy_name(p: Policy) -> &'static str {
    match p {
        Policy::Accept => "ACCEPT",
        Policy::Drop => "DROP",
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
        return Err(Error::NotFound(crate::OpFailure {
            index: 0,
            op: format!("list table {table}"),
            errno: libc::ENOENT,
            ext_ack: None,
        })
        .context(format!("table '{}' does not exist", table.name)));
    }
    let (chains, raw): (Vec<Chain>, Vec<RawRule>) = if exists {
        session.read(|r| {
            let chains = r.chains(table)?;
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
            .unwrap_or(Policy::Accept);
        out.push(ChainListing {
            name: b.name.into(),
            policy: Some(policy),
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
            references: refs(&c.chain.name),
            rules: rules_of(&c.chain.name),
        });
    }
    Ok(out)
}

fn no_chain(chain: &str) -> Error {
    Error::NotFound(crate::OpFailure {
        index: 0,
        op: format!("list chain {chain}"),
        errno: libc::ENOENT,
        ext_ack: None,
    })
    .context("iptables: No chain/target/match by that name.")
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
                    out.push_str(" -c 0 0");
                }
                out.push('\n');
            }
            None => {
                let _ = writeln!(out, "-N {}", c.name);
            }
        }
    }
    for c in &selected {
        for (handle, rule) in &c.rules {
            if rule.is_expressible() {
                let _ = writeln!(out, "{}", print::append_line(&c.name, rule, verbose));
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
    Ok(out)
}

/// A table's body in iptables-save format: chain lines, then rules (inexpressible ones as
/// `#` lines with their handle, which restore ignores).
pub fn save_table(session: &mut Session, table: &TableRef) -> Result<String> {
    let chains = read(session, table, None)?;
    let mut out = String::new();
    for c in &chains {
        match c.policy {
            Some(p) => {
                let _ = writeln!(out, ":{} {} [0:0]", c.name, policy_name(p));
            }
            None => {
                let _ = writeln!(out, ":{} - [0:0]", c.name);
            }
        }
    }
    for c in &chains {
        for (handle, rule) in &c.rules {
            if rule.is_expressible() {
                let _ = writeln!(out, "{}", print::append_line(&c.name, rule, false));
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
    Ok(out)
}

/// Counts as `iptables -L` prints them: exact with `-x`, else scaled with K, M, G, T.
fn count(n: u64, exact: bool, width: usize) -> String {
    if exact || n < 100_000 {
        return format!("{n:>width$}");
    }
    let mut v = n;
    for suffix in ["K", "M", "G", "T"] {
        v /= 1000;
        if v < 100_000 {
            return format!("{:>w$}{suffix}", v, w = width - 1);
        }
    }
    format!("{:>w$}P", v / 1000, w = width - 1)
}

fn addr_column(
    net: Option<&crate::ipt::Neg<crate::model::IpNet>>,
    numeric: bool,
    v6: bool,
) -> String {
    match net {
        None => {
            if numeric {
                if v6 {
                    "::/0".into()
                } else {
                    "0.0.0.0/0".into()
                }
            } else {
                "anywhere".into()
            }
        }
        Some(n) => {
            let bang = if n.negated { "!" } else { "" };
            if n.value.is_host() {
                format!("{bang}{}", n.value.addr())
            } else {
                format!("{bang}{}", n.value)
            }
        }
    }
}

fn extra(rule: &IptRule) -> String {
    let mut s = String::new();
    let pr = |p: crate::model::PortRange| {
        if p.is_single() {
            p.first().to_string()
        } else {
            format!("{}:{}", p.first(), p.last())
        }
    };
    for m in &rule.matches {
        match m {
            IptMatch::Tcp(p) | IptMatch::Udp(p) => {
                let name = if matches!(m, IptMatch::Tcp(_)) {
                    "tcp"
                } else {
                    "udp"
                };
                s.push_str(&format!(" {name}"));
                if let Some(x) = &p.sport {
                    let key = if x.value.is_single() { "spt" } else { "spts" };
                    s.push_str(&format!(
                        " {key}:{}{}",
                        if x.negated { "!" } else { "" },
                        pr(x.value)
                    ));
                }
                if let Some(x) = &p.dport {
                    let key = if x.value.is_single() { "dpt" } else { "dpts" };
                    s.push_str(&format!(
                        " {key}:{}{}",
                        if x.negated { "!" } else { "" },
                        pr(x.value)
                    ));
                }
            }
            IptMatch::Multiport(mp) => {
                let d = match mp.dir {
                    MultiportDir::Source => "sports",
                    MultiportDir::Destination => "dports",
                    MultiportDir::Either => "ports",
                };
                let list: Vec<String> = mp.ports.iter().map(|p| pr(*p)).collect();
                s.push_str(&format!(
                    " multiport {d} {}{}",
                    if mp.negated { "! " } else { "" },
                    list.join(",")
                ));
            }
            IptMatch::Comment(c) => s.push_str(&format!(" /* {c} */")),
            IptMatch::State(st) => s.push_str(&format!(
                " state {}{}",
                if st.negated { "! " } else { "" },
                st.value
            )),
            IptMatch::Conntrack(st) => s.push_str(&format!(
                " ctstate {}{}",
                if st.negated { "! " } else { "" },
                st.value
            )),
            IptMatch::Opaque(o) => s.push_str(&format!(" <{o}>")),
        }
    }
    match &rule.target {
        Some(IptTarget::Dnat(r)) | Some(IptTarget::Snat(r)) => {
            let spec = print::rule_spec(&IptRule {
                target: rule.target.clone(),
                ..Default::default()
            });
            let to = spec.rsplit(' ').next().unwrap_or_default().to_string();
            let _ = r;
            s.push_str(&format!(" to:{to}"));
        }
        Some(IptTarget::Masquerade(Some(p))) => {
            s.push_str(&format!(" masq ports: {}", pr(*p).replace(':', "-")))
        }
        Some(IptTarget::Redirect(Some(p))) => {
            s.push_str(&format!(" redir ports {}", pr(*p).replace(':', "-")))
        }
        Some(IptTarget::Reject(w)) => s.push_str(&format!(" reject-with {}", w.name())),
        Some(IptTarget::Log(l)) => {
            s.push_str(&format!(" LOG flags 0 level {}", l.level));
            if let Some(p) = &l.prefix {
                s.push_str(&format!(" prefix \"{p}\""));
            }
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
        Some(IptTarget::Opaque(_)) => "?".into(),
    }
}

/// `iptables -L [chain]` with `-n`, `-v`, `-x`, `--line-numbers`. Names are never resolved
/// through DNS (addresses print numerically; `anywhere` stands for /0 without `-n`).
pub fn list_table(
    session: &mut Session,
    table: &TableRef,
    chain: Option<&str>,
    inv: &Invocation,
) -> Result<String> {
    let chains = read(session, table, None)?;
    if let Some(c) = chain
        && !chains.iter().any(|x| x.name == c)
    {
        return Err(no_chain(c));
    }
    let v6 = table.family == crate::model::Family::Ipv6;
    let mut out = String::new();
    let mut first = true;
    for c in chains.iter().filter(|c| chain.is_none_or(|n| n == c.name)) {
        if !first {
            out.push('\n');
        }
        first = false;
        match c.policy {
            Some(p) if inv.verbose => {
                let _ = writeln!(
                    out,
                    "Chain {} (policy {} 0 packets, 0 bytes)",
                    c.name,
                    policy_name(p)
                );
            }
            Some(p) => {
                let _ = writeln!(out, "Chain {} (policy {})", c.name, policy_name(p));
            }
            None => {
                let _ = writeln!(out, "Chain {} ({} references)", c.name, c.references);
            }
        }
        let mut header = String::new();
        if inv.line_numbers {
            header.push_str("num   ");
        }
        if inv.verbose {
            if inv.exact {
                header.push_str(&format!("{:>8} {:>10} ", "pkts", "bytes"));
            } else {
                header.push_str(&format!("{:>5} {:>5} ", "pkts", "bytes"));
            }
        }
        header.push_str(&format!("{:<10} {:<4} {:<3} ", "target", "prot", "opt"));
        if inv.verbose {
            header.push_str(&format!("{:<6} {:<6} ", "in", "out"));
        }
        header.push_str(&format!("{:<20} {:<20}", "source", "destination"));
        let _ = writeln!(out, "{header}");
        for (i, (_, r)) in c.rules.iter().enumerate() {
            let mut line = String::new();
            if inv.line_numbers {
                line.push_str(&format!("{:<5} ", i + 1));
            }
            if inv.verbose {
                let Counters { packets, bytes } = r.counters.unwrap_or_default();
                let (pw, bw) = if inv.exact { (8, 10) } else { (5, 5) };
                line.push_str(&format!(
                    "{} {} ",
                    count(packets, inv.exact, pw),
                    count(bytes, inv.exact, bw)
                ));
            }
            let proto = match &r.proto {
                None => "all".to_string(),
                Some(p) => format!(
                    "{}{}",
                    if p.negated { "!" } else { "" },
                    crate::ipt::protocols::name_of(p.value.number())
                ),
            };
            line.push_str(&format!("{:<10} {:<4} {:<3} ", target_name(r), proto, "--"));
            if inv.verbose {
                let ifc = |i: &Option<crate::ipt::Neg<crate::model::Interface>>| match i {
                    None => "*".to_string(),
                    Some(n) => format!("{}{}", if n.negated { "!" } else { "" }, n.value),
                };
                line.push_str(&format!(
                    "{:<6} {:<6} ",
                    ifc(&r.in_iface),
                    ifc(&r.out_iface)
                ));
            }
            line.push_str(&format!(
                "{:<20} {:<20}{}",
                addr_column(r.src.as_ref(), inv.numeric, v6),
                addr_column(r.dst.as_ref(), inv.numeric, v6),
                extra(r)
            ));
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    Ok(out)
}
