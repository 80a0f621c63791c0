//! `-m set` (ipset), revision 4 as iptables 1.8.9 writes it: `[!] --match-set NAME
//! src|dst[,...]`, `--return-nomatch`, `! --update-counters`, `! --update-subcounters`,
//! `[!] --packets-eq N`, `--packets-lt/gt N` and the same for bytes. The payload holds the
//! set's kernel index, looked up by name in the ipset subsystem ([`super::ipset`]) when the
//! rule is parsed and back to the name when it is printed; iptables-nft writes it through
//! nft_compat.

use super::*;
use crate::xt::set::{self as xs, SetMatchV4 as Info, SetTargetV3 as TInfo};

pub(crate) struct Set;

const COUNTERS: [(&str, u8); 6] = [
    ("packets-eq", xs::COUNTER_EQ),
    ("packets-lt", xs::COUNTER_LT),
    ("packets-gt", xs::COUNTER_GT),
    ("bytes-eq", xs::COUNTER_EQ),
    ("bytes-lt", xs::COUNTER_LT),
    ("bytes-gt", xs::COUNTER_GT),
];

/// `src,dst,...` as iptables' parse_dirs reads it: each word starts with `src` or `dst`.
fn dirs(s: &str) -> Result<(u8, u8)> {
    let (mut dim, mut flags) = (0u8, 0u8);
    for w in s.split(',') {
        if dim == xs::DIM_MAX {
            return Err(bad(format!(
                "Can't be more src/dst options than {}.",
                xs::DIM_MAX
            )));
        }
        dim += 1;
        if w.starts_with("src") {
            flags |= 1 << dim;
        } else if !w.starts_with("dst") {
            return Err(bad(
                "You must spefify (the comma separated list of) 'src' or 'dst'.",
            ));
        }
    }
    Ok((dim, flags))
}

