//! `-m sctp`: `--sport`/`--dport` ranges and `--chunk-types (all|any|only) LIST`, where
//! LIST is `ALL`, `NONE` or chunk names, each with optional flag letters (upper case: set,
//! lower case: clear). iptables-nft writes it through nft_compat.
//!
//! Two iptables 1.8.9 quirks the payload keeps, since `-C` compares bytes: a chunk's flag
//! test records the chunk's index in iptables' name table, not its type (the same for the
//! types 0-14 that have flags, except `I_DATA`, whose flags iptables then never prints);
//! and the name table is indexed by type when the flags are printed.

use super::*;
use crate::xt::sctp::Sctp as Info;

pub(crate) struct Sctp;

/// iptables' chunk table: name, type, valid flag letters (bit 7 first).
const CHUNKS: [(&str, u8, &str); 22] = [
    ("DATA", 0, "----IUBE"),
    ("INIT", 1, "--------"),
    ("INIT_ACK", 2, "--------"),
    ("SACK", 3, "--------"),
    ("HEARTBEAT", 4, "--------"),
    ("HEARTBEAT_ACK", 5, "--------"),
    ("ABORT", 6, "-------T"),
    ("SHUTDOWN", 7, "--------"),
    ("SHUTDOWN_ACK", 8, "--------"),
    ("ERROR", 9, "--------"),
    ("COOKIE_ECHO", 10, "--------"),
    ("COOKIE_ACK", 11, "--------"),
    ("ECN_ECNE", 12, "--------"),
    ("ECN_CWR", 13, "--------"),
    ("SHUTDOWN_COMPLETE", 14, "-------T"),
    ("I_DATA", 64, "----IUBE"),
    ("RE_CONFIG", 130, "--------"),
    ("PAD", 132, "--------"),
    ("ASCONF", 193, "--------"),
    ("ASCONF_ACK", 128, "--------"),
    ("FORWARD_TSN", 192, "--------"),
    ("I_FORWARD_TSN", 194, "--------"),
];

fn ports(s: &str, opt: &str) -> Result<[u16; 2]> {
    let r = crate::ipt::parse::parse_ports(s, opt)?;
    Ok([r.first(), r.last()])
}

fn chunks(info: &mut Info, list: &str) -> Result<()> {
    if list.eq_ignore_ascii_case("ALL") {
        info.chunkmap.0 = [0xff; 256];
        return Ok(());
    }
    if list.eq_ignore_ascii_case("NONE") {
        return Ok(());
    }
    for item in list.split(',').filter(|w| !w.is_empty()) {
        let (name, fl) = match item.split_once(':') {
            Some((n, f)) => (n, Some(f)),
            None => (item, None),
        };
        let idx = CHUNKS
            .iter()
            .position(|(n, _, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| bad(format!("Unknown sctp chunk `{name}'")))?;
        info.set_chunk(CHUNKS[idx].1);
        for c in fl.unwrap_or("").chars() {
            let p = CHUNKS[idx]
                .2
                .find(c.to_ascii_uppercase())
                .ok_or_else(|| bad(format!("Invalid flags for chunk type {idx}")))?;
            let bit = 1u8 << (7 - p);
            let set = c.is_ascii_uppercase();
            let n = usize::try_from(info.flag_count).unwrap_or(0);
            let slot = (0..n).find(|&i| info.flag(i).0 == idx as u8);
            let i = match slot {
                Some(i) => i,
                None if n == Info::NUM_FLAGS => {
                    return Err(bad(
                        "Number of chunk types with flags exceeds currently allowed limit.",
                    ));
                }
                None => {
                    info.flag_count += 1;
                    info.set_flag(n, (idx as u8, 0, 0));
                    n
                }
            };
            let (t, f, m) = info.flag(i);
            info.set_flag(i, (t, if set { f | bit } else { f }, m | bit));
        }
    }
    Ok(())
}

impl Ext for Sctp {
    fn name(&self) -> &'static str {
        "sctp"
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("source-port", Arg::One, true),
            opt("sport", Arg::One, true),
            opt("destination-port", Arg::One, true),
            opt("dport", Arg::One, true),
            opt("chunk-types", Arg::Two, true),
        ]
    }
    fn parse(&self, given: &[Given], ctx: &Ctx<'_>) -> Result<Vec<u8>> {
        if ctx.proto() != Some(crate::model::L4Proto::from_number(132)) {
            return Err(bad("-m sctp needs `-p sctp'"));
        }
        let mut s = Info::new();
        for g in given {
            let (bit, what) = match g.opt {
                "source-port" | "sport" => (Info::SRC_PORTS, "--source-port"),
                "destination-port" | "dport" => (Info::DEST_PORTS, "--destination-port"),
                _ => (Info::CHUNK_TYPES, "--chunk-types"),
            };
            if s.flags & bit != 0 {
                return Err(bad(format!("Only one `{what}' allowed")));
            }
            s.flags |= bit;
            if g.neg {
                s.invflags |= bit;
            }
            match bit {
                Info::SRC_PORTS => Info::set_ports(&mut s.spts, ports(g.arg(), "--sport")?),
                Info::DEST_PORTS => Info::set_ports(&mut s.dpts, ports(g.arg(), "--dport")?),
                _ => {
                    let t = g.arg();
                    s.chunk_match_type = if t.eq_ignore_ascii_case("ANY") {
                        Info::MATCH_ANY
                    } else if t.eq_ignore_ascii_case("ALL") {
                        Info::MATCH_ALL
                    } else if t.eq_ignore_ascii_case("ONLY") {
                        Info::MATCH_ONLY
                    } else {
                        return Err(bad(
                            "Match type has to be one of \"ALL\", \"ANY\" or \"ONLY\"",
                        ));
                    };
                    chunks(&mut s, g.args.get(1).map(String::as_str).unwrap_or(""))?;
                }
            }
        }
        Ok(s.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump(info, None, out)
    }
    fn list(&self, info: &[u8], _: Family, numeric: bool, out: &mut String) -> Option<()> {
        out.push_str(" sctp");
        dump(info, Some(numeric), out)
    }
    canonical_via!(Info);
}

