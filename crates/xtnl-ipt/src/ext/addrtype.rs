//! `-m addrtype` rev 1.

use super::*;
use crate::xt::addrtype::{ADDR_TYPES, AddrtypeV1, addrtype_flags as fl};

pub(crate) struct Addrtype;

/// iptables compares the given word case-insensitively against the start of each name.
fn types(list: &str) -> Result<u16> {
    let mut mask = 0u16;
    for w in list.split(',') {
        let i = ADDR_TYPES
            .iter()
            .position(|n| {
                !w.is_empty() && n.len() >= w.len() && n[..w.len()].eq_ignore_ascii_case(w)
            })
            .ok_or_else(|| bad(format!("addrtype: bad type \"{w}\"")))?;
        mask |= 1 << i;
    }
    Ok(mask)
}

fn print_types(out: &mut String, mask: u16) {
    let names: Vec<&str> = ADDR_TYPES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    out.push(' ');
    out.push_str(&names.join(","));
}

impl Ext for Addrtype {
    fn name(&self) -> &'static str {
        "addrtype"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("src-type", Arg::One, true),
            opt("dst-type", Arg::One, true),
            opt("limit-iface-in", Arg::None, false),
            opt("limit-iface-out", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "addrtype")?;
        let mut a = AddrtypeV1::default();
        for g in given {
            match g.opt {
                "src-type" => {
                    a.source = types(g.arg())?;
                    if g.neg {
                        a.flags |= fl::INVERT_SOURCE;
                    }
                }
                "dst-type" => {
                    a.dest = types(g.arg())?;
                    if g.neg {
                        a.flags |= fl::INVERT_DEST;
                    }
                }
                "limit-iface-in" => a.flags |= fl::LIMIT_IFACE_IN,
                _ => a.flags |= fl::LIMIT_IFACE_OUT,
            }
        }
        if get(given, "src-type").is_none() && get(given, "dst-type").is_none() {
            return Err(bad("addrtype: you must specify --src-type or --dst-type"));
        }
        if a.flags & fl::LIMIT_IFACE_IN != 0 && a.flags & fl::LIMIT_IFACE_OUT != 0 {
            return Err(bad(
                "addrtype: you can't specify both --limit-iface-in and --limit-iface-out",
            ));
        }
        Ok(a.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let a = AddrtypeV1::decode(info).ok()?;
        if a.flags & !0xf != 0 || a.source >> 12 != 0 || a.dest >> 12 != 0 {
            return None;
        }
        if a.source != 0 {
            bang(out, a.flags & fl::INVERT_SOURCE != 0);
            out.push_str(" --src-type");
            print_types(out, a.source);
        }
        if a.dest != 0 {
            bang(out, a.flags & fl::INVERT_DEST != 0);
            out.push_str(" --dst-type");
            print_types(out, a.dest);
        }
        if a.flags & fl::LIMIT_IFACE_IN != 0 {
            out.push_str(" --limit-iface-in");
        }
        if a.flags & fl::LIMIT_IFACE_OUT != 0 {
            out.push_str(" --limit-iface-out");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let a = AddrtypeV1::decode(info).ok()?;
        out.push_str(" ADDRTYPE match");
        for (word, mask, inv) in [
            ("src-type", a.source, fl::INVERT_SOURCE),
            ("dst-type", a.dest, fl::INVERT_DEST),
        ] {
            if mask != 0 {
                let _ = write!(out, " {word} {}", if a.flags & inv != 0 { "!" } else { "" });
                let mut t = String::new();
                print_types(&mut t, mask);
                out.push_str(t.trim_start());
            }
        }
        if a.flags & fl::LIMIT_IFACE_IN != 0 {
            out.push_str(" limit-in");
        }
        if a.flags & fl::LIMIT_IFACE_OUT != 0 {
            out.push_str(" limit-out");
        }
        Some(())
    }
    canonical_via!(AddrtypeV1);
}
