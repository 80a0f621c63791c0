//! `-m connlabel [!] --label NAME|BIT [--set]` (revision 0, both families): the payload of
//! [`crate::xt::connlabel`], through nft_compat in iptables-nft. Names come from
//! `/etc/xtables/connlabel.conf` (lines `BIT NAME`, `#` comments), the file iptables reads
//! through libnetfilter_conntrack; `-S` prints a bit by its name there, else its number, in
//! double quotes as iptables does. Where iptables takes a number over 127 and lets the
//! kernel refuse it (or, over 65535, keeps its low 16 bits), xtnl refuses it at once.
//! iptables compares no byte of this payload in `-C`/`-D` (its `userspacesize` is 0, so
//! `-C -m connlabel --label 41` finds a rule with label 40); xtnl compares the bit and the
//! options.

use super::*;
use crate::xt::connlabel::{CONNLABEL_MAXBIT, ConnlabelMatch as Info, connlabel_ops as op};

pub(crate) struct Connlabel;

/// The label map's file, as libnetfilter_conntrack names it.
const MAP_PATH: &str = "/etc/xtables/connlabel.conf";

/// `(bit, name)` pairs of a label map's text.
pub(crate) fn parse_map(text: &str) -> Vec<(u16, String)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            if l.starts_with('#') {
                return None;
            }
            let (bit, name) = l.split_once(char::is_whitespace)?;
            let bit = num(bit, u64::from(CONNLABEL_MAXBIT), "").ok()? as u16;
            let name = name.trim();
            (!name.is_empty()).then(|| (bit, name.to_string()))
        })
        .collect()
}

/// The label map, read once per process as iptables does: `Err` with the `strerror` text
/// when the file cannot be read.
fn read_map() -> &'static std::result::Result<Vec<(u16, String)>, String> {
    static MAP: std::sync::OnceLock<std::result::Result<Vec<(u16, String)>, String>> =
        std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        std::fs::read_to_string(MAP_PATH)
            .map(|t| parse_map(&t))
            .map_err(|e| {
                let e = e.to_string();
                e.split(" (os error").next().unwrap_or(&e).to_string()
            })
    })
}

/// The label map (none without the file), and iptables' warning when the file cannot be
/// opened, as `when` says: libxt_connlabel opens the map for every rule it prints and for a label
/// given by name, and says so each time it cannot (`Warning: cannot open
/// /etc/xtables/connlabel.conf: No such file or directory`).
fn map_warned(when: Warn) -> &'static [(u16, String)] {
    use crate::ipt::messages::{CONNLABEL_MAP_WARNING, warn, warn_printed};
    match read_map() {
        Ok(m) => m,
        Err(e) => {
            let line = format!("{CONNLABEL_MAP_WARNING}{e}");
            match when {
                Warn::Parsed => warn(&line),
                Warn::Printed => warn_printed(&line),
                Warn::Never => {}
            }
            &[]
        }
    }
}

/// When a missing label map is worth iptables' warning.
enum Warn {
    /// A label given by name.
    Parsed,
    /// A rule printed for the output.
    Printed,
    /// A label given as a number.
    Never,
}

/// A label as iptables reads it: a number (`strtoul(s, 0)`), else a name of the map.
pub(crate) fn label_bit(s: &str, map: &[(u16, String)]) -> Result<u16> {
    let bit = match num(s, u64::from(u32::MAX), "connlabel --label") {
        Ok(n) => n,
        Err(_) => map
            .iter()
            .find(|(_, name)| name == s)
            .map(|(b, _)| u64::from(*b))
            .ok_or_else(|| bad(format!("label '{s}' not found or invalid value")))?,
    };
    if bit > u64::from(CONNLABEL_MAXBIT) {
        return Err(bad(format!(
            "connlabel --label: bit {bit} is out of range (0-{CONNLABEL_MAXBIT})"
        )));
    }
    Ok(bit as u16)
}

impl Ext for Connlabel {
    fn name(&self) -> &'static str {
        "connlabel"
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("label", Arg::One, true), opt("set", Arg::None, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "connlabel")?;
        let l = get(given, "label")
            .ok_or_else(|| bad("connlabel: option \"--label\" must be specified"))?;
        if l.arg().is_empty() {
            return Err(bad("connlabel: --label needs a name or a bit"));
        }
        let numeric = num(l.arg(), u64::from(u32::MAX), "").is_ok();
        let mut i = Info {
            bit: label_bit(
                l.arg(),
                map_warned(if numeric { Warn::Never } else { Warn::Parsed }),
            )?,
            options: 0,
        };
        if l.neg {
            i.options |= op::INVERT;
        }
        if get(given, "set").is_some() {
            i.options |= op::SET;
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.options & !(op::INVERT | op::SET) != 0 || i.bit > CONNLABEL_MAXBIT {
            return None;
        }
        bang(out, i.options & op::INVERT != 0);
        match map_warned(Warn::Printed).iter().find(|(b, _)| *b == i.bit) {
            Some((_, name)) => {
                let _ = write!(out, " --label \"{name}\"");
            }
            None => {
                let _ = write!(out, " --label \"{}\"", i.bit);
            }
        }
        if i.options & op::SET != 0 {
            out.push_str(" --set");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.options & !(op::INVERT | op::SET) != 0 || i.bit > CONNLABEL_MAXBIT {
            return None;
        }
        out.push_str(" connlabel");
        bang(out, i.options & op::INVERT != 0);
        match map_warned(Warn::Printed).iter().find(|(b, _)| *b == i.bit) {
            Some((_, name)) if !numeric => {
                let _ = write!(out, " '{name}'");
            }
            _ => {
                let _ = write!(out, " {}", i.bit);
            }
        }
        if i.options & op::SET != 0 {
            out.push_str(" set");
        }
        Some(())
    }
    canonical_via!(Info);
}
