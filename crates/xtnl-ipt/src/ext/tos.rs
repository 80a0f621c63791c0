//! `-m tos` rev 1 and `-j TOS` rev 1.

use super::*;
use crate::xt::small::{TosMatch, TosTarget};

pub(crate) struct Tos;
pub(crate) struct TosSet;

const NAMES: [(&str, u8); 5] = [
    ("Minimize-Delay", 0x10),
    ("Maximize-Throughput", 0x08),
    ("Maximize-Reliability", 0x04),
    ("Minimize-Cost", 0x02),
    ("Normal-Service", 0x00),
];

/// XTTYPE_TOSMASK: `value[/mask]` (mask 0xff by default) or a symbolic name (mask 0x3f).
fn tosmask(s: &str, what: &str) -> Result<(u8, u8)> {
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        let (v, m) = match s.split_once('/') {
            Some((v, m)) => (v, Some(m)),
            None => (s, None),
        };
        let v = num(v, 255, what)? as u8;
        let m = match m {
            Some(m) => num(m, 255, what)? as u8,
            None => 0xff,
        };
        return Ok((v, m));
    }
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map(|(_, v)| (*v, 0x3f))
        .ok_or_else(|| bad(format!("Symbolic name \"{s}\" is unknown")))
}

impl Ext for Tos {
    fn name(&self) -> &'static str {
        "tos"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("tos", Arg::One, true)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "tos")?;
        let g = given
            .first()
            .ok_or_else(|| bad("tos: option \"--tos\" must be specified"))?;
        let (tos_value, tos_mask) = tosmask(g.arg(), "tos")?;
        Ok(TosMatch {
            tos_mask,
            tos_value,
            invert: u8::from(g.neg),
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = TosMatch::decode(info).ok()?;
        if t.invert > 1 {
            return None;
        }
        bang(out, t.invert != 0);
        let _ = write!(out, " --tos 0x{:02x}/0x{:02x}", t.tos_value, t.tos_mask);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let t = TosMatch::decode(info).ok()?;
        // iptables prints the `!` glued to `match`.
        out.push_str(if t.invert != 0 {
            " tos match!"
        } else {
            " tos match"
        });
        match symbol(t.tos_value, t.tos_mask).filter(|_| !numeric) {
            Some(name) => {
                let _ = write!(out, " {name}");
            }
            None => {
                let _ = write!(out, "0x{:02x}/0x{:02x}", t.tos_value, t.tos_mask);
            }
        }
        Some(())
    }
    canonical_via!(TosMatch);
}

impl Ext for TosSet {
    fn name(&self) -> &'static str {
        "TOS"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("set-tos", Arg::One, false),
            opt("and-tos", Arg::One, false),
            opt("or-tos", Arg::One, false),
            opt("xor-tos", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        if given.len() != 1 {
            return Err(bad(if given.is_empty() {
                "TOS: An action is required"
            } else {
                "TOS: only one of --set-tos, --and-tos, --or-tos, --xor-tos"
            }));
        }
        let g = &given[0];
        let byte = |s: &str| num(s, 255, "TOS").map(|n| n as u8);
        let (tos_value, tos_mask) = match g.opt {
            "set-tos" => tosmask(g.arg(), "TOS")?,
            "and-tos" => (0, !byte(g.arg())?),
            "or-tos" => {
                let v = byte(g.arg())?;
                (v, v)
            }
            _ => (byte(g.arg())?, 0),
        };
        Ok(TosTarget {
            tos_value,
            tos_mask,
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = TosTarget::decode(info).ok()?;
        let _ = write!(out, " --set-tos 0x{:02x}/0x{:02x}", t.tos_value, t.tos_mask);
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let t = TosTarget::decode(info).ok()?;
        let (v, m) = (t.tos_value, t.tos_mask);
        if numeric {
            let _ = write!(out, " TOS set 0x{v:02x}/0x{m:02x}");
        } else if let Some(name) = symbol(v, m) {
            // `tos_try_print_symbolic(" TOS set", ...)` prints " %s%s".
            let _ = write!(out, "  TOS set{name}");
        } else if v == 0 {
            let _ = write!(out, " TOS and 0x{:02x}", !m);
        } else if v == m {
            let _ = write!(out, " TOS or 0x{v:02x}");
        } else if m == 0 {
            let _ = write!(out, " TOS xor 0x{v:02x}");
        } else {
            let _ = write!(out, " TOS set 0x{v:02x}/0x{m:02x}");
        }
        Some(())
    }
    canonical_via!(TosTarget);
}

/// The symbolic name `-L` prints for a value under the mask 0x3f (`tos_try_print_symbolic`).
fn symbol(value: u8, mask: u8) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(_, v)| mask == 0x3f && *v == value)
        .map(|(n, _)| *n)
}
