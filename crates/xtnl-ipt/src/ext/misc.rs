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
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let c = ClassifyInfo::decode(info).ok()?;
        let (major, minor) = (c.priority >> 16, c.priority & 0xffff);
        let _ = write!(out, " CLASSIFY set {major:x}:{minor:x}");
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
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let a = AuditInfo::decode(info).ok()?;
        let _ = write!(out, " AUDIT {}", AUDIT_TYPES.get(usize::from(a.kind))?);
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
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let r = RpInfo::decode(info).ok()?;
        out.push_str(" rpfilter");
        for (n, b) in RPF_FLAGS {
            if r.flags & b != 0 {
                let _ = write!(out, " {n}");
            }
        }
        Some(())
    }
    canonical_via!(RpInfo);
}

pub(crate) struct Ecn;

const ECN_IP: u8 = 0x01;
const ECN_ECE: u8 = 0x10;
const ECN_CWR: u8 = 0x20;

impl Ext for Ecn {
    fn name(&self) -> &'static str {
        "ecn"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("ecn-tcp-cwr", Arg::None, true),
            opt("ecn-tcp-ece", Arg::None, true),
            opt("ecn-ip-ect", Arg::One, true),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ecn")?;
        need_some(given, "ECN match")?;
        let mut e = crate::xt::small::Ecn::default();
        for g in given {
            let bit = match g.opt {
                "ecn-tcp-cwr" => ECN_CWR,
                "ecn-tcp-ece" => ECN_ECE,
                _ => {
                    e.ip_ect = num(g.arg(), 3, "ecn --ecn-ip-ect")? as u8;
                    ECN_IP
                }
            };
            if bit != ECN_IP && ctx.proto() != Some(crate::model::L4Proto::Tcp) {
                return Err(bad(format!("ecn: --{} needs `-p tcp'", g.opt)));
            }
            e.operation |= bit;
            if g.neg {
                e.invert |= bit;
            }
        }
        Ok(e.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let e = crate::xt::small::Ecn::decode(info).ok()?;
        if e.operation & !(ECN_IP | ECN_ECE | ECN_CWR) != 0 || e.invert & !e.operation != 0 {
            return None;
        }
        for (bit, opt) in [(ECN_ECE, "ecn-tcp-ece"), (ECN_CWR, "ecn-tcp-cwr")] {
            if e.operation & bit != 0 {
                bang(out, e.invert & bit != 0);
                let _ = write!(out, " --{opt}");
            }
        }
        if e.operation & ECN_IP != 0 {
            bang(out, e.invert & ECN_IP != 0);
            let _ = write!(out, " --ecn-ip-ect {}", e.ip_ect);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let e = crate::xt::small::Ecn::decode(info).ok()?;
        let inv = |b: u8| if e.invert & b != 0 { "!" } else { "" };
        out.push_str(" ECN match");
        for (bit, word) in [(ECN_ECE, "ECE"), (ECN_CWR, "CWR")] {
            if e.operation & bit != 0 {
                let _ = write!(out, " {}{word}", inv(bit));
            }
        }
        if e.operation & ECN_IP != 0 {
            let _ = write!(out, " {}ECT={}", inv(ECN_IP), e.ip_ect);
        }
        Some(())
    }
    canonical_via!(crate::xt::small::Ecn);
}

pub(crate) struct Socket;

const SOCKET_FLAGS: [(&str, u8); 3] =
    [("transparent", 1), ("nowildcard", 2), ("restore-skmark", 4)];

impl Ext for Socket {
    fn name(&self) -> &'static str {
        "socket"
    }
    fn revision(&self) -> u32 {
        3
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("transparent", Arg::None, false),
            opt("nowildcard", Arg::None, false),
            opt("restore-skmark", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "socket")?;
        let mut flags = 0;
        for g in given {
            flags |= SOCKET_FLAGS
                .iter()
                .find(|(n, _)| *n == g.opt)
                .map_or(0, |f| f.1);
        }
        Ok(crate::xt::small::Socket { flags }.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let s = crate::xt::small::Socket::decode(info).ok()?;
        if s.flags & !7 != 0 {
            return None;
        }
        for (n, b) in SOCKET_FLAGS {
            if s.flags & b != 0 {
                let _ = write!(out, " --{n}");
            }
        }
        Some(())
    }
    canonical_via!(crate::xt::small::Socket);
}

/// `-m cgroup [!] --path PATH | [!] --cgroup CLASSID` (revision 2).
pub(crate) struct Cgroup;

impl Ext for Cgroup {
    fn name(&self) -> &'static str {
        "cgroup"
    }
    fn revision(&self) -> u32 {
        2
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("path", Arg::One, true), opt("cgroup", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "cgroup")?;
        need_some(given, "cgroup")?;
        // Both: libxt_cgroup fills both (the class id over the path's first bytes: one
        // union) and the kernel refuses the pair (EINVAL); under iptables' names send it so
        // the refusal is iptables' words and status; xtnl's own command line refuses it.
        if given.len() > 1 && !crate::ipt::messages::as_iptables() {
            return Err(bad("cgroup: --path and --cgroup cannot be used together"));
        }
        let mut c = crate::xt::small::CgroupV2::default();
        for g in given {
            if g.opt == "path" {
                c.has_path = 1;
                c.invert_path = u8::from(g.neg);
                c.path =
                    crate::xt::layout::Raw::from_str(g.arg(), "cgroup --path").map_err(wire)?;
            } else {
                c.has_classid = 1;
                c.invert_classid = u8::from(g.neg);
                let id = num(g.arg(), u64::from(u32::MAX), "cgroup --cgroup")? as u32;
                c.path.0[..4].copy_from_slice(&id.to_ne_bytes());
            }
        }
        Ok(c.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let c = crate::xt::small::CgroupV2::decode(info).ok()?;
        if c.has_path > 1 || c.has_classid > 1 || c.invert_path > 1 || c.invert_classid > 1 {
            return None;
        }
        if c.has_path != 0 {
            bang(out, c.invert_path != 0);
            out.push_str(" --path");
            crate::ipt::print::save_string(out, &c.path.text());
        }
        if c.has_classid != 0 {
            bang(out, c.invert_classid != 0);
            let p = &c.path.0;
            let _ = write!(
                out,
                " --cgroup {}",
                u32::from_ne_bytes([p[0], p[1], p[2], p[3]])
            );
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let c = crate::xt::small::CgroupV2::decode(info).ok()?;
        let inv = |b: u8| if b != 0 { "! " } else { "" };
        out.push_str(" cgroup");
        if c.has_path != 0 {
            let _ = write!(out, " {}{}", inv(c.invert_path), c.path.text());
        }
        if c.has_classid != 0 {
            let p = &c.path.0;
            let id = u32::from_ne_bytes([p[0], p[1], p[2], p[3]]);
            let _ = write!(out, " {}{id}", inv(c.invert_classid));
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut c = crate::xt::small::CgroupV2::decode(info).ok()?;
        if c.has_classid != 0 && c.has_path == 0 {
            c.path.0[4..].fill(0);
        } else {
            c.path = c.path.canonical_text();
        }
        Some(c.encode())
    }
}
