//! The x_tables socket-option structs and the table blob, byte for byte: `ipt_getinfo`,
//! `ipt_get_entries`, `ipt_replace`, `xt_counters_info`, and the entries of a table
//! (`ipt_entry` / `ip6t_entry`, each followed by its `xt_entry_match`es and one
//! `xt_entry_target`). Offsets are those of the kernel's UAPI headers (vendor-notes.md,
//! "x_tables ABI"); those that differ between 64-bit and 32-bit targets come from
//! [`super::abi`], which checks all of them against the target's C layout at compile time.
//! Every decoder checks sizes and offsets and never panics.
//!
//! No I/O here: [`super::kernel`] moves these bytes through get/setsockopt; the
//! socket options' own request and reply headers are in `sockopt.rs`.
//!
//! Over 600 lines, kept whole: it is one ABI (the structs of `linux/netfilter_ipv4/ip_tables.h`
//! and `linux/netfilter_ipv6/ip6_tables.h`), its offsets, and the decoder and encoder of one
//! entry format that must stay symmetric; split, a change to a field would have to be made in
//! two files that the compile-time layout checks do not tie together.

use crate::model::{Counters, Family};
use crate::wire::WireError;
use crate::xt::xt_align;

/// `XT_TABLE_MAXNAMELEN`.
pub const TABLE_MAXNAMELEN: usize = 32;
/// `XT_EXTENSION_MAXNAMELEN`: the name field of a match or target.
pub const EXTENSION_MAXNAMELEN: usize = 29;
/// `XT_FUNCTION_MAXNAMELEN`: `xt_error_target.errorname`, i.e. the longest chain name + NUL.
pub const FUNCTION_MAXNAMELEN: usize = 30;
pub const IFNAMSIZ: usize = 16;
/// `NF_INET_NUMHOOKS`.
pub const NUMHOOKS: usize = 5;
/// `sizeof(struct xt_entry_match)` = `sizeof(struct xt_entry_target)`.
pub const EXT_HEADER: usize = 32;
/// `sizeof(struct xt_counters)`.
pub const COUNTERS_SIZE: usize = 16;
/// `XT_STANDARD_TARGET`.
pub const STANDARD_TARGET: &str = "";
/// `XT_ERROR_TARGET`.
pub const ERROR_TARGET: &str = "ERROR";

/// Standard-target verdicts: `-NF_x - 1`, and `XT_RETURN` (`-NF_REPEAT - 1`).
pub mod verdict {
    pub const DROP: i32 = -1;
    pub const ACCEPT: i32 = -2;
    pub const QUEUE: i32 = -4;
    pub const RETURN: i32 = -5;
}

/// `ipt_ip.flags` / `ip6t_ip6.flags` bits (IPT_F_* and IP6T_F_* differ). All of them, as the
/// ABI defines them: `V4_FRAG` (`-f`) and `V6_TOS` are not produced by xtnl's parser yet.
#[allow(dead_code)]
pub mod flags {
    pub const V4_FRAG: u8 = 0x01;
    pub const V4_GOTO: u8 = 0x02;
    pub const V6_PROTO: u8 = 0x01;
    pub const V6_TOS: u8 = 0x02;
    pub const V6_GOTO: u8 = 0x04;
}

/// `invflags` bits (the same values for IPv4 and IPv6).
pub mod inv {
    pub const VIA_IN: u8 = 0x01;
    pub const VIA_OUT: u8 = 0x02;
    pub const SRCIP: u8 = 0x08;
    pub const DSTIP: u8 = 0x10;
    pub const PROTO: u8 = 0x40;
}

/// Socket-option numbers (`IPT_BASE_CTL` = `IP6T_BASE_CTL` = 64) and their levels.
pub mod opt {
    pub const SET_REPLACE: i32 = 64;
    pub const SET_ADD_COUNTERS: i32 = 65;
    pub const GET_INFO: i32 = 64;
    pub const GET_ENTRIES: i32 = 65;
    pub fn level(family: crate::model::Family) -> i32 {
        if family == crate::model::Family::Ipv6 {
            libc::SOL_IPV6
        } else {
            libc::SOL_IP
        }
    }
}

