//! `-m limit` rev 0 (written natively by iptables-nft, see [`super::native`]).

use super::*;
use crate::xt::limit::{LIMIT_SCALE, Rateinfo};

pub(crate) struct Limit;

const BURST: u32 = 5;

const RATES: [(&str, u32); 4] = [
    ("day", LIMIT_SCALE * 24 * 60 * 60),
    ("hour", LIMIT_SCALE * 60 * 60),
    ("min", LIMIT_SCALE * 60),
    ("sec", LIMIT_SCALE),
];

/// `n[/second|/minute|/hour|/day]` (any start of the unit's name) as `avg`.
fn parse_rate(s: &str) -> Result<u32> {
    let badr = || bad(format!("bad rate \"{s}\"'"));
    let (n, unit) = match s.split_once('/') {
        Some((n, u)) => (n, Some(u)),
        None => (s, None),
    };
    let mult: u64 = match unit {
        None => 1,
        Some("") => return Err(badr()),
        Some(u) => {
            let pre = |full: &str| full.len() >= u.len() && full[..u.len()].eq_ignore_ascii_case(u);
            if pre("second") {
                1
            } else if pre("minute") {
                60
            } else if pre("hour") {
                3600
            } else if pre("day") {
                86400
            } else {
                return Err(badr());
            }
        }
    };
    // atoi: the leading digits.
    let digits: String = n
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let r: u64 = digits.parse().unwrap_or(0);
    if r == 0 || r > u64::from(u32::MAX) {
        return Err(badr());
    }
    let avg = u64::from(LIMIT_SCALE) * mult / r;
    if avg == 0 {
        return Err(bad(format!("Rate too fast \"{s}\"")));
    }
    Ok(avg as u32)
}

pub(crate) fn print_rate(out: &mut String, period: u32) -> Option<()> {
    if period == 0 {
        return None;
    }
    let mut i = 1;
    while i < RATES.len() {
        if period > RATES[i].1 || RATES[i].1 / period < RATES[i].1 % period {
            break;
        }
        i += 1;
    }
    let (name, mult) = RATES[i - 1];
    let _ = write!(out, " {}/{name}", mult / period);
    Some(())
}

impl Ext for Limit {
    fn name(&self) -> &'static str {
        "limit"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("limit", Arg::One, false),
            opt("limit-burst", Arg::One, false)
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "limit")?;
        let mut r = Rateinfo {
            avg: LIMIT_SCALE * 60 * 60 / 3,
            burst: BURST,
        };
        for g in given {
            match g.opt {
                "limit" => r.avg = parse_rate(g.arg())?,
                _ => r.burst = num(g.arg(), 10000, "limit-burst")? as u32,
            }
        }
        Ok(r.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let r = Rateinfo::decode(info).ok()?;
        out.push_str(" --limit");
        print_rate(out, r.avg)?;
        if r.burst != BURST {
            let _ = write!(out, " --limit-burst {}", r.burst);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let r = Rateinfo::decode(info).ok()?;
        out.push_str(" limit: avg");
        print_rate(out, r.avg)?;
        let _ = write!(out, " burst {}", r.burst);
        Some(())
    }
    canonical_via!(Rateinfo);
}
