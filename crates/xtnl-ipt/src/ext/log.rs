//! `-j LOG` with every option: the flags (`--log-tcp-sequence`, `--log-tcp-options`,
//! `--log-ip-options`, `--log-uid`, `--log-macdecode`) on top of prefix and level. Without
//! flags the payload reads back as the typed [`crate::ipt::IptTarget::Log`] as before.

use super::*;
use crate::ipt::LogOpts;
use crate::xt::{Log as Info, log_flags as lf};

pub(crate) struct Log;

const FLAGS: [(&str, u8); 5] = [
    ("log-tcp-sequence", lf::TCPSEQ),
    ("log-tcp-options", lf::TCPOPT),
    ("log-ip-options", lf::IPOPT),
    ("log-uid", lf::UID),
    ("log-macdecode", lf::MACDECODE),
];

impl Ext for Log {
    fn name(&self) -> &'static str {
        "LOG"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("log-level", Arg::One, false),
            opt("log-prefix", Arg::One, false),
            opt("log-tcp-sequence", Arg::None, false),
            opt("log-tcp-options", Arg::None, false),
            opt("log-ip-options", Arg::None, false),
            opt("log-uid", Arg::None, false),
            opt("log-macdecode", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "LOG")?;
        let level = match get(given, "log-level") {
            Some(g) => crate::ipt::parse::log_level(g.arg())?,
            None => LogOpts::DEFAULT_LEVEL,
        };
        let prefix = get(given, "log-prefix").map(|g| g.arg()).unwrap_or("");
        if prefix.len() > LogOpts::MAX_PREFIX {
            return Err(bad(format!(
                "Maximum prefix length {} for --log-prefix",
                LogOpts::MAX_PREFIX
            )));
        }
        if prefix.contains('\n') {
            return Err(bad("Newlines not allowed in --log-prefix"));
        }
        let flags = FLAGS
            .iter()
            .filter(|(n, _)| get(given, n).is_some())
            .fold(0, |a, (_, f)| a | f);
        Ok(Info::new(level, flags, prefix).map_err(wire)?.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let l = Info::decode(info).ok()?;
        if l.flags() & !lf::MASK != 0 || l.flags() & lf::NFLOG != 0 {
            return None;
        }
        if !l.prefix().is_empty() {
            out.push_str(" --log-prefix");
            crate::ipt::print::save_string(out, l.prefix());
        }
        if l.level() != LogOpts::DEFAULT_LEVEL {
            let _ = write!(out, " --log-level {}", l.level());
        }
        for (n, f) in FLAGS {
            if l.flags() & f != 0 {
                let _ = write!(out, " --{n}");
            }
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let l = Info::decode(info).ok()?;
        out.push_str(" LOG");
        if numeric {
            let _ = write!(out, " flags {} level {}", l.flags(), l.level());
        } else {
            match level_name(l.level()) {
                Some(name) => {
                    let _ = write!(out, " level {name}");
                }
                None => {
                    let _ = write!(out, " UNKNOWN level {}", l.level());
                }
            }
            for (bit, word) in [
                (lf::TCPSEQ, "tcp-sequence"),
                (lf::TCPOPT, "tcp-options"),
                (lf::IPOPT, "ip-options"),
                (lf::UID, "uid"),
                (lf::MACDECODE, "macdecode"),
            ] {
                if l.flags() & bit != 0 {
                    let _ = write!(out, " {word}");
                }
            }
            if l.flags() & !lf::MASK != 0 {
                out.push_str(" unknown-flags");
            }
        }
        if !l.prefix().is_empty() {
            let _ = write!(out, " prefix \"{}\"", l.prefix());
        }
        Some(())
    }
    canonical_via!(Info);
}

/// syslog's `prioritynames`, first name per level (what LOG prints).
pub fn level_name(level: u8) -> Option<&'static str> {
    [
        "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
    ]
    .get(level as usize)
    .copied()
}
