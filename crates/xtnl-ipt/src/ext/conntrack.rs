//! `-m conntrack` rev 3, every option. A pure `--ctstate` (or the `-m state` alias) reads
//! back as [`crate::ipt::IptMatch::Conntrack`]/`State` as before; anything more is this.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::ipt::protocols;
use crate::xt::{ConntrackV3, CtStates, ct_flags as cf};

pub(crate) struct Conntrack;

const STATUS: [(u16, &str); 4] = [
    (1, "EXPECTED"),
    (2, "SEEN_REPLY"),
    (4, "ASSURED"),
    (8, "CONFIRMED"),
];

/// `address[/prefix]` as `union nf_inet_addr` bytes; the address is kept as given (not
/// masked), as iptables keeps it.
pub(crate) fn host_mask(s: &str, family: Family, what: &str) -> Result<([u8; 16], [u8; 16])> {
    let (a, p) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let v6 = family == Family::Ipv6;
    let addr: IpAddr = a
        .parse()
        .map_err(|_| bad(format!("{what}: host/network `{a}' not found")))?;
    if addr.is_ipv6() != v6 {
        return Err(bad(format!("{what}: `{a}' is not of this family")));
    }
    let bits = if v6 { 128 } else { 32 };
    let plen = match p {
        Some(p) => num(p, bits, what)? as u32,
        None => bits as u32,
    };
    let mut ab = [0u8; 16];
    let mut mb = [0u8; 16];
    match addr {
        IpAddr::V4(x) => {
            ab[..4].copy_from_slice(&x.octets());
            let m = if plen == 0 {
                0
            } else {
                u32::MAX << (32 - plen)
            };
            mb[..4].copy_from_slice(&m.to_be_bytes());
        }
        IpAddr::V6(x) => {
            ab = x.octets();
            let m = if plen == 0 {
                0
            } else {
                u128::MAX << (128 - plen)
            };
            mb = m.to_be_bytes();
        }
    }
    if p.is_none() {
        // iptables fills the whole union for a host without a prefix, IPv4 included.
        mb = [0xff; 16];
    }
    Ok((ab, mb))
}

/// `addr[/prefix or /mask]` with `/32` (`/128`) left out, as xtables prints numerically.
pub(crate) fn print_host_mask(out: &mut String, a: &[u8; 16], m: &[u8; 16], family: Family) {
    if family == Family::Ipv6 {
        let addr = Ipv6Addr::from(*a);
        let mask = u128::from_be_bytes(*m);
        let _ = write!(out, " {addr}");
        match prefix_len(mask, 128) {
            Some(128) => {}
            Some(p) => {
                let _ = write!(out, "/{p}");
            }
            None => {
                let _ = write!(out, "/{}", Ipv6Addr::from(*m));
            }
        }
    } else {
        let addr = Ipv4Addr::new(a[0], a[1], a[2], a[3]);
        let mask = u32::from_be_bytes([m[0], m[1], m[2], m[3]]);
        let _ = write!(out, " {addr}");
        match prefix_len(u128::from(mask), 32) {
            Some(32) => {}
            Some(p) => {
                let _ = write!(out, "/{p}");
            }
            None => {
                let _ = write!(out, "/{}", Ipv4Addr::from(mask));
            }
        }
    }
}

fn prefix_len(mask: u128, bits: u32) -> Option<u32> {
    let ones = mask.count_ones();
    let want = if ones == 0 {
        0
    } else {
        (u128::MAX >> (128 - bits)) & !((1u128 << (bits - ones)) - 1)
    };
    (mask == want).then_some(ones)
}

/// `a[:b]` of numbers up to `max`.
pub(crate) fn range(s: &str, max: u64, what: &str) -> Result<(u64, u64)> {
    match s.split_once(':') {
        Some((a, b)) => {
            let a = if a.is_empty() { 0 } else { num(a, max, what)? };
            let b = if b.is_empty() {
                max
            } else {
                num(b, max, what)?
            };
            if a > b {
                return Err(bad(format!("{what}: range \"{s}\" is reversed")));
            }
            Ok((a, b))
        }
        None => {
            let a = num(s, max, what)?;
            Ok((a, a))
        }
    }
}

