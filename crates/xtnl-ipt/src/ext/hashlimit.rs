//! `-m hashlimit` (revision 3): `--hashlimit-upto`/`--hashlimit-above` (packets per
//! second/minute/hour/day, or bytes per second `Nb/s`, `Nkb/s`, `Nmb/s`), `--hashlimit-burst`,
//! `--hashlimit-mode`, `--hashlimit-name`, the table options, the masks and the rate-match
//! options. iptables-nft writes it through nft_compat.
//!
//! The payload holds what iptables' final check derives, so parse does the same: the
//! default `expire` (the rate's unit in ms, 15 s or 60 s for byte rates), a byte burst in
//! units of the rate's cost, and with `--hashlimit-rate-match` the average per second and
//! the default interval. Save prints back in iptables' units and leaves out what equals
//! those defaults.

use super::*;
use crate::xt::hashlimit::Hashlimit as Info;
use crate::xt::layout::Raw;

pub(crate) struct Hashlimit;

const BURST: u64 = 5;
const BURST_MAX: u64 = 1_000_000;
const GCINTERVAL: u32 = 1000;
const BYTE_EXPIRE: u32 = 15;
const BYTE_EXPIRE_BURST: u32 = 60;

const RATES: [(&str, u64); 4] = [
    ("day", Info::SCALE * 24 * 60 * 60),
    ("hour", Info::SCALE * 60 * 60),
    ("min", Info::SCALE * 60),
    ("sec", Info::SCALE),
];

const UNITS: [(&str, u64); 3] = [("m", 1024 * 1024), ("k", 1024), ("", 1)];

fn cost_to_bytes(cost: u64) -> u64 {
    let max = u64::from(u32::MAX);
    let r = max.checked_div(cost).unwrap_or(max);
    r.wrapping_sub(1).wrapping_shl(4)
}

fn bytes_to_cost(bytes: u64) -> Option<u64> {
    // iptables keeps `bytes >> 4` in 32 bits.
    let r = (bytes >> 4) as u32;
    Some(u64::from(u32::MAX / r.checked_add(1)?))
}

fn factor(c: Option<char>) -> u64 {
    match c {
        Some('m') => 1024 * 1024,
        Some('k') => 1024,
        _ => 1,
    }
}

/// C's `atoll` on a rate: leading blanks, a sign, digits; 0 when there are none.
fn atoll(s: &str) -> u64 {
    let t = s.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let v = digits
        .parse::<i64>()
        .unwrap_or(if digits.is_empty() { 0 } else { i64::MAX });
    (if neg { -v } else { v }) as u64
}

/// A rate: `Some((avg, mult, bytes))`, `None` when it is no rate at all.
fn rate(s: &str) -> Result<Option<(u64, u32, bool)>> {
    if let Some(at) = s.find("b/s").filter(|&at| at > 0) {
        let r = atoll(s);
        if r != 0 {
            let bytes = r
                .checked_mul(factor(s[..at].chars().last()))
                .ok_or_else(|| bad(format!("Rate value too large \"{s}\"")))?;
            let cost = bytes_to_cost(bytes)
                .filter(|&c| c != 0)
                .ok_or_else(|| bad(format!("Rate too high \"{s}\"")))?;
            return Ok(Some((cost, BYTE_EXPIRE, true)));
        }
    }
    let mut mult = 1u32;
    if let Some((_, unit)) = s.split_once('/') {
        let unit = unit.to_ascii_lowercase();
        if unit.is_empty() {
            return Ok(None);
        }
        mult = match ["second", "minute", "hour", "day"]
            .iter()
            .position(|u| u.starts_with(&unit))
        {
            Some(0) => 1,
            Some(1) => 60,
            Some(2) => 3600,
            Some(_) => 86400,
            None => return Ok(None),
        };
    }
    let r = atoll(s);
    if r == 0 {
        return Ok(None);
    }
    let avg = Info::SCALE * u64::from(mult) / r;
    if avg == 0 {
        return Err(bad(format!("Rate too fast \"{s}\"")));
    }
    Ok(Some((avg, mult, false)))
}

