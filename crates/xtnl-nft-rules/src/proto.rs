//! What nft names packet header fields, meta keys and conntrack keys: where each field is
//! (base, offset, length in bytes) and its datatype (nftables' src/proto.c, src/meta.c,
//! src/ct.c, src/fib.c for the byte-aligned fields).

use xtnl_wire::expr::PayloadBase;

use crate::DataType;
use crate::value::Field;
use crate::{ByteOrder, DataType as T};

/// A header field nft names `PROTOCOL FIELD`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HdrField {
    pub proto: &'static str,
    pub field: &'static str,
    pub base: PayloadBase,
    pub offset: u32,
    pub len: u32,
    pub dtype: DataType,
}

const fn f(
    proto: &'static str,
    field: &'static str,
    base: PayloadBase,
    offset: u32,
    len: u32,
    dtype: DataType,
) -> HdrField {
    HdrField {
        proto,
        field,
        base,
        offset,
        len,
        dtype,
    }
}

use PayloadBase::{Link as LL, Network as NH, Transport as TH};

/// The byte-aligned fields nft names (bit fields such as `ip dscp` are not here: a payload
/// expression of them is refused as not supported).
pub(crate) const FIELDS: &[HdrField] = &[
    f("ether", "daddr", LL, 0, 6, T::EtherAddr),
    f("ether", "saddr", LL, 6, 6, T::EtherAddr),
    f("ether", "type", LL, 12, 2, T::EtherType),
    f("ip", "length", NH, 2, 2, T::Integer),
    f("ip", "id", NH, 4, 2, T::Integer),
    f("ip", "frag-off", NH, 6, 2, T::Integer),
    f("ip", "ttl", NH, 8, 1, T::Integer),
    f("ip", "protocol", NH, 9, 1, T::InetProto),
    f("ip", "checksum", NH, 10, 2, T::Integer),
    f("ip", "saddr", NH, 12, 4, T::Ipv4Addr),
    f("ip", "daddr", NH, 16, 4, T::Ipv4Addr),
    f("ip6", "length", NH, 4, 2, T::Integer),
    f("ip6", "nexthdr", NH, 6, 1, T::InetProto),
    f("ip6", "hoplimit", NH, 7, 1, T::Integer),
    f("ip6", "saddr", NH, 8, 16, T::Ipv6Addr),
    f("ip6", "daddr", NH, 24, 16, T::Ipv6Addr),
    f("tcp", "sport", TH, 0, 2, T::InetService),
    f("tcp", "dport", TH, 2, 2, T::InetService),
    f("tcp", "sequence", TH, 4, 4, T::Integer),
    f("tcp", "ackseq", TH, 8, 4, T::Integer),
    f("tcp", "flags", TH, 13, 1, T::TcpFlag),
    f("tcp", "window", TH, 14, 2, T::Integer),
    f("tcp", "checksum", TH, 16, 2, T::Integer),
    f("tcp", "urgptr", TH, 18, 2, T::Integer),
    f("udp", "sport", TH, 0, 2, T::InetService),
    f("udp", "dport", TH, 2, 2, T::InetService),
    f("udp", "length", TH, 4, 2, T::Integer),
    f("udp", "checksum", TH, 6, 2, T::Integer),
    f("udplite", "sport", TH, 0, 2, T::InetService),
    f("udplite", "dport", TH, 2, 2, T::InetService),
    f("sctp", "sport", TH, 0, 2, T::InetService),
    f("sctp", "dport", TH, 2, 2, T::InetService),
    f("sctp", "vtag", TH, 4, 4, T::Integer),
    f("sctp", "checksum", TH, 8, 4, T::Integer),
    f("dccp", "sport", TH, 0, 2, T::InetService),
    f("dccp", "dport", TH, 2, 2, T::InetService),
    f("icmp", "type", TH, 0, 1, T::IcmpType),
    f("icmp", "code", TH, 1, 1, T::IcmpCode),
    f("icmp", "checksum", TH, 2, 2, T::Integer),
    f("icmp", "id", TH, 4, 2, T::Integer),
    f("icmp", "sequence", TH, 6, 2, T::Integer),
    f("icmp", "gateway", TH, 4, 4, T::Integer),
    f("icmpv6", "type", TH, 0, 1, T::Icmp6Type),
    f("icmpv6", "code", TH, 1, 1, T::Icmpv6Code),
    f("icmpv6", "checksum", TH, 2, 2, T::Integer),
    f("icmpv6", "mtu", TH, 4, 4, T::Integer),
    f("icmpv6", "id", TH, 4, 2, T::Integer),
    f("icmpv6", "sequence", TH, 6, 2, T::Integer),
    f("igmp", "type", TH, 0, 1, T::IgmpType),
    f("igmp", "checksum", TH, 2, 2, T::Integer),
    f("esp", "spi", TH, 0, 4, T::Integer),
    f("esp", "sequence", TH, 4, 4, T::Integer),
    f("th", "sport", TH, 0, 2, T::InetService),
    f("th", "dport", TH, 2, 2, T::InetService),
];

