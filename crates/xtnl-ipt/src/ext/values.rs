//! The values iptables' option parsers share (`strtoul` numbers, `value[/mask]`) and the
//! ` !` of an inverted option, for the extensions of this registry.

use super::bad;
use crate::error::Result;

/// An unsigned number as iptables' `strtoul(s, 0)` reads it: decimal, `0x` hex or `0`
/// octal, within `max`.
pub(crate) fn num(s: &str, max: u64, what: &str) -> Result<u64> {
    let t = s.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8)
    } else {
        t.parse::<u64>()
    };
    match v {
        Ok(n) if n <= max && !t.is_empty() => Ok(n),
        _ => Err(bad(format!(
            "{what}: \"{s}\" is not a number from 0 to {max}"
        ))),
    }
}

/// An `XTTYPE_UINT8/16/32` option of extension `ext`, refused in xtables' words when it is
/// not a number within `0..=max`: `EXT: bad value for option "--OPT", or out of range
/// (0-MAX).`
pub(crate) fn xt_uint(s: &str, max: u64, ext: &str, opt: &str) -> Result<u64> {
    num(s, max, ext).map_err(|_| {
        bad(format!(
            "{ext}: bad value for option \"--{opt}\", or out of range (0-{max})."
        ))
    })
}

/// `value[/mask]` as iptables' XTTYPE_MARKMASK32 reads it; the mask defaults to all ones.
pub(crate) fn markmask(s: &str, what: &str) -> Result<(u32, u32)> {
    let (v, m) = match s.split_once('/') {
        Some((v, m)) => (v, Some(m)),
        None => (s, None),
    };
    let v = num(v, u64::from(u32::MAX), what)? as u32;
    let m = match m {
        Some(m) => num(m, u64::from(u32::MAX), what)? as u32,
        None => u32::MAX,
    };
    Ok((v, m))
}

/// ` !` when negated.
pub(crate) fn bang(out: &mut String, neg: bool) {
    if neg {
        out.push_str(" !");
    }
}
