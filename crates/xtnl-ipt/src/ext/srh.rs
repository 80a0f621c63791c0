//! `-m srh` (IPv6, revision 1): the segment routing header's next header, length,
//! segments left, last entry (each eq/gt/lt), tag, and previous/next/last segment
//! addresses with prefix lengths; every option invertible. iptables-nft writes it through
//! nft_compat.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::srh::Srh as Info;

pub(crate) struct Srh;

/// Option name, flag bit, field (0 next_hdr, 1 hdr_len, 2 segs_left, 3 last_entry,
/// 4 tag, 5-7 psid/nsid/lsid), in iptables' save order.
const OPTS: [(&str, u16, u8); 14] = [
    ("srh-next-hdr", 0x0001, 0),
    ("srh-hdr-len-eq", 0x0002, 1),
    ("srh-hdr-len-gt", 0x0004, 1),
    ("srh-hdr-len-lt", 0x0008, 1),
    ("srh-segs-left-eq", 0x0010, 2),
    ("srh-segs-left-gt", 0x0020, 2),
    ("srh-segs-left-lt", 0x0040, 2),
    ("srh-last-entry-eq", 0x0080, 3),
    ("srh-last-entry-gt", 0x0100, 3),
    ("srh-last-entry-lt", 0x0200, 3),
    ("srh-tag", 0x0400, 4),
    ("srh-psid", 0x0800, 5),
    ("srh-nsid", 0x1000, 6),
    ("srh-lsid", 0x2000, 7),
];

/// `addr[/plen]`: the address as given and the prefix's mask.
fn hostmask(s: &str, opt: &str) -> Result<(Raw<16>, Raw<16>)> {
    let (a, p) = match s.split_once('/') {
        Some((a, p)) => (a, num(p, 128, opt)? as u32),
        None => (s, 128),
    };
    let a: std::net::Ipv6Addr = a
        .parse()
        .map_err(|_| bad(format!("srh: host/network `{a}' not found")))?;
    let m = if p == 0 { 0 } else { u128::MAX << (128 - p) };
    Ok((Raw(a.octets()), Raw(m.to_be_bytes())))
}

impl Ext for Srh {
    fn name(&self) -> &'static str {
        "srh"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("srh-next-hdr", Arg::One, true),
            opt("srh-hdr-len-eq", Arg::One, true),
            opt("srh-hdr-len-gt", Arg::One, true),
            opt("srh-hdr-len-lt", Arg::One, true),
            opt("srh-segs-left-eq", Arg::One, true),
            opt("srh-segs-left-gt", Arg::One, true),
            opt("srh-segs-left-lt", Arg::One, true),
            opt("srh-last-entry-eq", Arg::One, true),
            opt("srh-last-entry-gt", Arg::One, true),
            opt("srh-last-entry-lt", Arg::One, true),
            opt("srh-tag", Arg::One, true),
            opt("srh-psid", Arg::One, true),
            opt("srh-nsid", Arg::One, true),
            opt("srh-lsid", Arg::One, true),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "srh")?;
        let mut s = Info::default();
        for g in given {
            let Some(&(name, bit, field)) = OPTS.iter().find(|o| o.0 == g.opt) else {
                continue;
            };
            let what = format!("srh --{name}");
            match field {
                0 => s.next_hdr = num(g.arg(), 255, &what)? as u8,
                1 => s.hdr_len = num(g.arg(), 255, &what)? as u8,
                2 => s.segs_left = num(g.arg(), 255, &what)? as u8,
                3 => s.last_entry = num(g.arg(), 255, &what)? as u8,
                4 => s.tag = num(g.arg(), 65535, &what)? as u16,
                5 => (s.psid_addr, s.psid_msk) = hostmask(g.arg(), &what)?,
                6 => (s.nsid_addr, s.nsid_msk) = hostmask(g.arg(), &what)?,
                _ => (s.lsid_addr, s.lsid_msk) = hostmask(g.arg(), &what)?,
            }
            s.mt_flags |= bit;
            if g.neg {
                s.mt_invflags |= bit;
            }
        }
        Ok(s.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump(info, false, out)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        out.push_str(" srh");
        dump(info, true, out)
    }
    canonical_via!(Info);
}

/// The options as `-S` prints them, or (`list`) as `-L` does: `next-hdr:!N`, ...,
/// `psid ! ADDR/LEN` (`srh1_print`).
fn dump(info: &[u8], list: bool, out: &mut String) -> Option<()> {
    let s = Info::decode(info).ok()?;
    if s.mt_flags & !Info::MASK != 0 || s.mt_invflags & !Info::MASK != 0 {
        return None;
    }
    for (name, bit, field) in OPTS {
        if s.mt_flags & bit == 0 {
            continue;
        }
        let inv = s.mt_invflags & bit != 0;
        if !list {
            bang(out, inv);
        }
        let v = match field {
            0 => s.next_hdr.to_string(),
            1 => s.hdr_len.to_string(),
            2 => s.segs_left.to_string(),
            3 => s.last_entry.to_string(),
            4 => s.tag.to_string(),
            _ => {
                let (a, m) = match field {
                    5 => (s.psid_addr, s.psid_msk),
                    6 => (s.nsid_addr, s.nsid_msk),
                    _ => (s.lsid_addr, s.lsid_msk),
                };
                let m = u128::from_be_bytes(m.0);
                if m.leading_ones() != m.count_ones() {
                    return None;
                }
                format!("{}/{}", std::net::Ipv6Addr::from(a.0), m.count_ones())
            }
        };
        let excl = if inv { "!" } else { "" };
        let word = name.strip_prefix("srh-").unwrap_or(name);
        if !list {
            let _ = write!(out, " --{name} {v}");
        } else if field < 5 {
            let _ = write!(out, " {word}:{excl}{v}");
        } else {
            let _ = write!(out, " {word} {excl} {v}");
        }
    }
    Some(())
}