/// The IP protocol number of a transport header nft names, for its dependency.
pub(crate) fn l4_number(proto: &str) -> Option<u8> {
    Some(match proto {
        "tcp" => 6,
        "udp" => 17,
        "udplite" => 136,
        "sctp" => 132,
        "dccp" => 33,
        "icmp" => 1,
        "icmpv6" => 58,
        "igmp" => 2,
        "esp" => 50,
        "ah" => 51,
        _ => return None,
    })
}

/// The transport header nft names for an IP protocol number.
pub(crate) fn l4_name(n: u8) -> Option<&'static str> {
    Some(match n {
        6 => "tcp",
        17 => "udp",
        136 => "udplite",
        132 => "sctp",
        33 => "dccp",
        1 => "icmp",
        58 => "icmpv6",
        2 => "igmp",
        50 => "esp",
        51 => "ah",
        _ => return None,
    })
}

/// The field at `offset` of header `proto` that a load of `len` bytes reads: exactly, or its
/// first `len` bytes (a byte-aligned prefix of an address).
pub(crate) fn field_at(proto: &str, base: PayloadBase, offset: u32, len: u32) -> Option<HdrField> {
    let exact = FIELDS
        .iter()
        .find(|h| h.proto == proto && h.base == base && h.offset == offset && h.len == len);
    exact
        .or_else(|| {
            FIELDS.iter().find(|h| {
                h.proto == proto
                    && h.base == base
                    && h.offset == offset
                    && len < h.len
                    && matches!(h.dtype, T::Ipv4Addr | T::Ipv6Addr)
            })
        })
        .copied()
}

/// The field nft calls `proto field`.
pub(crate) fn field_named(proto: &str, field: &str) -> Option<HdrField> {
    FIELDS
        .iter()
        .find(|h| h.proto == proto && h.field == field)
        .copied()
}

