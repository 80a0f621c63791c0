//! `-j TCPOPTSTRIP` (`struct xt_tcpoptstrip_target_info`,
//! include/uapi/linux/netfilter/xt_TCPOPTSTRIP.h): a 256-bit map of TCP option kinds to
//! strip, as eight host-order words (kind `k` is bit `k & 31` of word `k >> 5`).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct xt_tcpoptstrip_target_info`.
    Tcpoptstrip, "xt_tcpoptstrip_target_info", 32, {
    strip_bmap: Raw<32> = 0,
});

impl Tcpoptstrip {
    fn word(&self, i: usize) -> u32 {
        let b = &self.strip_bmap.0[i * 4..i * 4 + 4];
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Whether option kind `k` is stripped.
    pub fn test(&self, k: u8) -> bool {
        self.word(usize::from(k >> 5)) & (1 << (k & 31)) != 0
    }

    /// Marks option kind `k` to be stripped.
    pub fn set(&mut self, k: u8) {
        let i = usize::from(k >> 5);
        let w = self.word(i) | (1 << (k & 31));
        self.strip_bmap.0[i * 4..i * 4 + 4].copy_from_slice(&w.to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--strip-options 2,3,34`.
    #[test]
    fn layout_and_round_trip() {
        let mut t = Tcpoptstrip::default();
        for k in [2, 3, 34] {
            t.set(k);
        }
        let b = t.encode();
        assert_eq!(&b[..8], &[12u32, 4].map(u32::to_ne_bytes).concat()[..]);
        assert!(b[8..].iter().all(|&x| x == 0));
        let d = Tcpoptstrip::decode(&b).unwrap();
        assert!(d.test(34) && d.test(2) && !d.test(4));
        assert!(Tcpoptstrip::decode(&b[..16]).is_err());
    }
}
