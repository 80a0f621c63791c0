//! `-m dccp`: `--sport`/`--dport` ranges, `--dccp-types LIST`, `--dccp-option N` (1-255).
//! iptables-nft writes it through nft_compat. `INVALID` also sets the bits of the types
//! 11-15, and iptables prints the list up to `INVALID`.

use super::*;
use crate::xt::dccp::Dccp as Info;

pub(crate) struct Dccp;

const TYPES: [&str; 11] = [
    "REQUEST", "RESPONSE", "DATA", "ACK", "DATAACK", "CLOSEREQ", "CLOSE", "RESET", "SYNC",
    "SYNCACK", "INVALID",
];

/// `a`, `a:b`, `a:` or `:b` as XTTYPE_PORTRC reads it (no order check, as in iptables).
fn ports(s: &str, opt: &str) -> Result<(u16, u16)> {
    let one = |p: &str| crate::ipt::parse::parse_ports(p, opt).map(|r| r.first());
    match s.split_once(':') {
        Some((a, b)) => Ok((
            if a.is_empty() { 0 } else { one(a)? },
            if b.is_empty() { u16::MAX } else { one(b)? },
        )),
        None => one(s).map(|p| (p, p)),
    }
}

impl Ext for Dccp {
    fn name(&self) -> &'static str {
        "dccp"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("source-port", Arg::One, true),
            opt("sport", Arg::One, true),
            opt("destination-port", Arg::One, true),
            opt("dport", Arg::One, true),
            opt("dccp-types", Arg::One, true),
            opt("dccp-option", Arg::One, true),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        if ctx.proto() != Some(crate::model::L4Proto::from_number(33)) {
            return Err(bad("-m dccp needs `-p dccp'"));
        }
        let mut d = Info::default();
        for g in given {
            let bit = match g.opt {
                "source-port" | "sport" => Info::SRC_PORTS,
                "destination-port" | "dport" => Info::DEST_PORTS,
                "dccp-types" => Info::TYPE,
                _ => Info::OPTION,
            };
            if d.flags & bit != 0 {
                return Err(bad(format!(
                    "dccp: option \"--{}\" can only be used once",
                    g.opt
                )));
            }
            d.flags |= bit;
            if g.neg {
                d.invflags |= bit;
            }
            match bit {
                Info::SRC_PORTS => (d.spt_min, d.spt_max) = ports(g.arg(), "--sport")?,
                Info::DEST_PORTS => (d.dpt_min, d.dpt_max) = ports(g.arg(), "--dport")?,
                Info::TYPE => {
                    for w in g.arg().split(',').filter(|w| !w.is_empty()) {
                        let i = TYPES
                            .iter()
                            .position(|t| t.eq_ignore_ascii_case(w))
                            .ok_or_else(|| bad(format!("Unknown DCCP type `{w}'")))?;
                        d.typemask |= 1 << i;
                    }
                    if d.typemask & (1 << 10) != 0 {
                        d.typemask |= 0xf800;
                    }
                }
                _ => {
                    let v = num(g.arg(), 255, "dccp --dccp-option")?;
                    if v == 0 {
                        return Err(bad(
                            "dccp: Value \"0\" for option \"--dccp-option\" is out of range (1-255)",
                        ));
                    }
                    d.option = v as u8;
                }
            }
        }
        Ok(d.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let d = Info::decode(info).ok()?;
        if d.flags & !Info::VALID != 0 || d.invflags & !d.flags != 0 {
            return None;
        }
        for (bit, opt, lo, hi) in [
            (Info::SRC_PORTS, "sport", d.spt_min, d.spt_max),
            (Info::DEST_PORTS, "dport", d.dpt_min, d.dpt_max),
        ] {
            if d.flags & bit != 0 {
                bang(out, d.invflags & bit != 0);
                if lo != hi {
                    let _ = write!(out, " --{opt} {lo}:{hi}");
                } else {
                    let _ = write!(out, " --{opt} {lo}");
                }
            }
        }
        if d.flags & Info::TYPE != 0 {
            bang(out, d.invflags & Info::TYPE != 0);
            out.push_str(" --dccp-types ");
            let mut t = d.typemask;
            let mut first = true;
            while t != 0 {
                let i = t.trailing_zeros() as usize;
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(TYPES.get(i)?);
                if i == 10 {
                    break;
                }
                t &= !(1 << i);
            }
        }
        if d.flags & Info::OPTION != 0 {
            bang(out, d.invflags & Info::OPTION != 0);
            let _ = write!(out, " --dccp-option {}", d.option);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let d = Info::decode(info).ok()?;
        out.push_str(" dccp");
        for (bit, label, lo, hi) in [
            (Info::SRC_PORTS, "spt", d.spt_min, d.spt_max),
            (Info::DEST_PORTS, "dpt", d.dpt_min, d.dpt_max),
        ] {
            if d.flags & bit != 0 {
                list_ports(out, label, [lo, hi], d.invflags & bit != 0, numeric, "dccp");
            }
        }
        if d.flags & Info::TYPE != 0 {
            bang(out, d.invflags & Info::TYPE != 0);
            out.push(' ');
            let mut t = d.typemask;
            let mut first = true;
            while t != 0 {
                let i = t.trailing_zeros() as usize;
                if !first {
                    out.push(',');
                }
                first = false;
                if numeric {
                    let _ = write!(out, "{i}");
                } else {
                    out.push_str(TYPES.get(i)?);
                    if i == 10 {
                        break;
                    }
                }
                t &= !(1 << i);
            }
        }
        if d.flags & Info::OPTION != 0 {
            let inv = if d.invflags & Info::OPTION != 0 {
                "!"
            } else {
                ""
            };
            let _ = write!(out, " option={inv}{}", d.option);
        }
        Some(())
    }
    canonical_via!(Info);
}
