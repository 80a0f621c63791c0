//! IPv6 extension-header matches: `-m ah` (IPv6: `--ahspi`, `--ahlen`, `--ahres`) and
//! `-m frag` (`--fragid`, `--fraglen`, `--fragres`, `--fragfirst`, `--fragmore`,
//! `--fraglast`). iptables-nft writes both through nft_compat.

use super::*;
use crate::xt::ip6hdr::{Ah6 as AhInfo, Frag as FragInfo};

/// A u32 range as XTTYPE_UINT32RC reads it (`a`, `a:b`, `a:`, `:b`).
fn range32(s: &str, what: &str) -> Result<(u32, u32)> {
    let (a, b) = super::conntrack::range(s, u64::from(u32::MAX), what)?;
    Ok((a as u32, b as u32))
}

fn save_range(out: &mut String, opt: &str, r: (u32, u32), inv: bool) {
    if r != (0, u32::MAX) {
        bang(out, inv);
        if r.0 != r.1 {
            let _ = write!(out, " --{opt} {}:{}", r.0, r.1);
        } else {
            let _ = write!(out, " --{opt} {}", r.0);
        }
    }
}

pub(crate) struct Ah6;

impl Ext for Ah6 {
    fn name(&self) -> &'static str {
        "ah"
    }
    fn is_target(&self) -> bool {
        false
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn revision(&self) -> u32 {
        0
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ahspi", Arg::One, true),
            opt("ahlen", Arg::One, true),
            opt("ahres", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ah")?;
        let mut a = AhInfo {
            spi_max: u32::MAX,
            ..AhInfo::default()
        };
        for g in given {
            match g.opt {
                "ahspi" => {
                    (a.spi_min, a.spi_max) = range32(g.arg(), "ah --ahspi")?;
                    if g.neg {
                        a.invflags |= AhInfo::INV_SPI;
                    }
                }
                "ahlen" => {
                    a.hdrlen = num(g.arg(), u64::from(u32::MAX), "ah --ahlen")? as u32;
                    if g.neg {
                        a.invflags |= AhInfo::INV_LEN;
                    }
                }
                _ => a.hdrres = 1,
            }
        }
        Ok(a.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let a = AhInfo::decode(info).ok()?;
        if a.invflags & !3 != 0 {
            return None;
        }
        save_range(
            out,
            "ahspi",
            (a.spi_min, a.spi_max),
            a.invflags & AhInfo::INV_SPI != 0,
        );
        if a.hdrlen != 0 || a.invflags & AhInfo::INV_LEN != 0 {
            bang(out, a.invflags & AhInfo::INV_LEN != 0);
            let _ = write!(out, " --ahlen {}", a.hdrlen);
        }
        if a.hdrres != 0 {
            out.push_str(" --ahres");
        }
        Some(())
    }
    canonical_via!(AhInfo);
}

pub(crate) struct Frag;

impl Ext for Frag {
    fn name(&self) -> &'static str {
        "frag"
    }
    fn is_target(&self) -> bool {
        false
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn revision(&self) -> u32 {
        0
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("fragid", Arg::One, true),
            opt("fraglen", Arg::One, true),
            opt("fragres", Arg::None, false),
            opt("fragfirst", Arg::None, false),
            opt("fragmore", Arg::None, false),
            opt("fraglast", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "frag")?;
        let mut f = FragInfo {
            id_max: u32::MAX,
            ..FragInfo::default()
        };
        for g in given {
            match g.opt {
                "fragid" => {
                    (f.id_min, f.id_max) = range32(g.arg(), "frag --fragid")?;
                    f.flags |= FragInfo::IDS;
                    if g.neg {
                        f.invflags |= FragInfo::INV_IDS;
                    }
                }
                "fraglen" => {
                    f.hdrlen = num(g.arg(), u64::from(u32::MAX), "frag --fraglen")? as u32;
                    f.flags |= FragInfo::LEN;
                    if g.neg {
                        f.invflags |= FragInfo::INV_LEN;
                    }
                }
                "fragres" => f.flags |= FragInfo::RES,
                "fragfirst" => f.flags |= FragInfo::FST,
                "fragmore" => f.flags |= FragInfo::MF,
                _ => f.flags |= FragInfo::NMF,
            }
        }
        if f.flags & FragInfo::MF != 0 && f.flags & FragInfo::NMF != 0 {
            return Err(bad(
                "frag: option \"--fraglast\" cannot be used together with \"--fragmore\"",
            ));
        }
        Ok(f.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let f = FragInfo::decode(info).ok()?;
        if f.invflags & !3 != 0 || f.flags & !0x3f != 0 {
            return None;
        }
        save_range(
            out,
            "fragid",
            (f.id_min, f.id_max),
            f.invflags & FragInfo::INV_IDS != 0,
        );
        if f.flags & FragInfo::LEN != 0 {
            bang(out, f.invflags & FragInfo::INV_LEN != 0);
            let _ = write!(out, " --fraglen {}", f.hdrlen);
        }
        for (bit, opt) in [
            (FragInfo::RES, " --fragres"),
            (FragInfo::FST, " --fragfirst"),
            (FragInfo::MF, " --fragmore"),
            (FragInfo::NMF, " --fraglast"),
        ] {
            if f.flags & bit != 0 {
                out.push_str(opt);
            }
        }
        Some(())
    }
    canonical_via!(FragInfo);
}