/// Where the fields of `ipt_entry` / `ip6t_entry` sit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) addr: usize,
    /// `ipt_ip.proto` / `ip6t_ip6.proto`; the interface names sit at `4 * addr`.
    pub(crate) proto: usize,
    /// `ip6t_ip6.tos` (IPv6 only).
    pub(crate) tos: Option<usize>,
    pub(crate) flags: usize,
    pub(crate) invflags: usize,
    pub(crate) nfcache: usize,
    pub(crate) target_offset: usize,
    pub(crate) next_offset: usize,
    pub(crate) comefrom: usize,
    pub(crate) counters: usize,
    /// `sizeof(struct ipt_entry)`: where the first match starts.
    pub(crate) size: usize,
}

pub(crate) const V4: Layout = Layout {
    addr: 4,
    proto: 80,
    tos: None,
    flags: 82,
    invflags: 83,
    nfcache: 84,
    target_offset: 88,
    next_offset: 90,
    comefrom: 92,
    counters: 96,
    size: 112,
};

/// `counters` and `size` move on i386, where a u64 in a struct is 4-aligned (148 and 164).
pub(crate) const V6: Layout = Layout {
    addr: 16,
    proto: 128,
    tos: Some(130),
    flags: 131,
    invflags: 132,
    nfcache: 136,
    target_offset: 140,
    next_offset: 142,
    comefrom: 144,
    counters: std::mem::offset_of!(super::abi::Ip6tEntry, counters),
    size: std::mem::size_of::<super::abi::Ip6tEntry>(),
};

pub(crate) fn layout(family: Family) -> Result<Layout, WireError> {
    match family {
        Family::Ipv4 => Ok(V4),
        Family::Ipv6 => Ok(V6),
        Family::Inet => Err(WireError::bad_value(
            "x_tables has ip and ip6 tables, no inet ones",
        )),
    }
}

fn get<const N: usize>(b: &[u8], at: usize, what: &str) -> Result<[u8; N], WireError> {
    b.get(at..at + N)
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or_else(|| WireError::truncated(at + N, b.len()).within(what))
}

fn u16_at(b: &[u8], at: usize, what: &str) -> Result<u16, WireError> {
    get::<2>(b, at, what).map(u16::from_ne_bytes)
}

pub(super) fn u32_at(b: &[u8], at: usize, what: &str) -> Result<u32, WireError> {
    get::<4>(b, at, what).map(u32::from_ne_bytes)
}

pub(super) fn u64_at(b: &[u8], at: usize, what: &str) -> Result<u64, WireError> {
    get::<8>(b, at, what).map(u64::from_ne_bytes)
}

pub(super) fn put(b: &mut [u8], at: usize, v: &[u8]) {
    // Every offset written here is a constant of the layouts above within a buffer sized from
    // the same layout.
    if let Some(dst) = b.get_mut(at..at + v.len()) {
        dst.copy_from_slice(v);
    }
}

/// A NUL-terminated name in a fixed field; the field must hold a NUL.
pub(super) fn c_name(raw: &[u8], what: &str) -> Result<String, WireError> {
    let nul = raw
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| WireError::bad_value("name is not NUL-terminated").within(what))?;
    String::from_utf8(raw[..nul].to_vec())
        .map_err(|_| WireError::bad_value("name is not UTF-8").within(what))
}

/// Writes `name` into a zeroed `char[cap]` field, refusing what would not fit with its NUL.
pub(super) fn put_name(
    b: &mut [u8],
    at: usize,
    cap: usize,
    name: &str,
    what: &str,
) -> Result<(), WireError> {
    if name.len() >= cap || name.as_bytes().contains(&0) {
        return Err(WireError::bad_value(format!(
            "{name:?} does not fit {cap} bytes with its NUL"
        ))
        .within(what));
    }
    put(b, at, name.as_bytes());
    Ok(())
}

