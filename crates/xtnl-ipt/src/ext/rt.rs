//! `-m rt` (IPv6 routing header; revision 0): `[!] --rt-type N`, `[!] --rt-segsleft
//! N[:M]`, `[!] --rt-len N`, `--rt-0-res`, `--rt-0-addrs A[,A...]` (up to 16),
//! `--rt-0-not-strict`. The payload of [`crate::xt::rt`], through nft_compat in
//! iptables-nft. The type-0 options need `--rt-type 0` before them, as in iptables.

use std::net::Ipv6Addr;

use super::*;
use crate::xt::rt::RtMatch as Info;

pub(crate) struct Rt;

impl Ext for Rt {
    fn name(&self) -> &'static str {
        "rt"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("rt-type", Arg::One, true),
            opt("rt-segsleft", Arg::One, true),
            opt("rt-len", Arg::One, true),
            opt("rt-0-res", Arg::None, false),
            opt("rt-0-addrs", Arg::One, false),
            opt("rt-0-not-strict", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "rt")?;
        let mut r = Info {
            segs_max: u32::MAX,
            ..Info::default()
        };
        let u32max = u64::from(u32::MAX);
        for g in given {
            // Whether a `--rt-type 0` (not inverted) came before this option.
            let type0 =
                r.flags & Info::TYP != 0 && r.rt_type == 0 && r.invflags & Info::INV_TYP == 0;
            match g.opt {
                "rt-type" => {
                    r.rt_type = num(g.arg(), u32max, "rt --rt-type")? as u32;
                    r.flags |= Info::TYP;
                    if g.neg {
                        r.invflags |= Info::INV_TYP;
                    }
                }
                "rt-segsleft" => {
                    let (a, b) = super::conntrack::range(g.arg(), u32max, "rt --rt-segsleft")?;
                    (r.segs_min, r.segs_max) = (a as u32, b as u32);
                    r.flags |= Info::SGS;
                    if g.neg {
                        r.invflags |= Info::INV_SGS;
                    }
                }
                "rt-len" => {
                    r.hdrlen = num(g.arg(), u32max, "rt --rt-len")? as u32;
                    r.flags |= Info::LEN;
                    if g.neg {
                        r.invflags |= Info::INV_LEN;
                    }
                }
                "rt-0-res" | "rt-0-addrs" if !type0 => {
                    return Err(bad(format!("`--rt-type 0' required before `--{}'", g.opt)));
                }
                "rt-0-res" => r.flags |= Info::RES,
                "rt-0-addrs" => {
                    let list: Vec<&str> = g.arg().split(',').collect();
                    if list.len() > Info::HOPS {
                        return Err(bad("too many addresses specified"));
                    }
                    for (i, a) in list.iter().enumerate() {
                        let a: Ipv6Addr =
                            a.parse().map_err(|_| bad(format!("bad address: {a}")))?;
                        r.addrs.0[i * 16..i * 16 + 16].copy_from_slice(&a.octets());
                    }
                    r.addrnr = list.len() as u8;
                    r.flags |= Info::FST;
                }
                _ => {
                    if r.flags & Info::FST == 0 {
                        return Err(bad("`--rt-0-addr ...' required before `--rt-0-not-strict'"));
                    }
                    r.flags |= Info::FST_NSTRICT;
                }
            }
        }
        Ok(r.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let r = Info::decode(info).ok()?;
        if r.invflags & !7 != 0 || r.flags & !0x3f != 0 || usize::from(r.addrnr) > Info::HOPS {
            return None;
        }
        if r.flags & Info::TYP != 0 {
            bang(out, r.invflags & Info::INV_TYP != 0);
            let _ = write!(out, " --rt-type {}", r.rt_type);
        }
        if (r.segs_min, r.segs_max) != (0, u32::MAX) {
            bang(out, r.invflags & Info::INV_SGS != 0);
            if r.segs_min != r.segs_max {
                let _ = write!(out, " --rt-segsleft {}:{}", r.segs_min, r.segs_max);
            } else {
                let _ = write!(out, " --rt-segsleft {}", r.segs_min);
            }
        }
        if r.flags & Info::LEN != 0 {
            bang(out, r.invflags & Info::INV_LEN != 0);
            let _ = write!(out, " --rt-len {}", r.hdrlen);
        }
        if r.flags & Info::RES != 0 {
            out.push_str(" --rt-0-res");
        }
        if r.flags & Info::FST != 0 {
            out.push_str(" --rt-0-addrs");
        }
        for i in 0..usize::from(r.addrnr) {
            let mut a = [0u8; 16];
            a.copy_from_slice(&r.addrs.0[i * 16..i * 16 + 16]);
            out.push(if i == 0 { ' ' } else { ',' });
            let _ = write!(out, "{}", Ipv6Addr::from(a));
        }
        if r.flags & Info::FST_NSTRICT != 0 {
            out.push_str(" --rt-0-not-strict");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let r = Info::decode(info).ok()?;
        if r.invflags & !7 != 0 || r.flags & !0x3f != 0 || usize::from(r.addrnr) > Info::HOPS {
            return None;
        }
        let inv = |b: u8| if r.invflags & b != 0 { "!" } else { "" };
        out.push_str(" rt");
        if r.flags & Info::TYP != 0 {
            // iptables prints the type as a signed number.
            let _ = write!(out, " type:{}{}", inv(Info::INV_TYP), r.rt_type as i32);
        }
        let sgs = inv(Info::INV_SGS);
        if (r.segs_min, r.segs_max) != (0, u32::MAX) || !sgs.is_empty() {
            if r.segs_min == r.segs_max {
                let _ = write!(out, " segsleft:{sgs}{}", r.segs_min);
            } else {
                let _ = write!(out, " segslefts:{sgs}{}:{}", r.segs_min, r.segs_max);
            }
        }
        if r.flags & Info::LEN != 0 {
            let _ = write!(out, " length:{}{}", inv(Info::INV_LEN), r.hdrlen);
        }
        if r.flags & Info::RES != 0 {
            out.push_str(" reserved");
        }
        if r.flags & Info::FST != 0 {
            out.push_str(" 0-addrs");
        }
        for i in 0..usize::from(r.addrnr) {
            let mut a = [0u8; 16];
            a.copy_from_slice(&r.addrs.0[i * 16..i * 16 + 16]);
            out.push(if i == 0 { ' ' } else { ',' });
            let _ = write!(out, "{}", Ipv6Addr::from(a));
        }
        if r.flags & Info::FST_NSTRICT != 0 {
            out.push_str(" 0-not-strict");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut r = Info::decode(info).ok()?;
        // The slots past the count are never read.
        let n = usize::from(r.addrnr).min(Info::HOPS);
        r.addrs.0[n * 16..].fill(0);
        Some(r.encode())
    }
}
