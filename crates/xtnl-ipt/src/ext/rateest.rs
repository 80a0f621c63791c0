//! `-j RATEEST --rateest-name NAME --rateest-interval T --rateest-ewmalog T` and
//! `-m rateest ...` (both revision 0, both families), through nft_compat in iptables-nft.
//!
//! The target creates (or joins) the rate estimator NAME of the network namespace; the
//! match reads one or two of them, and the kernel refuses a match naming an estimator no
//! rule has created (ENOENT), or a target joining one with other parameters (EINVAL). The
//! estimator is freed with the last rule using it.
//!
//! Times and rates are read as iptables reads them (`strtod` and iproute2's units) and
//! printed with its `%.1f`/`%.0f`: `--rateest-bps 5kbit` saves as `5000bit`. iptables cuts a
//! name over 15 bytes silently; xtnl refuses it.

use super::secmark::word;
use super::*;
use crate::xt::layout::Raw;
use crate::xt::rateest::{
    RATEEST_EQ, RATEEST_GT, RATEEST_LT, RateestMatch as MInfo, RateestTarget as TInfo,
    rateest_flags as f,
};

const USEC: f64 = 1_000_000.0;

/// The leading decimal number of `s` as `strtod` reads it (no hex, inf or nan forms, which
/// iptables' users do not write), and the rest.
fn strtod(s: &str) -> Option<(f64, &str)> {
    let t = s.trim_start();
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let mut n = digits(&mut i);
    if i < b.len() && b[i] == b'.' {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if digits(&mut j) > 0 {
            i = j;
        }
    }
    Some((t[..i].parse().ok()?, &t[i..]))
}

/// A double as C converts it to `unsigned int`, for the values where that is defined.
fn to_u32(v: f64) -> Option<u32> {
    (v > -1.0 && v < 4_294_967_296.0).then_some(v as u32)
}

/// `RATEEST_get_time`: microseconds, with iproute2's `s`/`ms`/`us` suffixes.
fn get_time(s: &str) -> Option<u32> {
    let (t, rest) = strtod(s)?;
    let scale = match rest.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "s" | "sec" | "secs" => USEC,
        "ms" | "msec" | "msecs" => USEC / 1000.0,
        "us" | "usec" | "usecs" => 1.0,
        _ => return None,
    };
    to_u32(t * scale)
}

/// `RATEEST_print_time`.
fn print_time(out: &mut String, t: u32) {
    let v = f64::from(t);
    if v >= USEC {
        let _ = write!(out, " {:.1}s", v / USEC);
    } else if v >= USEC / 1000.0 {
        let _ = write!(out, " {:.1}ms", v / 1000.0);
    } else {
        let _ = write!(out, " {t}us");
    }
}

pub(crate) struct RateestTarget;

