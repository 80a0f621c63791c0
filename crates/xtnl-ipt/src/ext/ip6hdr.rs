//! IPv6 extension-header matches: `-m ah` (IPv6: `--ahspi`, `--ahlen`, `--ahres`) and
//! `-m frag` (`--fragid`, `--fraglen`, `--fragres`, `--fragfirst`, `--fragmore`,
//! `--fraglast`). iptables-nft writes both through nft_compat.

use super::*;
use crate::xt::ip6hdr::{Ah6 as AhInfo, Frag as FragInfo, Mh as MhInfo, Opts as OptsInfo};

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

/// `-L`'s `NAME:[!]N` or `NAMEs:[!]A:B` (ah's spis, frag's ids), glued to what comes
/// before as iptables prints it; nothing for the whole range uninverted.
fn list_range(out: &mut String, name: &str, r: (u32, u32), inv: bool) {
    if r != (0, u32::MAX) || inv {
        let inv = if inv { "!" } else { "" };
        if r.0 == r.1 {
            let _ = write!(out, "{name}:{inv}{}", r.0);
        } else {
            let _ = write!(out, "{name}s:{inv}{}:{}", r.0, r.1);
        }
    }
}

fn excl(inv: bool) -> &'static str {
    if inv { "!" } else { "" }
}

pub(crate) struct Ah6;

