//! nft's datatypes: the numbers the kernel keeps in `NFTA_SET_KEY_TYPE`/`NFTA_SET_DATA_TYPE`
//! (nftables' `enum datatypes`, include/datatype.h), their names as `nft -j` prints them in a
//! set's `"type"`, their sizes and byte orders.

/// How a value's bytes are ordered in a register or a set element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Network order (packet header fields: addresses, ports).
    Big,
    /// The machine's order (metadata: marks, conntrack state, interface indexes).
    Host,
}

/// Bits per datatype in a packed concatenation (`NFTA_SET_KEY_TYPE` of `a . b . c`).
pub const CONCAT_TYPE_BITS: u32 = 6;

macro_rules! datatypes {
    ($($(#[$doc:meta])* $var:ident = $id:literal, $name:literal, $bits:literal, $order:ident;)*) => {
        /// One of nft's datatypes, by its number in nftables' `enum datatypes`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum DataType {
            $($(#[$doc])* $var,)*
            /// A number this version does not know, kept as the kernel holds it.
            Other(u32),
        }

        impl DataType {
            /// The datatype for nft's number.
            pub fn from_id(id: u32) -> DataType {
                match id {
                    $($id => DataType::$var,)*
                    n => DataType::Other(n),
                }
            }

            /// nft's number for the datatype.
            pub fn id(self) -> u32 {
                match self {
                    $(DataType::$var => $id,)*
                    DataType::Other(n) => n,
                }
            }

            /// The name `nft -j` prints in a set's `"type"` (`ipv4_addr`, `inet_service`);
            /// `None` for [`DataType::Other`].
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $(DataType::$var => Some($name),)*
                    DataType::Other(_) => None,
                }
            }

            /// The datatype of a name as `nft -j` prints it; `None` if nft has no such name.
            pub fn from_name(name: &str) -> Option<DataType> {
                match name {
                    $($name => Some(DataType::$var),)*
                    _ => None,
                }
            }

            /// The size in bits; 0 when it depends on the expression (integer, string,
            /// bitmask, link-layer address, verdict).
            pub fn bits(self) -> u32 {
                match self {
                    $(DataType::$var => $bits,)*
                    DataType::Other(_) => 0,
                }
            }

            /// The byte order a value of this type has in a register or a set element, when
            /// no expression says otherwise.
            pub fn byte_order(self) -> ByteOrder {
                match self {
                    $(DataType::$var => ByteOrder::$order,)*
                    DataType::Other(_) => ByteOrder::Host,
                }
            }
        }
    };
}

datatypes! {
    /// `TYPE_INVALID`.
    Invalid = 0, "invalid", 0, Host;
    /// `verdict`: accept, drop, jump CHAIN, ...
    Verdict = 1, "verdict", 0, Host;
    /// `nf_proto`: ipv4, ipv6.
    NfProto = 2, "nf_proto", 8, Host;
    /// `bitmask`.
    Bitmask = 3, "bitmask", 0, Host;
    /// `integer`.
    Integer = 4, "integer", 0, Host;
    /// `string`.
    String = 5, "string", 0, Host;
    /// `ll_addr`: a link-layer address.
    LlAddr = 6, "ll_addr", 0, Big;
    /// `ipv4_addr`.
    Ipv4Addr = 7, "ipv4_addr", 32, Big;
    /// `ipv6_addr`.
    Ipv6Addr = 8, "ipv6_addr", 128, Big;
    /// `ether_addr`.
    EtherAddr = 9, "ether_addr", 48, Big;
    /// `ether_type`.
    EtherType = 10, "ether_type", 16, Host;
    /// `arp_op`.
    ArpOp = 11, "arp_op", 16, Host;
    /// `inet_proto`: tcp, udp, ...
    InetProto = 12, "inet_proto", 8, Big;
    /// `inet_service`: a port.
    InetService = 13, "inet_service", 16, Big;
    /// `icmp_type`.
    IcmpType = 14, "icmp_type", 8, Big;
    /// `tcp_flag`.
    TcpFlag = 15, "tcp_flag", 8, Big;
    /// `dccp_pkttype`.
    DccpPktType = 16, "dccp_pkttype", 4, Big;
    /// `mh_type`.
    MhType = 17, "mh_type", 8, Big;
    /// `time`.
    Time = 18, "time", 64, Host;
    /// `mark`.
    Mark = 19, "mark", 32, Host;
    /// `iface_index`.
    IfaceIndex = 20, "iface_index", 32, Host;
    /// `iface_type`.
    IfaceType = 21, "iface_type", 16, Host;
    /// `realm`.
    Realm = 22, "realm", 32, Host;
    /// `classid`.
    ClassId = 23, "classid", 32, Host;
    /// `uid`.
    Uid = 24, "uid", 32, Host;
    /// `gid`.
    Gid = 25, "gid", 32, Host;
    /// `ct_state`.
    CtState = 26, "ct_state", 32, Host;
    /// `ct_dir`.
    CtDir = 27, "ct_dir", 8, Host;
    /// `ct_status`.
    CtStatus = 28, "ct_status", 32, Host;
    /// `icmpv6_type`.
    Icmp6Type = 29, "icmpv6_type", 8, Big;
    /// `ct_label`.
    CtLabel = 30, "ct_label", 128, Host;
    /// `pkt_type`.
    PktType = 31, "pkt_type", 8, Host;
    /// `icmp_code`.
    IcmpCode = 32, "icmp_code", 8, Big;
    /// `icmpv6_code`.
    Icmpv6Code = 33, "icmpv6_code", 8, Big;
    /// `icmpx_code`.
    IcmpxCode = 34, "icmpx_code", 8, Big;
    /// `devgroup`.
    DevGroup = 35, "devgroup", 32, Host;
    /// `dscp`.
    Dscp = 36, "dscp", 6, Big;
    /// `ecn`.
    Ecn = 37, "ecn", 2, Big;
    /// `fib_addrtype`.
    FibAddrType = 38, "fib_addrtype", 32, Host;
    /// `boolean`.
    Boolean = 39, "boolean", 1, Host;
    /// `ct_event`.
    CtEvent = 40, "ct_event", 32, Host;
    /// `ifname`: an interface name (16 bytes).
    IfName = 41, "ifname", 128, Host;
    /// `igmp_type`.
    IgmpType = 42, "igmp_type", 8, Big;
    /// `time` of day as a date.
    Date = 43, "time_date", 64, Host;
    /// `hour`.
    Hour = 44, "hour", 32, Host;
    /// `day`.
    Day = 45, "day", 8, Host;
    /// `cgroupsv2`.
    CgroupV2 = 46, "cgroupsv2", 64, Host;
}

impl DataType {
    /// The bytes one value takes in a set key or a register (bits rounded up to bytes; 0 when
    /// the type has no fixed size).
    pub fn len(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Whether the type has no fixed size.
    pub fn is_empty(self) -> bool {
        self.bits() == 0
    }

    /// Packs a key's datatypes as `NFTA_SET_KEY_TYPE` holds them: one type as its number, a
    /// concatenation `a . b . c` as 6 bits each, the first in the highest bits (as nft does).
    pub fn pack(types: &[DataType]) -> u32 {
        types
            .iter()
            .fold(0, |acc, t| (acc << CONCAT_TYPE_BITS) | t.id())
    }

    /// Unpacks `NFTA_SET_KEY_TYPE`: a single type when the number is one of nft's types,
    /// otherwise the 6-bit fields of a concatenation, first the highest.
    pub fn unpack(packed: u32) -> Vec<DataType> {
        if packed < (1 << CONCAT_TYPE_BITS) {
            return vec![DataType::from_id(packed)];
        }
        let mut out = Vec::new();
        let mut v = packed;
        while v != 0 {
            out.push(DataType::from_id(v & ((1 << CONCAT_TYPE_BITS) - 1)));
            v >>= CONCAT_TYPE_BITS;
        }
        out.reverse();
        out
    }

    /// The bytes a key of these types takes (each field of a concatenation padded to 4
    /// bytes, as registers hold them); `None` if a type has no fixed size.
    pub fn key_len(types: &[DataType]) -> Option<u32> {
        if types.len() == 1 {
            let l = types[0].len();
            return (l != 0).then_some(l);
        }
        let mut total = 0;
        for t in types {
            let l = t.len();
            if l == 0 {
                return None;
            }
            total += l.div_ceil(4) * 4;
        }
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_agree() {
        for id in 0..47 {
            let t = DataType::from_id(id);
            assert_eq!(t.id(), id);
            let name = t.name().expect("every known id has a name");
            assert_eq!(DataType::from_name(name), Some(t));
        }
        assert_eq!(DataType::from_id(99), DataType::Other(99));
        assert_eq!(DataType::from_name("ipv4_addr"), Some(DataType::Ipv4Addr));
    }

    #[test]
    fn concatenations_pack_first_type_highest() {
        let key = [DataType::InetProto, DataType::InetService];
        let packed = DataType::pack(&key);
        assert_eq!(packed, (12 << 6) | 13);
        assert_eq!(DataType::unpack(packed), key);
        assert_eq!(DataType::unpack(7), [DataType::Ipv4Addr]);
        assert_eq!(DataType::key_len(&key), Some(8));
        assert_eq!(DataType::key_len(&[DataType::Ipv4Addr]), Some(4));
    }
}