/// The fixed part of a rule: `ipt_ip` or `ip6t_ip6`, kept as the kernel's bytes mean them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpHeader {
    /// Address and mask bytes, 4 (IPv4) or 16 (IPv6) each, network order.
    pub src: Vec<u8>,
    pub dst: Vec<u8>,
    pub smsk: Vec<u8>,
    pub dmsk: Vec<u8>,
    pub iniface: [u8; IFNAMSIZ],
    pub outiface: [u8; IFNAMSIZ],
    pub iniface_mask: [u8; IFNAMSIZ],
    pub outiface_mask: [u8; IFNAMSIZ],
    pub proto: u16,
    /// IPv6 only (`ip6t_ip6.tos`); 0 for IPv4.
    pub tos: u8,
    pub flags: u8,
    pub invflags: u8,
}

impl IpHeader {
    /// Matches every packet of the family (what chain heads, tails and policies hold).
    pub fn any(family: Family) -> IpHeader {
        let n = if family == Family::Ipv6 { 16 } else { 4 };
        IpHeader {
            src: vec![0; n],
            dst: vec![0; n],
            smsk: vec![0; n],
            dmsk: vec![0; n],
            iniface: [0; IFNAMSIZ],
            outiface: [0; IFNAMSIZ],
            iniface_mask: [0; IFNAMSIZ],
            outiface_mask: [0; IFNAMSIZ],
            proto: 0,
            tos: 0,
            flags: 0,
            invflags: 0,
        }
    }
}

/// `sizeof(struct ipt_entry)` or `sizeof(struct ip6t_entry)` (the tests' entry arithmetic).
#[cfg(test)]
pub fn entry_header_size(family: Family) -> usize {
    layout(family).map(|l| l.size).unwrap_or(0)
}

/// A match or a target: `xt_entry_match` / `xt_entry_target` header and payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ext {
    pub name: String,
    pub revision: u8,
    /// The payload after the 32-byte header, padded to `XT_ALIGN`.
    pub data: Vec<u8>,
}

impl Ext {
    /// `match_size` / `target_size`.
    pub fn size(&self) -> usize {
        EXT_HEADER + xt_align(self.data.len())
    }

    /// A standard target: a verdict or a jump offset.
    pub fn standard(verdict: i32) -> Ext {
        Ext {
            name: STANDARD_TARGET.into(),
            revision: 0,
            data: xt_pad(verdict.to_ne_bytes().to_vec()),
        }
    }

    /// An error target: a user chain's head (its name) or the table's end (`ERROR`).
    pub fn error(name: &str) -> Result<Ext, WireError> {
        let mut data = vec![0u8; xt_align(FUNCTION_MAXNAMELEN)];
        put_name(&mut data, 0, FUNCTION_MAXNAMELEN, name, "chain name")?;
        Ok(Ext {
            name: ERROR_TARGET.into(),
            revision: 0,
            data,
        })
    }

    /// The verdict of a standard target.
    #[cfg(test)]
    pub fn standard_verdict(&self) -> Option<i32> {
        if self.name != STANDARD_TARGET {
            return None;
        }
        u32_at(&self.data, 0, "standard target")
            .ok()
            .map(|v| v as i32)
    }
}

fn xt_pad(mut v: Vec<u8>) -> Vec<u8> {
    v.resize(xt_align(v.len()), 0);
    v
}

/// One entry of a table blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ip: IpHeader,
    pub nfcache: u32,
    /// Set by the kernel when it checks the table (hook bits); written back as read.
    pub comefrom: u32,
    pub counters: Counters,
    pub matches: Vec<Ext>,
    pub target: Ext,
}

impl Entry {
    /// An unconditional entry with `target` (chain heads, policies, tails, the table's end).
    pub fn plain(family: Family, target: Ext) -> Entry {
        Entry {
            ip: IpHeader::any(family),
            nfcache: 0,
            comefrom: 0,
            counters: Counters::default(),
            matches: Vec::new(),
            target,
        }
    }

    /// `next_offset`: the entry's whole size (the tests' entry arithmetic).
    #[cfg(test)]
    pub fn size(&self, family: Family) -> usize {
        entry_header_size(family)
            + self.matches.iter().map(Ext::size).sum::<usize>()
            + self.target.size()
    }

    /// Appends the entry's bytes to `out`.
    pub fn encode(&self, family: Family, out: &mut Vec<u8>) -> Result<(), WireError> {
        encode_parts(
            family,
            &EntryParts {
                ip: &self.ip,
                extra_flags: 0,
                nfcache: self.nfcache,
                comefrom: self.comefrom,
                counters: self.counters,
                matches: &self.matches,
                target: &self.target,
            },
            out,
        )
    }

