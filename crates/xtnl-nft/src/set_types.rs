//! The types of set keys and values in nft's vocabulary (`nft describe`), how a key or value
//! field is laid out, and a set's type in nft's words.

#![deny(missing_docs)]

use std::net::IpAddr;

use crate::wire::set::SetDefRepr;

/// nft's data types that xtnl names (`nft describe`): their type number and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `ipv4_addr` (7), 4 bytes.
    Ipv4Addr,
    /// `ipv6_addr` (8), 16 bytes.
    Ipv6Addr,
    /// `ether_addr` (9), 6 bytes.
    EtherAddr,
    /// `inet_proto` (12), 1 byte.
    InetProto,
    /// `inet_service` (13), 2 bytes (a port, network order).
    InetService,
    /// `mark` (19), 4 bytes.
    Mark,
    /// `ifname` (41), 16 bytes.
    Ifname,
    /// Another type, by number and length in bytes.
    Other {
        /// The type number.
        number: u32,
        /// Its length in bytes.
        len: u32,
    },
}

impl DataType {
    /// The type number (`NFTA_SET_KEY_TYPE` for one type).
    pub fn number(self) -> u32 {
        match self {
            DataType::Ipv4Addr => 7,
            DataType::Ipv6Addr => 8,
            DataType::EtherAddr => 9,
            DataType::InetProto => 12,
            DataType::InetService => 13,
            DataType::Mark => 19,
            DataType::Ifname => 41,
            DataType::Other { number, .. } => number,
        }
    }
    /// The length in bytes.
    pub fn byte_len(self) -> u32 {
        match self {
            DataType::Ipv4Addr | DataType::Mark => 4,
            DataType::Ipv6Addr | DataType::Ifname => 16,
            DataType::EtherAddr => 6,
            DataType::InetProto => 1,
            DataType::InetService => 2,
            DataType::Other { len, .. } => len,
        }
    }
    /// nft's name (`ipv4_addr`...).
    pub fn name(self) -> String {
        match self {
            DataType::Ipv4Addr => "ipv4_addr".into(),
            DataType::Ipv6Addr => "ipv6_addr".into(),
            DataType::EtherAddr => "ether_addr".into(),
            DataType::InetProto => "inet_proto".into(),
            DataType::InetService => "inet_service".into(),
            DataType::Mark => "mark".into(),
            DataType::Ifname => "ifname".into(),
            DataType::Other { number, .. } => format!("type#{number}"),
        }
    }
    /// The type nft names `name`.
    pub fn parse(name: &str) -> Option<DataType> {
        Some(match name {
            "ipv4_addr" => DataType::Ipv4Addr,
            "ipv6_addr" => DataType::Ipv6Addr,
            "ether_addr" => DataType::EtherAddr,
            "inet_proto" => DataType::InetProto,
            "inet_service" => DataType::InetService,
            "mark" => DataType::Mark,
            "ifname" => DataType::Ifname,
            _ => return None,
        })
    }
    fn from_number(n: u32) -> DataType {
        [
            DataType::Ipv4Addr,
            DataType::Ipv6Addr,
            DataType::EtherAddr,
            DataType::InetProto,
            DataType::InetService,
            DataType::Mark,
            DataType::Ifname,
        ]
        .into_iter()
        .find(|t| t.number() == n)
        .unwrap_or(DataType::Other { number: n, len: 0 })
    }
    /// nft's byte order for the type (what it records in a set's userdata).
    pub(super) fn big_endian(self) -> bool {
        !matches!(self, DataType::Mark | DataType::Ifname)
    }
}

/// The type number of a concatenation: one type per 6 bits, the first field highest.
pub fn concat_type(types: &[DataType]) -> u32 {
    types.iter().fold(0, |acc, t| (acc << 6) | t.number())
}

/// The key length of a concatenation: every field padded to 4 bytes.
pub fn concat_len(types: &[DataType]) -> u32 {
    match types {
        [one] => one.byte_len(),
        many => many.iter().map(|t| t.byte_len().div_ceil(4) * 4).sum(),
    }
}

/// The fields of a concatenated type number (inverse of [`concat_type`]).
pub fn split_type(mut n: u32) -> Vec<DataType> {
    let mut out = Vec::new();
    while n != 0 {
        out.push(DataType::from_number(n & 0x3f));
        n >>= 6;
    }
    out.reverse();
    out
}

/// One field of a key or value, encoded in its type's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// An address (`ipv4_addr`/`ipv6_addr`).
    Addr(IpAddr),
    /// An IP protocol number (`inet_proto`).
    Proto(u8),
    /// A port (`inet_service`), in network order.
    Port(u16),
    /// A mark.
    Mark(u32),
    /// An interface name (at most 15 bytes), NUL-padded to 16.
    Ifname(String),
    /// Bytes already in the type's layout.
    Raw(Vec<u8>),
}

impl Field {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Field::Addr(IpAddr::V4(a)) => a.octets().to_vec(),
            Field::Addr(IpAddr::V6(a)) => a.octets().to_vec(),
            Field::Proto(p) => vec![*p],
            Field::Port(p) => p.to_be_bytes().to_vec(),
            Field::Mark(m) => m.to_ne_bytes().to_vec(),
            Field::Ifname(n) => {
                let mut v = n.as_bytes().to_vec();
                v.resize(16, 0);
                v
            }
            Field::Raw(r) => r.clone(),
        }
    }
}

/// Encodes a key or value: one field as it is, several (a concatenation) each padded to 4
/// bytes, as the kernel's registers hold them.
pub fn encode(fields: &[Field]) -> Vec<u8> {
    match fields {
        [one] => one.bytes(),
        many => {
            let mut out = Vec::new();
            for f in many {
                let mut b = f.bytes();
                b.resize(b.len().div_ceil(4) * 4, 0);
                out.extend_from_slice(&b);
            }
            out
        }
    }
}

/// A set's type in nft's words: `ifname . inet_proto . inet_service : ipv4_addr . inet_service`.
pub fn describe_type(s: &SetDefRepr) -> String {
    let names = |n: u32| {
        split_type(n)
            .into_iter()
            .map(DataType::name)
            .collect::<Vec<_>>()
            .join(" . ")
    };
    let mut t = names(s.key_type);
    match s.data_type {
        Some(crate::wire::set::DATA_VERDICT) => t.push_str(" : verdict"),
        Some(d) if s.is_map() => {
            t.push_str(" : ");
            t.push_str(&names(d));
        }
        _ => {}
    }
    t
}
