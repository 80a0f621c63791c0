//! nft's symbolic constants: the names `nft -j` prints for values of a datatype, from
//! nftables' symbol tables (src/datatype.c, src/proto.c, src/ct.c, src/fib.c, ...) and
//! netbase's /etc/protocols for protocol names.

use crate::DataType;

/// One value's names: the first is what nft prints, the others are accepted on input.
type Table = &'static [(u64, &'static str)];

const INET_PROTO: Table = &[
    (0, "hopopt"),
    (1, "icmp"),
    (2, "igmp"),
    (3, "ggp"),
    (4, "ipencap"),
    (5, "st"),
    (6, "tcp"),
    (8, "egp"),
    (9, "igp"),
    (12, "pup"),
    (17, "udp"),
    (20, "hmp"),
    (22, "xns-idp"),
    (27, "rdp"),
    (29, "iso-tp4"),
    (33, "dccp"),
    (36, "xtp"),
    (37, "ddp"),
    (38, "idpr-cmtp"),
    (41, "ipv6"),
    (43, "ipv6-route"),
    (44, "ipv6-frag"),
    (45, "idrp"),
    (46, "rsvp"),
    (47, "gre"),
    (50, "esp"),
    (51, "ah"),
    (57, "skip"),
    (58, "ipv6-icmp"),
    (59, "ipv6-nonxt"),
    (60, "ipv6-opts"),
    (73, "rspf"),
    (81, "vmtp"),
    (88, "eigrp"),
    (89, "ospf"),
    (93, "ax.25"),
    (94, "ipip"),
    (97, "etherip"),
    (98, "encap"),
    (103, "pim"),
    (108, "ipcomp"),
    (112, "vrrp"),
    (115, "l2tp"),
    (124, "isis"),
    (132, "sctp"),
    (133, "fc"),
    (135, "mobility-header"),
    (136, "udplite"),
    (137, "mpls-in-ip"),
    (138, "manet"),
    (139, "hip"),
    (140, "shim6"),
    (141, "wesp"),
    (142, "rohc"),
    (143, "ethernet"),
    (262, "mptcp"),
];

const ICMP_TYPE: Table = &[
    (0, "echo-reply"),
    (3, "destination-unreachable"),
    (4, "source-quench"),
    (5, "redirect"),
    (8, "echo-request"),
    (9, "router-advertisement"),
    (10, "router-solicitation"),
    (11, "time-exceeded"),
    (12, "parameter-problem"),
    (13, "timestamp-request"),
    (14, "timestamp-reply"),
    (15, "info-request"),
    (16, "info-reply"),
    (17, "address-mask-request"),
    (18, "address-mask-reply"),
];

const ICMP6_TYPE: Table = &[
    (1, "destination-unreachable"),
    (2, "packet-too-big"),
    (3, "time-exceeded"),
    (4, "parameter-problem"),
    (128, "echo-request"),
    (129, "echo-reply"),
    (130, "mld-listener-query"),
    (131, "mld-listener-report"),
    (132, "mld-listener-done"),
    (132, "mld-listener-reduction"),
    (133, "nd-router-solicit"),
    (134, "nd-router-advert"),
    (135, "nd-neighbor-solicit"),
    (136, "nd-neighbor-advert"),
    (137, "nd-redirect"),
    (138, "router-renumbering"),
    (141, "ind-neighbor-solicit"),
    (142, "ind-neighbor-advert"),
    (143, "mld2-listener-report"),
];

const ICMP_CODE: Table = &[
    (0, "net-unreachable"),
    (1, "host-unreachable"),
    (2, "prot-unreachable"),
    (3, "port-unreachable"),
    (4, "frag-needed"),
    (9, "net-prohibited"),
    (10, "host-prohibited"),
    (13, "admin-prohibited"),
];

const ICMP6_CODE: Table = &[
    (0, "no-route"),
    (1, "admin-prohibited"),
    (3, "addr-unreachable"),
    (4, "port-unreachable"),
    (5, "policy-fail"),
    (6, "reject-route"),
];

const ICMPX_CODE: Table = &[
    (0, "no-route"),
    (1, "port-unreachable"),
    (2, "host-unreachable"),
    (3, "admin-prohibited"),
];

const CT_STATE: Table = &[
    (1, "invalid"),
    (2, "established"),
    (4, "related"),
    (8, "new"),
    (64, "untracked"),
];

const CT_STATUS: Table = &[
    (1, "expected"),
    (2, "seen-reply"),
    (4, "assured"),
    (8, "confirmed"),
    (16, "snat"),
    (32, "dnat"),
    (512, "dying"),
];

const CT_EVENT: Table = &[
    (1, "new"),
    (2, "related"),
    (4, "destroy"),
    (8, "reply"),
    (16, "assured"),
    (32, "protoinfo"),
    (64, "helper"),
    (128, "mark"),
    (256, "seqadj"),
    (512, "secmark"),
    (1024, "label"),
];

const CT_DIR: Table = &[(0, "original"), (1, "reply")];

