//! `-m connmark` rev 1 and `-j CONNMARK` rev 2.

use super::mark::print_markmask;
use super::*;
use crate::xt::connmark::{
    CONNMARK_RESTORE, CONNMARK_SAVE, CONNMARK_SET, ConnmarkMatch as MInfo, ConnmarkTarget as TInfo,
};

pub(crate) struct Connmark;
pub(crate) struct ConnmarkTarget;

impl Ext for Connmark {
    fn name(&self) -> &'static str {
        "connmark"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("mark", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "connmark")?;
        let g = given
            .first()
            .ok_or_else(|| bad("connmark: option \"--mark\" must be specified"))?;
        let (mark, mask) = markmask(g.arg(), "connmark")?;
        Ok(MInfo {
            mark,
            mask,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let m = MInfo::decode(info).ok()?;
        if m.invert > 1 {
            return None;
        }
        bang(out, m.invert != 0);
        out.push_str(" --mark");
        print_markmask(out, m.mark, m.mask);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let m = MInfo::decode(info).ok()?;
        out.push_str(if m.invert != 0 {
            " connmark match !"
        } else {
            " connmark match "
        });
        print_markmask(out, m.mark, m.mask);
        Some(())
    }
    canonical_via!(MInfo);
}

const OPS: [&str; 7] = [
    "set-xmark",
    "set-mark",
    "and-mark",
    "or-mark",
    "xor-mark",
    "save-mark",
    "restore-mark",
];

impl Ext for ConnmarkTarget {
    fn name(&self) -> &'static str {
        "CONNMARK"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        2
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("set-xmark", Arg::One, false),
            opt("set-mark", Arg::One, false),
            opt("and-mark", Arg::One, false),
            opt("or-mark", Arg::One, false),
            opt("xor-mark", Arg::One, false),
            opt("save-mark", Arg::None, false),
            opt("restore-mark", Arg::None, false),
            opt("left-shift-mark", Arg::One, false),
            opt("right-shift-mark", Arg::One, false),
            opt("ctmask", Arg::One, false),
            opt("nfmask", Arg::One, false),
            opt("mask", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "CONNMARK")?;
        let ops = given.iter().filter(|g| OPS.contains(&g.opt)).count();
        if ops == 0 {
            return Err(bad("CONNMARK target: No operation specified"));
        }
        if ops > 1 {
            return Err(bad(
                "CONNMARK: only one of --set-xmark, --set-mark, --and-mark, --or-mark, --xor-mark, --save-mark, --restore-mark",
            ));
        }
        if get(given, "mask").is_some()
            && (get(given, "ctmask").is_some() || get(given, "nfmask").is_some())
        {
            return Err(bad(
                "CONNMARK: --mask cannot be used with --ctmask or --nfmask",
            ));
        }
        let mut t = TInfo {
            ctmask: u32::MAX,
            nfmask: u32::MAX,
            ..Default::default()
        };
        let word = |s: &str| num(s, u64::from(u32::MAX), "CONNMARK").map(|n| n as u32);
        for g in given {
            match g.opt {
                "set-xmark" => (t.ctmark, t.ctmask) = markmask(g.arg(), "CONNMARK")?,
                "set-mark" => {
                    let (v, m) = markmask(g.arg(), "CONNMARK")?;
                    (t.ctmark, t.ctmask) = (v, v | m);
                }
                "and-mark" => (t.ctmark, t.ctmask) = (0, !word(g.arg())?),
                "or-mark" => {
                    let v = word(g.arg())?;
                    (t.ctmark, t.ctmask) = (v, v);
                }
                "xor-mark" => (t.ctmark, t.ctmask) = (word(g.arg())?, 0),
                "save-mark" => t.mode = CONNMARK_SAVE,
                "restore-mark" => t.mode = CONNMARK_RESTORE,
                "left-shift-mark" | "right-shift-mark" => {
                    t.shift_dir = u8::from(g.opt == "right-shift-mark");
                    t.shift_bits = num(g.arg(), 32, "CONNMARK shift")? as u8;
                }
                "ctmask" => t.ctmask = word(g.arg())?,
                "nfmask" => t.nfmask = word(g.arg())?,
                _ => {
                    let m = word(g.arg())?;
                    (t.ctmask, t.nfmask) = (m, m);
                }
            }
        }
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = TInfo::decode(info).ok()?;
        match t.mode {
            CONNMARK_SET => {
                let _ = write!(out, " --set-xmark 0x{:x}/0x{:x}", t.ctmark, t.ctmask);
            }
            CONNMARK_SAVE | CONNMARK_RESTORE => {
                let w = if t.mode == CONNMARK_SAVE {
                    "save-mark"
                } else {
                    "restore-mark"
                };
                let _ = write!(
                    out,
                    " --{w} --nfmask 0x{:x} --ctmask 0x{:x}",
                    t.nfmask, t.ctmask
                );
            }
            _ => return None,
        }
        if t.shift_dir > 1 {
            return None;
        }
        if t.shift_bits != 0 {
            let op = if t.shift_dir == 0 {
                "left-shift-mark"
            } else {
                "right-shift-mark"
            };
            let _ = write!(out, " --{op} {}", t.shift_bits);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let t = TInfo::decode(info).ok()?;
        let (nf, ct) = (t.nfmask, t.ctmask);
        match t.mode {
            CONNMARK_SET => out.push_str(&super::mark::mark_op("CONNMARK", t.ctmark, ct)),
            CONNMARK_SAVE if nf == u32::MAX && ct == u32::MAX => out.push_str(" CONNMARK save"),
            CONNMARK_SAVE if nf == ct => {
                let _ = write!(out, " CONNMARK save mask 0x{nf:x}");
            }
            CONNMARK_SAVE => {
                let _ = write!(out, " CONNMARK save nfmask 0x{nf:x} ctmask ~0x{ct:x}");
            }
            CONNMARK_RESTORE if nf == u32::MAX && ct == u32::MAX => {
                out.push_str(" CONNMARK restore")
            }
            CONNMARK_RESTORE if nf == ct => {
                let _ = write!(out, " CONNMARK restore mask 0x{ct:x}");
            }
            CONNMARK_RESTORE => {
                let _ = write!(out, " CONNMARK restore ctmask 0x{ct:x} nfmask ~0x{nf:x}");
            }
            _ => return None,
        }
        if t.shift_bits != 0 {
            let op = if t.shift_dir == 0 {
                "left-shift-mark"
            } else {
                "right-shift-mark"
            };
            let _ = write!(out, " {op} {}", t.shift_bits);
        }
        Some(())
    }
    canonical_via!(TInfo);
}