impl Ext for RateestTarget {
    fn name(&self) -> &'static str {
        "RATEEST"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("rateest-name", Arg::One, false),
            opt("rateest-interval", Arg::One, false),
            opt("rateest-ewmalog", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "RATEEST")?;
        let mut i = TInfo::default();
        let (mut interval, mut ewma) = (0u32, 0u32);
        for g in given {
            match g.opt {
                "rateest-name" => {
                    if g.arg().len() > 15 {
                        return Err(bad(
                            "RATEEST: argument for \"--rateest-name\" is too long (max 15 characters)",
                        ));
                    }
                    i.name = Raw::from_str(g.arg(), "rateest-name").map_err(wire)?;
                }
                "rateest-interval" => {
                    interval = get_time(g.arg()).ok_or_else(|| {
                        bad(format!("RATEEST: bad interval value \"{}\"", g.arg()))
                    })?
                }
                _ => {
                    ewma = get_time(g.arg())
                        .ok_or_else(|| bad(format!("RATEEST: bad ewmalog value \"{}\"", g.arg())))?
                }
            }
        }
        for o in ["rateest-name", "rateest-interval", "rateest-ewmalog"] {
            if get(given, o).is_none() {
                return Err(bad(format!("RATEEST: option \"--{o}\" must be specified")));
            }
        }
        // RATEEST_final_check: the smallest interval 2^k/4 s (k 0..5) not below the one
        // given, then the first log whose time constant exceeds --rateest-ewmalog, less one.
        let k = (0..=5u32)
            .find(|k| u64::from(interval) <= (1u64 << k) * 250_000)
            .ok_or_else(|| bad("RATEEST: interval value is too large"))?;
        i.interval = (k as i8 - 2) as u8;
        let mut log = 1u32;
        while log < 32 {
            // `1 << 31` is INT_MIN in iptables' int arithmetic.
            let d = if log == 31 {
                -2_147_483_648.0
            } else {
                f64::from(1u32 << log)
            };
            let w = 1.0 - 1.0 / d;
            if f64::from(interval) / (-w.ln()) > f64::from(ewma) {
                break;
            }
            log += 1;
        }
        let log = log - 1;
        if log == 0 || log >= 31 {
            return Err(bad("RATEEST: ewmalog value is out of range"));
        }
        i.ewma_log = log as u8;
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        rateest_words(info, "--rateest-", out)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        rateest_words(info, "", out)
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = TInfo::decode(info).ok()?;
        i.name = i.name.canonical_text();
        Some(i.encode())
    }
}

/// `__RATEEST_print`; `None` outside the kernel's ranges (interval -2..3, log 1..30),
/// where iptables' shifts are undefined.
fn rateest_words(info: &[u8], prefix: &str, out: &mut String) -> Option<()> {
    let i = TInfo::decode(info).ok()?;
    let iv = i.interval as i8;
    if !(-2..=3).contains(&iv) || !(1..=30).contains(&i.ewma_log) {
        return None;
    }
    let interval = (1_000_000u32 << (iv + 2)) / 4;
    let ewma = interval.wrapping_mul(1u32 << i.ewma_log);
    let _ = write!(out, " {prefix}name {}", word(i.name.text())?);
    let _ = write!(out, " {prefix}interval");
    print_time(out, interval);
    let _ = write!(out, " {prefix}ewmalog");
    print_time(out, ewma);
    Some(())
}

pub(crate) struct Rateest;

/// iproute2's rate units, in iptables' order (the first that matches, case ignored).
const UNITS: &[(&str, f64)] = &[
    ("bit", 1.),
    ("Kibit", 1024.),
    ("kbit", 1000.),
    ("Mibit", 1024. * 1024.),
    ("mbit", 1_000_000.),
    ("Gibit", 1024. * 1024. * 1024.),
    ("gbit", 1_000_000_000.),
    ("Tibit", 1024. * 1024. * 1024. * 1024.),
    ("tbit", 1_000_000_000_000.),
    ("Bps", 8.),
    ("KiBps", 8. * 1024.),
    ("KBps", 8000.),
    ("MiBps", 8. * 1024. * 1024.),
    ("MBps", 8_000_000.),
    ("GiBps", 8. * 1024. * 1024. * 1024.),
    ("GBps", 8_000_000_000.),
    ("TiBps", 8. * 1024. * 1024. * 1024. * 1024.),
    ("TBps", 8_000_000_000_000.),
];

/// `rateest_get_rate`: bytes per second (a bare number is bits, divided by 8 as well).
fn get_rate(s: &str) -> Option<u32> {
    let (v, rest) = strtod(s)?;
    if rest.is_empty() {
        return to_u32(v / 8.);
    }
    let (_, scale) = UNITS.iter().find(|(n, _)| n.eq_ignore_ascii_case(rest))?;
    to_u32(v * scale / 8.)
}