impl Ext for Conntrack {
    fn name(&self) -> &'static str {
        "conntrack"
    }
    fn revision(&self) -> u32 {
        3
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ctstate", Arg::One, true),
            opt("ctproto", Arg::One, true),
            opt("ctorigsrc", Arg::One, true),
            opt("ctorigdst", Arg::One, true),
            opt("ctreplsrc", Arg::One, true),
            opt("ctrepldst", Arg::One, true),
            opt("ctorigsrcport", Arg::One, true),
            opt("ctorigdstport", Arg::One, true),
            opt("ctreplsrcport", Arg::One, true),
            opt("ctrepldstport", Arg::One, true),
            opt("ctstatus", Arg::One, true),
            opt("ctexpire", Arg::One, true),
            opt("ctdir", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        if given.is_empty() {
            return Err(bad("conntrack: at least one option is required"));
        }
        for (i, g) in given.iter().enumerate() {
            if given[..i].iter().any(|h| h.opt == g.opt) {
                return Err(bad(format!("multiple --{} flags not allowed", g.opt)));
            }
        }
        let mut c = ConntrackV3::default();
        for g in given {
            let flag = match g.opt {
                "ctstate" => {
                    c.state_mask = crate::ipt::rule::parse_states(g.arg(), true)?;
                    cf::STATE
                }
                "ctproto" => {
                    let n = protocols::number_of(g.arg()).ok_or_else(|| {
                        bad(format!("unknown protocol \"{}\" specified", g.arg()))
                    })?;
                    if n == 0 && g.neg {
                        return Err(bad("conntrack: rule would never match protocol"));
                    }
                    c.l4proto = u16::from(n);
                    cf::PROTO
                }
                "ctorigsrc" | "ctorigdst" | "ctreplsrc" | "ctrepldst" => {
                    let (a, m) = host_mask(g.arg(), ctx.family, "conntrack")?;
                    let (slot, flag) = match g.opt {
                        "ctorigsrc" => ((&mut c.origsrc_addr, &mut c.origsrc_mask), cf::ORIGSRC),
                        "ctorigdst" => ((&mut c.origdst_addr, &mut c.origdst_mask), cf::ORIGDST),
                        "ctreplsrc" => ((&mut c.replsrc_addr, &mut c.replsrc_mask), cf::REPLSRC),
                        _ => ((&mut c.repldst_addr, &mut c.repldst_mask), cf::REPLDST),
                    };
                    (*slot.0, *slot.1) = (a, m);
                    flag
                }
                "ctorigsrcport" | "ctorigdstport" | "ctreplsrcport" | "ctrepldstport" => {
                    let (a, b) = range(g.arg(), 65535, "conntrack")?;
                    let (lo, hi, flag) = match g.opt {
                        "ctorigsrcport" => (
                            &mut c.origsrc_port,
                            &mut c.origsrc_port_high,
                            cf::ORIGSRC_PORT,
                        ),
                        "ctorigdstport" => (
                            &mut c.origdst_port,
                            &mut c.origdst_port_high,
                            cf::ORIGDST_PORT,
                        ),
                        "ctreplsrcport" => (
                            &mut c.replsrc_port,
                            &mut c.replsrc_port_high,
                            cf::REPLSRC_PORT,
                        ),
                        _ => (
                            &mut c.repldst_port,
                            &mut c.repldst_port_high,
                            cf::REPLDST_PORT,
                        ),
                    };
                    (*lo, *hi) = (a as u16, b as u16);
                    flag
                }
                "ctstatus" => {
                    for w in g.arg().split(',') {
                        if w.eq_ignore_ascii_case("NONE") {
                            continue;
                        }
                        let (bit, _) = STATUS
                            .iter()
                            .find(|(_, n)| n.eq_ignore_ascii_case(w))
                            .ok_or_else(|| bad(format!("Bad ctstatus \"{w}\"")))?;
                        c.status_mask |= bit;
                    }
                    cf::STATUS
                }
                "ctexpire" => {
                    let (a, b) = range(g.arg(), u64::from(u32::MAX), "conntrack")?;
                    (c.expires_min, c.expires_max) = (a as u32, b as u32);
                    cf::EXPIRES
                }
                _ => {
                    if g.arg().eq_ignore_ascii_case("ORIGINAL") {
                    } else if g.arg().eq_ignore_ascii_case("REPLY") {
                        c.invert_flags |= cf::DIRECTION;
                    } else {
                        return Err(bad(format!("conntrack: Unknown --ctdir \"{}\"", g.arg())));
                    }
                    cf::DIRECTION
                }
            };
            c.match_flags |= flag;
            if g.neg {
                c.invert_flags |= flag;
            }
        }
        Ok(c.encode())
    }
    fn shown_name(&self, info: &[u8]) -> &'static str {
        match ConntrackV3::decode(info) {
            Ok(c) if c.is_state_alias() => "state",
            _ => "conntrack",
        }
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        dump(info, family, "--", true, out)
    }
    fn list(&self, info: &[u8], family: Family, numeric: bool, out: &mut String) -> Option<()> {
        dump(info, family, "", numeric, out)
    }
    canonical_via!(ConntrackV3);
}

