//! `-m time` (revision 0, IPv4 and IPv6): the payload of [`crate::xt::time`], through
//! nft_compat in iptables-nft (its `add_match` has no native form for it).
//!
//! Parsed as iptables 1.8.9's libxt_time does: dates `YYYY[-MM[-DD[Thh[:mm[:ss]]]]]` in UTC
//! (years 1970 to 2038, a month or day 0 rolling back as `mktime` rolls it), daytimes
//! `hh:mm[:ss]`, month days 1 to 31, week days by number (Monday 1) or by the first two
//! letters of their names, `!` on the days taking the complement. Printed in its words and
//! order, with its quirk: the default end date (`INT_MAX`) is printed by `-S` as
//! `--datestop 2038-01-19T03:14:07`, since iptables compares it with `LONG_MAX`.
//!
//! Refused on purpose where iptables writes what it cannot print back: a week day over 7
//! (iptables sets a bit it never shows), month day 0, a month day of more than two
//! characters (iptables keeps the first two), a day list that leaves no day, and
//! `--datestop` at the epoch itself (iptables prints nothing and reads it back as no end).

use super::*;
use crate::xt::time::{
    TIME_ALL_MONTHDAYS, TIME_ALL_WEEKDAYS, TIME_DATE_STOP_NONE, TIME_MAX_DAYTIME, TimeInfo,
    XT_TIME_CONTIGUOUS, XT_TIME_LOCAL_TZ,
};

pub(crate) struct Time;

const WEEK_DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

/// The last second a date iptables reads can name (2038-12-31T23:59:59).
const LAST_DATE: u32 = 2_177_452_799;

