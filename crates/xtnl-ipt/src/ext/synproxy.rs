//! `-j SYNPROXY [--sack-perm] [--timestamp] [--wscale N] [--mss N] [--ecn]` (revision 0,
//! both families): the payload of [`crate::xt::synproxy`], through nft_compat in
//! iptables-nft. iptables reads `--wscale` and `--mss` as 32-bit numbers and keeps the low
//! 8 and 16 bits silently; xtnl refuses what does not fit instead.

use super::*;
use crate::xt::synproxy::{SynproxyTarget as Info, synproxy_opts as o};

pub(crate) struct Synproxy;

impl Ext for Synproxy {
    fn name(&self) -> &'static str {
        "SYNPROXY"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("sack-perm", Arg::None, false),
            opt("timestamp", Arg::None, false),
            opt("wscale", Arg::One, false),
            opt("mss", Arg::One, false),
            opt("ecn", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "SYNPROXY")?;
        let mut i = Info::default();
        for g in given {
            match g.opt {
                "sack-perm" => i.options |= o::SACK_PERM,
                "timestamp" => i.options |= o::TIMESTAMP,
                "ecn" => i.options |= o::ECN,
                "wscale" => {
                    i.options |= o::WSCALE;
                    i.wscale = num(g.arg(), 255, "SYNPROXY --wscale")? as u8;
                }
                _ => {
                    i.options |= o::MSS;
                    i.mss = num(g.arg(), 65535, "SYNPROXY --mss")? as u16;
                }
            }
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.options & !0x1f != 0 {
            return None;
        }
        if i.options & o::SACK_PERM != 0 {
            out.push_str(" --sack-perm");
        }
        if i.options & o::TIMESTAMP != 0 {
            out.push_str(" --timestamp");
        }
        if i.options & o::WSCALE != 0 {
            let _ = write!(out, " --wscale {}", i.wscale);
        }
        if i.options & o::MSS != 0 {
            let _ = write!(out, " --mss {}", i.mss);
        }
        if i.options & o::ECN != 0 {
            out.push_str(" --ecn");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.options & !0x1f != 0 {
            return None;
        }
        // iptables' words, each with a space after it.
        out.push_str(" SYNPROXY ");
        if i.options & o::SACK_PERM != 0 {
            out.push_str("sack-perm ");
        }
        if i.options & o::TIMESTAMP != 0 {
            out.push_str("timestamp ");
        }
        if i.options & o::WSCALE != 0 {
            let _ = write!(out, "wscale {} ", i.wscale);
        }
        if i.options & o::MSS != 0 {
            let _ = write!(out, "mss {} ", i.mss);
        }
        if i.options & o::ECN != 0 {
            out.push_str("ecn ");
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = Info::decode(info).ok()?;
        // A value without its flag is never read; iptables leaves it zero.
        if i.options & o::WSCALE == 0 {
            i.wscale = 0;
        }
        if i.options & o::MSS == 0 {
            i.mss = 0;
        }
        Some(i.encode())
    }
}
