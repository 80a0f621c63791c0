//! `-m mac` rev 0 and `-m physdev` rev 0.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::mac::Mac as MInfo;
use crate::xt::physdev::{
    PHYSDEV_OP_BRIDGED, PHYSDEV_OP_IN, PHYSDEV_OP_ISIN, PHYSDEV_OP_ISOUT, PHYSDEV_OP_OUT,
    Physdev as PInfo,
};

pub(crate) struct Mac;
pub(crate) struct Physdev;

impl Ext for Mac {
    fn name(&self) -> &'static str {
        "mac"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("mac-source", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "mac")?;
        let g = given
            .first()
            .ok_or_else(|| bad("mac: option \"--mac-source\" must be specified"))?;
        let badmac = || bad(format!("Bad mac address \"{}\"", g.arg()));
        let parts: Vec<&str> = g.arg().split(':').collect();
        if parts.len() != 6 {
            return Err(badmac());
        }
        let mut addr = [0u8; 6];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || p.len() > 2 {
                return Err(badmac());
            }
            addr[i] = u8::from_str_radix(p, 16).map_err(|_| badmac())?;
        }
        Ok(MInfo {
            srcaddr: Raw(addr),
            invert: i32::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let m = MInfo::decode(info).ok()?;
        if !(0..=1).contains(&m.invert) {
            return None;
        }
        bang(out, m.invert != 0);
        let hex: Vec<String> = m.srcaddr.0.iter().map(|b| format!("{b:02x}")).collect();
        let _ = write!(out, " --mac-source {}", hex.join(":"));
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let m = MInfo::decode(info).ok()?;
        let hex: Vec<String> = m.srcaddr.0.iter().map(|b| format!("{b:02x}")).collect();
        let inv = if m.invert != 0 { "! " } else { "" };
        let _ = write!(out, " MAC {inv}{}", hex.join(":"));
        Some(())
    }
    canonical_via!(MInfo);
}

/// A bridge port name as iptables writes it: the name (with its `+`), and the mask over
/// the name and its NUL, or over the part before the `+`.
fn port(s: &str) -> Result<(Raw<16>, Raw<16>)> {
    if s.is_empty() || s.len() > 15 {
        return Err(bad(format!(
            "interface name `{s}' must be shorter than 16 characters"
        )));
    }
    let name = Raw::<16>::from_str(s, "physdev").map_err(wire)?;
    let masked = if let Some(p) = s.strip_suffix('+') {
        p.len()
    } else {
        s.len() + 1
    };
    let mut mask = [0u8; 16];
    mask[..masked].fill(0xff);
    Ok((name, Raw(mask)))
}

impl Ext for Physdev {
    fn name(&self) -> &'static str {
        "physdev"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("physdev-in", Arg::One, true),
            opt("physdev-out", Arg::One, true),
            opt("physdev-is-in", Arg::None, true),
            opt("physdev-is-out", Arg::None, true),
            opt("physdev-is-bridged", Arg::None, true),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "physdev")?;
        if given.is_empty() {
            return Err(bad("PHYSDEV: no physdev option specified"));
        }
        let mut p = PInfo::default();
        for g in given {
            let bit = match g.opt {
                "physdev-in" => {
                    (p.physindev, p.in_mask) = port(g.arg())?;
                    PHYSDEV_OP_IN
                }
                "physdev-out" => {
                    (p.physoutdev, p.out_mask) = port(g.arg())?;
                    PHYSDEV_OP_OUT
                }
                "physdev-is-in" => PHYSDEV_OP_ISIN,
                "physdev-is-out" => PHYSDEV_OP_ISOUT,
                _ => PHYSDEV_OP_BRIDGED,
            };
            p.bitmask |= bit;
            if g.neg {
                p.invert |= bit;
            }
        }
        Ok(p.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let p = PInfo::decode(info).ok()?;
        if p.bitmask & !0x1f != 0 || p.invert & !0x1f != 0 {
            return None;
        }
        let on = |b: u8| p.bitmask & b != 0;
        let neg = |out: &mut String, b: u8| bang(out, p.invert & b != 0);
        if on(PHYSDEV_OP_ISIN) {
            neg(out, PHYSDEV_OP_ISIN);
            out.push_str(" --physdev-is-in");
        }
        if on(PHYSDEV_OP_IN) {
            neg(out, PHYSDEV_OP_IN);
            let _ = write!(out, " --physdev-in {}", p.physindev.text());
        }
        if on(PHYSDEV_OP_ISOUT) {
            neg(out, PHYSDEV_OP_ISOUT);
            out.push_str(" --physdev-is-out");
        }
        if on(PHYSDEV_OP_OUT) {
            neg(out, PHYSDEV_OP_OUT);
            let _ = write!(out, " --physdev-out {}", p.physoutdev.text());
        }
        if on(PHYSDEV_OP_BRIDGED) {
            neg(out, PHYSDEV_OP_BRIDGED);
            out.push_str(" --physdev-is-bridged");
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        out.push_str(" PHYSDEV match");
        self.save(info, family, out)
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut p = PInfo::decode(info).ok()?;
        p.physindev = p.physindev.canonical_text();
        p.physoutdev = p.physoutdev.canonical_text();
        Some(p.encode())
    }
}