/// Days from 1970-01-01 to the first of `month` (1-12) of `year` (proleptic Gregorian).
fn days_from_civil(year: i64, month: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// A run of decimal digits as a number, or `None`.
fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `YYYY[-MM[-DD[Thh[:mm[:ss]]]]]` in UTC, as `time_parse_date` reads it.
fn parse_date(s: &str) -> Result<u32> {
    let invalid = || {
        bad(format!(
            "Invalid date \"{s}\" specified. Should be YYYY[-MM[-DD[Thh[:mm[:ss]]]]]"
        ))
    };
    let (date, clock) = match s.split_once('T') {
        Some((d, c)) => (d, Some(c)),
        None => (s, None),
    };
    let d: Vec<&str> = date.split('-').collect();
    if d.len() > 3 || (clock.is_some() && d.len() != 3) {
        return Err(invalid());
    }
    let c: Vec<&str> = clock.map_or_else(Vec::new, |c| c.split(':').collect());
    if c.len() > 3 {
        return Err(invalid());
    }
    let field = |v: &[&str], i: usize, default: i64, max: i64| -> Result<i64> {
        match v.get(i) {
            None => Ok(default),
            Some(w) => digits(w).filter(|n| *n <= max).ok_or_else(invalid),
        }
    };
    let year = field(&d, 0, 0, 2038)?;
    if year < 1970 {
        return Err(invalid());
    }
    let (month, day) = (field(&d, 1, 1, 12)?, field(&d, 2, 1, 31)?);
    let (hour, min, sec) = (
        field(&c, 0, 0, 23)?,
        field(&c, 1, 0, 59)?,
        field(&c, 2, 0, 59)?,
    );
    // mktime's normalisation: month 0 is December of the year before, day 0 the last
    // day of the month before.
    let (y, m) = if month == 0 {
        (year - 1, 12)
    } else {
        (year, month)
    };
    let secs = (days_from_civil(y, m) + day - 1) * 86_400 + hour * 3600 + min * 60 + sec;
    if secs < 0 {
        return Err(bad(format!(
            "time: date \"{s}\" is before 1970: mktime returned an error"
        )));
    }
    u32::try_from(secs).map_err(|_| invalid())
}

/// `hh:mm[:ss]` as seconds since midnight (`time_parse_minutes`).
fn parse_daytime(s: &str) -> Result<u32> {
    let invalid = || {
        bad(format!(
            "invalid time \"{s}\" specified, should be hh:mm[:ss] format and within the boundaries"
        ))
    };
    let v: Vec<&str> = s.split(':').collect();
    if !(2..=3).contains(&v.len()) {
        return Err(invalid());
    }
    let mut t = 0;
    for (i, (w, max)) in v.iter().zip([23, 59, 59]).enumerate() {
        let n = digits(w).filter(|n| *n <= max).ok_or_else(invalid)?;
        t += n * [3600, 60, 1][i];
    }
    Ok(t as u32)
}

/// The comma-separated words of a day list; one trailing comma is allowed, as iptables'
/// `my_strseg` allows it.
fn day_words(s: &str) -> Vec<&str> {
    let s = s.strip_suffix(',').unwrap_or(s);
    if s.is_empty() {
        return Vec::new();
    }
    s.split(',').collect()
}

fn parse_monthdays(s: &str) -> Result<u32> {
    let mut bits = 0u32;
    for w in day_words(s) {
        let n = (w.len() <= 2)
            .then(|| num(w, 31, "time").ok())
            .flatten()
            .filter(|n| *n >= 1)
            .ok_or_else(|| bad(format!("{w} is not a valid day for --monthdays")))?;
        bits |= 1 << n;
    }
    Ok(bits)
}

fn parse_weekdays(s: &str) -> Result<u8> {
    let mut bits = 0u8;
    for w in day_words(s) {
        if let Ok(n) = num(w, u64::from(u32::MAX), "time") {
            if n == 0 {
                return Err(bad("No, the week does NOT begin with Sunday."));
            }
            if n > 7 {
                return Err(bad(format!(
                    "{w} is not a valid day specifier (week days are 1 to 7)"
                )));
            }
            bits |= 1 << n;
            continue;
        }
        // iptables compares the first two letters of the word's first three.
        let i = WEEK_DAYS
            .iter()
            .position(|d| w.len() >= 2 && w.as_bytes()[..2] == d.as_bytes()[..2])
            .ok_or_else(|| bad(format!("{w} is not a valid day specifier")))?;
        bits |= 1 << (i + 1);
    }
    Ok(bits)
}

/// `YYYY-MM-DD`, the separator, `hh:mm:ss` (`time_print_date`).
fn date_text(t: u32, sep: char) -> String {
    let t = i64::from(t);
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}{sep}{:02}:{:02}:{:02}",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

fn daytime_text(t: u32) -> String {
    format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

fn monthdays_text(mask: u32, human: bool) -> String {
    let mut out = Vec::new();
    for i in 1..=31u32 {
        if mask & (1 << i) != 0 {
            // iptables' suffixes go by the last digit alone (`11st`, `12nd`, `13rd`).
            let suffix = match (human, i % 10) {
                (false, _) => "",
                (true, 1) => "st",
                (true, 2) => "nd",
                (true, 3) => "rd",
                (true, _) => "th",
            };
            out.push(format!("{i}{suffix}"));
        }
    }
    out.join(",")
}

fn weekdays_text(mask: u8) -> String {
    (1..=7)
        .filter(|i| mask & (1 << i) != 0)
        .map(|i| WEEK_DAYS[i - 1])
        .collect::<Vec<_>>()
        .join(",")
}

/// The payload, if iptables' `-S` can print it back as it is.
fn printable(info: &[u8]) -> Option<TimeInfo> {
    let t = TimeInfo::decode(info).ok()?;
    let ok = t.flags & !(XT_TIME_LOCAL_TZ | XT_TIME_CONTIGUOUS) == 0
        && t.daytime_start <= TIME_MAX_DAYTIME
        && t.daytime_stop <= TIME_MAX_DAYTIME
        && t.weekdays_match & 1 == 0
        && t.weekdays_match != 0
        && t.monthdays_match & 1 == 0
        && t.monthdays_match != 0
        && t.date_start <= LAST_DATE
        && t.date_stop <= LAST_DATE
        && t.date_stop != 0
        && !(t.flags & XT_TIME_CONTIGUOUS != 0 && t.daytime_start < t.daytime_stop);
    ok.then_some(t)
}

fn daytime_set(t: &TimeInfo) -> bool {
    t.daytime_start != 0 || t.daytime_stop != TIME_MAX_DAYTIME
}

impl Ext for Time {
    fn name(&self) -> &'static str {
        "time"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("datestart", Arg::One, false),
            opt("datestop", Arg::One, false),
            opt("timestart", Arg::One, false),
            opt("timestop", Arg::One, false),
            opt("contiguous", Arg::None, false),
            opt("weekdays", Arg::One, true),
            opt("monthdays", Arg::One, true),
            opt("localtz", Arg::None, false),
            opt("utc", Arg::None, false),
            opt("kerneltz", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        // iptables reads the options in order (warning at `--localtz`) and refuses a repeated
        // one when it meets it again: only the options before it are read.
        let first_repeat = (0..given.len())
            .find(|&i| given[..i].iter().any(|h| h.opt == given[i].opt))
            .unwrap_or(given.len());
        let mut t = TimeInfo::defaults();
        for g in &given[..first_repeat] {
            match g.opt {
                "datestart" => t.date_start = parse_date(g.arg())?,
                "datestop" => {
                    t.date_stop = parse_date(g.arg())?;
                    if t.date_stop == 0 {
                        return Err(bad(
                            "time: --datestop 1970-01-01T00:00:00 can never match, and iptables \
                             cannot print it back (it would read as no end date)",
                        ));
                    }
                }
                "timestart" => t.daytime_start = parse_daytime(g.arg())?,
                "timestop" => t.daytime_stop = parse_daytime(g.arg())?,
                "contiguous" => t.flags |= XT_TIME_CONTIGUOUS,
                "localtz" => {
                    // libxt_time.c warns as it reads the option, before any later one.
                    crate::ipt::messages::warn(crate::ipt::messages::TIME_LOCALTZ_WARNING);
                    t.flags |= XT_TIME_LOCAL_TZ;
                }
                "kerneltz" => t.flags |= XT_TIME_LOCAL_TZ,
                "utc" => {}
                "monthdays" => {
                    let mut m = parse_monthdays(g.arg())?;
                    if g.neg {
                        m ^= TIME_ALL_MONTHDAYS;
                    }
                    if m == 0 {
                        return Err(bad("time: --monthdays leaves no day to match"));
                    }
                    t.monthdays_match = m;
                }
                _ => {
                    let mut w = parse_weekdays(g.arg())?;
                    if g.neg {
                        w ^= TIME_ALL_WEEKDAYS;
                    }
                    if w == 0 {
                        return Err(bad("time: --weekdays leaves no day to match"));
                    }
                    t.weekdays_match = w;
                }
            }
        }
        once(given, "time")?;
        // The final check: `--utc` excludes `--localtz` and `--kerneltz` (in iptables' words
        // and order, whichever was given first).
        let has = |o: &str| given.iter().any(|g| g.opt == o);
        for (a, b) in [("localtz", "utc"), ("utc", "kerneltz")] {
            if has(a) && has(b) {
                return Err(bad(format!(
                    "time: option \"--{a}\" cannot be used together with \"--{b}\".\n"
                )));
            }
        }
        if t.flags & XT_TIME_CONTIGUOUS != 0 && t.daytime_start < t.daytime_stop {
            return Err(bad(
                "time: --contiguous only makes sense when stoptime is smaller than starttime",
            ));
        }
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = printable(info)?;
        if daytime_set(&t) {
            let _ = write!(
                out,
                " --timestart {} --timestop {}",
                daytime_text(t.daytime_start),
                daytime_text(t.daytime_stop)
            );
        }
        if t.monthdays_match != TIME_ALL_MONTHDAYS {
            let _ = write!(
                out,
                " --monthdays {}",
                monthdays_text(t.monthdays_match, false)
            );
        }
        if t.weekdays_match != TIME_ALL_WEEKDAYS {
            let _ = write!(out, " --weekdays {}", weekdays_text(t.weekdays_match));
        }
        if t.date_start != 0 {
            let _ = write!(out, " --datestart {}", date_text(t.date_start, 'T'));
        }
        // date_stop is never 0 here (see `printable`).
        let _ = write!(out, " --datestop {}", date_text(t.date_stop, 'T'));
        if t.flags & XT_TIME_LOCAL_TZ != 0 {
            out.push_str(" --kerneltz");
        }
        if t.flags & XT_TIME_CONTIGUOUS != 0 {
            out.push_str(" --contiguous");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let t = printable(info)?;
        out.push_str(" TIME");
        if daytime_set(&t) {
            let _ = write!(
                out,
                " from {} to {}",
                daytime_text(t.daytime_start),
                daytime_text(t.daytime_stop)
            );
        }
        if t.weekdays_match != TIME_ALL_WEEKDAYS {
            let _ = write!(out, " on {}", weekdays_text(t.weekdays_match));
        }
        if t.monthdays_match != TIME_ALL_MONTHDAYS {
            let _ = write!(out, " on {}", monthdays_text(t.monthdays_match, true));
        }
        if t.date_start != 0 {
            let _ = write!(out, " starting from {}", date_text(t.date_start, ' '));
        }
        if t.date_stop != TIME_DATE_STOP_NONE {
            let _ = write!(out, " until date {}", date_text(t.date_stop, ' '));
        }
        if t.flags & XT_TIME_LOCAL_TZ == 0 {
            out.push_str(" UTC");
        }
        if t.flags & XT_TIME_CONTIGUOUS != 0 {
            out.push_str(" contiguous");
        }
        Some(())
    }
    canonical_via!(TimeInfo);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_and_print_as_iptables_does() {
        assert_eq!(parse_date("1970").ok(), Some(0));
        assert_eq!(
            parse_date("2038-01-19T03:14:07").ok(),
            Some(TIME_DATE_STOP_NONE)
        );
        assert_eq!(parse_date("2001-02-03T04:05:06").ok(), Some(981_173_106));
        // mktime's roll-over: 2001-02-31 is 2001-03-03, month 0 December before.
        assert_eq!(
            date_text(parse_date("2001-02-31").unwrap(), 'T'),
            "2001-03-03T00:00:00"
        );
        assert_eq!(
            date_text(parse_date("2001-00-05").unwrap(), 'T'),
            "2000-12-05T00:00:00"
        );
        assert_eq!(date_text(LAST_DATE, ' '), "2038-12-31 23:59:59");
        for b in [
            "1969",
            "2039",
            "2001-13",
            "2001-02-03T24",
            "x",
            "2001-02T01",
            "",
        ] {
            assert!(parse_date(b).is_err(), "{b}");
        }
        assert!(parse_date("1970-00").is_err());
    }

    #[test]
    fn days_and_daytimes() {
        assert_eq!(parse_daytime("1:2").ok(), Some(3720));
        assert!(parse_daytime("24:00").is_err() && parse_daytime("01").is_err());
        assert_eq!(parse_weekdays("Mo,Tuesday,7,").ok(), Some(0b1000_0110));
        assert!(parse_weekdays("8").is_err() && parse_weekdays("0").is_err());
        assert!(parse_weekdays("M").is_err());
        assert_eq!(parse_monthdays("1,31").ok(), Some((1 << 1) | (1 << 31)));
        assert!(parse_monthdays("0").is_err() && parse_monthdays("123").is_err());
        assert_eq!(monthdays_text(0b1110 << 10, true), "11st,12nd,13rd");
    }
}
