//! IPv6 extension-header matches (include/uapi/linux/netfilter_ipv6/): `-m ah`
//! (`struct ip6t_ah`) and `-m frag` (`struct ip6t_frag`), each a u32 range, a header
//! length, a byte of flags and one of inversions; `-m hbh`/`-m dst` (`struct ip6t_opts`);
//! `-m mh` (`struct ip6t_mh`).

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

xt_struct!(
    /// `struct ip6t_opts` (`-m hbh`, `-m dst`): header length, flags, up to 16 options
    /// as `type << 8 | length` (length 0xff: any), and their count.
    Opts, "ip6t_opts", 39, {
    hdrlen: u32 = 0,
    flags: u8 = 4,
    invflags: u8 = 5,
    opts: super::layout::Raw<32> = 6,
    optsnr: u8 = 38,
});

xt_struct!(
    /// `struct ip6t_mh`: a mobility header type range.
    Mh, "ip6t_mh", 3, {
    type_min: u8 = 0,
    type_max: u8 = 1,
    invflags: u8 = 2,
});

impl Opts {
    /// `IP6T_OPTS_LEN`: `--hbh-len`/`--dst-len` is tested.
    pub const LEN: u8 = 0x01;
    /// `IP6T_OPTS_OPTS`: `--hbh-opts`/`--dst-opts` is tested.
    pub const OPTS: u8 = 0x02;
    /// `IP6T_OPTS_INV_LEN`: `! --hbh-len`.
    pub const INV_LEN: u8 = 0x01;
    /// `IP6T_OPTS_OPTSNR`: the number of option slots.
    pub const NR: usize = 16;

    /// Option slot `i` (host order).
    pub fn opt(&self, i: usize) -> u16 {
        u16::from_ne_bytes([self.opts.0[i * 2], self.opts.0[i * 2 + 1]])
    }

    /// Sets option slot `i` (host order, `type << 8
    /// length`).
    pub fn set_opt(&mut self, i: usize, v: u16) {
        self.opts.0[i * 2..i * 2 + 2].copy_from_slice(&v.to_ne_bytes());
    }
}

impl Ah6 {
    /// `IP6T_AH_INV_SPI`: `! --ahspi`.
    pub const INV_SPI: u8 = 0x01;
    /// `IP6T_AH_INV_LEN`: `! --ahlen`.
    pub const INV_LEN: u8 = 0x02;
}

impl Frag {
    /// `IP6T_FRAG_IDS`: `--fragid` is tested.
    pub const IDS: u8 = 0x01;
    /// `IP6T_FRAG_LEN`: `--fraglen` is tested.
    pub const LEN: u8 = 0x02;
    /// `IP6T_FRAG_RES`: `--fragres`.
    pub const RES: u8 = 0x04;
    /// `IP6T_FRAG_FST`: `--fragfirst`.
    pub const FST: u8 = 0x08;
    /// `IP6T_FRAG_MF`: `--fragmore`.
    pub const MF: u8 = 0x10;
    /// `IP6T_FRAG_NMF`: `--fraglast`.
    pub const NMF: u8 = 0x20;
    /// `IP6T_FRAG_INV_IDS` (in `invflags`): `! --fragid`.
    pub const INV_IDS: u8 = 0x01;
    /// `IP6T_FRAG_INV_LEN` (in `invflags`): `! --fraglen`.
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
        // `-m hbh ! --hbh-len 42 --hbh-opts 1:2,23`.
        let mut o = Opts {
            hdrlen: 42,
            flags: Opts::LEN | Opts::OPTS,
            invflags: Opts::INV_LEN,
            optsnr: 2,
            ..Opts::default()
        };
        o.set_opt(0, 0x0102);
        o.set_opt(1, 0x17ff);
        let b = o.encode();
        assert_eq!(b.len(), 40);
        assert_eq!(&b[..6], &[&42u32.to_ne_bytes()[..], &[3, 1]].concat()[..]);
        assert_eq!(
            &b[6..10],
            &[0x0102u16, 0x17ff].map(u16::to_ne_bytes).concat()[..]
        );
        assert_eq!(b[38], 2);
        assert_eq!(Opts::decode(&b).unwrap(), o);
        let m = Mh {
            type_min: 4,
            type_max: 123,
            invflags: 1,
        };
        assert_eq!(m.encode(), [4, 123, 1, 0, 0, 0, 0, 0]);
    }
}