/// `rateest_print_rate`.
fn print_rate(out: &mut String, rate: u32, numeric: bool) {
    let tmp = f64::from(rate) * 8.;
    if numeric {
        let _ = write!(out, " {rate}");
    } else if tmp >= 1e9 {
        let _ = write!(out, " {:.0}Mbit", tmp / 1e6);
    } else if tmp >= 1e6 {
        let _ = write!(out, " {:.0}Kbit", tmp / 1e3);
    } else {
        let _ = write!(out, " {tmp:.0}bit");
    }
}

impl Ext for Rateest {
    fn name(&self) -> &'static str {
        "rateest"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("rateest1", Arg::One, false),
            opt("rateest", Arg::One, false),
            opt("rateest2", Arg::One, false),
            opt("rateest-bps1", Arg::Optional, false),
            opt("rateest-pps1", Arg::Optional, false),
            opt("rateest-bps2", Arg::Optional, false),
            opt("rateest-pps2", Arg::Optional, false),
            opt("rateest-bps", Arg::Optional, false),
            opt("rateest-pps", Arg::Optional, false),
            opt("rateest-delta", Arg::None, false),
            opt("rateest-lt", Arg::None, true),
            opt("rateest-gt", Arg::None, true),
            opt("rateest-eq", Arg::None, true),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        let mut i = MInfo::default();
        // iptables' option ids: the aliases share them, and each may be given once.
        let mut seen = 0u32;
        for g in given {
            let id = match g.opt {
                "rateest1" | "rateest" => 0,
                "rateest2" => 1,
                "rateest-bps1" => 2,
                "rateest-pps1" => 3,
                "rateest-bps2" | "rateest-bps" => 4,
                "rateest-pps2" | "rateest-pps" => 5,
                "rateest-delta" => 6,
                "rateest-lt" => 7,
                "rateest-gt" => 8,
                _ => 9,
            };
            if seen & (1 << id) != 0 {
                let what = match id {
                    0 => "--rateest1",
                    1 => "--rateest2",
                    2 => "--rateest-bps1",
                    3 => "--rateest-pps1",
                    4 => "--rateest-bps2",
                    5 => "--rateest-pps2",
                    6 => "--rateest-delta",
                    _ => "lt/gt/eq",
                };
                return Err(bad(format!("rateest: can't specify {what} twice")));
            }
            seen |= 1 << id;
            let name = |s: &str| -> Result<Raw<16>> {
                if s.len() > 15 {
                    return Err(bad(format!(
                        "rateest: argument for \"--{}\" is too long (max 15 characters)",
                        g.opt
                    )));
                }
                Raw::from_str(s, "rateest").map_err(wire)
            };
            let rate = |s: &str| {
                get_rate(s).ok_or_else(|| bad(format!("rateest: could not parse rate `{s}'")))
            };
            let pps = |s: &str| -> Result<u32> {
                num(s, u64::from(u32::MAX), "rateest")
                    .map(|v| v as u32)
                    .map_err(|_| bad(format!("rateest: could not parse pps `{s}'")))
            };
            let arg = g.args.first().map(String::as_str);
            match id {
                0 => i.name1 = name(g.arg())?,
                1 => {
                    i.name2 = name(g.arg())?;
                    i.flags |= f::REL;
                }
                2 | 4 => {
                    i.flags |= f::BPS;
                    if let Some(a) = arg {
                        *(if id == 2 { &mut i.bps1 } else { &mut i.bps2 }) = rate(a)?;
                    }
                }
                3 | 5 => {
                    i.flags |= f::PPS;
                    if let Some(a) = arg {
                        *(if id == 3 { &mut i.pps1 } else { &mut i.pps2 }) = pps(a)?;
                    }
                }
                6 => i.flags |= f::DELTA,
                _ => {
                    i.mode = match id {
                        7 => RATEEST_LT,
                        8 => RATEEST_GT,
                        _ => RATEEST_EQ,
                    };
                    if g.neg {
                        i.flags |= f::INVERT;
                    }
                }
            }
        }
        if i.flags & f::REL == 0 {
            i.flags |= f::ABS;
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = checked(info)?;
        if i.flags & f::DELTA != 0 {
            out.push_str(" --rateest-delta");
        }
        let n1 = word(i.name1.text())?;
        if i.flags & f::REL != 0 {
            let _ = write!(out, " --rateest1 {n1}");
            save_rates(&i, out);
            let _ = write!(out, " --rateest2 {}", word(i.name2.text())?);
        } else {
            let _ = write!(out, " --rateest {n1}");
            save_rates(&i, out);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let i = checked(info)?;
        let delta = i.flags & f::DELTA != 0;
        let abs = i.flags & f::ABS != 0;
        let _ = write!(out, " rateest match {}", word(i.name1.text())?);
        if delta {
            out.push_str(" delta");
        }
        if i.flags & f::BPS != 0 {
            out.push_str(" bps");
            if delta {
                print_rate(out, i.bps1, numeric);
            }
            if abs {
                print_rate(out, i.bps2, numeric);
                mode(&i, "", out);
            }
        }
        if i.flags & f::PPS != 0 {
            out.push_str(" pps");
            if delta {
                let _ = write!(out, " {}", i.pps1);
            }
            if abs {
                mode(&i, "", out);
                let _ = write!(out, " {}", i.pps2);
            }
        }
        if i.flags & f::REL != 0 {
            mode(&i, "", out);
            let _ = write!(out, " {}", word(i.name2.text())?);
            if i.flags & f::BPS != 0 {
                out.push_str(" bps");
                if delta {
                    print_rate(out, i.bps2, numeric);
                }
            }
            if i.flags & f::PPS != 0 {
                out.push_str(" pps");
                if delta {
                    let _ = write!(out, " {}", i.pps2);
                }
            }
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = MInfo::decode(info).ok()?;
        i.name1 = i.name1.canonical_text();
        i.name2 = i.name2.canonical_text();
        Some(i.encode())
    }
}

/// The payload, if iptables would print it and read the print back the same: known flag
/// bits, exactly one of ABS and REL (its parser sets one), a known comparison.
fn checked(info: &[u8]) -> Option<MInfo> {
    let i = MInfo::decode(info).ok()?;
    let known = f::INVERT | f::ABS | f::REL | f::DELTA | f::BPS | f::PPS;
    let one = (i.flags & f::ABS != 0) != (i.flags & f::REL != 0);
    (i.flags & !known == 0 && one && (RATEEST_EQ..=RATEEST_GT).contains(&i.mode)).then_some(i)
}

/// `rateest_print_mode`.
fn mode(i: &MInfo, prefix: &str, out: &mut String) {
    bang(out, i.flags & f::INVERT != 0);
    let m = match i.mode {
        RATEEST_EQ => "eq",
        RATEEST_LT => "lt",
        _ => "gt",
    };
    let _ = write!(out, " {prefix}{m}");
}

/// `rateest_save_rates`.
fn save_rates(i: &MInfo, out: &mut String) {
    if i.flags & f::BPS != 0 {
        save_rate(i, "bps", i.bps1, i.bps2, false, out);
    }
    if i.flags & f::PPS != 0 {
        save_rate(i, "pps", i.pps1, i.pps2, true, out);
    }
}

/// `__rateest_save_rate`.
fn save_rate(i: &MInfo, name: &str, r1: u32, r2: u32, numeric: bool, out: &mut String) {
    if i.flags & f::DELTA != 0 {
        let _ = write!(out, " --rateest-{name}1");
        print_rate(out, r1, numeric);
        mode(i, "--rateest-", out);
        let _ = write!(out, " --rateest-{name}2");
    } else {
        mode(i, "--rateest-", out);
        let _ = write!(out, " --rateest-{name}");
    }
    if i.flags & (f::ABS | f::DELTA) != 0 {
        print_rate(out, r2, numeric);
    }
}
