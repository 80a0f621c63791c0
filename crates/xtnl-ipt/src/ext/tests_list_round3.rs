//! `-L` words of SYNPROXY, HMARK, ipv6header, rt and policy for payloads the corpus of
//! tests/ext_list.rs cannot write with iptables (or prints only one way), in the words of
//! iptables 1.8.9's `print` functions.

use super::*;
use crate::xt::layout::Raw;

fn listed(e: &dyn Ext, info: &[u8], family: Family, numeric: bool) -> String {
    let mut out = String::new();
    e.list(info, family, numeric, &mut out).expect("lists");
    out
}

#[test]
fn rt_type_is_signed_and_an_inverted_full_range_is_printed() {
    use crate::xt::rt::RtMatch as Info;
    let r = Info {
        flags: Info::TYP,
        rt_type: u32::MAX,
        segs_max: u32::MAX,
        invflags: Info::INV_TYP | Info::INV_SGS,
        ..Info::default()
    };
    assert_eq!(
        listed(&rt::Rt, &r.encode(), Family::Ipv6, true),
        " rt type:!-1 segslefts:!0:4294967295"
    );
}

#[test]
fn hmark_prefixes_as_iptables_prints_them() {
    use crate::xt::hmark::{HmarkTarget as Info, hmark_flags as f};
    let mut i = Info {
        flags: f::SADDR_MASK | f::DADDR_MASK | f::MODULUS,
        hmodulus: 3,
        ..Info::default()
    };
    i.src_mask = Raw([0xff; 16]);
    i.dst_mask = Raw([0xff, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // IPv4: the length, C's -1 as unsigned for a mask that is no prefix.
    assert_eq!(
        listed(&hmark::Hmark, &i.encode(), Family::Ipv4, true),
        " HMARK mod 3 src-prefix 32 dst-prefix 4294967295 "
    );
    // IPv6: nothing for 128, the mask's address for a mask that is no prefix.
    assert_eq!(
        listed(&hmark::Hmark, &i.encode(), Family::Ipv6, true),
        " HMARK mod 3 src-prefix  dst-prefix ff00:ff00:: "
    );
}

#[test]
fn ipv6header_numeric_and_none() {
    use crate::xt::ipv6header::Ipv6Header as Info;
    let i = Info {
        matchflags: 0x0c,
        invflags: 0xff,
        modeflag: 0xff,
    };
    assert_eq!(
        listed(&ipv6header::Ipv6header, &i.encode(), Family::Ipv6, true),
        " ipv6header flags:!0x0C soft"
    );
    let none = Info {
        matchflags: 0,
        invflags: 0xff,
        modeflag: 0,
    };
    assert_eq!(
        listed(&ipv6header::Ipv6header, &none.encode(), Family::Ipv6, false),
        " ipv6header flags:!NONE"
    );
}

#[test]
fn synproxy_every_option() {
    use crate::xt::synproxy::SynproxyTarget as Info;
    let i = Info {
        options: 0x1f,
        wscale: 7,
        mss: 1460,
    };
    assert_eq!(
        listed(&synproxy::Synproxy, &i.encode(), Family::Ipv4, true),
        " SYNPROXY sack-perm timestamp wscale 7 mss 1460 ecn "
    );
}
