//! One-field extensions whose payloads are in [`crate::xt::small`]: `-j CLASSIFY
//! --set-class MAJOR:MINOR`, `-j AUDIT --type accept|drop|reject`, `-m rpfilter [--loose]
//! [--validmark] [--accept-local] [--invert]`. All through nft_compat in iptables-nft.

use super::*;
use crate::xt::small::{Audit as AuditInfo, Classify as ClassifyInfo, Rpfilter as RpInfo};

/// Leading hex digits as `sscanf("%x")` reads them (an optional `0x`).
fn hex_prefix(s: &str) -> Option<u32> {
    let t = s.trim_start();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .filter(|r| r.starts_with(|c: char| c.is_ascii_hexdigit()))
        .unwrap_or(t);
    let end = t.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(t.len());
    u32::from_str_radix(&t[..end], 16).ok()
}

pub(crate) struct Classify;

impl Ext for Classify {
    fn name(&self) -> &'static str {
        "CLASSIFY"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        0
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("set-class", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "CLASSIFY")?;
        let g = given
            .first()
            .ok_or_else(|| bad("CLASSIFY: option \"--set-class\" must be specified"))?;
        let class = g
            .arg()
            .split_once(':')
            .and_then(|(a, b)| Some((hex_prefix(a)?, hex_prefix(b)?)))
            .ok_or_else(|| bad(format!("Bad class value \"{}\"", g.arg())))?;
        Ok(ClassifyInfo {
            priority: (class.0 << 16) | (class.1 & 0xffff),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = ClassifyInfo::decode(info).ok()?;
        let _ = write!(
            out,
            " --set-class {:04x}:{:04x}",
            c.priority >> 16,
            c.priority & 0xffff
        );
        Some(())
    }
    canonical_via!(ClassifyInfo);
}

pub(crate) struct Audit;

const AUDIT_TYPES: [&str; 3] = ["accept", "drop", "reject"];

impl Ext for Audit {
    fn name(&self) -> &'static str {
        "AUDIT"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        0
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("type", Arg::One, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "AUDIT")?;
        let g = given
            .first()
            .ok_or_else(|| bad("AUDIT: option \"--type\" must be specified"))?;
        let kind = AUDIT_TYPES
            .iter()
            .position(|t| t.eq_ignore_ascii_case(g.arg()))
            .ok_or_else(|| bad(format!("Bad action type value \"{}\"", g.arg())))?;
        Ok(AuditInfo { kind: kind as u8 }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let a = AuditInfo::decode(info).ok()?;
        let _ = write!(out, " --type {}", AUDIT_TYPES.get(usize::from(a.kind))?);
        Some(())
    }
    canonical_via!(AuditInfo);
}

pub(crate) struct Rpfilter;

const RPF_FLAGS: [(&str, u8); 4] = [
    ("loose", 1),
    ("validmark", 2),
    ("accept-local", 4),
    ("invert", 8),
];

impl Ext for Rpfilter {
    fn name(&self) -> &'static str {
        "rpfilter"
    }
    fn is_target(&self) -> bool {
        false
    }
    fn revision(&self) -> u32 {
        0
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("loose", Arg::None, false),
            opt("validmark", Arg::None, false),
            opt("accept-local", Arg::None, false),
            opt("invert", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "rpfilter")?;
        let mut flags = 0;
        for g in given {
            flags |= RPF_FLAGS
                .iter()
                .find(|(n, _)| *n == g.opt)
                .map_or(0, |f| f.1);
        }
        Ok(RpInfo { flags }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let r = RpInfo::decode(info).ok()?;
        if r.flags & !0x0f != 0 {
            return None;
        }
        for (n, b) in RPF_FLAGS {
            if r.flags & b != 0 {
                let _ = write!(out, " --{n}");
            }
        }
        Some(())
    }
    canonical_via!(RpInfo);
}
