//! IPv6 extension-header matches with 14-byte payloads: `-m ah` (`struct ip6t_ah`) and
//! `-m frag` (`struct ip6t_frag`), include/uapi/linux/netfilter_ipv6/. Both: a u32 range,
//! a header length, one byte of flags, one of inversions.

use super::layout::xt_struct;

xt_struct!(
    /// `struct ip6t_ah`: SPI range, header length, reserved-field test.
    Ah6, "ip6t_ah", 14, {
    spi_min: u32 = 0,
    spi_max: u32 = 4,
    hdrlen: u32 = 8,
    hdrres: u8 = 12,
    invflags: u8 = 13,
});

xt_struct!(
    /// `struct ip6t_frag`: identification range, header length, `IP6T_FRAG_*` flags.
    Frag, "ip6t_frag", 14, {
    id_min: u32 = 0,
    id_max: u32 = 4,
    hdrlen: u32 = 8,
    flags: u8 = 12,
    invflags: u8 = 13,
});

impl Ah6 {
    pub const INV_SPI: u8 = 0x01;
    pub const INV_LEN: u8 = 0x02;
}

impl Frag {
    pub const IDS: u8 = 0x01;
    pub const LEN: u8 = 0x02;
    pub const RES: u8 = 0x04;
    pub const FST: u8 = 0x08;
    pub const MF: u8 = 0x10;
    pub const NMF: u8 = 0x20;
    pub const INV_IDS: u8 = 0x01;
    pub const INV_LEN: u8 = 0x02;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_round_trip() {
        let a = Ah6 {
            spi_min: 1,
            spi_max: 2,
            hdrlen: 3,
            hdrres: 1,
            invflags: 3,
        };
        let b = a.encode();
        assert_eq!(b.len(), 16);
        assert_eq!(&b[..12], &[1u32, 2, 3].map(u32::to_ne_bytes).concat()[..]);
        assert_eq!(&b[12..], &[1, 3, 0, 0]);
        assert_eq!(Ah6::decode(&b).unwrap(), a);
        // `-m frag ! --fragid 1 --fragfirst`.
        let f = Frag {
            id_min: 1,
            id_max: 1,
            flags: Frag::IDS | Frag::FST,
            invflags: Frag::INV_IDS,
            ..Frag::default()
        };
        let b = f.encode();
        assert_eq!(&b[12..14], &[0x09, 0x01]);
        assert_eq!(Frag::decode(&b).unwrap(), f);
        assert!(Frag::decode(&b[..12]).is_err());
    }
}