    /// Decodes the entry at the start of `b` (which may hold more entries after it).
    pub fn decode(family: Family, b: &[u8]) -> Result<(Entry, usize), WireError> {
        let l = layout(family)?;
        let a = l.addr;
        let (target_offset, next_offset) = entry_offsets(&l, b)?;
        let slice = |at: usize, n: usize| b[at..at + n].to_vec();
        let arr = |at: usize| -> [u8; IFNAMSIZ] {
            let mut x = [0u8; IFNAMSIZ];
            x.copy_from_slice(&b[at..at + IFNAMSIZ]);
            x
        };
        let ip = IpHeader {
            src: slice(0, a),
            dst: slice(a, a),
            smsk: slice(2 * a, a),
            dmsk: slice(3 * a, a),
            iniface: arr(4 * a),
            outiface: arr(4 * a + 16),
            iniface_mask: arr(4 * a + 32),
            outiface_mask: arr(4 * a + 48),
            proto: u16_at(b, l.proto, "proto")?,
            tos: l.tos.map(|t| b[t]).unwrap_or(0),
            flags: b[l.flags],
            invflags: b[l.invflags],
        };
        let mut matches = Vec::new();
        let mut at = l.size;
        while at < target_offset {
            let (m, size) = decode_ext(&b[at..target_offset])
                .map_err(|e| e.within(format!("match at +{at}")))?;
            matches.push(m);
            at += size;
        }
        let (target, size) =
            decode_ext(&b[target_offset..next_offset]).map_err(|e| e.within("target"))?;
        if target_offset + size != next_offset {
            return Err(WireError::bad_value(format!(
                "target of {size} bytes does not end at next_offset {next_offset}"
            ))
            .within("entry"));
        }
        Ok((
            Entry {
                ip,
                nfcache: u32_at(b, l.nfcache, "nfcache")?,
                comefrom: u32_at(b, l.comefrom, "comefrom")?,
                counters: Counters {
                    packets: u64_at(b, l.counters, "counters")?,
                    bytes: u64_at(b, l.counters + 8, "counters")?,
                },
                matches,
                target,
            },
            next_offset,
        ))
    }
}

/// The parts of an entry, borrowed (so a table can be laid out without copying its rules).
pub struct EntryParts<'a> {
    pub ip: &'a IpHeader,
    /// Flags added to `ip.flags` (the goto flag of a `-g` rule).
    pub extra_flags: u8,
    pub nfcache: u32,
    pub comefrom: u32,
    pub counters: Counters,
    pub matches: &'a [Ext],
    pub target: &'a Ext,
}

/// Appends an entry's bytes to `out`.
pub fn encode_parts(
    family: Family,
    e: &EntryParts<'_>,
    out: &mut Vec<u8>,
) -> Result<(), WireError> {
    let l = layout(family)?;
    let a = l.addr;
    for (what, v) in [
        ("src", &e.ip.src),
        ("dst", &e.ip.dst),
        ("smsk", &e.ip.smsk),
        ("dmsk", &e.ip.dmsk),
    ] {
        if v.len() != a {
            return Err(WireError::bad_value(format!(
                "{what} has {} bytes, the family needs {a}",
                v.len()
            ))
            .within("entry"));
        }
    }
    let target_offset = l.size + e.matches.iter().map(Ext::size).sum::<usize>();
    let next_offset = target_offset + e.target.size();
    let (t16, n16) = match (u16::try_from(target_offset), u16::try_from(next_offset)) {
        (Ok(t), Ok(n)) => (t, n),
        _ => {
            return Err(WireError::bad_value(format!(
                "entry of {next_offset} bytes is larger than 65535"
            ))
            .within("entry"));
        }
    };
    let base = out.len();
    // The whole entry at once: a rule encoded on its own keeps exactly its bytes, not the
    // doubling growth's spare room (a third more memory per rule at cluster scale).
    out.reserve(next_offset);
    out.resize(base + l.size, 0);
    let h = &mut out[base..];
    put(h, 0, &e.ip.src);
    put(h, a, &e.ip.dst);
    put(h, 2 * a, &e.ip.smsk);
    put(h, 3 * a, &e.ip.dmsk);
    put(h, 4 * a, &e.ip.iniface);
    put(h, 4 * a + 16, &e.ip.outiface);
    put(h, 4 * a + 32, &e.ip.iniface_mask);
    put(h, 4 * a + 48, &e.ip.outiface_mask);
    put(h, l.proto, &e.ip.proto.to_ne_bytes());
    if let Some(t) = l.tos {
        put(h, t, &[e.ip.tos]);
    }
    put(h, l.flags, &[e.ip.flags | e.extra_flags]);
    put(h, l.invflags, &[e.ip.invflags]);
    put(h, l.nfcache, &e.nfcache.to_ne_bytes());
    put(h, l.target_offset, &t16.to_ne_bytes());
    put(h, l.next_offset, &n16.to_ne_bytes());
    put(h, l.comefrom, &e.comefrom.to_ne_bytes());
    put(h, l.counters, &e.counters.packets.to_ne_bytes());
    put(h, l.counters + 8, &e.counters.bytes.to_ne_bytes());
    for m in e.matches {
        encode_ext(m, out).map_err(|e| e.within("match"))?;
    }
    encode_ext(e.target, out).map_err(|e| e.within("target"))
}