/// A meta key: its number, name and the field it loads.
pub(crate) const META: &[(u32, &str, DataType, u32, ByteOrder)] = &[
    (0, "length", T::Integer, 4, ByteOrder::Host),
    (1, "protocol", T::EtherType, 2, ByteOrder::Big),
    (2, "priority", T::ClassId, 4, ByteOrder::Host),
    (3, "mark", T::Mark, 4, ByteOrder::Host),
    (4, "iif", T::IfaceIndex, 4, ByteOrder::Host),
    (5, "oif", T::IfaceIndex, 4, ByteOrder::Host),
    (6, "iifname", T::IfName, 16, ByteOrder::Host),
    (7, "oifname", T::IfName, 16, ByteOrder::Host),
    (8, "iiftype", T::IfaceType, 2, ByteOrder::Host),
    (9, "oiftype", T::IfaceType, 2, ByteOrder::Host),
    (10, "skuid", T::Uid, 4, ByteOrder::Host),
    (11, "skgid", T::Gid, 4, ByteOrder::Host),
    (12, "nftrace", T::Integer, 1, ByteOrder::Host),
    (13, "rtclassid", T::Realm, 4, ByteOrder::Host),
    (14, "secmark", T::Integer, 4, ByteOrder::Host),
    (15, "nfproto", T::NfProto, 1, ByteOrder::Host),
    (16, "l4proto", T::InetProto, 1, ByteOrder::Host),
    (17, "ibrname", T::IfName, 16, ByteOrder::Host),
    (18, "obrname", T::IfName, 16, ByteOrder::Host),
    (19, "pkttype", T::PktType, 1, ByteOrder::Host),
    (20, "cpu", T::Integer, 4, ByteOrder::Host),
    (21, "iifgroup", T::DevGroup, 4, ByteOrder::Host),
    (22, "oifgroup", T::DevGroup, 4, ByteOrder::Host),
    (23, "cgroup", T::Integer, 4, ByteOrder::Host),
    (24, "random", T::Integer, 4, ByteOrder::Big),
    (25, "secpath", T::Boolean, 1, ByteOrder::Host),
    (26, "iifkind", T::IfName, 16, ByteOrder::Host),
    (27, "oifkind", T::IfName, 16, ByteOrder::Host),
    (33, "sdif", T::IfaceIndex, 4, ByteOrder::Host),
    (34, "sdifname", T::IfName, 16, ByteOrder::Host),
];

/// The field a meta key loads, and its name.
pub(crate) fn meta_key(key: u32) -> Option<(&'static str, Field)> {
    META.iter().find(|m| m.0 == key).map(|m| {
        (
            m.1,
            Field {
                dtype: m.2,
                len: m.3 as usize,
                order: m.4,
            },
        )
    })
}

/// The meta key nft calls `name`.
pub(crate) fn meta_named(name: &str) -> Option<(u32, Field)> {
    META.iter().find(|m| m.1 == name).map(|m| {
        (
            m.0,
            Field {
                dtype: m.2,
                len: m.3 as usize,
                order: m.4,
            },
        )
    })
}

/// A conntrack key: number, name, datatype, length, byte order, whether it takes a
/// direction.
pub(crate) const CT: &[(u32, &str, DataType, u32, ByteOrder)] = &[
    (0, "state", T::CtState, 4, ByteOrder::Host),
    (1, "direction", T::CtDir, 1, ByteOrder::Host),
    (2, "status", T::CtStatus, 4, ByteOrder::Host),
    (3, "mark", T::Mark, 4, ByteOrder::Host),
    (4, "secmark", T::Integer, 4, ByteOrder::Host),
    (5, "expiration", T::Time, 4, ByteOrder::Host),
    (6, "helper", T::String, 16, ByteOrder::Host),
    (7, "l3proto", T::NfProto, 1, ByteOrder::Host),
    (10, "protocol", T::InetProto, 1, ByteOrder::Big),
    (11, "proto-src", T::InetService, 2, ByteOrder::Big),
    (12, "proto-dst", T::InetService, 2, ByteOrder::Big),
    (14, "packets", T::Integer, 8, ByteOrder::Host),
    (15, "bytes", T::Integer, 8, ByteOrder::Host),
    (16, "avgpkt", T::Integer, 8, ByteOrder::Host),
    (17, "zone", T::Integer, 2, ByteOrder::Host),
    (18, "event", T::CtEvent, 4, ByteOrder::Host),
    (19, "ip saddr", T::Ipv4Addr, 4, ByteOrder::Big),
    (20, "ip daddr", T::Ipv4Addr, 4, ByteOrder::Big),
    (21, "ip6 saddr", T::Ipv6Addr, 16, ByteOrder::Big),
    (22, "ip6 daddr", T::Ipv6Addr, 16, ByteOrder::Big),
    (23, "id", T::Integer, 4, ByteOrder::Big),
];

