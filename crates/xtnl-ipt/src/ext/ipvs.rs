//! `-m ipvs` (revision 0, IPv4 and IPv6): `[!] --ipvs`, `[!] --vproto`, `[!] --vaddr`,
//! `[!] --vport`, `--vdir ORIGINAL|REPLY`, `[!] --vmethod GATE|IPIP|MASQ`, `[!] --vportctl`;
//! the payload of [`crate::xt::ipvs`], through nft_compat in iptables-nft. As in iptables,
//! any option but `--ipvs` implies it (and `-S` then leaves it out), protocols print as
//! numbers and services as ports, and an address mask prints as its prefix length.

use std::net::IpAddr;

use super::conntrack::{host_mask, print_host_mask};
use super::*;
use crate::xt::ipvs::{
    IPVS_METHODS, Ipvs as Info, XT_IPVS_DIR, XT_IPVS_IPVS_PROPERTY, XT_IPVS_METHOD, XT_IPVS_PROTO,
    XT_IPVS_VADDR, XT_IPVS_VPORT, XT_IPVS_VPORTCTL,
};
use crate::xt::layout::{Be16, Raw};

pub(crate) struct Ipvs;

/// The options in `XT_IPVS_*`'s bit order.
const OPTS: [&str; 7] = [
    "ipvs", "vproto", "vaddr", "vport", "vdir", "vmethod", "vportctl",
];

/// `xtables_parse_protocol`: a number, `all`, a name of /etc/protocols, iptables' names.
fn protocol(s: &str) -> Result<u8> {
    if let Ok(n) = num(s, 255, "ipvs --vproto") {
        return Ok(n as u8);
    }
    if s == "all" {
        return Ok(0);
    }
    crate::ipt::protocols::system_number_of(s)
        .or_else(|| (0..=255).find(|n| crate::ipt::protocols::iptables_name(*n) == Some(s)))
        .ok_or_else(|| bad(format!("unknown protocol \"{s}\" specified")))
}

/// A port number or service name (no range).
fn port(s: &str, opt: &str) -> Result<u16> {
    if s.contains(':') {
        return Err(bad(format!("invalid port/service `{s}' specified")));
    }
    Ok(crate::ipt::parse::parse_ports(s, opt)?.first())
}

/// `addr[/len|/mask]` as iptables' XTTYPE_HOSTMASK reads it (numeric addresses only).
fn vaddr(s: &str, family: Family) -> Result<([u8; 16], [u8; 16])> {
    if let Some((a, m)) = s.split_once('/')
        && m.parse::<u32>().is_err()
    {
        let mask = m
            .parse::<IpAddr>()
            .ok()
            .filter(|x| x.is_ipv6() == (family == Family::Ipv6))
            .map(|x| match x {
                IpAddr::V4(v) => u128::from(u32::from(v)) << 96,
                IpAddr::V6(v) => u128::from(v),
            })
            .filter(|m| m.count_ones() == m.leading_ones())
            .ok_or_else(|| {
                bad(format!(
                    "ipvs: bad value for option \"--vaddr\", neither a valid network mask nor valid CIDR: {m}"
                ))
            })?;
        return host_mask(&format!("{a}/{}", mask.count_ones()), family, "ipvs");
    }
    host_mask(s, family, "ipvs")
}