fn encode_ext(e: &Ext, out: &mut Vec<u8>) -> Result<(), WireError> {
    let size = u16::try_from(e.size())
        .map_err(|_| WireError::bad_value(format!("{} bytes is too large", e.size())))?;
    let mut h = [0u8; EXT_HEADER];
    put(&mut h, 0, &size.to_ne_bytes());
    put_name(&mut h, 2, EXTENSION_MAXNAMELEN, &e.name, "extension name")?;
    h[31] = e.revision;
    out.extend_from_slice(&h);
    out.extend_from_slice(&e.data);
    out.resize(out.len() + xt_align(e.data.len()) - e.data.len(), 0);
    Ok(())
}

fn decode_ext(b: &[u8]) -> Result<(Ext, usize), WireError> {
    let size = u16_at(b, 0, "size")? as usize;
    if size < EXT_HEADER || size > b.len() || size % crate::xt::XT_ALIGN != 0 {
        return Err(WireError::bad_value(format!(
            "size {size} impossible in {} bytes",
            b.len()
        )));
    }
    Ok((
        Ext {
            name: c_name(&b[2..2 + EXTENSION_MAXNAMELEN], "name")?,
            revision: b[31],
            data: b[EXT_HEADER..size].to_vec(),
        },
        size,
    ))
}

/// The target of an entry, as far as a table needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetKind<'a> {
    /// A standard target's verdict (or jump offset).
    Standard(i32),
    /// An error target's name (up to its NUL).
    Error(&'a str),
    /// An error target whose name is no string.
    BadError,
    /// Any other target.
    Other,
}

/// What a table needs of an entry, read in place: its sizes and offsets checked as
/// [`Entry::decode`] checks them, without building it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scan<'a> {
    /// `next_offset`.
    pub size: usize,
    pub target: TargetKind<'a>,
    /// `target_offset`.
    pub target_offset: usize,
    /// The header's flags byte (the goto flag lives there).
    pub flags: u8,
    pub counters: Counters,
}

/// Checks one extension header at the start of `b`; returns its size and its name field (which
/// must hold a NUL; whether the name is UTF-8 is left to whoever decodes it: [`Entry::decode`]
/// refuses it then).
fn scan_ext(b: &[u8]) -> Result<(usize, &[u8]), WireError> {
    let size = u16_at(b, 0, "size")? as usize;
    if size < EXT_HEADER || size > b.len() || size % crate::xt::XT_ALIGN != 0 {
        return Err(WireError::bad_value(format!(
            "size {size} impossible in {} bytes",
            b.len()
        )));
    }
    let raw = &b[2..2 + EXTENSION_MAXNAMELEN];
    // Names are short, so the NUL comes within a few bytes: a plain loop finds it for a
    // fraction of what `contains` (memchr, set up for long haystacks) costs here (measured
    // with callgrind on a 20,000-entry table).
    #[allow(clippy::manual_contains)]
    let terminated = raw.iter().any(|&b| b == 0);
    if !terminated {
        return Err(WireError::bad_value("name is not NUL-terminated").within("name"));
    }
    Ok((size, raw))
}

