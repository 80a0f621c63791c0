//! `-m connlimit` (revision 1): `--connlimit-upto N` / `--connlimit-above N` (one of them,
//! either inverted), `--connlimit-mask PLEN`, `--connlimit-saddr`/`--connlimit-daddr`.
//! iptables-nft writes it through nft_compat. `-S` always names the mask and the address.

use super::*;
use crate::xt::connlimit::Connlimit as Info;
use crate::xt::layout::Raw;

pub(crate) struct Connlimit;

impl Ext for Connlimit {
    fn name(&self) -> &'static str {
        "connlimit"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("connlimit-upto", Arg::One, true),
            opt("connlimit-above", Arg::One, true),
            opt("connlimit-mask", Arg::One, false),
            opt("connlimit-saddr", Arg::None, false),
            opt("connlimit-daddr", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "connlimit")?;
        let mut c = Info {
            mask: Raw([0xff; 16]),
            ..Info::default()
        };
        let mut limit = None;
        for g in given {
            match g.opt {
                "connlimit-upto" | "connlimit-above" => {
                    limit = Some(g.opt);
                    c.limit = num(g.arg(), u64::from(u32::MAX), &format!("--{}", g.opt))? as u32;
                    if (g.opt == "connlimit-upto") != g.neg {
                        c.flags |= Info::INVERT;
                    }
                }
                "connlimit-mask" => {
                    let max = if ctx.family == Family::Ipv6 { 128 } else { 32 };
                    let p = num(g.arg(), max, "connlimit --connlimit-mask")?;
                    c.mask = Info::mask_of(p as u8);
                }
                _ => {
                    if g.opt == "connlimit-daddr" {
                        c.flags |= Info::DADDR;
                    }
                }
            }
        }
        // connlimit's own final check comes before libxtables' exclusions
        if limit.is_none() {
            return Err(bad(
                "You must specify \"--connlimit-above\" or \"--connlimit-upto\".",
            ));
        }
        exclusive("connlimit", given, &["connlimit-upto", "connlimit-above"])?;
        exclusive("connlimit", given, &["connlimit-saddr", "connlimit-daddr"])?;
        Ok(c.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let c = Info::decode(info).ok()?;
        if c.flags & !(Info::INVERT | Info::DADDR) != 0 {
            return None;
        }
        let _ = write!(
            out,
            " --connlimit-{} {} --connlimit-mask {} --connlimit-{}",
            if c.flags & Info::INVERT != 0 {
                "upto"
            } else {
                "above"
            },
            c.limit,
            c.mask_bits(if family == Family::Ipv6 { 4 } else { 1 }),
            if c.flags & Info::DADDR != 0 {
                "daddr"
            } else {
                "saddr"
            }
        );
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let c = Info::decode(info).ok()?;
        let _ = write!(
            out,
            " #conn {}/{} {} {}",
            if c.flags & Info::DADDR != 0 {
                "dst"
            } else {
                "src"
            },
            c.mask_bits(if family == Family::Ipv6 { 4 } else { 1 }),
            if c.flags & Info::INVERT != 0 {
                "<="
            } else {
                ">"
            },
            c.limit
        );
        Some(())
    }
    canonical_via!(Info);
}