const NF_PROTO: Table = &[(2, "ipv4"), (10, "ipv6")];

const PKT_TYPE: Table = &[
    (0, "host"),
    (1, "broadcast"),
    (2, "multicast"),
    (3, "other"),
];

const FIB_ADDRTYPE: Table = &[
    (0, "unspec"),
    (1, "unicast"),
    (2, "local"),
    (3, "broadcast"),
    (4, "anycast"),
    (5, "multicast"),
    (6, "blackhole"),
    (7, "unreachable"),
    (8, "prohibit"),
];

const TCP_FLAG: Table = &[
    (1, "fin"),
    (2, "syn"),
    (4, "rst"),
    (8, "psh"),
    (16, "ack"),
    (32, "urg"),
    (64, "ecn"),
    (128, "cwr"),
];

const ETHER_TYPE: Table = &[
    (0x0800, "ip"),
    (0x0806, "arp"),
    (0x86dd, "ip6"),
    (0x8100, "8021q"),
    (0x88a8, "8021ad"),
    (0x8100, "vlan"),
];

const DSCP: Table = &[
    (0, "cs0"),
    (8, "cs1"),
    (16, "cs2"),
    (24, "cs3"),
    (32, "cs4"),
    (40, "cs5"),
    (48, "cs6"),
    (56, "cs7"),
    (2, "lephb"),
    (10, "af11"),
    (12, "af12"),
    (14, "af13"),
    (18, "af21"),
    (20, "af22"),
    (22, "af23"),
    (26, "af31"),
    (28, "af32"),
    (30, "af33"),
    (34, "af41"),
    (36, "af42"),
    (38, "af43"),
    (44, "va"),
    (46, "ef"),
];

const ECN: Table = &[(0, "not-ect"), (1, "ect1"), (2, "ect0"), (3, "ce")];

const IFACE_TYPE: Table = &[
    (1, "ether"),
    (15, "ppp"),
    (256, "ipip"),
    (768, "ipip"),
    (769, "ipip6"),
    (772, "loopback"),
    (776, "sit"),
    (778, "ipgre"),
];

const IGMP_TYPE: Table = &[
    (0x11, "membership-query"),
    (0x12, "membership-report-v1"),
    (0x16, "membership-report-v2"),
    (0x17, "leave-group"),
    (0x22, "membership-report-v3"),
];

const ARP_OP: Table = &[
    (1, "request"),
    (2, "reply"),
    (3, "rrequest"),
    (4, "rreply"),
    (8, "inrequest"),
    (9, "inreply"),
    (10, "nak"),
];

const DAY: Table = &[
    (0, "Sunday"),
    (1, "Monday"),
    (2, "Tuesday"),
    (3, "Wednesday"),
    (4, "Thursday"),
    (5, "Friday"),
    (6, "Saturday"),
];

/// The symbol table of a datatype whose values nft prints by name.
fn table(t: DataType) -> Option<Table> {
    Some(match t {
        DataType::InetProto => INET_PROTO,
        DataType::IcmpType => ICMP_TYPE,
        DataType::Icmp6Type => ICMP6_TYPE,
        DataType::IcmpCode => ICMP_CODE,
        DataType::Icmpv6Code => ICMP6_CODE,
        DataType::IcmpxCode => ICMPX_CODE,
        DataType::CtState => CT_STATE,
        DataType::CtStatus => CT_STATUS,
        DataType::CtEvent => CT_EVENT,
        DataType::CtDir => CT_DIR,
        DataType::NfProto => NF_PROTO,
        DataType::PktType => PKT_TYPE,
        DataType::FibAddrType => FIB_ADDRTYPE,
        DataType::TcpFlag => TCP_FLAG,
        DataType::EtherType => ETHER_TYPE,
        DataType::Dscp => DSCP,
        DataType::Ecn => ECN,
        DataType::IfaceType => IFACE_TYPE,
        DataType::IgmpType => IGMP_TYPE,
        DataType::ArpOp => ARP_OP,
        DataType::Day => DAY,
        _ => return None,
    })
}

/// Whether values of the type are sets of flag bits (printed as a list of names).
pub(crate) fn is_flags(t: DataType) -> bool {
    matches!(
        t,
        DataType::CtState | DataType::CtStatus | DataType::CtEvent | DataType::TcpFlag
    )
}

/// The name nft prints for a value of the type, if it has one.
pub(crate) fn name_of(t: DataType, v: u64) -> Option<&'static str> {
    table(t)?.iter().find(|(n, _)| *n == v).map(|(_, s)| *s)
}

/// The value of a name of the type, if nft knows it.
pub(crate) fn value_of(t: DataType, name: &str) -> Option<u64> {
    table(t)?.iter().find(|(_, s)| *s == name).map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(name_of(DataType::InetProto, 58), Some("ipv6-icmp"));
        assert_eq!(value_of(DataType::Icmp6Type, "nd-router-advert"), Some(134));
        assert_eq!(name_of(DataType::CtState, 2), Some("established"));
        assert_eq!(name_of(DataType::Mark, 2), None);
    }
}