/// `--hashlimit-burst`: a number (base 0) with an optional `k`/`m` factor.
fn burst(s: &str) -> Result<u64> {
    let err = || {
        bad(format!(
            "bad value for option \"--hashlimit-burst\", or out of range (1-{BURST_MAX})."
        ))
    };
    let t = s.trim_start();
    let (radix, body) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    let v = u64::from_str_radix(&body[..end], radix).map_err(|_| err())?;
    let rest = &body[end..];
    if v < 1 || (rest.is_empty() && v > BURST_MAX) {
        return Err(err());
    }
    Ok(v.wrapping_mul(factor(rest.chars().next())))
}

/// A prefix length, or a contiguous mask in address form.
fn plen(s: &str, family: Family, opt: &str) -> Result<u8> {
    let max = if family == Family::Ipv6 { 128 } else { 32 };
    if let Ok(n) = num(s, max, opt) {
        return Ok(n as u8);
    }
    let bits: Option<(u32, u32)> = if family == Family::Ipv6 {
        s.parse::<std::net::Ipv6Addr>().ok().map(|a| {
            let v = u128::from(a);
            (v.leading_ones(), v.count_ones())
        })
    } else {
        s.parse::<std::net::Ipv4Addr>().ok().map(|a| {
            let v = u32::from(a);
            (v.leading_ones(), v.count_ones())
        })
    };
    match bits {
        Some((lead, ones)) if lead == ones => Ok(lead as u8),
        _ => Err(bad(format!(
            "hashlimit: bad value for option \"--{opt}\", neither a valid network mask nor valid CIDR (0-{max})."
        ))),
    }
}