/// The options as `-S` (`p` = `--`) or `-L` (`p` empty) print them (`conntrack_dump`).
fn dump(info: &[u8], family: Family, p: &str, numeric: bool, out: &mut String) -> Option<()> {
    let c = ConntrackV3::decode(info).ok()?;
    let known = (1u16 << 14) - 1;
    if c.match_flags & !known != 0 || c.invert_flags & !known != 0 {
        return None;
    }
    let on = |f: u16| c.match_flags & f != 0;
    let neg = |out: &mut String, f: u16| bang(out, c.invert_flags & f != 0);
    if on(cf::STATE) {
        neg(out, cf::STATE);
        let word = if c.is_state_alias() {
            "state"
        } else {
            "ctstate"
        };
        let _ = write!(out, " {p}{word} {}", CtStates(c.state_mask.0));
    }
    if on(cf::PROTO) {
        neg(out, cf::PROTO);
        let _ = write!(out, " {p}ctproto {}", c.l4proto);
    }
    for (f, w, a, m) in [
        (cf::ORIGSRC, "ctorigsrc", &c.origsrc_addr, &c.origsrc_mask),
        (cf::ORIGDST, "ctorigdst", &c.origdst_addr, &c.origdst_mask),
        (cf::REPLSRC, "ctreplsrc", &c.replsrc_addr, &c.replsrc_mask),
        (cf::REPLDST, "ctrepldst", &c.repldst_addr, &c.repldst_mask),
    ] {
        if on(f) {
            neg(out, f);
            let _ = write!(out, " {p}{w}");
            if !numeric && a.iter().all(|&b| b == 0) {
                out.push_str(" anywhere");
            } else {
                print_host_mask(out, a, m, family);
            }
        }
    }
    for (f, w, lo, hi) in [
        (
            cf::ORIGSRC_PORT,
            "ctorigsrcport",
            c.origsrc_port,
            c.origsrc_port_high,
        ),
        (
            cf::ORIGDST_PORT,
            "ctorigdstport",
            c.origdst_port,
            c.origdst_port_high,
        ),
        (
            cf::REPLSRC_PORT,
            "ctreplsrcport",
            c.replsrc_port,
            c.replsrc_port_high,
        ),
        (
            cf::REPLDST_PORT,
            "ctrepldstport",
            c.repldst_port,
            c.repldst_port_high,
        ),
    ] {
        if on(f) {
            neg(out, f);
            if hi == 0 || lo == hi {
                let _ = write!(out, " {p}{w} {lo}");
            } else {
                let _ = write!(out, " {p}{w} {lo}:{hi}");
            }
        }
    }
    if on(cf::STATUS) {
        neg(out, cf::STATUS);
        let _ = write!(out, " {p}ctstatus ");
        let names: Vec<&str> = STATUS
            .iter()
            .filter(|(b, _)| c.status_mask & b != 0)
            .map(|(_, n)| *n)
            .collect();
        if c.status_mask & !0xf != 0 {
            return None;
        }
        out.push_str(if names.is_empty() { "NONE" } else { "" });
        out.push_str(&names.join(","));
    }
    if on(cf::EXPIRES) {
        neg(out, cf::EXPIRES);
        if c.expires_min == c.expires_max {
            let _ = write!(out, " {p}ctexpire {}", c.expires_min);
        } else {
            let _ = write!(out, " {p}ctexpire {}:{}", c.expires_min, c.expires_max);
        }
    }
    if on(cf::DIRECTION) {
        let d = if c.invert_flags & cf::DIRECTION != 0 {
            "REPLY"
        } else {
            "ORIGINAL"
        };
        let _ = write!(out, " {p}ctdir {d}");
    }
    Some(())
}
