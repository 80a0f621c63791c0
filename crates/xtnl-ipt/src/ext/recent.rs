//! `-m recent` rev 1.

use super::conntrack::host_mask;
use super::*;
use crate::xt::layout::Raw;
use crate::xt::recent::{
    RECENT_CHECK, RECENT_REAP, RECENT_REMOVE, RECENT_SET, RECENT_TTL, RECENT_UPDATE,
    RecentV1 as Info,
};

pub(crate) struct Recent;

const OPS: [(&str, u8); 4] = [
    ("set", RECENT_SET),
    ("rcheck", RECENT_CHECK),
    ("update", RECENT_UPDATE),
    ("remove", RECENT_REMOVE),
];

impl Ext for Recent {
    fn name(&self) -> &'static str {
        "recent"
    }
    fn revision(&self) -> u32 {
        1
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("set", Arg::None, true),
            opt("rcheck", Arg::None, true),
            opt("update", Arg::None, true),
            opt("remove", Arg::None, true),
            opt("seconds", Arg::One, false),
            opt("reap", Arg::None, false),
            opt("hitcount", Arg::One, false),
            opt("rttl", Arg::None, false),
            opt("name", Arg::One, false),
            opt("rsource", Arg::None, false),
            opt("rdest", Arg::None, false),
            opt("mask", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "recent")?;
        let ops = given
            .iter()
            .filter(|g| OPS.iter().any(|(n, _)| *n == g.opt))
            .count();
        if ops == 0 {
            return Err(bad(
                "recent: you must specify one of `--set', `--rcheck' `--update' or `--remove'",
            ));
        }
        if ops > 1 {
            return Err(bad(
                "recent: only one of --set, --rcheck, --update, --remove",
            ));
        }
        let mut r = Info {
            name: Raw::from_str("DEFAULT", "recent --name").map_err(wire)?,
            mask: Raw([0xff; 16]),
            ..Default::default()
        };
        for g in given {
            if let Some((_, bit)) = OPS.iter().find(|(n, _)| *n == g.opt) {
                r.check_set |= bit;
                if g.neg {
                    r.invert = 1;
                }
                continue;
            }
            match g.opt {
                "seconds" => {
                    r.seconds = num(g.arg(), u64::from(u32::MAX), "recent --seconds")? as u32;
                    if r.seconds == 0 {
                        return Err(bad("recent: --seconds must be at least 1"));
                    }
                }
                "reap" => r.check_set |= RECENT_REAP,
                "hitcount" => {
                    r.hit_count = num(g.arg(), u64::from(u32::MAX), "recent --hitcount")? as u32
                }
                "rttl" => r.check_set |= RECENT_TTL,
                "name" => {
                    // iptables copies the name over "DEFAULT" and ends it with a NUL, so
                    // a short name keeps the rest of "DEFAULT" behind it ("SSH\0ULT"),
                    // and iptables' -C compares those bytes too.
                    let new = Raw::<200>::from_str(g.arg(), "recent --name").map_err(wire)?;
                    let n = g.arg().len();
                    r.name.0[..=n].copy_from_slice(&new.0[..=n]);
                }
                "rsource" => r.side = 0,
                "rdest" => r.side = 1,
                _ => {
                    let (a, _) = host_mask(g.arg(), ctx.family, "recent --mask")?;
                    r.mask = Raw(a);
                }
            }
        }
        if r.check_set & RECENT_REAP != 0 && r.seconds == 0 {
            return Err(bad("recent: --reap needs --seconds"));
        }
        if r.check_set & RECENT_TTL != 0 && r.check_set & (RECENT_SET | RECENT_REMOVE) != 0 {
            return Err(bad("recent: --rttl cannot be used with --set or --remove"));
        }
        Ok(r.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let r = Info::decode(info).ok()?;
        if r.check_set & !0x3f != 0 || r.invert > 1 || r.side > 1 {
            return None;
        }
        bang(out, r.invert != 0);
        for (n, bit) in OPS {
            if r.check_set & bit != 0 {
                let _ = write!(out, " --{n}");
            }
        }
        if r.seconds != 0 {
            let _ = write!(out, " --seconds {}", r.seconds as i32);
        }
        if r.check_set & RECENT_REAP != 0 {
            out.push_str(" --reap");
        }
        if r.hit_count != 0 {
            let _ = write!(out, " --hitcount {}", r.hit_count as i32);
        }
        if r.check_set & RECENT_TTL != 0 {
            out.push_str(" --rttl");
        }
        let _ = write!(out, " --name {}", r.name.text());
        let a = &r.mask.0;
        if family == Family::Ipv6 {
            let _ = write!(out, " --mask {}", std::net::Ipv6Addr::from(*a));
        } else {
            let _ = write!(out, " --mask {}.{}.{}.{}", a[0], a[1], a[2], a[3]);
        }
        out.push_str(if r.side == 0 {
            " --rsource"
        } else {
            " --rdest"
        });
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let r = Info::decode(info).ok()?;
        bang(out, r.invert != 0);
        out.push_str(" recent:");
        for (word, bit) in [
            ("SET", RECENT_SET),
            ("CHECK", RECENT_CHECK),
            ("UPDATE", RECENT_UPDATE),
            ("REMOVE", RECENT_REMOVE),
        ] {
            if r.check_set & bit != 0 {
                let _ = write!(out, " {word}");
            }
        }
        if r.seconds != 0 {
            let _ = write!(out, " seconds: {}", r.seconds as i32);
        }
        if r.check_set & RECENT_REAP != 0 {
            out.push_str(" reap");
        }
        if r.hit_count != 0 {
            let _ = write!(out, " hit_count: {}", r.hit_count as i32);
        }
        if r.check_set & RECENT_TTL != 0 {
            out.push_str(" TTL-Match");
        }
        let _ = write!(out, " name: {}", r.name.text());
        out.push_str(if r.side == 0 {
            " side: source"
        } else {
            " side: dest"
        });
        let a = &r.mask.0;
        if family == Family::Ipv6 {
            let _ = write!(out, " mask: {}", std::net::Ipv6Addr::from(*a));
        } else {
            let _ = write!(out, " mask: {}.{}.{}.{}", a[0], a[1], a[2], a[3]);
        }
        Some(())
    }
    // The bytes after the name's NUL are kept: see `--name` above.
    canonical_via!(Info);
}
