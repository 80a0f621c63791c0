//! `-m icmp` (IPv4) and `-m icmp6` (IPv6), rev 0; loaded implicitly by `-p icmp` /
//! `-p icmpv6` when their option is used.

use super::*;
use crate::xt::icmp::{ICMP_INV, Icmp as Info};
use crate::xt::layout::Raw;

pub(crate) struct Icmp;
pub(crate) struct Icmp6;

type Name = (&'static str, u8, u8, u8);

const V4: &[Name] = &[
    ("any", 0xff, 0, 0xff),
    ("echo-reply", 0, 0, 0xff),
    ("pong", 0, 0, 0xff),
    ("destination-unreachable", 3, 0, 0xff),
    ("network-unreachable", 3, 0, 0),
    ("host-unreachable", 3, 1, 1),
    ("protocol-unreachable", 3, 2, 2),
    ("port-unreachable", 3, 3, 3),
    ("fragmentation-needed", 3, 4, 4),
    ("source-route-failed", 3, 5, 5),
    ("network-unknown", 3, 6, 6),
    ("host-unknown", 3, 7, 7),
    ("network-prohibited", 3, 9, 9),
    ("host-prohibited", 3, 10, 10),
    ("TOS-network-unreachable", 3, 11, 11),
    ("TOS-host-unreachable", 3, 12, 12),
    ("communication-prohibited", 3, 13, 13),
    ("host-precedence-violation", 3, 14, 14),
    ("precedence-cutoff", 3, 15, 15),
    ("source-quench", 4, 0, 0xff),
    ("redirect", 5, 0, 0xff),
    ("network-redirect", 5, 0, 0),
    ("host-redirect", 5, 1, 1),
    ("TOS-network-redirect", 5, 2, 2),
    ("TOS-host-redirect", 5, 3, 3),
    ("echo-request", 8, 0, 0xff),
    ("ping", 8, 0, 0xff),
    ("router-advertisement", 9, 0, 0xff),
    ("router-solicitation", 10, 0, 0xff),
    ("time-exceeded", 11, 0, 0xff),
    ("ttl-exceeded", 11, 0, 0xff),
    ("ttl-zero-during-transit", 11, 0, 0),
    ("ttl-zero-during-reassembly", 11, 1, 1),
    ("parameter-problem", 12, 0, 0xff),
    ("ip-header-bad", 12, 0, 0),
    ("required-option-missing", 12, 1, 1),
    ("timestamp-request", 13, 0, 0xff),
    ("timestamp-reply", 14, 0, 0xff),
    ("address-mask-request", 17, 0, 0xff),
    ("address-mask-reply", 18, 0, 0xff),
];

const V6: &[Name] = &[
    ("destination-unreachable", 1, 0, 0xff),
    ("no-route", 1, 0, 0),
    ("communication-prohibited", 1, 1, 1),
    ("beyond-scope", 1, 2, 2),
    ("address-unreachable", 1, 3, 3),
    ("port-unreachable", 1, 4, 4),
    ("failed-policy", 1, 5, 5),
    ("reject-route", 1, 6, 6),
    ("packet-too-big", 2, 0, 0xff),
    ("time-exceeded", 3, 0, 0xff),
    ("ttl-exceeded", 3, 0, 0xff),
    ("ttl-zero-during-transit", 3, 0, 0),
    ("ttl-zero-during-reassembly", 3, 1, 1),
    ("parameter-problem", 4, 0, 0xff),
    ("bad-header", 4, 0, 0),
    ("unknown-header-type", 4, 1, 1),
    ("unknown-option", 4, 2, 2),
    ("echo-request", 128, 0, 0xff),
    ("ping", 128, 0, 0xff),
    ("echo-reply", 129, 0, 0xff),
    ("pong", 129, 0, 0xff),
    ("router-solicitation", 133, 0, 0xff),
    ("router-advertisement", 134, 0, 0xff),
    ("neighbour-solicitation", 135, 0, 0xff),
    ("neighbor-solicitation", 135, 0, 0xff),
    ("neighbour-advertisement", 136, 0, 0xff),
    ("neighbor-advertisement", 136, 0, 0xff),
    ("redirect", 137, 0, 0xff),
];

/// A name (or an unambiguous start of one, any case), or `type[/code[:code]]`.
fn parse_type(s: &str, names: &[Name], what: &str) -> Result<(u8, [u8; 2])> {
    let hits: Vec<&Name> = names
        .iter()
        .filter(|n| n.0.len() >= s.len() && n.0[..s.len()].eq_ignore_ascii_case(s) && !s.is_empty())
        .collect();
    match hits.as_slice() {
        [n] => return Ok((n.1, [n.2, n.3])),
        [a, b, ..] => {
            return Err(bad(format!(
                "Ambiguous {what} type `{s}': `{}' or `{}'?",
                a.0, b.0
            )));
        }
        [] => {}
    }
    let unknown = || bad(format!("Unknown {what} type `{s}'"));
    let (t, code) = match s.split_once('/') {
        Some((t, c)) => (t, Some(c)),
        None => (s, None),
    };
    if t.contains(':') {
        return Err(bad(format!("{what} type range not supported")));
    }
    let t = num(t, 255, what).map_err(|_| unknown())? as u8;
    let code = match code {
        None => [0, 255],
        Some(c) => {
            let (a, b) = super::conntrack::range(c, 255, what)
                .map_err(|_| bad(format!("Unknown {what} code `{s}'")))?;
            [a as u8, b as u8]
        }
    };
    Ok((t, code))
}

fn parse(given: &[Given], ext: &str, names: &[Name], what: &str) -> Result<Vec<u8>> {
    once(given, ext)?;
    let g = given.first().ok_or_else(|| {
        bad(format!(
            "{ext}: option \"--{}\" must be specified",
            if ext == "icmp" {
                "icmp-type"
            } else {
                "icmpv6-type"
            }
        ))
    })?;
    let (kind, code) = parse_type(g.arg(), names, what)?;
    Ok(Info {
        kind,
        code: Raw(code),
        invflags: if g.neg { ICMP_INV } else { 0 },
    }
    .encode())
}

fn save(info: &[u8], opt: &str, any: bool, out: &mut String) -> Option<()> {
    let i = Info::decode(info).ok()?;
    if i.invflags & !ICMP_INV != 0 {
        return None;
    }
    bang(out, i.invflags != 0);
    if any && i.kind == 0xff {
        let _ = write!(out, " --{opt} any");
        return Some(());
    }
    let _ = write!(out, " --{opt} {}", i.kind);
    if i.code.0 != [0, 0xff] {
        // iptables prints the first code only; a range it would print wrongly is not
        // iptables syntax.
        if i.code.0[0] != i.code.0[1] {
            return None;
        }
        let _ = write!(out, "/{}", i.code.0[0]);
    }
    Some(())
}

/// `-L`'s words: `icmp` (`ipv6-icmp`), then the type's name unless `-n` when a name has
/// exactly its codes, else iptables' `type N [code C | codes A-B]` (glued to the label, as
/// iptables prints it: `icmptype 8`).
fn list(info: &[u8], label: &str, names: &[Name], numeric: bool, out: &mut String) -> Option<()> {
    let i = Info::decode(info).ok()?;
    let inv = i.invflags & ICMP_INV != 0;
    let [lo, hi] = i.code.0;
    let _ = write!(out, " {label}");
    if !numeric && let Some(n) = names.iter().find(|n| (n.1, n.2, n.3) == (i.kind, lo, hi)) {
        let _ = write!(out, " {}{}", if inv { "!" } else { "" }, n.0);
        return Some(());
    }
    if inv {
        out.push_str(" !");
    }
    let _ = write!(out, "type {}", i.kind);
    if lo == hi {
        let _ = write!(out, " code {lo}");
    } else if (lo, hi) != (0, 0xff) {
        let _ = write!(out, " codes {lo}-{hi}");
    }
    Some(())
}

impl Ext for Icmp {
    fn name(&self) -> &'static str {
        "icmp"
    }
    fn fams(&self) -> Fams {
        Fams::V4
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("icmp-type", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        parse(given, "icmp", V4, "ICMP")
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        save(info, "icmp-type", true, out)
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        list(info, "icmp", V4, numeric, out)
    }
    canonical_via!(Info);
}

impl Ext for Icmp6 {
    fn name(&self) -> &'static str {
        "icmp6"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("icmpv6-type", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        parse(given, "icmp6", V6, "ICMPv6")
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        save(info, "icmpv6-type", false, out)
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        list(info, "ipv6-icmp", V6, numeric, out)
    }
    canonical_via!(Info);
}
