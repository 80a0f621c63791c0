//! `-j CT` rev 2 and `-j NOTRACK` (CT rev 2 with the notrack and alias flags).

use super::*;
use crate::xt::ct::{
    CT_NOTRACK, CT_NOTRACK_ALIAS, CT_ZONE_DIR_ORIG, CT_ZONE_DIR_REPL, CT_ZONE_MARK,
    CtTargetV1 as Info,
};
use crate::xt::layout::Raw;

pub(crate) struct Ct;
pub(crate) struct Notrack;

/// `IPCT_*` events by iptables' names, in bit order.
const CT_EVENTS: [&str; 10] = [
    "new",
    "related",
    "destroy",
    "reply",
    "assured",
    "protoinfo",
    "helper",
    "mark",
    "natseqinfo",
    "secmark",
];

fn events(list: &str, names: &[&str]) -> Result<u32> {
    let mut m = 0;
    for w in list.split(',') {
        let i = names
            .iter()
            .position(|n| *n == w)
            .ok_or_else(|| bad(format!("Unknown event type \"{w}\"")))?;
        m |= 1 << i;
    }
    Ok(m)
}

fn print_events(out: &mut String, p: &str, opt: &str, mask: u32, names: &[&str]) {
    let list: Vec<&str> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    let _ = write!(out, " {p}{opt} {}", list.join(","));
}

impl Ext for Ct {
    fn name(&self) -> &'static str {
        "CT"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        2
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("notrack", Arg::None, false),
            opt("helper", Arg::One, false),
            opt("timeout", Arg::One, false),
            opt("ctevents", Arg::One, false),
            opt("expevents", Arg::One, false),
            opt("zone-orig", Arg::One, false),
            opt("zone-reply", Arg::One, false),
            opt("zone", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "CT")?;
        let mut c = Info::default();
        for g in given {
            match g.opt {
                "notrack" => c.flags |= CT_NOTRACK,
                "helper" => c.helper = Raw::from_str(g.arg(), "CT --helper").map_err(wire)?,
                "timeout" => c.timeout = Raw::from_str(g.arg(), "CT --timeout").map_err(wire)?,
                "ctevents" => c.ct_events = events(g.arg(), &CT_EVENTS)?,
                "expevents" => c.exp_events = events(g.arg(), &["new"])?,
                z => {
                    if z == "zone-orig" {
                        c.flags |= CT_ZONE_DIR_ORIG;
                    }
                    if z == "zone-reply" {
                        c.flags |= CT_ZONE_DIR_REPL;
                    }
                    c.zone = 0;
                    if g.arg().eq_ignore_ascii_case("mark") {
                        c.flags |= CT_ZONE_MARK;
                    } else {
                        c.zone = num(g.arg(), 65535, "CT zone")
                            .map_err(|_| bad(format!("Cannot parse {} as a zone ID", g.arg())))?
                            as u16;
                    }
                }
            }
        }
        Ok(c.encode())
    }
    fn shown_name(&self, info: &[u8]) -> &'static str {
        match Info::decode(info) {
            Ok(c) if c.flags & CT_NOTRACK_ALIAS != 0 => "NOTRACK",
            _ => "CT",
        }
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump(info, "--", out)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        match Info::decode(info) {
            Ok(c) if c.flags & CT_NOTRACK_ALIAS != 0 => {
                out.push_str(" NOTRACK");
                Some(())
            }
            _ => {
                out.push_str(" CT");
                dump(info, "", out)
            }
        }
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut c = Info::decode(info).ok()?;
        c.helper = c.helper.canonical_text();
        c.timeout = c.timeout.canonical_text();
        Some(c.encode())
    }
}

/// The options as `-S` (`p` = `--`) or `-L` (`p` empty) print them.
fn dump(info: &[u8], p: &str, out: &mut String) -> Option<()> {
    let c = Info::decode(info).ok()?;
    if c.flags & !0x1f != 0 || c.ct_events >> 10 != 0 || c.exp_events > 1 {
        return None;
    }
    if c.flags & CT_NOTRACK_ALIAS != 0 {
        // iptables prints `-j NOTRACK` and nothing else; anything else would be lost.
        return (c
            == Info {
                flags: CT_NOTRACK | CT_NOTRACK_ALIAS,
                ..Default::default()
            })
        .then_some(());
    }
    if c.flags & CT_NOTRACK != 0 {
        let _ = write!(out, " {p}notrack");
    }
    if c.helper.0[0] != 0 {
        let _ = write!(out, " {p}helper {}", c.helper.text());
    }
    if c.timeout.0[0] != 0 {
        let _ = write!(out, " {p}timeout {}", c.timeout.text());
    }
    if c.ct_events != 0 {
        print_events(out, p, "ctevents", c.ct_events, &CT_EVENTS);
    }
    if c.exp_events != 0 {
        print_events(out, p, "expevents", c.exp_events, &["new"]);
    }
    if c.flags & CT_ZONE_MARK != 0 || c.zone != 0 {
        let _ = write!(out, " {p}zone");
        let dir = c.flags & (CT_ZONE_DIR_ORIG | CT_ZONE_DIR_REPL);
        if dir == CT_ZONE_DIR_ORIG {
            out.push_str("-orig");
        }
        if dir == CT_ZONE_DIR_REPL {
            out.push_str("-reply");
        }
        if c.flags & CT_ZONE_MARK != 0 {
            out.push_str(" mark");
        } else {
            let _ = write!(out, " {}", c.zone);
        }
    }
    Some(())
}

impl Ext for Notrack {
    fn name(&self) -> &'static str {
        "NOTRACK"
    }
    fn wire_name(&self) -> &'static str {
        "CT"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        2
    }
    /// Reading is [`Ct`]'s (same kernel name and revision).
    fn reads(&self, _rev: u32) -> bool {
        false
    }
    fn options(&self) -> &'static [Opt] {
        opts![]
    }
    fn parse(&self, _: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        Ok(Info {
            flags: CT_NOTRACK | CT_NOTRACK_ALIAS,
            ..Default::default()
        }
        .encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        Ct.save(info, family, out)
    }
    fn list(&self, info: &[u8], family: Family, numeric: bool, out: &mut String) -> Option<()> {
        Ct.list(info, family, numeric, out)
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        Ct.canonical(info)
    }
}
