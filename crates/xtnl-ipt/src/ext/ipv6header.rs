//! `-m ipv6header [!] --header NAMES [--soft]` (IPv6 only, revision 0): the payload of
//! [`crate::xt::ipv6header`], through nft_compat in iptables-nft. Header names are read as
//! iptables reads them: the system's protocol names first (`getprotobyname`), then its own
//! short list; `-S` prints the system's name of each header in iptables' bit order (the
//! hop-by-hop header, number 0, as `hop-by-hop`).

use super::*;
use crate::ipt::protocols::{system_name_of, system_number_of};
use crate::xt::ipv6header::Ipv6Header as Info;

pub(crate) struct Ipv6header;

/// iptables' `chain_protos`: names and numbers it knows without `/etc/protocols`.
const NAMES: [(&str, u8); 18] = [
    ("hop-by-hop", 0),
    ("protocol", 255),
    ("hop", 0),
    ("dst", 60),
    ("route", 43),
    ("frag", 44),
    ("auth", 51),
    ("esp", 50),
    ("none", 59),
    ("prot", 255),
    ("0", 0),
    ("60", 60),
    ("43", 43),
    ("44", 44),
    ("51", 51),
    ("50", 50),
    ("59", 59),
    ("255", 255),
];

/// iptables' `chain_flags`: each header's bit, in the order `-S` prints them.
const FLAGS: [(u8, u8); 8] = [
    (0, 0x80),
    (60, 0x40),
    (43, 0x20),
    (44, 0x10),
    (51, 0x08),
    (50, 0x04),
    (59, 0x02),
    (255, 0x01),
];

fn header_bits(list: &str) -> Result<u8> {
    let mut bits = 0;
    for word in list.split(',').filter(|w| !w.is_empty()) {
        let proto = match system_number_of(word) {
            Some(p) => p,
            None => NAMES
                .iter()
                .find(|(n, _)| *n == word)
                .map(|(_, p)| *p)
                .ok_or_else(|| bad(format!("unknown header `{word}' specified")))?,
        };
        bits |= FLAGS
            .iter()
            .find(|(p, _)| *p == proto)
            .map(|(_, b)| *b)
            .ok_or_else(|| bad(format!("unknown header `{proto}' specified")))?;
    }
    if bits == 0 {
        return Err(bad("ip6t_ipv6header: cannot parse header names"));
    }
    Ok(bits)
}

fn header_name(proto: u8) -> String {
    if proto != 0
        && let Some(n) = system_name_of(proto)
    {
        return n;
    }
    NAMES
        .iter()
        .find(|(_, p)| *p == proto)
        .map_or_else(|| proto.to_string(), |(n, _)| (*n).to_string())
}

impl Ext for Ipv6header {
    fn name(&self) -> &'static str {
        "ipv6header"
    }
    fn fams(&self) -> Fams {
        Fams::V6
    }
    fn options(&self) -> &'static [Opt] {
        opts![opt("header", Arg::One, true), opt("soft", Arg::None, false)]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "ipv6header")?;
        let h = get(given, "header")
            .ok_or_else(|| bad("ipv6header: option \"--header\" must be specified"))?;
        Ok(Info {
            matchflags: header_bits(h.arg())?,
            invflags: if h.neg { 0xff } else { 0 },
            modeflag: if get(given, "soft").is_some() {
                0xff
            } else {
                0
            },
        }
        .encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        // What iptables cannot write back: no header (printed as NONE), partial flags.
        if i.matchflags == 0 || !matches!(i.invflags, 0 | 0xff) || !matches!(i.modeflag, 0 | 0xff) {
            return None;
        }
        bang(out, i.invflags != 0);
        let names: Vec<String> = FLAGS
            .iter()
            .filter(|(_, b)| i.matchflags & b != 0)
            .map(|(p, _)| header_name(*p))
            .collect();
        let _ = write!(out, " --header {}", names.join(","));
        if i.modeflag != 0 {
            out.push_str(" --soft");
        }
        Some(())
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        out.push_str(" ipv6header");
        if i.matchflags != 0 || i.invflags != 0 {
            let inv = if i.invflags != 0 { "!" } else { "" };
            if numeric {
                let _ = write!(out, " flags:{inv}0x{:02X}", i.matchflags);
            } else {
                let names: Vec<String> = FLAGS
                    .iter()
                    .filter(|(_, b)| i.matchflags & b != 0)
                    .map(|(p, _)| header_name(*p))
                    .collect();
                let names = if names.is_empty() {
                    "NONE".to_string()
                } else {
                    names.join(",")
                };
                let _ = write!(out, " flags:{inv}{names}");
            }
        }
        if i.modeflag != 0 {
            out.push_str(" soft");
        }
        Some(())
    }
    canonical_via!(Info);
}
