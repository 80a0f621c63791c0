//! `-j TPROXY` (revision 1, IPv4 and IPv6): `--on-port PORT` (required), `--on-ip ADDR`,
//! `--tproxy-mark VALUE[/MASK]`; iptables-nft writes it through nft_compat. The kernel takes
//! it in table mangle, chain PREROUTING, with `-p tcp` or `-p udp`. And `-j TEE`, the other
//! target that sends packets somewhere by address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::xt::layout::Raw;
use crate::xt::tproxy::{TeeV1 as TeeInfo, TproxyV1 as Info};

pub(crate) struct Tproxy;

fn addr(i: &Info, family: Family) -> String {
    let a = i.laddr.0;
    if family == Family::Ipv6 {
        Ipv6Addr::from(a).to_string()
    } else {
        Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
    }
}

impl Ext for Tproxy {
    fn name(&self) -> &'static str {
        "TPROXY"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("on-port", Arg::One, false),
            opt("on-ip", Arg::One, false),
            opt("tproxy-mark", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "TPROXY")?;
        let mut i = Info::default();
        let port = get(given, "on-port")
            .ok_or_else(|| bad("TPROXY: option \"--on-port\" must be specified"))?;
        let p = crate::ipt::parse::parse_to_ports(port.arg())
            .ok()
            .filter(|r| r.is_single())
            .ok_or_else(|| {
                bad(format!(
                    "Port \"{}\" does not resolve to anything.",
                    port.arg()
                ))
            })?;
        i.lport = Raw(p.first().to_be_bytes());
        if let Some(g) = get(given, "on-ip") {
            let a: IpAddr = g
                .arg()
                .parse()
                .map_err(|_| bad(format!("host/network `{}' not found", g.arg())))?;
            let mut b = [0u8; 16];
            match (a, ctx.family) {
                (IpAddr::V4(v4), Family::Ipv4) => b[..4].copy_from_slice(&v4.octets()),
                (IpAddr::V6(v6), Family::Ipv6) => b = v6.octets(),
                _ => return Err(bad(format!("host/network `{}' not found", g.arg()))),
            }
            i.laddr = Raw(b);
        }
        if let Some(g) = get(given, "tproxy-mark") {
            (i.mark_value, i.mark_mask) = markmask(g.arg(), "TPROXY")?;
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        let _ = write!(
            out,
            " --on-port {} --on-ip {} --tproxy-mark 0x{:x}/0x{:x}",
            u16::from_be_bytes(i.lport.0),
            addr(&i, family),
            i.mark_value,
            i.mark_mask
        );
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        let _ = write!(
            out,
            " TPROXY redirect {}:{} mark 0x{:x}/0x{:x}",
            addr(&i, family),
            u16::from_be_bytes(i.lport.0),
            i.mark_value,
            i.mark_mask
        );
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        // IPv4 keeps its address in the union's first four bytes; iptables zeroes the rest.
        Info::decode(info).ok().map(|i| i.encode())
    }
}

/// `-j TEE --gateway ADDR [--oif NAME]` (revision 1, IPv4 and IPv6), through nft_compat.
pub(crate) struct Tee;

impl Ext for Tee {
    fn name(&self) -> &'static str {
        "TEE"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("gateway", Arg::One, false), opt("oif", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "TEE")?;
        let g = get(given, "gateway")
            .ok_or_else(|| bad("TEE: option \"--gateway\" must be specified"))?;
        let a: IpAddr = g
            .arg()
            .parse()
            .map_err(|_| bad(format!("host/network `{}' not found", g.arg())))?;
        let mut gw = [0u8; 16];
        match (a, ctx.family) {
            (IpAddr::V4(v4), Family::Ipv4) => gw[..4].copy_from_slice(&v4.octets()),
            (IpAddr::V6(v6), Family::Ipv6) => gw = v6.octets(),
            _ => return Err(bad(format!("host/network `{}' not found", g.arg()))),
        }
        let mut t = TeeInfo {
            gw: Raw(gw),
            ..Default::default()
        };
        if let Some(o) = get(given, "oif") {
            if o.arg().len() > 15 {
                return Err(bad(
                    "TEE: argument for \"--oif\" is too long (max 15 characters)",
                ));
            }
            t.oif = Raw::from_str(o.arg(), "oif").map_err(wire)?;
        }
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let t = TeeInfo::decode(info).ok()?;
        // iptables prints the name as it is; one no interface can have (spaces, quotes,
        // control bytes) would not read back (found by the ext_decode fuzz target).
        let name = t.oif.text();
        if !name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"\"'\\/".contains(&b))
        {
            return None;
        }
        let _ = write!(out, " --gateway {}", gw(&t, family));
        if t.oif.0[0] != 0 {
            let _ = write!(out, " --oif {}", t.oif.text());
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let t = TeeInfo::decode(info).ok()?;
        let _ = write!(out, " TEE gw:{}", gw(&t, family));
        if t.oif.0[0] != 0 {
            let _ = write!(out, " oif={}", t.oif.text());
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut t = TeeInfo::decode(info).ok()?;
        t.oif = t.oif.canonical_text();
        Some(t.encode())
    }
}

fn gw(t: &TeeInfo, family: Family) -> String {
    let a = t.gw.0;
    if family == Family::Ipv6 {
        Ipv6Addr::from(a).to_string()
    } else {
        Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
    }
}
