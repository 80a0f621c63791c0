//! `-j HMARK` (revision 0, both families): the payload of [`crate::xt::hmark`], through
//! nft_compat in iptables-nft. Options in iptables' words: `--hmark-tuple
//! src,dst,sport,dport,spi,proto,ct`, `--hmark-src-prefix`/`--hmark-dst-prefix` (a prefix
//! length or a contiguous mask in address form), the port, SPI and
//! protocol masks and values, `--hmark-rnd`, `--hmark-mod` (mandatory), `--hmark-offset`.
//! `--hmark-tuple src` sets the whole 16-byte address mask, IPv4 included, as iptables
//! does; `-S` prints it as `--hmark-src-prefix 32`.

use super::*;
use crate::xt::hmark::{HmarkTarget as Info, hmark_flags as f};
use crate::xt::layout::Raw;

pub(crate) struct Hmark;

const O: &[Opt] = opts![
    opt("hmark-tuple", Arg::One, false),
    opt("hmark-src-prefix", Arg::One, false),
    opt("hmark-dst-prefix", Arg::One, false),
    opt("hmark-sport-mask", Arg::One, false),
    opt("hmark-dport-mask", Arg::One, false),
    opt("hmark-spi-mask", Arg::One, false),
    opt("hmark-sport", Arg::One, false),
    opt("hmark-dport", Arg::One, false),
    opt("hmark-spi", Arg::One, false),
    opt("hmark-proto-mask", Arg::One, false),
    opt("hmark-rnd", Arg::One, false),
    opt("hmark-mod", Arg::One, false),
    opt("hmark-offset", Arg::One, false),
];

/// The mask of a prefix length, as iptables' `XTTYPE_PLENMASK` writes it.
/// A mask in address form is taken when it is contiguous; iptables turns one with holes
/// (and a number over the family's length, read as an address: `33` is `0.0.0.33`) into
/// all ones silently, which xtnl refuses.
fn plen_mask(s: &str, family: Family, opt: &str) -> Result<Raw<16>> {
    let max = if family == Family::Ipv6 { 128 } else { 32 };
    let n = match (s.parse::<std::net::IpAddr>(), family) {
        (Ok(std::net::IpAddr::V4(a)), Family::Ipv4) => {
            let m = u32::from(a);
            (m.leading_ones() == m.count_ones())
                .then_some(m.count_ones())
                .ok_or_else(|| bad(format!("HMARK --{opt}: mask \"{s}\" has holes")))?
        }
        (Ok(std::net::IpAddr::V6(a)), Family::Ipv6) => {
            let m = u128::from(a);
            (m.leading_ones() == m.count_ones())
                .then_some(m.count_ones())
                .ok_or_else(|| bad(format!("HMARK --{opt}: mask \"{s}\" has holes")))?
        }
        _ => num(s, max, &format!("HMARK --{opt}"))? as u32,
    };
    let m = if n == 0 { 0 } else { u128::MAX << (128 - n) };
    Ok(Raw(m.to_be_bytes()))
}

/// The prefix length `-S` prints for a mask (the first four bytes for IPv4), `None` for
/// a mask with holes (iptables prints -1 then, which it cannot read back).
fn mask_len(m: &Raw<16>, family: Family) -> Option<u32> {
    if family == Family::Ipv6 {
        let v = u128::from_be_bytes(m.0);
        (v.leading_ones() == v.count_ones()).then_some(v.count_ones())
    } else {
        let v = u32::from_be_bytes([m.0[0], m.0[1], m.0[2], m.0[3]]);
        (v.leading_ones() == v.count_ones()).then_some(v.count_ones())
    }
}

/// One word of `--hmark-tuple`, as iptables' `strncasecmp(type, word, len)` reads it (a
/// prefix of the word is taken, the first in iptables' order).
fn tuple(i: &mut Info, word: &str) -> Result<u32> {
    let w = word.to_ascii_lowercase();
    let hit = |name: &str| !w.is_empty() && name.starts_with(&w);
    let flag = if hit("ct") {
        f::CT
    } else if hit("src") {
        i.src_mask = Raw([0xff; 16]);
        f::SADDR_MASK
    } else if hit("dst") {
        i.dst_mask = Raw([0xff; 16]);
        f::DADDR_MASK
    } else if hit("sport") {
        i.port_mask.0[..2].fill(0xff);
        f::SPORT_MASK
    } else if hit("dport") {
        i.port_mask.0[2..].fill(0xff);
        f::DPORT_MASK
    } else if hit("proto") {
        i.proto_mask = 0xffff;
        f::PROTO_MASK
    } else if hit("spi") {
        i.port_mask = Raw([0xff; 4]);
        f::SPI_MASK
    } else {
        return Err(bad(format!("Bad type \"{word}\"")));
    };
    i.flags |= flag;
    Ok(flag)
}

