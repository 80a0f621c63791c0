//! `-j NETMAP --to ADDR[/PREFIX]` (revision 0 in both families; table nat): the network
//! is written as the range `ADDR & mask` .. `ADDR | ~mask` with `NF_NAT_RANGE_MAP_IPS`, in
//! `nf_nat_ipv4_multi_range_compat` (IPv4) or `nf_nat_range` (IPv6), the payloads of
//! [`crate::xt::nat_compat`] and [`crate::xt::nat`]. `-S` prints the prefix length, or the
//! mask in address form when it has holes, as iptables does.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::xt::{NatIpv4MultiRange, NatRange, nat_flags};

pub(crate) struct Netmap;

fn mask_text(min: u128, max: u128, bits: u32) -> String {
    if bits == 32 {
        let m = !((min ^ max) as u32);
        if m.leading_ones() == m.count_ones() {
            m.count_ones().to_string()
        } else {
            Ipv4Addr::from(m).to_string()
        }
    } else {
        let m = !(min ^ max);
        if m.leading_ones() == m.count_ones() {
            m.count_ones().to_string()
        } else {
            Ipv6Addr::from(m).to_string()
        }
    }
}

impl Ext for Netmap {
    fn name(&self) -> &'static str {
        "NETMAP"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("to", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "NETMAP")?;
        let g = given
            .first()
            .ok_or_else(|| bad("NETMAP: option \"--to\" must be specified"))?;
        let six = ctx.family == Family::Ipv6;
        let bits = if six { 128 } else { 32 };
        let (a, p) = match g.arg().split_once('/') {
            Some((a, p)) => (a, num(p, bits, "NETMAP --to")? as u32),
            None => (g.arg(), bits as u32),
        };
        let bad_addr = || bad(format!("NETMAP: host/network `{a}' not found"));
        if six {
            let addr: Ipv6Addr = a.parse().map_err(|_| bad_addr())?;
            let mask = if p == 0 { 0 } else { u128::MAX << (128 - p) };
            let min = u128::from(addr) & mask;
            let max = min | !mask;
            let r = NatRange::new(
                true,
                Some((
                    IpAddr::V6(Ipv6Addr::from(min)),
                    IpAddr::V6(Ipv6Addr::from(max)),
                )),
                None,
            );
            Ok(r.encode())
        } else {
            let addr: Ipv4Addr = a.parse().map_err(|_| bad_addr())?;
            let mask = if p == 0 { 0 } else { u32::MAX << (32 - p) };
            let min = u32::from(addr) & mask;
            let max = min | !mask;
            Ok(
                NatIpv4MultiRange::new(Some((Ipv4Addr::from(min), Ipv4Addr::from(max))), None)
                    .encode(),
            )
        }
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let (flags, min, max, bits) = if family == Family::Ipv6 {
            let r = NatRange::decode(info, true).ok()?;
            match (r.min_addr, r.max_addr) {
                (IpAddr::V6(a), IpAddr::V6(b)) => (r.flags, u128::from(a), u128::from(b), 128),
                _ => return None,
            }
        } else {
            let r = NatIpv4MultiRange::decode(info).ok()?;
            (
                r.flags,
                u128::from(u32::from(r.min_ip)),
                u128::from(u32::from(r.max_ip)),
                32,
            )
        };
        if flags != nat_flags::MAP_IPS || r_ports_set(info, family) {
            return None;
        }
        let addr = if bits == 32 {
            Ipv4Addr::from(min as u32).to_string()
        } else {
            Ipv6Addr::from(min).to_string()
        };
        let _ = write!(out, " --to {addr}/{}", mask_text(min, max, bits));
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        // ` to:ADDR/BITS`: the `-S` words with `to:` for `--to`.
        let mut t = String::new();
        self.save(info, family, &mut t)?;
        let _ = write!(out, " to:{}", t.strip_prefix(" --to ")?);
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        Some(info.to_vec())
    }
}

/// Ports in a NETMAP payload: iptables never writes them.
fn r_ports_set(info: &[u8], family: Family) -> bool {
    if family == Family::Ipv6 {
        NatRange::decode(info, true).map_or(true, |r| r.min_port != 0 || r.max_port != 0)
    } else {
        NatIpv4MultiRange::decode(info).map_or(true, |r| r.min_port != 0 || r.max_port != 0)
    }
}
