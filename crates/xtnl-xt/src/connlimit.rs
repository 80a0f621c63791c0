//! `-m connlimit` revision 1 (`struct xt_connlimit_info`,
//! include/uapi/linux/netfilter/xt_connlimit.h): a 16-byte address mask (big-endian words;
//! iptables starts from all ones, IPv4 included), the limit and the flags, then the
//! kernel's private pointer at offset 24 (never handed back).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct xt_connlimit_info`.
    Connlimit, "xt_connlimit_info", 32, {
    mask: Raw<16> = 0,
    limit: u32 = 16,
    flags: u32 = 20,
});

impl Connlimit {
    /// `XT_CONNLIMIT_INVERT`: `--connlimit-upto` (match while at or under the limit).
    pub const INVERT: u32 = 1 << 0;
    /// `XT_CONNLIMIT_DADDR`: group connections by destination (`--connlimit-daddr`), not source.
    pub const DADDR: u32 = 1 << 1;

    /// The mask iptables builds for a prefix length (`xtopt_parse_plenmask`): the words
    /// after the prefix's word are zero, those before all ones.
    pub fn mask_of(plen: u8) -> Raw<16> {
        let mut m = [0u8; 16];
        if plen > 0 {
            let word = (usize::from(plen) - 1) / 32;
            for (i, w) in m.chunks_mut(4).enumerate().take(word + 1) {
                let v = if i < word {
                    u32::MAX
                } else {
                    u32::MAX << (32 * (word as u32 + 1) - u32::from(plen))
                };
                w.copy_from_slice(&v.to_be_bytes());
            }
        }
        Raw(m)
    }

    /// iptables' `count_bits4`/`count_bits6`: the leading ones of each word, summed over
    /// the first word (IPv4) or all four.
    pub fn mask_bits(&self, words: usize) -> u32 {
        self.mask
            .0
            .chunks(4)
            .take(words)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]).leading_ones())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-m connlimit --connlimit-above 10 --connlimit-mask 24 --connlimit-daddr` (IPv4).
    #[test]
    fn layout_and_masks() {
        let c = Connlimit {
            mask: Connlimit::mask_of(24),
            limit: 10,
            flags: Connlimit::DADDR,
        };
        let b = c.encode();
        assert_eq!(b.len(), 32);
        assert_eq!(
            &b[..16],
            &[0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(&b[16..24], &[10u32, 2].map(u32::to_ne_bytes).concat()[..]);
        assert_eq!(Connlimit::decode(&b).unwrap(), c);
        assert_eq!(c.mask_bits(1), 24);
        assert_eq!(Connlimit::mask_of(0).0, [0; 16]);
        assert_eq!(Connlimit::mask_of(128).0, [0xff; 16]);
        let m = Connlimit {
            mask: Connlimit::mask_of(72),
            ..c
        };
        assert_eq!(m.mask.0[8], 0xff);
        assert_eq!(m.mask.0[9], 0);
        assert_eq!(m.mask_bits(4), 72);
        assert!(Connlimit::decode(&b[..24]).is_err());
    }
}