/// Whether the entry at the start of `b` (scanned) matches every packet: no matches and an
/// all-zero `ipt_ip` / `ip6t_ip6` (what chain tails and policies hold).
pub(crate) fn is_plain(l: &Layout, b: &[u8], s: &Scan<'_>) -> bool {
    // Addresses, masks, interfaces, proto, (tos,) flags, invflags: contiguous from 0.
    s.target_offset == l.size
        && b.get(..=l.invflags)
            .is_some_and(|h| h.iter().all(|&x| x == 0))
}

/// The entry's `target_offset` and `next_offset`, checked against its fixed part, the
/// extension header, `b`'s length and alignment: what both [`Entry::decode`] and [`scan`]
/// stand on.
fn entry_offsets(l: &Layout, b: &[u8]) -> Result<(usize, usize), WireError> {
    if b.len() < l.size {
        return Err(WireError::truncated(l.size, b.len()).within("entry"));
    }
    let target_offset = u16_at(b, l.target_offset, "target_offset")? as usize;
    let next_offset = u16_at(b, l.next_offset, "next_offset")? as usize;
    if target_offset < l.size
        || next_offset < target_offset + EXT_HEADER
        || next_offset > b.len()
        || next_offset % crate::xt::XT_ALIGN != 0
    {
        return Err(WireError::bad_value(format!(
            "target_offset {target_offset} / next_offset {next_offset} impossible in {} bytes",
            b.len()
        ))
        .within("entry"));
    }
    Ok((target_offset, next_offset))
}

/// Reads the entry at the start of `b` in place (see [`Scan`]).
pub(crate) fn scan<'a>(l: &Layout, b: &'a [u8]) -> Result<Scan<'a>, WireError> {
    let (target_offset, next_offset) = entry_offsets(l, b)?;
    let mut at = l.size;
    while at < target_offset {
        let (size, _) =
            scan_ext(&b[at..target_offset]).map_err(|e| e.within(format!("match at +{at}")))?;
        at += size;
    }
    let t = &b[target_offset..next_offset];
    let (size, name) = scan_ext(t).map_err(|e| e.within("target"))?;
    if target_offset + size != next_offset {
        return Err(WireError::bad_value(format!(
            "target of {size} bytes does not end at next_offset {next_offset}"
        ))
        .within("entry"));
    }
    let data = &t[EXT_HEADER..size];
    // The name field holds a NUL (checked), so a prefix test with the NUL is an exact match.
    let target = if name[0] == 0 {
        match u32_at(data, 0, "standard target") {
            Ok(v) => TargetKind::Standard(v as i32),
            Err(_) => TargetKind::Other,
        }
    } else if name.starts_with(b"ERROR\0") {
        let raw = &data[..data.len().min(FUNCTION_MAXNAMELEN)];
        match raw
            .iter()
            .position(|&b| b == 0)
            .map(|nul| std::str::from_utf8(&raw[..nul]))
        {
            Some(Ok(n)) => TargetKind::Error(n),
            _ => TargetKind::BadError,
        }
    } else {
        TargetKind::Other
    };
    Ok(Scan {
        size: next_offset,
        target_offset,
        target,
        flags: b[l.flags],
        counters: Counters {
            packets: u64_at(b, l.counters, "counters")?,
            bytes: u64_at(b, l.counters + 8, "counters")?,
        },
    })
}

/// Splits a whole table blob into its entries, each with its offset (the tests' reader of
/// captured blobs; the backend reads through `table::Table::from_blob`).
#[cfg(test)]
pub fn decode_entries(family: Family, blob: &[u8]) -> Result<Vec<(usize, Entry)>, WireError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < blob.len() {
        let (e, size) = Entry::decode(family, &blob[at..])
            .map_err(|e| e.within(format!("entry #{} at offset {at}", out.len())))?;
        out.push((at, e));
        at += size;
    }
    Ok(out)
}
