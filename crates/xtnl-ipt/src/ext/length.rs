//! `-m length` rev 0, `-m tcpmss` rev 0 and `-j TCPMSS` rev 0 (a 16-bit range with an
//! invert byte, and one 16-bit value).

use super::*;
use crate::xt::length::Length as LInfo;
use crate::xt::tcpmss::{TCPMSS_CLAMP_PMTU, TcpmssMatch as MInfo, TcpmssTarget as TInfo};

pub(crate) struct Length;
pub(crate) struct Tcpmss;
pub(crate) struct TcpmssTarget;

fn range16(given: &[Given], ext: &str, opt: &str) -> Result<(u16, u16, u8)> {
    once(given, ext)?;
    let g = given
        .first()
        .ok_or_else(|| bad(format!("{ext}: option \"--{opt}\" must be specified")))?;
    let (a, b) = super::conntrack::range(g.arg(), 65535, ext)?;
    Ok((a as u16, b as u16, u8::from(g.neg)))
}

fn print16(out: &mut String, opt: &str, a: u16, b: u16, inv: u8) -> Option<()> {
    if inv > 1 {
        return None;
    }
    bang(out, inv != 0);
    if a == b {
        let _ = write!(out, " --{opt} {a}");
    } else {
        let _ = write!(out, " --{opt} {a}:{b}");
    }
    Some(())
}

impl Ext for Length {
    fn name(&self) -> &'static str {
        "length"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("length", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        let (min, max, invert) = range16(given, "length", "length")?;
        Ok(LInfo { min, max, invert }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = LInfo::decode(info).ok()?;
        print16(out, "length", i.min, i.max, i.invert)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = LInfo::decode(info).ok()?;
        list16(out, " length ", i.min, i.max, i.invert);
        Some(())
    }
    canonical_via!(LInfo);
}

impl Ext for Tcpmss {
    fn name(&self) -> &'static str {
        "tcpmss"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("mss", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        let (mss_min, mss_max, invert) = range16(given, "tcpmss", "mss")?;
        Ok(MInfo {
            mss_min,
            mss_max,
            invert,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = MInfo::decode(info).ok()?;
        print16(out, "mss", i.mss_min, i.mss_max, i.invert)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = MInfo::decode(info).ok()?;
        list16(out, " tcpmss match ", i.mss_min, i.mss_max, i.invert);
        Some(())
    }
    canonical_via!(MInfo);
}

impl Ext for TcpmssTarget {
    fn name(&self) -> &'static str {
        "TCPMSS"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("set-mss", Arg::One, false),
            opt("clamp-mss-to-pmtu", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "TCPMSS")?;
        if given.is_empty() {
            return Err(bad("TCPMSS target: At least one parameter is required"));
        }
        // Both options: libxt_TCPMSS writes each into the one field, the last given wins,
        // and the kernel judges the result (clamping outside FORWARD/OUTPUT/POSTROUTING is
        // EINVAL). Under iptables' names do the same, so the words and status are the
        // kernel's as iptables reports them; xtnl's own command line refuses the pair.
        if given.len() > 1 && !crate::ipt::messages::as_iptables() {
            return Err(bad(
                "TCPMSS target: --set-mss and --clamp-mss-to-pmtu cannot be used together",
            ));
        }
        if ctx.proto() != Some(crate::model::L4Proto::Tcp) {
            return Err(bad("TCPMSS: the target works on TCP only; give `-p tcp'"));
        }
        let hdr = if ctx.family == Family::Ipv6 { 40 } else { 20 };
        let mut mss = TCPMSS_CLAMP_PMTU;
        for g in given {
            mss = match g.opt {
                "set-mss" => num(g.arg(), 65535 - hdr, "TCPMSS --set-mss")? as u16,
                _ => TCPMSS_CLAMP_PMTU,
            };
        }
        Ok(TInfo { mss }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = TInfo::decode(info).ok()?;
        if i.mss == TCPMSS_CLAMP_PMTU {
            out.push_str(" --clamp-mss-to-pmtu");
        } else {
            let _ = write!(out, " --set-mss {}", i.mss);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = TInfo::decode(info).ok()?;
        if i.mss == TCPMSS_CLAMP_PMTU {
            out.push_str(" TCPMSS clamp to PMTU");
        } else {
            let _ = write!(out, " TCPMSS set {}", i.mss);
        }
        Some(())
    }
    canonical_via!(TInfo);
}

/// `-L`'s `LABEL[!]min[:max]` (`length`, `tcpmss match`).
fn list16(out: &mut String, label: &str, min: u16, max: u16, invert: u8) {
    let _ = write!(out, "{label}{}{min}", if invert != 0 { "!" } else { "" });
    if min != max {
        let _ = write!(out, ":{max}");
    }
}