impl Ext for Hashlimit {
    fn name(&self) -> &'static str {
        "hashlimit"
    }
    fn revision(&self) -> u32 {
        3
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("hashlimit-upto", Arg::One, true),
            opt("hashlimit-above", Arg::One, true),
            opt("hashlimit", Arg::One, true),
            opt("hashlimit-srcmask", Arg::One, false),
            opt("hashlimit-dstmask", Arg::One, false),
            opt("hashlimit-burst", Arg::One, false),
            opt("hashlimit-htable-size", Arg::One, false),
            opt("hashlimit-htable-max", Arg::One, false),
            opt("hashlimit-htable-gcinterval", Arg::One, false),
            opt("hashlimit-htable-expire", Arg::One, false),
            opt("hashlimit-mode", Arg::One, false),
            opt("hashlimit-name", Arg::One, false),
            opt("hashlimit-rate-match", Arg::None, false),
            opt("hashlimit-rate-interval", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        fn key(o: &str) -> &str {
            if o == "hashlimit" {
                "hashlimit-upto"
            } else {
                o
            }
        }
        for (i, g) in given.iter().enumerate() {
            if given[..i].iter().any(|h| key(h.opt) == key(g.opt)) {
                return Err(bad(format!(
                    "hashlimit: option \"--{}\" can only be used once",
                    g.opt
                )));
            }
        }
        let dmask = if ctx.family == Family::Ipv6 { 128 } else { 32 };
        let mut h = Info {
            burst: BURST,
            gc_interval: GCINTERVAL,
            srcmask: dmask,
            dstmask: dmask,
            ..Info::default()
        };
        let (mut mult, mut limit, mut has_burst, mut has_expire, mut rate_match) =
            (1u32, None, false, false, false);
        for g in given {
            let u32_of = |what: &str| num(g.arg(), u64::from(u32::MAX), what).map(|v| v as u32);
            match g.opt {
                "hashlimit-upto" | "hashlimit" | "hashlimit-above" => {
                    let above = g.opt == "hashlimit-above";
                    limit = Some(g.opt);
                    if g.neg != above {
                        h.mode |= Info::INVERT;
                    }
                    let (avg, m, bytes) = rate(g.arg())?.ok_or_else(|| {
                        bad(format!(
                            "hashlimit: Bad value for option \"--{}\" ({})",
                            g.opt,
                            g.arg()
                        ))
                    })?;
                    (h.avg, mult) = (avg, m);
                    if bytes {
                        h.mode |= Info::BYTES;
                    }
                }
                "hashlimit-srcmask" => h.srcmask = plen(g.arg(), ctx.family, g.opt)?,
                "hashlimit-dstmask" => h.dstmask = plen(g.arg(), ctx.family, g.opt)?,
                "hashlimit-burst" => {
                    h.burst = burst(g.arg())?;
                    has_burst = true;
                }
                "hashlimit-htable-size" => h.size = u32_of("--hashlimit-htable-size")?,
                "hashlimit-htable-max" => h.max = u32_of("--hashlimit-htable-max")?,
                "hashlimit-htable-gcinterval" => {
                    h.gc_interval = u32_of("--hashlimit-htable-gcinterval")?
                }
                "hashlimit-htable-expire" => {
                    h.expire = u32_of("--hashlimit-htable-expire")?;
                    has_expire = true;
                }
                "hashlimit-mode" => {
                    for w in g.arg().split([',', '|']).filter(|w| !w.is_empty()) {
                        h.mode |= match w {
                            "dstip" => Info::HASH_DIP,
                            "srcip" => Info::HASH_SIP,
                            "srcport" => Info::HASH_SPT,
                            "dstport" => Info::HASH_DPT,
                            _ => {
                                return Err(bad(format!(
                                    "hashlimit: Bad value for option \"--hashlimit-mode\" ({})",
                                    g.arg()
                                )));
                            }
                        };
                    }
                }
                "hashlimit-name" => {
                    if g.arg().is_empty() {
                        return Err(bad("Argument must have a minimum length of 1 characters"));
                    }
                    h.name = Raw::from_str(g.arg(), "hashlimit --hashlimit-name").map_err(wire)?;
                }
                "hashlimit-rate-match" => {
                    h.mode |= Info::RATE_MATCH;
                    rate_match = true;
                }
                _ => {
                    let v = atoll(g.arg()) as i64;
                    if v <= 0 || v > i64::from(i32::MAX) {
                        return Err(bad(format!(
                            "hashlimit: Bad value for option \"--hashlimit-rate-interval\" ({})",
                            g.arg()
                        )));
                    }
                    h.interval = v as u32;
                }
            }
        }
        exclusive(
            "hashlimit",
            given,
            &["hashlimit-upto", "hashlimit-above", "hashlimit"],
        )?;
        if limit.is_none() {
            return Err(bad("You have to specify --hashlimit"));
        }
        if !given.iter().any(|g| g.opt == "hashlimit-name") {
            return Err(bad(
                "hashlimit: option \"--hashlimit-name\" must be specified",
            ));
        }
        if !has_expire {
            h.expire = mult.saturating_mul(1000);
        }
        if h.mode & Info::BYTES != 0 {
            let mut b = 0u64;
            if has_burst {
                let unit = cost_to_bytes(h.avg);
                if h.burst < unit {
                    return Err(bad(format!("burst cannot be smaller than {unit}b")));
                }
                // iptables holds the quotient in 32 bits.
                b = u64::from(((h.burst & u64::from(u32::MAX)) / unit.max(1)) as u32);
                if h.burst % unit.max(1) != 0 {
                    b = u64::from((b as u32).wrapping_add(1));
                }
                if !has_expire {
                    h.expire = BYTE_EXPIRE_BURST * 1000;
                }
            }
            h.burst = b;
        } else if h.burst > BURST_MAX {
            return Err(bad(format!(
                "bad value for option \"--hashlimit-burst\", or out of range (1-{BURST_MAX})."
            )));
        }
        if rate_match {
            if h.mode & Info::BYTES == 0 {
                h.avg /= u64::from(mult);
            }
            if h.interval == 0 {
                h.interval = if h.mode & Info::BYTES != 0 { 1 } else { mult };
            }
        }
        Ok(h.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        dump(info, family, false, out)
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        dump(info, family, true, out)
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut h = Info::decode(info).ok()?;
        h.name = h.name.canonical_text();
        Some(h.encode())
    }
}

/// The options as `-S` prints them, or (`list`) the words of `-L` (`hashlimit_mt_print`).
fn dump(info: &[u8], family: Family, list: bool, out: &mut String) -> Option<()> {
    let h = Info::decode(info).ok()?;
    // `-L` words are `-S` options without `--hashlimit-` (`--hashlimit-srcmask` is
    // `srcmask`, `--hashlimit-htable-max` is `htable-max`).
    let o = |w: &str| {
        if list {
            w.to_string()
        } else {
            format!("--hashlimit-{w}")
        }
    };
    if h.mode >= 1 << 7 || h.avg == 0 || h.name.text().is_empty() {
        return None;
    }
    out.push_str(match (h.mode & Info::INVERT != 0, list) {
        (true, false) => " --hashlimit-above",
        (false, false) => " --hashlimit-upto",
        (true, true) => " limit: above",
        (false, true) => " limit: up to",
    });
    let quantum: u64 = if h.mode & Info::BYTES != 0 {
        let mut r = cost_to_bytes(h.avg);
        let i = (0..UNITS.len() - 1)
            .find(|&i| r >= UNITS[i].1 && bytes_to_cost(r & !(UNITS[i].1 - 1)) == Some(h.avg))
            .unwrap_or(UNITS.len() - 1);
        let _ = write!(out, " {}{}b/s", r / UNITS[i].1, UNITS[i].0);
        if h.burst == 0 {
            u64::from(BYTE_EXPIRE) * 1000
        } else {
            r = r.wrapping_mul(h.burst);
            let i = (0..UNITS.len() - 1)
                .find(|&i| r >= UNITS[i].1)
                .unwrap_or(UNITS.len() - 1);
            let _ = write!(out, " {} {}{}b", o("burst"), r / UNITS[i].1, UNITS[i].0);
            u64::from(BYTE_EXPIRE_BURST) * 1000
        }
    } else {
        // `-L` shows the rate over the rate-match interval.
        let p = if list && h.interval != 0 {
            h.avg.wrapping_mul(u64::from(h.interval))
        } else {
            h.avg
        };
        let i = (1..RATES.len())
            .find(|&i| p > RATES[i].1 || RATES[i].1 / p < RATES[i].1 % p)
            .unwrap_or(RATES.len());
        let (name, m) = RATES[i - 1];
        let _ = write!(out, " {}/{name} {} {}", m / p, o("burst"), h.burst);
        m / Info::SCALE * 1000
    };
    let hash = Info::HASH_SIP | Info::HASH_SPT | Info::HASH_DIP | Info::HASH_DPT;
    if h.mode & hash != 0 {
        let names: Vec<&str> = [
            (Info::HASH_SIP, "srcip"),
            (Info::HASH_SPT, "srcport"),
            (Info::HASH_DIP, "dstip"),
            (Info::HASH_DPT, "dstport"),
        ]
        .iter()
        .filter(|(b, _)| h.mode & b != 0)
        .map(|(_, n)| *n)
        .collect();
        let sep = if list { "-" } else { "," };
        let _ = write!(out, " {} {}", o("mode"), names.join(sep));
    }
    if !list {
        let _ = write!(out, " --hashlimit-name {}", h.name.text());
    }
    if h.size != 0 {
        let _ = write!(out, " {} {}", o("htable-size"), h.size);
    }
    if h.max != 0 {
        let _ = write!(out, " {} {}", o("htable-max"), h.max);
    }
    if h.gc_interval != GCINTERVAL {
        let _ = write!(out, " {} {}", o("htable-gcinterval"), h.gc_interval);
    }
    if u64::from(h.expire) != quantum {
        let _ = write!(out, " {} {}", o("htable-expire"), h.expire);
    }
    let dmask = if family == Family::Ipv6 { 128 } else { 32 };
    if h.srcmask != dmask {
        let _ = write!(out, " {} {}", o("srcmask"), h.srcmask);
    }
    if h.dstmask != dmask {
        let _ = write!(out, " {} {}", o("dstmask"), h.dstmask);
    }
    if h.mode & Info::RATE_MATCH != 0 {
        let _ = write!(out, " {}", o("rate-match"));
        if h.interval != 1 {
            let _ = write!(out, " {} {}", o("rate-interval"), h.interval);
        }
    }
    Some(())
}
