//! `-m statistic` rev 0.

use super::*;
use crate::xt::statistic::{INVERT, MODE_NTH, MODE_RANDOM, Statistic as Info};

pub(crate) struct Statistic;

impl Ext for Statistic {
    fn name(&self) -> &'static str {
        "statistic"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("mode", Arg::One, false),
            opt("probability", Arg::One, true),
            opt("every", Arg::One, true),
            opt("packet", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "statistic")?;
        let mut s = Info::default();
        let mode = get(given, "mode")
            .ok_or_else(|| bad("statistic: option \"--mode\" must be specified"))?;
        s.mode = match mode.arg() {
            "random" => MODE_RANDOM,
            "nth" => MODE_NTH,
            m => return Err(bad(format!("Bad mode \"{m}\""))),
        };
        let p = get(given, "probability");
        let (e, k) = (get(given, "every"), get(given, "packet"));
        if p.is_some() && (e.is_some() || k.is_some()) {
            return Err(bad(
                "statistic: --probability cannot be used with --every or --packet",
            ));
        }
        if given.iter().any(|g| g.neg) {
            s.flags |= INVERT;
        }
        if let Some(p) = p {
            let v: f64 = p
                .arg()
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| (0.0..=1.0).contains(v))
                .ok_or_else(|| bad(format!("statistic: bad --probability \"{}\"", p.arg())))?;
            s.probability_or_every = (f64::from(0x8000_0000u32) * v).round() as u32;
        }
        if let Some(e) = e {
            let n = num(e.arg(), u64::from(u32::MAX), "statistic --every")? as u32;
            if n == 0 {
                return Err(bad("statistic: --every must be at least 1"));
            }
            s.probability_or_every = n - 1;
        }
        if let Some(k) = k {
            s.packet = num(k.arg(), u64::from(u32::MAX), "statistic --packet")? as u32;
        }
        if (e.is_some()) != (k.is_some()) {
            return Err(bad("statistic: --every and --packet go together"));
        }
        if s.mode == MODE_RANDOM && p.is_none() {
            return Err(bad(
                "--probability must be specified when using random mode",
            ));
        }
        if s.mode == MODE_NTH && e.is_none() {
            return Err(bad(
                "--every and --packet must be specified when using nth mode",
            ));
        }
        if s.mode == MODE_NTH {
            if s.packet > s.probability_or_every {
                return Err(bad("the --packet p must be 0 <= p <= n-1"));
            }
            s.count = s.probability_or_every - s.packet;
        }
        Ok(s.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let s = Info::decode(info).ok()?;
        if s.flags & !INVERT != 0 {
            return None;
        }
        let inv = if s.flags & INVERT != 0 { " !" } else { "" };
        match s.mode {
            MODE_RANDOM => {
                let p = f64::from(s.probability_or_every) / f64::from(0x8000_0000u32);
                let _ = write!(out, " --mode random{inv} --probability {p:.11}");
            }
            MODE_NTH => {
                let _ = write!(
                    out,
                    " --mode nth{inv} --every {} --packet {}",
                    u64::from(s.probability_or_every) + 1,
                    s.packet
                );
            }
            _ => return None,
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let s = Info::decode(info).ok()?;
        let inv = if s.flags & INVERT != 0 { " !" } else { "" };
        match s.mode {
            MODE_RANDOM => {
                let p = f64::from(s.probability_or_every) / f64::from(0x8000_0000u32);
                let _ = write!(out, " statistic mode random{inv} probability {p:.11}");
            }
            MODE_NTH => {
                let every = u64::from(s.probability_or_every) + 1;
                let _ = write!(out, " statistic mode nth{inv} every {every}");
                if s.packet != 0 {
                    let _ = write!(out, " packet {}", s.packet);
                }
            }
            _ => return None,
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        // `count` is the kernel's running counter in nth mode; iptables writes every-packet.
        let mut s = Info::decode(info).ok()?;
        if s.mode == MODE_NTH {
            s.count = s.probability_or_every.wrapping_sub(s.packet);
        } else {
            s.packet = 0;
            s.count = 0;
        }
        Some(s.encode())
    }
}
