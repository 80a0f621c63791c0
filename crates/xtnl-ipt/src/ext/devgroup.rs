//! `-m devgroup` (`--src-group`, `--dst-group`) and `-m realm` (IPv4, `--realm`), rev 0,
//! through nft_compat as iptables-nft writes them. Both take `value[/mask]` or a name from
//! iproute2's tables (/etc/iproute2/group, /etc/iproute2/rt_realms), and print a value
//! under an all-ones mask by its name there, as iptables' `xtables_print_val_mask` does
//! (`-S` too; `-L -n` prints numbers).

use super::*;
use crate::xt::small::{Devgroup as DInfo, Realm as RInfo};

pub(crate) struct Devgroup;
pub(crate) struct Realm;

const GROUPS: &str = "/etc/iproute2/group";
const REALMS: &str = "/etc/iproute2/rt_realms";

/// iproute2's `ID NAME` lines (decimal or `0x` hex ids up to 255, `#` comments), read as
/// `xtables_lmap_init` reads them.
fn lmap(file: &str) -> Vec<(u32, String)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let mut w = l.split_whitespace();
            let id = w.next()?;
            let id = match id.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok()?,
                None => id.parse::<u32>().ok()?,
            };
            let name = w.next().filter(|n| !n.starts_with('#'))?;
            (id <= 255).then(|| (id, name.to_string()))
        })
        .collect()
}

/// `value[/mask]` or a name of `file` (`xtables_parse_val_mask`).
fn val_mask(s: &str, file: &str, ext: &str, opt: &str) -> Result<(u32, u32)> {
    let word = |w: &str| num(w, u64::from(u32::MAX), ext).ok().map(|n| n as u32);
    let (v, m) = match s.split_once('/') {
        Some((v, m)) => (word(v), Some(word(m))),
        None => (word(s), None),
    };
    match (v, m) {
        (Some(v), None) => return Ok((v, u32::MAX)),
        (Some(v), Some(Some(m))) => return Ok((v, m)),
        (Some(_), Some(None)) => {
            return Err(bad(format!(
                "{ext}: bad integer value for option \"--{opt}\", or out of range."
            )));
        }
        _ => {}
    }
    lmap(file)
        .into_iter()
        .find(|(_, n)| n == s)
        .map(|(id, _)| (id, u32::MAX))
        .ok_or_else(|| {
            bad(format!(
                "{ext}: could not map name {s} to an integer value for option \"--{opt}\"."
            ))
        })
}

/// ` 0xV/0xM`, or the name (unless `numeric`), or ` 0xV` (`xtables_print_val_mask`).
fn print_val_mask(out: &mut String, v: u32, m: u32, file: Option<&str>) {
    if m != u32::MAX {
        let _ = write!(out, " 0x{v:x}/0x{m:x}");
        return;
    }
    match file.and_then(|f| lmap(f).into_iter().find(|(id, _)| *id == v)) {
        Some((_, name)) => {
            let _ = write!(out, " {name}");
        }
        None => {
            let _ = write!(out, " 0x{v:x}");
        }
    }
}

const MATCH_SRC: u32 = 1;
const INVERT_SRC: u32 = 2;
const MATCH_DST: u32 = 4;
const INVERT_DST: u32 = 8;

fn devgroup_show(info: &[u8], p: &str, numeric: bool, out: &mut String) -> Option<()> {
    let d = DInfo::decode(info).ok()?;
    if d.flags & !0xf != 0 {
        return None;
    }
    let names = (!numeric).then_some(GROUPS);
    for (on, inv, word, v, m) in [
        (MATCH_SRC, INVERT_SRC, "src-group", d.src_group, d.src_mask),
        (MATCH_DST, INVERT_DST, "dst-group", d.dst_group, d.dst_mask),
    ] {
        if d.flags & on != 0 {
            bang(out, d.flags & inv != 0);
            let _ = write!(out, " {p}{word}");
            print_val_mask(out, v, m, names);
        }
    }
    Some(())
}

impl Ext for Devgroup {
    fn name(&self) -> &'static str {
        "devgroup"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("src-group", Arg::One, true),
            opt("dst-group", Arg::One, true)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "devgroup")?;
        if given.is_empty() {
            return Err(bad(
                "devgroup match: You must specify either '--src-group' or '--dst-group'",
            ));
        }
        let mut d = DInfo::default();
        for g in given {
            let (v, m) = val_mask(g.arg(), GROUPS, "devgroup", g.opt)?;
            if g.opt == "src-group" {
                (d.src_group, d.src_mask) = (v, m);
                d.flags |= MATCH_SRC | if g.neg { INVERT_SRC } else { 0 };
            } else {
                (d.dst_group, d.dst_mask) = (v, m);
                d.flags |= MATCH_DST | if g.neg { INVERT_DST } else { 0 };
            }
        }
        Ok(d.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        devgroup_show(info, "--", false, out)
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        devgroup_show(info, "", numeric, out)
    }
    canonical_via!(DInfo);
}

impl Ext for Realm {
    fn name(&self) -> &'static str {
        "realm"
    }
    fn fams(&self) -> Fams {
        Fams::V4
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("realm", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "realm")?;
        let g = given
            .first()
            .ok_or_else(|| bad("realm: option \"--realm\" must be specified"))?;
        let (id, mask) = val_mask(g.arg(), REALMS, "realm", "realm")?;
        Ok(RInfo {
            id,
            mask,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let r = RInfo::decode(info).ok()?;
        if r.invert > 1 {
            return None;
        }
        bang(out, r.invert != 0);
        out.push_str(" --realm");
        print_val_mask(out, r.id, r.mask, Some(REALMS));
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let r = RInfo::decode(info).ok()?;
        bang(out, r.invert != 0);
        out.push_str(" realm");
        print_val_mask(out, r.id, r.mask, (!numeric).then_some(REALMS));
        Some(())
    }
    canonical_via!(RInfo);
}