impl Ext for Set {
    fn name(&self) -> &'static str {
        "set"
    }
    fn revision(&self) -> u32 {
        4
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("match-set", Arg::Two, true),
            opt("return-nomatch", Arg::None, false),
            opt("update-counters", Arg::None, true),
            opt("update-subcounters", Arg::None, true),
            opt("packets-eq", Arg::One, true),
            opt("packets-lt", Arg::One, false),
            opt("packets-gt", Arg::One, false),
            opt("bytes-eq", Arg::One, true),
            opt("bytes-lt", Arg::One, false),
            opt("bytes-gt", Arg::One, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        let mut info = Info::default();
        let mut seen = false;
        for g in given {
            match g.opt {
                "match-set" => {
                    if seen {
                        return Err(bad("--match-set can be specified only once"));
                    }
                    seen = true;
                    let name = g.arg();
                    if name.len() > super::ipset::MAXNAMELEN - 1 {
                        return Err(bad(format!(
                            "setname `{name}' too long, max {} characters.",
                            super::ipset::MAXNAMELEN - 1
                        )));
                    }
                    let (dim, flags) = dirs(g.args.get(1).map(String::as_str).unwrap_or(""))?;
                    info.index = super::ipset::index_of(name)?;
                    info.dim = dim;
                    info.set_flags = flags | if g.neg { xs::INV_MATCH } else { 0 };
                }
                "return-nomatch" => info.flags |= xs::RETURN_NOMATCH,
                "update-counters" if g.neg => info.flags |= xs::SKIP_COUNTER_UPDATE,
                "update-subcounters" if g.neg => info.flags |= xs::SKIP_SUBCOUNTER_UPDATE,
                "update-counters" | "update-subcounters" => {}
                opt => {
                    let (_, op) = COUNTERS
                        .iter()
                        .find(|(n, _)| *n == opt)
                        .copied()
                        .unwrap_or(("", 0));
                    let op = if g.neg { xs::COUNTER_NE } else { op };
                    let value = num(g.arg(), u64::MAX, opt)?;
                    let (slot, val) = if opt.starts_with("packets") {
                        (&mut info.packets_op, &mut info.packets_value)
                    } else {
                        (&mut info.bytes_op, &mut info.bytes_value)
                    };
                    if *slot != xs::COUNTER_NONE {
                        let which = if opt.starts_with("packets") {
                            "packets"
                        } else {
                            "bytes"
                        };
                        return Err(bad(format!(
                            "only one of the --{which}-[eq|lt|gt] is allowed"
                        )));
                    }
                    (*slot, *val) = (op, value);
                }
            }
        }
        if !seen {
            return Err(bad("You must specify `--match-set' with proper arguments"));
        }
        Ok(info.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump(info, "--", out)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        dump(info, "", out)
    }
    canonical_via!(Info);
}

/// `set_print_v4_matchinfo`: `-S` with `p` = `--`, `-L` with `p` empty.
fn dump(info: &[u8], p: &str, out: &mut String) -> Option<()> {
    let i = Info::decode(info).ok()?;
    let known = xs::RETURN_NOMATCH | xs::SKIP_COUNTER_UPDATE | xs::SKIP_SUBCOUNTER_UPDATE;
    if i.dim == 0
        || i.dim > xs::DIM_MAX
        || i.flags & !known != 0
        || i.packets_op > xs::COUNTER_GT
        || i.bytes_op > xs::COUNTER_GT
    {
        return None;
    }
    let name = super::ipset::name_of(i.index)?;
    bang(out, i.set_flags & xs::INV_MATCH != 0);
    let _ = write!(out, " {p}match-set {name}");
    for d in 1..=i.dim {
        out.push(if d == 1 { ' ' } else { ',' });
        out.push_str(if i.set_flags & (1 << d) != 0 {
            "src"
        } else {
            "dst"
        });
    }
    if i.flags & xs::RETURN_NOMATCH != 0 {
        let _ = write!(out, " {p}return-nomatch");
    }
    if i.flags & xs::SKIP_COUNTER_UPDATE != 0 {
        let _ = write!(out, " ! {p}update-counters");
    }
    if i.flags & xs::SKIP_SUBCOUNTER_UPDATE != 0 {
        let _ = write!(out, " ! {p}update-subcounters");
    }
    for (what, op, v) in [
        ("packets", i.packets_op, i.packets_value),
        ("bytes", i.bytes_op, i.bytes_value),
    ] {
        let _ = match op {
            xs::COUNTER_EQ => write!(out, " {p}{what}-eq {v}"),
            xs::COUNTER_NE => write!(out, " ! {p}{what}-eq {v}"),
            xs::COUNTER_LT => write!(out, " {p}{what}-lt {v}"),
            xs::COUNTER_GT => write!(out, " {p}{what}-gt {v}"),
            _ => Ok(()),
        };
    }
    Some(())
}

/// `-j SET` (revision 3): `--add-set NAME DIRS [--exist] [--timeout N]`, `--del-set NAME
/// DIRS`, `--map-set NAME DIRS --map-mark|--map-prio|--map-queue`.
pub(crate) struct SetTarget;

/// `--add-set`/`--del-set`/`--map-set NAME DIRS` as (index, dim, flags).
fn slot(g: &Given) -> Result<(u16, u8, u8)> {
    let name = g.arg();
    if name.len() > super::ipset::MAXNAMELEN - 1 {
        return Err(bad(format!(
            "setname `{name}' too long, max {} characters.",
            super::ipset::MAXNAMELEN - 1
        )));
    }
    let (dim, flags) = dirs(g.args.get(1).map(String::as_str).unwrap_or(""))?;
    Ok((super::ipset::index_of(name)?, dim, flags))
}

impl Ext for SetTarget {
    fn name(&self) -> &'static str {
        "SET"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn revision(&self) -> u32 {
        3
    }
    fn options(&self) -> &'static [Opt] {
        opts![
            opt("add-set", Arg::Two, false),
            opt("del-set", Arg::Two, false),
            opt("exist", Arg::None, false),
            opt("timeout", Arg::One, false),
            opt("map-set", Arg::Two, false),
            opt("map-mark", Arg::None, false),
            opt("map-prio", Arg::None, false),
            opt("map-queue", Arg::None, false),
        ]
    }
    fn parse(&self, given: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        for o in ["add-set", "del-set", "map-set"] {
            if given.iter().filter(|g| g.opt == o).count() > 1 {
                return Err(bad(format!("--{o} can be specified only once")));
            }
        }
        let has = |o: &str| get(given, o).is_some();
        if !has("add-set") && !has("del-set") && !has("map-set") {
            return Err(bad(
                "You must specify either `--add-set' or `--del-set' or `--map-set'",
            ));
        }
        if !has("add-set") && has("exist") {
            return Err(bad("Flag `--exist' can be used with `--add-set' only"));
        }
        if !has("add-set") && has("timeout") {
            return Err(bad("Option `--timeout' can be used with `--add-set' only"));
        }
        let maps = ["map-mark", "map-prio", "map-queue"];
        if !has("map-set")
            && let Some(m) = maps.iter().find(|m| has(m))
        {
            return Err(bad(format!(
                "Flag `--{m}' can be used with `--map-set' only"
            )));
        }
        if has("map-set") && !maps.iter().any(|m| has(m)) {
            return Err(bad(
                "You must specify flags `--map-mark' or '--map-prio` or `--map-queue'",
            ));
        }
        let mut t = TInfo {
            add_index: xs::INVALID_ID,
            del_index: xs::INVALID_ID,
            map_index: xs::INVALID_ID,
            timeout: u32::MAX,
            ..Default::default()
        };
        for g in given {
            match g.opt {
                "add-set" => (t.add_index, t.add_dim, t.add_flags) = slot(g)?,
                "del-set" => (t.del_index, t.del_dim, t.del_flags) = slot(g)?,
                "map-set" => (t.map_index, t.map_dim, t.map_flags) = slot(g)?,
                "exist" => t.flags |= xs::FLAG_EXIST,
                "map-mark" => t.flags |= xs::MAP_SKBMARK,
                "map-prio" => t.flags |= xs::MAP_SKBPRIO,
                "map-queue" => t.flags |= xs::MAP_SKBQUEUE,
                _ => {
                    t.timeout =
                        num(g.arg(), u64::from(u32::MAX - 1), "SET --timeout").map_err(|_| {
                            bad(format!(
                                "Invalid value for option --timeout or out of range 0-{}",
                                u32::MAX - 1
                            ))
                        })? as u32;
                }
            }
        }
        Ok(t.encode())
    }
    fn save(&self, info: &[u8], _: Family, out: &mut String) -> Option<()> {
        dump_target(info, "--", out)
    }
    fn list(&self, info: &[u8], _: Family, _: bool, out: &mut String) -> Option<()> {
        dump_target(info, "", out)
    }
    canonical_via!(TInfo);
}

