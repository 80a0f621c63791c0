//! `-j NFLOG` rev 0 and `-j NFQUEUE` rev 3.

use super::*;
use crate::xt::layout::Raw;
use crate::xt::nflog::{NFLOG_F_COPY_LEN, Nflog as LInfo};
use crate::xt::nfqueue::{NFQ_FLAG_BYPASS, NFQ_FLAG_CPU_FANOUT, NfqueueV3 as QInfo};

pub(crate) struct Nflog;
pub(crate) struct Nfqueue;

impl Ext for Nflog {
    fn name(&self) -> &'static str {
        "NFLOG"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("nflog-group", Arg::One, false),
            opt("nflog-prefix", Arg::One, false),
            opt("nflog-range", Arg::One, false),
            opt("nflog-size", Arg::One, false),
            opt("nflog-threshold", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "NFLOG")?;
        let mut l = LInfo::default();
        for g in given {
            match g.opt {
                "nflog-group" => l.group = xt_uint(g.arg(), 65535, "NFLOG", g.opt)? as u16,
                "nflog-prefix" => {
                    if g.arg().is_empty() {
                        return Err(bad("NFLOG: --nflog-prefix must not be empty"));
                    }
                    if g.arg().contains('\n') {
                        return Err(bad("Newlines not allowed in --log-prefix"));
                    }
                    // libxtables copies at most 63 bytes into the char[64] (XTOPT_STRING):
                    // under iptables' names a longer prefix is cut, as iptables-legacy saves
                    // it (libxt_NFLOG.t); xtnl's own command line refuses it
                    if !crate::ipt::messages::as_iptables() {
                        Raw::<64>::from_str(g.arg(), "NFLOG --nflog-prefix").map_err(wire)?;
                    }
                    let b = g.arg().as_bytes();
                    let mut r = [0u8; 64];
                    let n = b.len().min(63);
                    r[..n].copy_from_slice(&b[..n]);
                    l.prefix = Raw(r);
                }
                "nflog-range" => {
                    l.len = xt_uint(g.arg(), u64::from(u32::MAX), "NFLOG", g.opt)? as u32
                }
                "nflog-size" => {
                    l.len = xt_uint(g.arg(), u64::from(u32::MAX), "NFLOG", g.opt)? as u32;
                    l.flags |= NFLOG_F_COPY_LEN;
                }
                _ => l.threshold = xt_uint(g.arg(), 65535, "NFLOG", g.opt)? as u16,
            }
        }
        // libxt_NFLOG.c's final check: the warning once every value parsed, then the
        // exclusion (iptables prints both).
        if get(given, "nflog-range").is_some() {
            crate::ipt::messages::warn(crate::ipt::messages::NFLOG_RANGE_WARNING);
        }
        if get(given, "nflog-range").is_some() && get(given, "nflog-size").is_some() {
            return Err(bad(
                "NFLOG: option \"--nflog-range\" cannot be used together with \"--nflog-size\".\n",
            ));
        }
        Ok(l.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let l = LInfo::decode(info).ok()?;
        if l.flags & !NFLOG_F_COPY_LEN != 0 {
            return None;
        }
        if l.prefix.0[0] != 0 {
            out.push_str(" --nflog-prefix");
            crate::ipt::print::save_string(out, &l.prefix.text());
        }
        if l.group != 0 {
            let _ = write!(out, " --nflog-group {}", l.group);
        }
        if l.flags & NFLOG_F_COPY_LEN != 0 {
            let _ = write!(out, " --nflog-size {}", l.len);
        } else if l.len != 0 {
            let _ = write!(out, " --nflog-range {}", l.len);
        }
        if l.threshold != 0 {
            let _ = write!(out, " --nflog-threshold {}", l.threshold);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        // `nflog_print` with an empty prefix: the `-S` words without `--`.
        let l = LInfo::decode(info).ok()?;
        if l.prefix.0[0] != 0 {
            out.push_str(" nflog-prefix");
            crate::ipt::print::save_string(out, &l.prefix.text());
        }
        if l.group != 0 {
            let _ = write!(out, " nflog-group {}", l.group);
        }
        if l.flags & NFLOG_F_COPY_LEN != 0 {
            let _ = write!(out, " nflog-size {}", l.len);
        } else if l.len != 0 {
            let _ = write!(out, " nflog-range {}", l.len);
        }
        if l.threshold != 0 {
            let _ = write!(out, " nflog-threshold {}", l.threshold);
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut l = LInfo::decode(info).ok()?;
        l.prefix = l.prefix.canonical_text();
        l.pad = 0;
        Some(l.encode())
    }
}

impl Ext for Nfqueue {
    fn name(&self) -> &'static str {
        "NFQUEUE"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        3
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("queue-num", Arg::One, false),
            opt("queue-balance", Arg::One, false),
            opt("queue-bypass", Arg::None, false),
            opt("queue-cpu-fanout", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "NFQUEUE")?;
        let mut q = QInfo {
            queues_total: 1,
            ..Default::default()
        };
        for g in given {
            match g.opt {
                "queue-num" => q.queuenum = num(g.arg(), 65535, "NFQUEUE --queue-num")? as u16,
                "queue-balance" => {
                    let (a, b) = g
                        .arg()
                        .split_once(':')
                        .ok_or_else(|| bad(format!("Bad range \"{}\"", g.arg())))?;
                    let (a, b) = (num(a, 65534, "NFQUEUE")?, num(b, 65534, "NFQUEUE")?);
                    if a >= b {
                        return Err(bad(format!("{a} should be less than {b}")));
                    }
                    q.queuenum = a as u16;
                    q.queues_total = (b - a + 1) as u16;
                }
                "queue-bypass" => q.flags |= NFQ_FLAG_BYPASS,
                _ => {
                    if get(given, "queue-balance").is_none() {
                        return Err(bad("NFQUEUE: --queue-cpu-fanout needs --queue-balance"));
                    }
                    q.flags |= NFQ_FLAG_CPU_FANOUT;
                }
            }
        }
        exclusive("NFQUEUE", given, &["queue-num", "queue-balance"])?;
        Ok(q.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let q = QInfo::decode(info).ok()?;
        if q.flags & !(NFQ_FLAG_BYPASS | NFQ_FLAG_CPU_FANOUT) != 0 {
            return None;
        }
        if q.queues_total > 1 {
            let last = u32::from(q.queues_total) + u32::from(q.queuenum) - 1;
            let _ = write!(out, " --queue-balance {}:{last}", q.queuenum);
        } else {
            let _ = write!(out, " --queue-num {}", q.queuenum);
        }
        if q.flags & NFQ_FLAG_BYPASS != 0 {
            out.push_str(" --queue-bypass");
        }
        if q.flags & NFQ_FLAG_CPU_FANOUT != 0 {
            out.push_str(" --queue-cpu-fanout");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let q = QInfo::decode(info).ok()?;
        if q.queues_total > 1 {
            let last = u32::from(q.queues_total) + u32::from(q.queuenum) - 1;
            let _ = write!(out, " NFQUEUE balance {}:{last}", q.queuenum);
        } else {
            let _ = write!(out, " NFQUEUE num {}", q.queuenum);
        }
        if q.flags & NFQ_FLAG_BYPASS != 0 {
            out.push_str(" bypass");
        }
        if q.flags & NFQ_FLAG_CPU_FANOUT != 0 {
            out.push_str(" cpu-fanout");
        }
        Some(())
    }
    canonical_via!(QInfo);
}
