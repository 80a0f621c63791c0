//! `-m tcp` beyond ports: `--tcp-flags mask comp`, `--syn`, `--tcp-option`. A tcp payload
//! with ports only reads back as the typed [`crate::ipt::IptMatch::Tcp`]; with flags or an
//! option it is this extension's (ports included, in one payload, as iptables keeps them).
//! iptables-nft writes flags natively (see [`super::native`]); with `--tcp-option` the whole
//! match goes through nft_compat.

use super::*;
use crate::ipt::rule::PortsMatch;
use crate::xt::Tcp as Info;

pub(crate) struct Tcp;

const FLAG_NAMES: [(&str, u8); 8] = [
    ("FIN", 0x01),
    ("SYN", 0x02),
    ("RST", 0x04),
    ("PSH", 0x08),
    ("ACK", 0x10),
    ("URG", 0x20),
    ("ALL", 0x3f),
    ("NONE", 0),
];

fn flags(list: &str) -> Result<u8> {
    let mut f = 0;
    for w in list.split(',').filter(|w| !w.is_empty()) {
        let (_, b) = FLAG_NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(w))
            .ok_or_else(|| bad(format!("Unknown TCP flag `{w}'")))?;
        f |= b;
    }
    Ok(f)
}

pub(crate) fn print_flags(out: &mut String, mut f: u8) {
    let mut names = Vec::new();
    while f != 0 {
        let Some((n, b)) = FLAG_NAMES[..6].iter().find(|(_, b)| f & b != 0) else {
            break;
        };
        names.push(*n);
        f &= !b;
    }
    if f != 0 {
        names.push("0x??");
    }
    out.push_str(if names.is_empty() { "NONE" } else { "" });
    out.push_str(&names.join(","));
}

/// The options of a plain tcp module already parsed, as given options of this extension
/// (when `--syn` follows `--dport` in one implicit tcp module).
pub(crate) fn given_of(p: &PortsMatch) -> Vec<Given> {
    let mut out = Vec::new();
    for (opt, port) in [("sport", &p.sport), ("dport", &p.dport)] {
        if let Some(x) = port {
            out.push(Given {
                opt,
                args: vec![format!("{}:{}", x.value.first(), x.value.last())],
                neg: x.negated,
            });
        }
    }
    out
}

impl Ext for Tcp {
    fn name(&self) -> &'static str {
        "tcp"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("sport", Arg::One, true),
            opt("source-port", Arg::One, true),
            opt("dport", Arg::One, true),
            opt("destination-port", Arg::One, true),
            opt("tcp-flags", Arg::Two, true),
            opt("syn", Arg::None, true),
            opt("tcp-option", Arg::One, true),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        if ctx.proto() != Some(crate::model::L4Proto::Tcp) {
            return Err(bad("-m tcp needs `-p tcp'"));
        }
        let mut t = Info {
            spts: [0, u16::MAX],
            dpts: [0, u16::MAX],
            option: 0,
            flg_mask: 0,
            flg_cmp: 0,
            invflags: 0,
        };
        let (mut seen_flags, mut seen) = (false, Vec::new());
        for g in given {
            let key = match g.opt {
                "source-port" => "sport",
                "destination-port" => "dport",
                "syn" => "tcp-flags",
                k => k,
            };
            if seen.contains(&key) {
                return Err(bad(if key == "tcp-flags" {
                    "Only one of `--syn' or `--tcp-flags'  allowed".to_string()
                } else {
                    format!("multiple --{key} flags not allowed")
                }));
            }
            seen.push(key);
            match key {
                "sport" | "dport" => {
                    let r = crate::ipt::parse::parse_ports(g.arg(), &format!("--{key}"))?;
                    let (slot, inv) = if key == "sport" {
                        (&mut t.spts, Info::INV_SRCPT)
                    } else {
                        (&mut t.dpts, Info::INV_DSTPT)
                    };
                    *slot = [r.first(), r.last()];
                    if g.neg {
                        t.invflags |= inv;
                    }
                }
                "tcp-flags" => {
                    seen_flags = true;
                    if g.opt == "syn" {
                        (t.flg_mask, t.flg_cmp) = (0x17, 0x02);
                    } else {
                        t.flg_mask = flags(g.arg())?;
                        t.flg_cmp = flags(g.args.get(1).map(String::as_str).unwrap_or(""))?;
                    }
                    if g.neg {
                        t.invflags |= Info::INV_FLAGS;
                    }
                }
                _ => {
                    t.option = num(g.arg(), 255, "tcp --tcp-option")? as u8;
                    if t.option == 0 {
                        return Err(bad("Bad TCP option value \"0\""));
                    }
                    if g.neg {
                        t.invflags |= Info::INV_OPTION;
                    }
                }
            }
        }
        let _ = seen_flags;
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let t = Info::decode(info).ok()?;
        if t.invflags & !Info::INV_MASK != 0 || t.flg_mask & !0x3f != 0 || t.flg_cmp & !0x3f != 0 {
            return None;
        }
        for (opt, r, inv) in [
            ("sport", t.spts, Info::INV_SRCPT),
            ("dport", t.dpts, Info::INV_DSTPT),
        ] {
            if r != [0, u16::MAX] {
                bang(out, t.invflags & inv != 0);
                if r[0] != r[1] {
                    let _ = write!(out, " --{opt} {}:{}", r[0], r[1]);
                } else {
                    let _ = write!(out, " --{opt} {}", r[0]);
                }
            }
        }
        if t.option != 0 || t.invflags & Info::INV_OPTION != 0 {
            bang(out, t.invflags & Info::INV_OPTION != 0);
            let _ = write!(out, " --tcp-option {}", t.option);
        }
        if t.flg_mask != 0 || t.invflags & Info::INV_FLAGS != 0 {
            bang(out, t.invflags & Info::INV_FLAGS != 0);
            out.push_str(" --tcp-flags ");
            print_flags(out, t.flg_mask);
            out.push(' ');
            print_flags(out, t.flg_cmp);
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let t = Info::decode(info).ok()?;
        out.push_str(" tcp");
        list_ports(
            out,
            "spt",
            t.spts,
            t.invflags & Info::INV_SRCPT != 0,
            numeric,
            "tcp",
        );
        list_ports(
            out,
            "dpt",
            t.dpts,
            t.invflags & Info::INV_DSTPT != 0,
            numeric,
            "tcp",
        );
        let inv = |f: u8| if t.invflags & f != 0 { "!" } else { "" };
        if t.option != 0 || t.invflags & Info::INV_OPTION != 0 {
            let _ = write!(out, " option={}{}", inv(Info::INV_OPTION), t.option);
        }
        if t.flg_mask != 0 || t.invflags & Info::INV_FLAGS != 0 {
            let _ = write!(out, " flags:{}", inv(Info::INV_FLAGS));
            if numeric {
                let _ = write!(out, "0x{:02X}/0x{:02X}", t.flg_mask, t.flg_cmp);
            } else {
                print_flags(out, t.flg_mask);
                out.push('/');
                print_flags(out, t.flg_cmp);
            }
        }
        Some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        Info::decode(info).ok().map(|t| t.encode())
    }
}
