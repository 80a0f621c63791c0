//! Small matches: `esp`, `ah` (IPv4), `helper`, `cpu`, `quota`.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::small::{Cpu as CpuInfo, Helper as HelperInfo, Quota as QuotaInfo, Spi};

/// `-m esp --espspi` / `-m ah --ahspi`: an SPI range.
pub(crate) struct SpiMatch {
    name: &'static str,
    fams: Fams,
}

pub(crate) const ESP: SpiMatch = SpiMatch {
    name: "esp",
    fams: Fams::Both,
};
pub(crate) const AH: SpiMatch = SpiMatch {
    name: "ah",
    fams: Fams::V4,
};

impl Ext for SpiMatch {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fams(&self) -> Fams {
        self.fams
    }
    fn options(&self) -> &'static [Opt] {
        if self.name == "esp" {
            opts![opt("espspi", Arg::One, true)]
        } else {
            opts![opt("ahspi", Arg::One, true)]
        }
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, self.name)?;
        let mut s = Spi {
            spi_min: 0,
            spi_max: u32::MAX,
            invflags: 0,
        };
        if let Some(g) = given.first() {
            let (a, b) = super::conntrack::range(g.arg(), u64::from(u32::MAX), self.name)?;
            (s.spi_min, s.spi_max) = (a as u32, b as u32);
            if g.neg {
                s.invflags = 1;
            }
        }
        Ok(s.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let s = Spi::decode(info).ok()?;
        if s.invflags > 1 {
            return None;
        }
        if !(s.spi_min == 0 && s.spi_max == u32::MAX) {
            bang(out, s.invflags != 0);
            let _ = write!(out, " --{}spi ", self.name);
            if s.spi_min != s.spi_max {
                let _ = write!(out, "{}:{}", s.spi_min, s.spi_max);
            } else {
                let _ = write!(out, "{}", s.spi_min);
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let s = Spi::decode(info).ok()?;
        // esp prints ` esp spi:N`; IPv4 ah ` ah spi:N`, its space before the spis (and
        // left alone when there are none).
        out.push_str(if self.name == "esp" { " esp" } else { " ah " });
        if s.spi_min != 0 || s.spi_max != u32::MAX || s.invflags != 0 {
            let inv = if s.invflags != 0 { "!" } else { "" };
            if self.name == "esp" {
                out.push(' ');
            }
            if s.spi_min == s.spi_max {
                let _ = write!(out, "spi:{inv}{}", s.spi_min);
            } else {
                let _ = write!(out, "spis:{inv}{}:{}", s.spi_min, s.spi_max);
            }
        }
        Some(())
    }
    canonical_via!(Spi);
}

pub(crate) struct Helper;

impl Ext for Helper {
    fn name(&self) -> &'static str {
        "helper"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("helper", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "helper")?;
        let g = given
            .first()
            .ok_or_else(|| bad("helper: option \"--helper\" must be specified"))?;
        Ok(HelperInfo {
            invert: i32::from(g.neg),
            name: Raw::from_str(g.arg(), "helper --helper").map_err(wire)?,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let h = HelperInfo::decode(info).ok()?;
        if !(0..=1).contains(&h.invert) {
            return None;
        }
        bang(out, h.invert != 0);
        out.push_str(" --helper");
        crate::ipt::print::save_string(out, &h.name.text());
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let h = HelperInfo::decode(info).ok()?;
        let inv = if h.invert != 0 { "! " } else { "" };
        let _ = write!(out, " helper match {inv}\"{}\"", h.name.text());
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut h = HelperInfo::decode(info).ok()?;
        h.name = h.name.canonical_text();
        Some(h.encode())
    }
}

pub(crate) struct Cpu;

impl Ext for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("cpu", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "cpu")?;
        let g = given
            .first()
            .ok_or_else(|| bad("cpu: option \"--cpu\" must be specified"))?;
        Ok(CpuInfo {
            cpu: num(g.arg(), u64::from(u32::MAX), "cpu")? as u32,
            invert: u32::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = CpuInfo::decode(info).ok()?;
        if c.invert > 1 {
            return None;
        }
        bang(out, c.invert != 0);
        let _ = write!(out, " --cpu {}", c.cpu);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let c = CpuInfo::decode(info).ok()?;
        let inv = if c.invert != 0 { "! " } else { "" };
        let _ = write!(out, " cpu {inv}{}", c.cpu);
        Some(())
    }
    canonical_via!(CpuInfo);
}

pub(crate) struct Quota;

impl Ext for Quota {
    fn name(&self) -> &'static str {
        "quota"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("quota", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "quota")?;
        let g = given
            .first()
            .ok_or_else(|| bad("quota: option \"--quota\" must be specified"))?;
        Ok(QuotaInfo {
            flags: u32::from(g.neg),
            quota: num(g.arg(), u64::MAX, "quota")?,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let q = QuotaInfo::decode(info).ok()?;
        if q.flags > 1 {
            return None;
        }
        bang(out, q.flags != 0);
        let _ = write!(out, " --quota {}", q.quota);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        // iptables' print leaves the inversion out.
        let q = QuotaInfo::decode(info).ok()?;
        let _ = write!(out, " quota: {} bytes", q.quota);
        Some(())
    }
    canonical_via!(QuotaInfo);
}

pub(crate) struct Connbytes;

const CB_MODES: [&str; 3] = ["packets", "bytes", "avgpkt"];
const CB_DIRS: [&str; 3] = ["original", "reply", "both"];

impl Ext for Connbytes {
    fn name(&self) -> &'static str {
        "connbytes"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("connbytes", Arg::One, true),
            opt("connbytes-dir", Arg::One, false),
            opt("connbytes-mode", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "connbytes")?;
        let need = |o: &str| {
            get(given, o)
                .ok_or_else(|| bad(format!("connbytes: option \"--{o}\" must be specified")))
        };
        let c = need("connbytes")?;
        let (mut from, mut to) = match c.arg().split_once(':') {
            Some((a, b)) => (
                num(a, u64::MAX, "connbytes")?,
                if b.is_empty() {
                    u64::MAX
                } else {
                    num(b, u64::MAX, "connbytes")?
                },
            ),
            None => (num(c.arg(), u64::MAX, "connbytes")?, u64::MAX),
        };
        if to < from {
            return Err(bad(format!("{from} should be less than {to}")));
        }
        if c.neg {
            std::mem::swap(&mut from, &mut to);
        }
        let d = need("connbytes-dir")?;
        let direction = CB_DIRS
            .iter()
            .position(|x| *x == d.arg())
            .ok_or_else(|| bad(format!("Unknown --connbytes-dir `{}'", d.arg())))?;
        let m = need("connbytes-mode")?;
        let what = CB_MODES
            .iter()
            .position(|x| *x == m.arg())
            .ok_or_else(|| bad(format!("Unknown --connbytes-mode `{}'", m.arg())))?;
        Ok(crate::xt::small::Connbytes {
            from,
            to,
            what: what as u8,
            direction: direction as u8,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = crate::xt::small::Connbytes::decode(info).ok()?;
        let mode = CB_MODES.get(usize::from(c.what))?;
        let dir = CB_DIRS.get(usize::from(c.direction))?;
        let (from, to) = if c.from > c.to {
            out.push_str(" !");
            (c.to, c.from)
        } else {
            (c.from, c.to)
        };
        let _ = write!(out, " --connbytes {from}");
        if to != 0 && to < u64::MAX {
            let _ = write!(out, ":{to}");
        }
        let _ = write!(out, " --connbytes-mode {mode} --connbytes-dir {dir}");
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let c = crate::xt::small::Connbytes::decode(info).ok()?;
        let mode = CB_MODES.get(usize::from(c.what)).unwrap_or(&"unknown");
        let dir = CB_DIRS.get(usize::from(c.direction)).unwrap_or(&"unknown");
        let (from, to) = if c.from > c.to {
            out.push_str(" !");
            (c.to, c.from)
        } else {
            (c.from, c.to)
        };
        let _ = write!(out, " connbytes {from}");
        if to != 0 && to < u64::MAX {
            let _ = write!(out, ":{to}");
        }
        let _ = write!(out, " connbytes mode {mode} connbytes direction {dir}");
        Some(())
    }
    canonical_via!(crate::xt::small::Connbytes);
}
