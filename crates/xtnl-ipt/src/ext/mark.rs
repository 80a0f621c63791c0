//! `-m mark` (written natively by iptables-nft, see [`super::native`]) and `-j MARK`.

use super::*;
use crate::xt::mark::{MarkMatch, MarkTarget as Tg};

pub(crate) struct Mark;

/// How `-L` names a `(value, mask)` mark change (`MARK`'s and `CONNMARK`'s print): `and`,
/// `or`, `xor`, `set` or `xset`.
pub(crate) fn mark_op(who: &str, mark: u32, mask: u32) -> String {
    if mark == 0 {
        format!(" {who} and 0x{:x}", !mask)
    } else if mark == mask {
        format!(" {who} or 0x{mark:x}")
    } else if mask == 0 {
        format!(" {who} xor 0x{mark:x}")
    } else if mask == u32::MAX {
        format!(" {who} set 0x{mark:x}")
    } else {
        format!(" {who} xset 0x{mark:x}/0x{mask:x}")
    }
}

/// `0x%x[/0x%x]`, the mask left out when it is all ones.
pub(crate) fn print_markmask(out: &mut String, mark: u32, mask: u32) {
    if mask == u32::MAX {
        let _ = write!(out, " 0x{mark:x}");
    } else {
        let _ = write!(out, " 0x{mark:x}/0x{mask:x}");
    }
}

impl Ext for Mark {
    fn name(&self) -> &'static str {
        "mark"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("mark", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "mark")?;
        let g =
            get(given, "mark").ok_or_else(|| bad("mark: option \"--mark\" must be specified"))?;
        let (mark, mask) = markmask(g.arg(), "mark")?;
        Ok(MarkMatch {
            mark,
            mask,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let m = MarkMatch::decode(info).ok()?;
        if m.invert > 1 {
            return None;
        }
        bang(out, m.invert != 0);
        out.push_str(" --mark");
        print_markmask(out, m.mark, m.mask);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let m = MarkMatch::decode(info).ok()?;
        out.push_str(" mark match");
        bang(out, m.invert != 0);
        print_markmask(out, m.mark, m.mask);
        Some(())
    }
    canonical_via!(MarkMatch);
}

pub(crate) struct MarkTarget;

impl Ext for MarkTarget {
    fn name(&self) -> &'static str {
        "MARK"
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
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        exclusive(
            "MARK",
            given,
            &["set-xmark", "set-mark", "and-mark", "or-mark", "xor-mark"],
        )?;
        if given.len() > 1 {
            return Err(bad(
                "MARK: --set-xmark, --set-mark, --and-mark, --or-mark and --xor-mark cannot be used together",
            ));
        }
        let g = given.first().ok_or_else(|| {
            bad("MARK: One of the --set-xmark, --{and,or,xor,set}-mark options is required")
        })?;
        let word = |s: &str| num(s, u64::from(u32::MAX), "MARK").map(|n| n as u32);
        let (mark, mask) = match g.opt {
            "set-xmark" => markmask(g.arg(), "MARK")?,
            "set-mark" => {
                let (v, m) = markmask(g.arg(), "MARK")?;
                (v, v | m)
            }
            "and-mark" => (0, !word(g.arg())?),
            "or-mark" => {
                let v = word(g.arg())?;
                (v, v)
            }
            _ => (word(g.arg())?, 0),
        };
        Ok(Tg { mark, mask }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = Tg::decode(info).ok()?;
        let _ = write!(out, " --set-xmark 0x{:x}/0x{:x}", t.mark, t.mask);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let t = Tg::decode(info).ok()?;
        out.push_str(&mark_op("MARK", t.mark, t.mask));
        Some(())
    }
    canonical_via!(Tg);
}
