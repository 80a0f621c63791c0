//! `-j TEE --gateway ADDR [--oif NAME]` (revision 1, both families): the payload of
//! [`crate::xt::tee`], through nft_compat in iptables-nft. iptables resolves a host name
//! for `--gateway`; xtnl takes an address only (no resolver in the privileged path), and
//! refuses an `--oif` over 15 bytes, which iptables cuts silently.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::*;
use crate::xt::layout::Raw;
use crate::xt::tee::TeeTarget as Info;

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
        let gw = get(given, "gateway")
            .ok_or_else(|| bad("TEE: option \"--gateway\" must be specified"))?;
        let mut i = Info::default();
        let s = gw.arg();
        let not_found = || bad(format!("host/network `{s}' not found"));
        match (s.parse::<IpAddr>().map_err(|_| not_found())?, ctx.family) {
            (IpAddr::V4(a), Family::Ipv4) => i.gw.0[..4].copy_from_slice(&a.octets()),
            (IpAddr::V6(a), Family::Ipv6) => i.gw = Raw(a.octets()),
            _ => return Err(not_found()),
        }
        if let Some(o) = get(given, "oif") {
            i.oif = Raw::from_str(o.arg(), "TEE --oif").map_err(wire)?;
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        let g = i.gw.0;
        if family == Family::Ipv6 {
            let _ = write!(out, " --gateway {}", Ipv6Addr::from(g));
        } else {
            if g[4..].iter().any(|&b| b != 0) {
                return None;
            }
            let _ = write!(out, " --gateway {}", Ipv4Addr::new(g[0], g[1], g[2], g[3]));
        }
        let oif = i.oif.text();
        if !oif.is_empty() {
            let _ = write!(out, " --oif {oif}");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = Info::decode(info).ok()?;
        i.oif = i.oif.canonical_text();
        Some(i.encode())
    }
}