impl Ext for Hmark {
    fn name(&self) -> &'static str {
        "HMARK"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        O
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        once(given, "HMARK")?;
        let mut i = Info::default();
        // What iptables' final check looks at: the options given, and the tuple's words.
        let mut seen = 0u32;
        let mut tuple_seen = 0u32;
        let u16_of = |g: &Given| -> Result<[u8; 2]> {
            Ok((num(g.arg(), 65535, &format!("HMARK --{}", g.opt))? as u16).to_be_bytes())
        };
        let u32_of = |g: &Given| -> Result<u32> {
            Ok(num(g.arg(), u64::from(u32::MAX), &format!("HMARK --{}", g.opt))? as u32)
        };
        for g in given {
            let flag = match g.opt {
                "hmark-tuple" => {
                    let words: Vec<&str> = g.arg().split(',').collect();
                    if words.last().is_some_and(|w| w.is_empty()) {
                        return Err(bad(
                            "\"--hmark-tuple\" requires a list of types with no spaces, e.g. src,dst,sport,dport,proto",
                        ));
                    }
                    for w in words {
                        tuple_seen |= tuple(&mut i, w)?;
                    }
                    seen |= tuple_seen;
                    0
                }
                "hmark-src-prefix" => {
                    i.src_mask = plen_mask(g.arg(), ctx.family, g.opt)?;
                    f::SADDR_MASK
                }
                "hmark-dst-prefix" => {
                    i.dst_mask = plen_mask(g.arg(), ctx.family, g.opt)?;
                    f::DADDR_MASK
                }
                "hmark-sport-mask" => {
                    i.port_mask.0[..2].copy_from_slice(&u16_of(g)?);
                    f::SPORT_MASK
                }
                "hmark-dport-mask" => {
                    i.port_mask.0[2..].copy_from_slice(&u16_of(g)?);
                    f::DPORT_MASK
                }
                "hmark-spi-mask" => {
                    i.port_mask = Raw(u32_of(g)?.to_be_bytes());
                    f::SPI_MASK
                }
                "hmark-sport" => {
                    i.port_set.0[..2].copy_from_slice(&u16_of(g)?);
                    f::SPORT
                }
                "hmark-dport" => {
                    i.port_set.0[2..].copy_from_slice(&u16_of(g)?);
                    f::DPORT
                }
                "hmark-spi" => {
                    i.port_set = Raw(u32_of(g)?.to_be_bytes());
                    f::SPI
                }
                "hmark-proto-mask" => {
                    i.proto_mask = num(g.arg(), 65535, "HMARK --hmark-proto-mask")? as u16;
                    f::PROTO_MASK
                }
                "hmark-rnd" => {
                    i.hashrnd = u32_of(g)?;
                    f::RND
                }
                "hmark-mod" => {
                    i.hmodulus = u32_of(g)?;
                    if i.hmodulus == 0 {
                        return Err(bad(
                            "HMARK --hmark-mod: \"0\" is not a number from 1 to 4294967295",
                        ));
                    }
                    f::MODULUS
                }
                _ => {
                    i.hoffset = u32_of(g)?;
                    f::OFFSET
                }
            };
            // A tuple word counts as its option given: iptables refuses the option after it.
            if flag & tuple_seen != 0 {
                return Err(bad(format!(
                    "HMARK: option \"--{}\" can only be used once.",
                    g.opt
                )));
            }
            i.flags |= flag;
            seen |= flag;
        }
        if seen & f::MODULUS == 0 {
            return Err(bad("HMARK: option \"--hmark-mod\" must be specified"));
        }
        if seen & f::RND == 0 {
            return Err(bad("--hmark-rnd is mandatory"));
        }
        if seen & f::SPI_MASK != 0 && seen & (f::SPORT_MASK | f::DPORT_MASK) != 0 {
            return Err(bad(
                "you cannot use --hmark-spi-mask and --hmark-?port-mask,at the same time",
            ));
        }
        let pkt = f::SADDR_MASK
            | f::DADDR_MASK
            | f::SPI_MASK
            | f::SPORT_MASK
            | f::DPORT_MASK
            | f::PROTO_MASK
            | f::SPORT
            | f::DPORT
            | f::SPI;
        if seen & (pkt | f::CT) == 0 {
            return Err(bad("you have to specify --hmark-tuple at least"));
        }
        Ok(i.encode())
    }
    fn save(&self, info: &[u8], family: Family, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.flags & !0x1fff != 0 {
            return None;
        }
        let has = |b: u32| i.flags & b != 0;
        if has(f::SADDR_MASK) {
            let _ = write!(
                out,
                " --hmark-src-prefix {}",
                mask_len(&i.src_mask, family)?
            );
        }
        if has(f::DADDR_MASK) {
            let _ = write!(
                out,
                " --hmark-dst-prefix {}",
                mask_len(&i.dst_mask, family)?
            );
        }
        let (pm, ps) = (i.port_mask.0, i.port_set.0);
        let hi = |b: [u8; 4]| u16::from_be_bytes([b[0], b[1]]);
        let lo = |b: [u8; 4]| u16::from_be_bytes([b[2], b[3]]);
        if has(f::SPORT_MASK) {
            let _ = write!(out, " --hmark-sport-mask 0x{:04x}", hi(pm));
        }
        if has(f::DPORT_MASK) {
            let _ = write!(out, " --hmark-dport-mask 0x{:04x}", lo(pm));
        }
        if has(f::SPI_MASK) {
            let _ = write!(out, " --hmark-spi-mask 0x{:08x}", u32::from_be_bytes(pm));
        }
        if has(f::SPORT) {
            let _ = write!(out, " --hmark-sport 0x{:04x}", hi(ps));
        }
        if has(f::DPORT) {
            let _ = write!(out, " --hmark-dport 0x{:04x}", lo(ps));
        }
        if has(f::SPI) {
            let _ = write!(out, " --hmark-spi 0x{:08x}", u32::from_be_bytes(ps));
        }
        if has(f::PROTO_MASK) {
            let _ = write!(out, " --hmark-proto-mask 0x{:02x}", i.proto_mask);
        }
        if has(f::RND) {
            let _ = write!(out, " --hmark-rnd 0x{:08x}", i.hashrnd);
        }
        if has(f::MODULUS) {
            let _ = write!(out, " --hmark-mod {}", i.hmodulus);
        }
        if has(f::OFFSET) {
            let _ = write!(out, " --hmark-offset {}", i.hoffset);
        }
        if has(f::CT) {
            out.push_str(" --hmark-tuple ct");
        }
        Some(())
    }
    fn list(&self, info: &[u8], family: Family, _: bool, out: &mut String) -> Option<()> {
        let i = Info::decode(info).ok()?;
        if i.flags & !0x1fff != 0 {
            return None;
        }
        let has = |b: u32| i.flags & b != 0;
        // iptables' words, each with a space after it.
        out.push_str(" HMARK ");
        if has(f::MODULUS) {
            let _ = write!(out, "mod {} ", i.hmodulus);
        }
        if has(f::OFFSET) {
            let _ = write!(out, "+ 0x{:x} ", i.hoffset);
        }
        if has(f::CT) {
            out.push_str("ct, ");
        }
        if has(f::SADDR_MASK) {
            let _ = write!(out, "src-prefix {} ", list_prefix(&i.src_mask, family));
        }
        if has(f::DADDR_MASK) {
            let _ = write!(out, "dst-prefix {} ", list_prefix(&i.dst_mask, family));
        }
        let (pm, ps) = (i.port_mask.0, i.port_set.0);
        let hi = |b: [u8; 4]| u16::from_be_bytes([b[0], b[1]]);
        let lo = |b: [u8; 4]| u16::from_be_bytes([b[2], b[3]]);
        if has(f::SPORT_MASK) {
            let _ = write!(out, "sport-mask 0x{:x} ", hi(pm));
        }
        if has(f::DPORT_MASK) {
            let _ = write!(out, "dport-mask 0x{:x} ", lo(pm));
        }
        if has(f::SPI_MASK) {
            let _ = write!(out, "spi-mask 0x{:x} ", u32::from_be_bytes(pm));
        }
        if has(f::SPORT) {
            let _ = write!(out, "sport 0x{:x} ", hi(ps));
        }
        if has(f::DPORT) {
            let _ = write!(out, "dport 0x{:x} ", lo(ps));
        }
        if has(f::SPI) {
            let _ = write!(out, "spi 0x{:x} ", u32::from_be_bytes(ps));
        }
        if has(f::PROTO_MASK) {
            let _ = write!(out, "proto-mask 0x{:x} ", i.proto_mask);
        }
        if has(f::RND) {
            let _ = write!(out, "rnd 0x{:x} ", i.hashrnd);
        }
        Some(())
    }
    canonical_via!(Info);
}

/// A prefix mask as `iptables -L` prints it in HMARK: its length (IPv4: `4294967295`, the
/// C `-1`, for a mask that is not a prefix; IPv6: the mask's address form then, and
/// nothing for a length of 128, as ip6tables 1.8.9 prints: it skips the `/` of an empty
/// suffix).
fn list_prefix(m: &Raw<16>, family: Family) -> String {
    match (mask_len(m, family), family) {
        (Some(128), Family::Ipv6) => String::new(),
        (Some(l), _) => l.to_string(),
        (None, Family::Ipv6) => std::net::Ipv6Addr::from(m.0).to_string(),
        (None, _) => u32::MAX.to_string(),
    }
}
