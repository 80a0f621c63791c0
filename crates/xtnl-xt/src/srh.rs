//! `-m srh` revision 1 (`struct ip6t_srh1`, include/uapi/linux/netfilter_ipv6/ip6t_srh.h):
//! the IPv6 segment routing header's fields, three segment addresses with masks, and
//! the flags saying which are tested (and which inverted). `struct in6_addr` is 4-aligned,
//! so the addresses start at offset 8.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct ip6t_srh1`.
    Srh, "ip6t_srh1", 108, {
    next_hdr: u8 = 0,
    hdr_len: u8 = 1,
    segs_left: u8 = 2,
    last_entry: u8 = 3,
    tag: u16 = 4,
    psid_addr: Raw<16> = 8,
    nsid_addr: Raw<16> = 24,
    lsid_addr: Raw<16> = 40,
    psid_msk: Raw<16> = 56,
    nsid_msk: Raw<16> = 72,
    lsid_msk: Raw<16> = 88,
    /// `IP6T_SRH_*`.
    mt_flags: u16 = 104,
    /// `IP6T_SRH_INV_*` (the same bits).
    mt_invflags: u16 = 106,
});

impl Srh {
    /// `IP6T_SRH_NEXTHDR`: `--srh-next-hdr` is tested.
    pub const NEXTHDR: u16 = 0x0001;
    /// `IP6T_SRH_PSID`: `--srh-psid` is tested.
    pub const PSID: u16 = 0x0800;
    /// `IP6T_SRH_NSID`: `--srh-nsid` is tested.
    pub const NSID: u16 = 0x1000;
    /// `IP6T_SRH_LSID`: `--srh-lsid` is tested.
    pub const LSID: u16 = 0x2000;
    /// `IP6T_SRH_MASK`: every bit the kernel accepts.
    pub const MASK: u16 = 0x3fff;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-m srh ! --srh-next-hdr 17 --srh-tag 5 --srh-psid a::/64`.
    #[test]
    fn layout_and_round_trip() {
        let mut a = [0u8; 16];
        a[1] = 0x0a;
        let mut m = [0u8; 16];
        m[..8].fill(0xff);
        let s = Srh {
            next_hdr: 17,
            tag: 5,
            psid_addr: Raw(a),
            psid_msk: Raw(m),
            mt_flags: Srh::NEXTHDR | 0x0400 | Srh::PSID,
            mt_invflags: Srh::NEXTHDR,
            ..Srh::default()
        };
        let b = s.encode();
        assert_eq!(b.len(), 112);
        assert_eq!(
            &b[..6],
            &[&[17u8, 0, 0, 0][..], &5u16.to_ne_bytes()].concat()[..]
        );
        assert_eq!(&b[8..24], &a);
        assert_eq!(&b[56..72], &m);
        assert_eq!(
            &b[104..108],
            &[0x0c01u16, 1].map(u16::to_ne_bytes).concat()[..]
        );
        assert_eq!(Srh::decode(&b).unwrap(), s);
        assert!(Srh::decode(&b[..104]).is_err());
    }
}