/// The options as `-S` prints them (`list` = `None`) or as `-L` does (`Some(numeric)`).
fn dump(info: &[u8], list: Option<bool>, out: &mut String) -> Option<()> {
    let s = Info::decode(info).ok()?;
    if s.flags & !7 != 0 || s.invflags & !s.flags != 0 {
        return None;
    }
    let n = usize::try_from(s.flag_count).ok()?;
    if n > Info::NUM_FLAGS {
        return None;
    }
    for (bit, opt, p) in [
        (Info::SRC_PORTS, "sport", Info::ports(&s.spts)),
        (Info::DEST_PORTS, "dport", Info::ports(&s.dpts)),
    ] {
        if s.flags & bit != 0
            && let Some(numeric) = list
        {
            let label = if opt == "sport" { "spt" } else { "dpt" };
            list_ports(out, label, p, s.invflags & bit != 0, numeric, "sctp");
        } else if s.flags & bit != 0 {
            bang(out, s.invflags & bit != 0);
            if p[0] != p[1] {
                let _ = write!(out, " --{opt} {}:{}", p[0], p[1]);
            } else {
                let _ = write!(out, " --{opt} {}", p[0]);
            }
        }
    }
    if s.flags & Info::CHUNK_TYPES == 0 {
        return Some(());
    }
    bang(out, s.invflags & Info::CHUNK_TYPES != 0);
    out.push_str(if list.is_some() {
        " "
    } else {
        " --chunk-types "
    });
    out.push_str(match s.chunk_match_type {
        Info::MATCH_ANY => "any",
        Info::MATCH_ALL => "all",
        Info::MATCH_ONLY => "only",
        _ => return None,
    });
    if s.map_clear() {
        out.push_str(" NONE");
        return Some(());
    }
    if s.map_all() {
        out.push_str(" ALL");
        return Some(());
    }
    let mut first = true;
    for t in 0..=255u8 {
        if !s.chunk_set(t) {
            continue;
        }
        out.push_str(if first { " " } else { "," });
        first = false;
        // A type iptables has no name for prints nothing: not iptables syntax.
        let (name, _, _) = CHUNKS.iter().find(|c| c.1 == t)?;
        if list == Some(true) {
            let _ = write!(out, "0x{t:04X}");
        } else {
            out.push_str(name);
        }
        for j in 0..n {
            let (ct, flag, mask) = s.flag(j);
            if ct != t {
                continue;
            }
            let valid = CHUNKS.get(usize::from(t))?.2.as_bytes();
            if mask != 0 {
                out.push(':');
            }
            for i in (0..8).rev() {
                if mask & (1 << i) != 0 {
                    let c = char::from(valid[7 - i]);
                    out.push(if flag & (1 << i) != 0 {
                        c
                    } else {
                        c.to_ascii_lowercase()
                    });
                }
            }
        }
    }
    Some(())
}