fn show(info: &[u8], family: Family, numeric: bool, p: &str, out: &mut String) -> Option<()> {
    let v = Info::decode(info).ok()?;
    let has = |b: u8| v.bitmask & b != 0;
    let inv = |b: u8| v.invert & b != 0;
    let others = v.bitmask & !XT_IPVS_IPVS_PROPERTY;
    let ok = v.bitmask & 0x80 == 0
        && has(XT_IPVS_IPVS_PROPERTY)
        && v.invert & !v.bitmask == 0
        && !(others != 0 && inv(XT_IPVS_IPVS_PROPERTY))
        && (!has(XT_IPVS_METHOD) || IPVS_METHODS.iter().any(|(m, _)| *m == v.fwd_method));
    if !ok {
        return None;
    }
    let neg = |out: &mut String, b: u8| bang(out, inv(b));
    if others == 0 {
        neg(out, XT_IPVS_IPVS_PROPERTY);
        let _ = write!(out, " {p}ipvs");
    }
    if has(XT_IPVS_PROTO) {
        neg(out, XT_IPVS_PROTO);
        let _ = write!(out, " {p}vproto {}", v.l4proto);
    }
    if has(XT_IPVS_VADDR) {
        neg(out, XT_IPVS_VADDR);
        let _ = write!(out, " {p}vaddr");
        let zero = if family == Family::Ipv6 {
            v.vaddr.0 == [0; 16]
        } else {
            v.vaddr.0[..4] == [0; 4]
        };
        if !numeric && zero {
            out.push_str(" anywhere");
        } else {
            print_host_mask(out, &v.vaddr.0, &v.vmask.0, family);
        }
    }
    if has(XT_IPVS_VPORT) {
        neg(out, XT_IPVS_VPORT);
        let _ = write!(out, " {p}vport {}", v.vport.0);
    }
    if has(XT_IPVS_DIR) {
        let d = if inv(XT_IPVS_DIR) {
            "REPLY"
        } else {
            "ORIGINAL"
        };
        let _ = write!(out, " {p}vdir {d}");
    }
    if has(XT_IPVS_METHOD) {
        neg(out, XT_IPVS_METHOD);
        let name = IPVS_METHODS.iter().find(|(m, _)| *m == v.fwd_method)?.1;
        let _ = write!(out, " {p}vmethod {name}");
    }
    if has(XT_IPVS_VPORTCTL) {
        neg(out, XT_IPVS_VPORTCTL);
        let _ = write!(out, " {p}vportctl {}", v.vportctl.0);
    }
    Some(())
}

impl Ext for Ipvs {
    fn name(&self) -> &'static str {
        "ipvs"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ipvs", Arg::None, true),
            opt("vproto", Arg::One, true),
            opt("vaddr", Arg::One, true),
            opt("vport", Arg::One, true),
            opt("vdir", Arg::One, false),
            opt("vmethod", Arg::One, true),
            opt("vportctl", Arg::One, true),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ipvs")?;
        if given.is_empty() {
            return Err(bad("IPVS: At least one option is required"));
        }
        let mut v = Info::default();
        for g in given {
            let bit = 1u8 << OPTS.iter().position(|o| *o == g.opt).unwrap_or(0);
            match g.opt {
                "vproto" => v.l4proto = protocol(g.arg())?,
                "vaddr" => {
                    let (a, m) = vaddr(g.arg(), ctx.family)?;
                    (v.vaddr, v.vmask) = (Raw(a), Raw(m));
                }
                "vport" => v.vport = Be16(port(g.arg(), "--vport")?),
                "vportctl" => v.vportctl = Be16(port(g.arg(), "--vportctl")?),
                "vdir" => {
                    if g.arg().eq_ignore_ascii_case("REPLY") {
                        v.invert |= XT_IPVS_DIR;
                    } else if !g.arg().eq_ignore_ascii_case("ORIGINAL") {
                        return Err(bad(format!(
                            "Bad value for \"--vdir\" option: \"{}\"",
                            g.arg()
                        )));
                    }
                }
                "vmethod" => {
                    v.fwd_method = IPVS_METHODS
                        .iter()
                        .find(|(_, n)| n.eq_ignore_ascii_case(g.arg()))
                        .map(|(m, _)| *m)
                        .ok_or_else(|| {
                            bad(format!(
                                "Bad value for \"--vmethod\" option: \"{}\"",
                                g.arg()
                            ))
                        })?;
                }
                _ => {}
            }
            v.bitmask |= bit;
            if g.neg {
                v.invert |= bit;
            }
        }
        if v.bitmask & !XT_IPVS_IPVS_PROPERTY != 0 {
            if v.invert & XT_IPVS_IPVS_PROPERTY != 0 {
                return Err(bad("! --ipvs cannot be together with other options"));
            }
            v.bitmask |= XT_IPVS_IPVS_PROPERTY;
        }
        Ok(v.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        show(info, family, true, "--", out)
    }
    fn list(&self, info: &[u8], family: Family, numeric: bool, out: &mut String) -> Option<()> {
        show(info, family, numeric, "", out)
    }
    canonical_via!(Info);
}