impl Ext for Ah6 {
    fn name(&self) -> &'static str {
        "ah"
    }
    fn fams(&self) -> Fams {
        Fams::V6
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
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let a = AhInfo::decode(info).ok()?;
        out.push_str(" ah ");
        let inv_spi = a.invflags & AhInfo::INV_SPI != 0;
        list_range(out, "spi", (a.spi_min, a.spi_max), inv_spi);
        let inv_len = a.invflags & AhInfo::INV_LEN != 0;
        if a.hdrlen != 0 || inv_len {
            let _ = write!(out, "length:{}{}", excl(inv_len), a.hdrlen);
        }
        if a.hdrres != 0 {
            out.push_str(" reserved");
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
    fn fams(&self) -> Fams {
        Fams::V6
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
        exclusive("frag", given, &["fragmore", "fraglast"])?;
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
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let f = FragInfo::decode(info).ok()?;
        out.push_str(" frag ");
        let inv_ids = f.invflags & FragInfo::INV_IDS != 0;
        list_range(out, "id", (f.id_min, f.id_max), inv_ids);
        if f.flags & FragInfo::LEN != 0 {
            let inv = excl(f.invflags & FragInfo::INV_LEN != 0);
            let _ = write!(out, " length:{inv}{}", f.hdrlen);
        }
        for (bit, word) in [
            (FragInfo::RES, " reserved"),
            (FragInfo::FST, " first"),
            (FragInfo::MF, " more"),
            (FragInfo::NMF, " last"),
        ] {
            if f.flags & bit != 0 {
                out.push_str(word);
            }
        }
        Some(())
    }
    canonical_via!(FragInfo);
}

/// `-m hbh` / `-m dst`: `--{hbh,dst}-len N`, `--{hbh,dst}-opts TYPE[:LEN],...`.
pub(crate) struct OptsMatch {
    name: &'static str,
}

pub(crate) const HBH: OptsMatch = OptsMatch { name: "hbh" };
pub(crate) const DST: OptsMatch = OptsMatch { name: "dst" };

/// A number as `strtoul(s, 0)` with nothing after it, 0-255 (iptables keeps the low
/// byte of a larger one; xtnl refuses it rather than change it silently).
fn opt_num(s: &str, what: &str) -> Result<u16> {
    num(s, 255, what).map(|v| v as u16)
}

impl Ext for OptsMatch {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        if self.name == "hbh" {
            opts![
                opt("hbh-len", Arg::One, true),
                opt("hbh-opts", Arg::One, false)
            ]
        } else {
            opts![
                opt("dst-len", Arg::One, true),
                opt("dst-opts", Arg::One, false)
            ]
        }
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, self.name)?;
        let mut o = OptsInfo::default();
        for g in given {
            if g.opt.ends_with("-len") {
                o.hdrlen = num(g.arg(), u64::from(u32::MAX), &format!("--{}", g.opt))? as u32;
                o.flags |= OptsInfo::LEN;
                if g.neg {
                    o.invflags |= OptsInfo::INV_LEN;
                }
                continue;
            }
            let items: Vec<&str> = g.arg().split(',').collect();
            if items.len() > OptsInfo::NR {
                return Err(bad(format!(
                    "{}: too many options in `{}' (at most 16)",
                    self.name,
                    g.arg()
                )));
            }
            for (i, item) in items.iter().enumerate() {
                let v = match item.split_once(':') {
                    Some((t, l)) => {
                        if i == OptsInfo::NR - 1 {
                            return Err(bad("too many ports specified"));
                        }
                        let t = opt_num(t, "opt")?;
                        if t == 0 {
                            return Err(bad("PAD0 has not got length"));
                        }
                        t << 8 | opt_num(l, "length")?
                    }
                    None => opt_num(item, "opt")? << 8 | 0xff,
                };
                o.set_opt(i, v);
            }
            o.optsnr = items.len() as u8;
            o.flags |= OptsInfo::OPTS;
        }
        Ok(o.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let o = OptsInfo::decode(info).ok()?;
        if o.invflags & !1 != 0 || usize::from(o.optsnr) > OptsInfo::NR {
            return None;
        }
        if o.flags & OptsInfo::LEN != 0 {
            bang(out, o.invflags & OptsInfo::INV_LEN != 0);
            let _ = write!(out, " --{}-len {}", self.name, o.hdrlen);
        }
        if o.flags & OptsInfo::OPTS != 0 {
            let _ = write!(out, " --{}-opts", self.name);
        }
        for i in 0..usize::from(o.optsnr) {
            let v = o.opt(i);
            out.push(if i == 0 { ' ' } else { ',' });
            let _ = write!(out, "{}", v >> 8);
            if v & 0xff != 0xff {
                let _ = write!(out, ":{}", v & 0xff);
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let o = OptsInfo::decode(info).ok()?;
        let _ = write!(out, " {}", self.name);
        if o.flags & OptsInfo::LEN != 0 {
            let inv = excl(o.invflags & OptsInfo::INV_LEN != 0);
            let _ = write!(out, " length:{inv}{}", o.hdrlen);
        }
        if o.flags & OptsInfo::OPTS != 0 {
            out.push_str(" opts");
        }
        for i in 0..usize::from(o.optsnr).min(OptsInfo::NR) {
            let v = o.opt(i);
            out.push(if i == 0 { ' ' } else { ',' });
            let _ = write!(out, "{}", v >> 8);
            if v & 0xff != 0xff {
                let _ = write!(out, ":{}", v & 0xff);
            }
        }
        Some(())
    }
    canonical_via!(OptsInfo);
}

/// `-m mh [!] --mh-type TYPE[:TYPE]` (`-p mobility-header`).
pub(crate) struct Mh;

const MH_NAMES: [(&str, u8); 16] = [
    ("binding-refresh-request", 0),
    ("brr", 0),
    ("home-test-init", 1),
    ("hoti", 1),
    ("careof-test-init", 2),
    ("coti", 2),
    ("home-test", 3),
    ("hot", 3),
    ("careof-test", 4),
    ("cot", 4),
    ("binding-update", 5),
    ("bu", 5),
    ("binding-acknowledgement", 6),
    ("ba", 6),
    ("binding-error", 7),
    ("be", 7),
];

/// A type by (a prefix of) its name, as iptables' `name_to_type`, or a number.
fn mh_type(s: &str) -> Result<u8> {
    let mut found: Option<(&str, u8)> = None;
    for &(n, t) in &MH_NAMES {
        if n.len() >= s.len()
            && n[..s.len()].eq_ignore_ascii_case(s)
            && (found.is_none() || n.len() == s.len())
        {
            found = Some((n, t));
        }
    }
    match found {
        Some((_, t)) => Ok(t),
        None => num(s, 255, "mh --mh-type")
            .map(|v| v as u8)
            .map_err(|_| bad(format!("Invalid MH type `{s}'"))),
    }
}

impl Ext for Mh {
    fn name(&self) -> &'static str {
        "mh"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("mh-type", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "mh")?;
        if ctx.proto() != Some(crate::model::L4Proto::from_number(135)) {
            return Err(bad("-m mh needs `-p mobility-header'"));
        }
        let mut m = MhInfo {
            type_max: 0xff,
            ..MhInfo::default()
        };
        if let Some(g) = given.first() {
            let s = g.arg();
            (m.type_min, m.type_max) = match s.split_once(':') {
                None => {
                    let t = mh_type(s)?;
                    (t, t)
                }
                Some((a, b)) => (
                    if a.is_empty() { 0 } else { mh_type(a)? },
                    if b.is_empty() { 0xff } else { mh_type(b)? },
                ),
            };
            if m.type_min > m.type_max {
                return Err(bad("Invalid MH type range (min > max)"));
            }
            if g.neg {
                m.invflags = 1;
            }
        }
        Ok(m.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let m = MhInfo::decode(info).ok()?;
        if m.invflags & !1 != 0 {
            return None;
        }
        if (m.type_min, m.type_max) == (0, 0xff) {
            return Some(());
        }
        bang(out, m.invflags != 0);
        if m.type_min != m.type_max {
            let _ = write!(out, " --mh-type {}:{}", m.type_min, m.type_max);
        } else {
            let _ = write!(out, " --mh-type {}", m.type_min);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let m = MhInfo::decode(info).ok()?;
        let inv = m.invflags & 1 != 0;
        out.push_str(" mh");
        let name = |t: u8| match MH_NAMES.iter().find(|n| n.1 == t).filter(|_| !numeric) {
            Some((n, _)) => n.to_string(),
            None => t.to_string(),
        };
        if (m.type_min, m.type_max) != (0, 0xff) || inv {
            let _ = write!(out, " {}{}", excl(inv), name(m.type_min));
            if m.type_min != m.type_max {
                let _ = write!(out, ":{}", name(m.type_max));
            }
        }
        Some(())
    }
    canonical_via!(MhInfo);
}