/// `set_target_save_v3` (`p` = `--`) and `set_target_print_v3` (`p` empty).
fn dump_target(info: &[u8], p: &str, out: &mut String) -> Option<()> {
    let t = TInfo::decode(info).ok()?;
    let known = xs::FLAG_EXIST | xs::MAP_SKBMARK | xs::MAP_SKBPRIO | xs::MAP_SKBQUEUE;
    if t.flags & !known != 0 {
        return None;
    }
    let slot = |out: &mut String, what: &str, index: u16, dim: u8, flags: u8| -> Option<()> {
        if index == xs::INVALID_ID {
            return Some(());
        }
        if dim == 0 || dim > xs::DIM_MAX {
            return None;
        }
        let name = super::ipset::name_of(index)?;
        let _ = write!(out, " {p}{what} {name}");
        for d in 1..=dim {
            out.push(if d == 1 { ' ' } else { ',' });
            out.push_str(if flags & (1 << d) != 0 { "src" } else { "dst" });
        }
        Some(())
    };
    slot(out, "add-set", t.add_index, t.add_dim, t.add_flags)?;
    if t.flags & xs::FLAG_EXIST != 0 {
        let _ = write!(out, " {p}exist");
    }
    if t.timeout != u32::MAX {
        let _ = write!(out, " {p}timeout {}", t.timeout);
    }
    slot(out, "del-set", t.del_index, t.del_dim, t.del_flags)?;
    slot(out, "map-set", t.map_index, t.map_dim, t.map_flags)?;
    for (bit, word) in [
        (xs::MAP_SKBMARK, "map-mark"),
        (xs::MAP_SKBPRIO, "map-prio"),
        (xs::MAP_SKBQUEUE, "map-queue"),
    ] {
        if t.flags & bit != 0 {
            let _ = write!(out, " {p}{word}");
        }
    }
    Some(())
}