/// The field a ct key loads, its name and, for addresses, its family (`ip`, `ip6`).
pub(crate) fn ct_key(key: u32) -> Option<(&'static str, Option<&'static str>, Field)> {
    CT.iter().find(|c| c.0 == key).map(|c| {
        let (fam, name) = match c.1.split_once(' ') {
            Some((fam, name)) => (Some(fam), name),
            None => (None, c.1),
        };
        (
            name,
            fam,
            Field {
                dtype: c.2,
                len: c.3 as usize,
                order: c.4,
            },
        )
    })
}

/// The ct key nft calls `name` (with `family` for `saddr`/`daddr`).
pub(crate) fn ct_named(name: &str, family: Option<&str>) -> Option<(u32, Field)> {
    let full = match family {
        Some(f) => format!("{f} {name}"),
        None => name.to_owned(),
    };
    CT.iter().find(|c| c.1 == full).map(|c| {
        (
            c.0,
            Field {
                dtype: c.2,
                len: c.3 as usize,
                order: c.4,
            },
        )
    })
}

/// A header field that is not byte-aligned: nft loads the bytes that hold it, masks it, and
/// compares with the value shifted into place (`ip dscp cs1` is `& 0xfc == 0x20`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BitField {
    pub proto: &'static str,
    pub field: &'static str,
    pub base: PayloadBase,
    /// Offset and length in bits from the start of the header.
    pub bit_offset: u32,
    pub bits: u32,
    pub dtype: DataType,
}

impl BitField {
    /// The first byte loaded.
    pub fn offset(&self) -> u32 {
        self.bit_offset / 8
    }
    /// The bytes loaded.
    pub fn len(&self) -> u32 {
        (self.bit_offset % 8 + self.bits).div_ceil(8)
    }
    /// How far the value is shifted left in the loaded bytes.
    pub fn shift(&self) -> u32 {
        self.len() * 8 - self.bit_offset % 8 - self.bits
    }
    /// The mask over the loaded bytes, big-endian.
    pub fn mask(&self) -> Vec<u8> {
        let v: u64 = ((1u64 << self.bits) - 1) << self.shift();
        v.to_be_bytes()[8 - self.len() as usize..].to_vec()
    }
}

const fn b(
    proto: &'static str,
    field: &'static str,
    base: PayloadBase,
    bit_offset: u32,
    bits: u32,
    dtype: DataType,
) -> BitField {
    BitField {
        proto,
        field,
        base,
        bit_offset,
        bits,
        dtype,
    }
}

pub(crate) const BIT_FIELDS: &[BitField] = &[
    b("ip", "version", NH, 0, 4, T::Integer),
    b("ip", "hdrlength", NH, 4, 4, T::Integer),
    b("ip", "dscp", NH, 8, 6, T::Dscp),
    b("ip", "ecn", NH, 14, 2, T::Ecn),
    b("ip6", "version", NH, 0, 4, T::Integer),
    b("ip6", "dscp", NH, 4, 6, T::Dscp),
    b("ip6", "ecn", NH, 10, 2, T::Ecn),
    b("ip6", "flowlabel", NH, 12, 20, T::Integer),
    b("tcp", "doff", TH, 96, 4, T::Integer),
];

/// The bit field of header `proto` that a load of `len` bytes at `offset` masked with `mask`
/// reads.
pub(crate) fn bit_field_at(
    proto: &str,
    base: PayloadBase,
    offset: u32,
    len: u32,
    mask: &[u8],
) -> Option<BitField> {
    BIT_FIELDS
        .iter()
        .find(|f| {
            f.proto == proto
                && f.base == base
                && f.offset() == offset
                && f.len() == len
                && f.mask() == mask
        })
        .copied()
}

/// The bit field nft calls `proto field`.
pub(crate) fn bit_field_named(proto: &str, field: &str) -> Option<BitField> {
    BIT_FIELDS
        .iter()
        .find(|f| f.proto == proto && f.field == field)
        .copied()
}
