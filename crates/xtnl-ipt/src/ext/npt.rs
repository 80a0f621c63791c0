//! IPv6 prefix translation, `-j DNPT|SNPT --src-pfx P/L --dst-pfx P/L` (revision 0, mangle
//! table; DNPT in PREROUTING and OUTPUT, SNPT in INPUT and POSTROUTING, as the kernel
//! checks), and `-m eui64` (no options; PREROUTING, INPUT, FORWARD): the payloads of
//! [`crate::xt::npt`], through nft_compat in iptables-nft.
//!
//! Prefixes are numeric (`addr/len` or `addr/mask`; iptables would also resolve a host
//! name, which xtnl does not do as root). Refused before anything is sent, where the
//! kernel refuses too: a prefix longer than 64 (a bare address is one of 128). Refused on
//! purpose: `::/0`, which iptables' `-S` leaves out, so that its own output does not read
//! back.

use std::net::Ipv6Addr;

use super::*;
use crate::xt::layout::Raw;
use crate::xt::npt::{Eui64 as EuiInfo, Npt as Info};

pub(crate) struct Npt {
    name: &'static str,
}

pub(crate) const DNPT: Npt = Npt { name: "DNPT" };
pub(crate) const SNPT: Npt = Npt { name: "SNPT" };

/// `addr[/len|/mask]` as the address (kept as given) and the prefix length.
fn prefix(s: &str, ext: &str, opt: &str) -> Result<(Raw<16>, u8)> {
    let (a, p) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let addr: Ipv6Addr = a
        .parse()
        .map_err(|_| bad(format!("{ext}: host/network `{a}' not found")))?;
    let len = match p {
        None => 128,
        Some(p) => match num(p, 128, ext) {
            Ok(n) => n as u32,
            Err(_) => {
                let m = p
                    .parse::<Ipv6Addr>()
                    .map(u128::from)
                    .ok()
                    .filter(|m| m.count_ones() == 0 || m.leading_ones() == m.count_ones());
                m.map(|m| m.count_ones()).ok_or_else(|| {
                    bad(format!(
                        "{ext}: bad value for option \"--{opt}\", neither a valid network \
                         mask nor valid CIDR (0-128)."
                    ))
                })?
            }
        },
    };
    if len > 64 {
        return Err(bad(format!(
            "{ext}: --{opt} {s}: a prefix of {len} bits; the kernel takes at most 64"
        )));
    }
    if len == 0 && addr.is_unspecified() {
        return Err(bad(format!(
            "{ext}: --{opt} ::/0 is refused: iptables prints it as no option at all"
        )));
    }
    Ok((Raw(addr.octets()), len as u8))
}

fn show(out: &mut String, word: &str, a: &Raw<16>, len: u8) {
    let _ = write!(out, " {word} {}/{len}", Ipv6Addr::from(a.0));
}

impl Ext for Npt {
    fn name(&self) -> &'static str {
        self.name
    }
    fn is_target(&self) -> bool {
        true
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("src-pfx", Arg::One, false),
            opt("dst-pfx", Arg::One, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, self.name)?;
        let mut n = Info::default();
        for must in ["src-pfx", "dst-pfx"] {
            let g = get(given, must).ok_or_else(|| {
                bad(format!(
                    "{}: option \"--{must}\" must be specified",
                    self.name
                ))
            })?;
            let (a, l) = prefix(g.arg(), self.name, must)?;
            if must == "src-pfx" {
                (n.src_pfx, n.src_pfx_len) = (a, l);
            } else {
                (n.dst_pfx, n.dst_pfx_len) = (a, l);
            }
        }
        Ok(n.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let n = Info::decode(info).ok()?;
        let printable = |a: &Raw<16>, l: u8| l <= 128 && !(l == 0 && a.0 == [0; 16]);
        if !printable(&n.src_pfx, n.src_pfx_len) || !printable(&n.dst_pfx, n.dst_pfx_len) {
            return None;
        }
        show(out, "--src-pfx", &n.src_pfx, n.src_pfx_len);
        show(out, "--dst-pfx", &n.dst_pfx, n.dst_pfx_len);
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        self.save(info, family, &mut String::new())?;
        let n = Info::decode(info).ok()?;
        let _ = write!(out, " {}", self.name);
        show(out, "src-pfx", &n.src_pfx, n.src_pfx_len);
        show(out, "dst-pfx", &n.dst_pfx, n.dst_pfx_len);
        Some(())
    }
    canonical_via!(Info);
}

pub(crate) struct Eui64;

impl Ext for Eui64 {
    fn name(&self) -> &'static str {
        "eui64"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![]
    }
    fn parse(&self, _: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        Ok(EuiInfo.encode())
    }
    fn save(&self, info: &[u8], _: Family, _: &mut String) -> Option<()> {
        EuiInfo::decode(info).ok().map(|_| ())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, _: &mut String) -> Option<()> {
        // libip6t_eui64 has no `print`: iptables-nft prints nothing for the match.
        self.save(info, family, &mut String::new())
    }
    fn list_as(
        &self,
        flavour: Flavour,
        info: &[u8],
        family: Family,
        numeric: bool,
        out: &mut String,
    ) -> Option<()> {
        self.list(info, family, numeric, out)?;
        // iptables-legacy prints a module without `print` as its name and a space (no
        // space before it, unlike every `print`).
        if flavour == Flavour::Legacy {
            out.push_str("eui64 ");
        }
        Some(())
    }
    canonical_via!(EuiInfo);
}
