//! `-m policy` (IPsec policy; revision 0, both families): `--dir in|out`, `--pol
//! none|ipsec`, `--strict`, and per element `[!] --reqid`, `[!] --spi`, `[!] --proto
//! ah|esp|ipcomp`, `[!] --mode transport|tunnel`, `[!] --tunnel-src/--tunnel-dst
//! ADDR[/PREFIX]`, elements separated by `--next`. The payload of [`crate::xt::policy`],
//! through nft_compat in iptables-nft; checks and words as iptables 1.8.9's.

use super::conntrack::{host_mask, print_host_mask};
use super::*;
use crate::xt::layout::Raw;
use crate::xt::policy::{
    POLICY_MAX_ELEM, PolicyElem, PolicyInfo as Info, policy_flags as f, policy_spec as s,
};

pub(crate) struct Policy;

const MODES: [&str; 2] = ["transport", "tunnel"];

fn proto_name(p: u8) -> String {
    crate::ipt::protocols::system_name_of(p).unwrap_or_else(|| p.to_string())
}

impl Ext for Policy {
    fn name(&self) -> &'static str {
        "policy"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("dir", Arg::One, false),
            opt("pol", Arg::One, false),
            opt("strict", Arg::None, false),
            opt("reqid", Arg::One, true),
            opt("spi", Arg::One, true),
            opt("proto", Arg::One, true),
            opt("mode", Arg::One, true),
            opt("tunnel-src", Arg::One, true),
            opt("tunnel-dst", Arg::One, true),
            opt("next", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        for one in ["dir", "pol", "strict"] {
            if given.iter().filter(|g| g.opt == one).count() > 1 {
                return Err(crate::ipt::args::used_twice("policy", &format!("--{one}")));
            }
        }
        let mut info = Info::default();
        let mut len = 0usize;
        let mut e = PolicyElem::default();
        let u32max = u64::from(u32::MAX);
        for g in given {
            let (bit, name) = match g.opt {
                "reqid" => (s::REQID, "--reqid"),
                "spi" => (s::SPI, "--spi"),
                "proto" => (s::PROTO, "--proto"),
                "mode" => (s::MODE, "--mode"),
                "tunnel-src" => (s::SADDR, "--tunnel-src"),
                "tunnel-dst" => (s::DADDR, "--tunnel-dst"),
                _ => (0, ""),
            };
            if bit != 0 {
                if e.matches & bit != 0 {
                    return Err(bad(format!("policy match: double {name} option")));
                }
                e.matches |= bit;
                if g.neg {
                    e.invert |= bit;
                }
            }
            match g.opt {
                "dir" => {
                    info.flags |= match g.arg() {
                        "in" => f::IN,
                        "out" => f::OUT,
                        d => return Err(bad(format!("policy_match: invalid dir \"{d}\""))),
                    }
                }
                "pol" => {
                    info.flags |= match g.arg() {
                        "none" => f::NONE,
                        "ipsec" => 0,
                        p => return Err(bad(format!("policy match: invalid policy \"{p}\""))),
                    }
                }
                "strict" => info.flags |= f::STRICT,
                "reqid" => e.reqid = num(g.arg(), u32max, "policy --reqid")? as u32,
                "spi" => e.spi = num(g.arg(), u32max, "policy --spi")? as u32,
                "proto" => {
                    let p = crate::ipt::protocols::number_of(g.arg()).ok_or_else(|| {
                        bad(format!("unknown protocol \"{}\" specified", g.arg()))
                    })?;
                    if !matches!(p, 50 | 51 | 108) {
                        return Err(bad("policy match: protocol must be ah/esp/ipcomp"));
                    }
                    e.proto = p;
                }
                "mode" => {
                    e.mode =
                        MODES.iter().position(|m| *m == g.arg()).ok_or_else(|| {
                            bad(format!("policy match: invalid mode \"{}\"", g.arg()))
                        })? as u8;
                }
                "tunnel-src" => {
                    let (a, m) = host_mask(g.arg(), ctx.family, "policy --tunnel-src")?;
                    (e.saddr, e.smask) = (Raw(a), Raw(m));
                }
                "tunnel-dst" => {
                    let (a, m) = host_mask(g.arg(), ctx.family, "policy --tunnel-dst")?;
                    (e.daddr, e.dmask) = (Raw(a), Raw(m));
                }
                _ => {
                    // --next
                    info.set_elem(len, &e);
                    len += 1;
                    if len == POLICY_MAX_ELEM {
                        return Err(bad("policy match: maximum policy depth reached"));
                    }
                    e = PolicyElem::default();
                }
            }
        }
        info.set_elem(len, &e);
        if info.flags & (f::IN | f::OUT) == 0 {
            return Err(bad(
                "policy match: neither --dir in nor --dir out specified",
            ));
        }
        if info.flags & f::NONE != 0 {
            if info.flags & f::STRICT != 0 {
                return Err(bad("policy match: policy none but --strict given"));
            }
            if len != 0 {
                return Err(bad("policy match: policy none but policy given"));
            }
        } else {
            len += 1;
        }
        // Where iptables 1.8.9 says it (found by trying: after the `--pol none` checks).
        if given.iter().any(|g| g.opt == "next") && info.flags & f::STRICT == 0 {
            return Err(bad("policy: option \"--next\" also requires \"--strict\"."));
        }
        if info.flags & f::STRICT == 0 && len > 1 {
            return Err(bad("policy match: multiple elements but no --strict"));
        }
        for i in 0..len {
            let e = info.elem(i);
            if info.flags & f::STRICT != 0 && e.matches == 0 {
                return Err(bad(format!(
                    "policy match: empty policy element {i}. --strict is in effect, but at least one of reqid, spi, tunnel-src, tunnel-dst, proto or mode is required."
                )));
            }
            let tunnel = (e.mode == 1) != (e.invert & s::MODE != 0);
            if e.matches & (s::SADDR | s::DADDR) != 0 && !tunnel {
                return Err(bad(
                    "policy match: --tunnel-src/--tunnel-dst is only valid in tunnel mode",
                ));
            }
        }
        info.len = len as u16;
        Ok(info.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        words(info, family, None, out)
    }
    fn list(&self, info: &[u8], family: Family, numeric: bool, out: &mut String) -> Option<()> {
        words(info, family, Some(numeric), out)
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        let mut i = Info::decode(info).ok()?;
        // Elements past the count are never read; iptables leaves them zero.
        let used = usize::from(i.len).min(POLICY_MAX_ELEM);
        for n in used..POLICY_MAX_ELEM {
            i.set_elem(n, &PolicyElem::default());
        }
        Some(i.encode())
    }
}

/// The words of a payload: `-S`'s (`list` none) or `-L`'s (`list`: whether `-n`), which
/// drop the `--`, begin with `policy match`, number the elements and print `-n` protocols
/// as numbers.
fn words(info: &[u8], family: Family, list: Option<bool>, out: &mut String) -> Option<()> {
    let i = Info::decode(info).ok()?;
    let len = usize::from(i.len);
    if len > POLICY_MAX_ELEM || i.flags & !0xf != 0 {
        return None;
    }
    let p = if list.is_some() { "" } else { "--" };
    if list.is_some() {
        out.push_str(" policy match");
    }
    let dir = if i.flags & f::IN != 0 { "in" } else { "out" };
    let pol = if i.flags & f::NONE != 0 {
        "none"
    } else {
        "ipsec"
    };
    let _ = write!(out, " {p}dir {dir} {p}pol {pol}");
    if i.flags & f::STRICT != 0 {
        let _ = write!(out, " {p}strict");
    }
    for n in 0..len {
        let e = i.elem(n);
        if e.matches & !0x3f != 0 || e.mode > 1 {
            return None;
        }
        if list.is_some() && len > 1 {
            let _ = write!(out, " [{n}]");
        }
        let on = |b: u8| e.matches & b != 0;
        let inv = |out: &mut String, b: u8| bang(out, e.invert & b != 0);
        if on(s::REQID) {
            inv(out, s::REQID);
            let _ = write!(out, " {p}reqid {}", e.reqid);
        }
        if on(s::SPI) {
            inv(out, s::SPI);
            let _ = write!(out, " {p}spi 0x{:x}", e.spi);
        }
        if on(s::PROTO) {
            inv(out, s::PROTO);
            if list == Some(true) {
                let _ = write!(out, " {p}proto {}", e.proto);
            } else {
                let _ = write!(out, " {p}proto {}", proto_name(e.proto));
            }
        }
        if on(s::MODE) {
            inv(out, s::MODE);
            let _ = write!(out, " {p}mode {}", MODES[usize::from(e.mode)]);
        }
        if on(s::DADDR) {
            inv(out, s::DADDR);
            let _ = write!(out, " {p}tunnel-dst");
            print_host_mask(out, &e.daddr.0, &e.dmask.0, family);
        }
        if on(s::SADDR) {
            inv(out, s::SADDR);
            let _ = write!(out, " {p}tunnel-src");
            print_host_mask(out, &e.saddr.0, &e.smask.0, family);
        }
        if list.is_none() && n + 1 < len {
            out.push_str(" --next");
        }
    }
    Some(())
}
