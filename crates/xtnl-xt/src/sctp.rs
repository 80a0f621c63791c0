//! `-m sctp` (`struct xt_sctp_info`, include/uapi/linux/netfilter/xt_sctp.h): port ranges,
//! a chunk bitmap with its match type, and up to four chunk-flag tests.
//!
//! The bitmap is declared as `__u32 chunkmap[256 / sizeof(__u32)]` (64 words) although
//! only the first eight are addressed (`type / 32`); `ALL` sets all 64. Words are in host
//! order. iptables initialises every unused `flag_info` slot's chunk type to 0xff.

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct xt_sctp_info`.
    Sctp, "xt_sctp_info", 292, {
    dpts: Raw<4> = 0,
    spts: Raw<4> = 4,
    chunkmap: Raw<256> = 8,
    chunk_match_type: u32 = 264,
    /// `struct xt_sctp_flag_info [4]`: chunktype, flag, flag_mask.
    flag_info: Raw<12> = 268,
    flag_count: i32 = 280,
    flags: u32 = 284,
    invflags: u32 = 288,
});

impl Sctp {
    /// `XT_SCTP_SRC_PORTS`: `--sport` is tested.
    pub const SRC_PORTS: u32 = 0x01;
    /// `XT_SCTP_DEST_PORTS`: `--dport` is tested.
    pub const DEST_PORTS: u32 = 0x02;
    /// `XT_SCTP_CHUNK_TYPES`: `--chunk-types` is tested.
    pub const CHUNK_TYPES: u32 = 0x04;
    /// `SCTP_CHUNK_MATCH_ANY` (`chunk_match_type`): any of the chunk types.
    pub const MATCH_ANY: u32 = 0x01;
    /// `SCTP_CHUNK_MATCH_ALL`: all of them.
    pub const MATCH_ALL: u32 = 0x02;
    /// `SCTP_CHUNK_MATCH_ONLY`: only those.
    pub const MATCH_ONLY: u32 = 0x04;
    /// `XT_NUM_SCTP_FLAGS`.
    pub const NUM_FLAGS: usize = 4;

    /// What iptables' `sctp_init` leaves: ports 0..0 (unused unless flagged), empty map,
    /// every flag slot's chunk type 0xff.
    pub fn new() -> Sctp {
        let mut fi = [0u8; 12];
        for i in 0..Self::NUM_FLAGS {
            fi[i * 3] = 0xff;
        }
        Sctp {
            flag_info: Raw(fi),
            ..Sctp::default()
        }
    }

    /// A `[min, max]` port pair (host order).
    pub fn ports(r: &Raw<4>) -> [u16; 2] {
        [
            u16::from_ne_bytes([r.0[0], r.0[1]]),
            u16::from_ne_bytes([r.0[2], r.0[3]]),
        ]
    }

    /// Writes a `[min, max]` port pair (host order).
    pub fn set_ports(r: &mut Raw<4>, p: [u16; 2]) {
        r.0[..2].copy_from_slice(&p[0].to_ne_bytes());
        r.0[2..].copy_from_slice(&p[1].to_ne_bytes());
    }

    fn word(&self, i: usize) -> u32 {
        let b = &self.chunkmap.0[i * 4..i * 4 + 4];
        u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
    }

    /// `SCTP_CHUNKMAP_IS_SET`.
    pub fn chunk_set(&self, t: u8) -> bool {
        self.word(usize::from(t) / 32) & (1 << (t % 32)) != 0
    }

    /// `SCTP_CHUNKMAP_SET`.
    pub fn set_chunk(&mut self, t: u8) {
        let i = usize::from(t) / 32;
        let w = self.word(i) | (1 << (t % 32));
        self.chunkmap.0[i * 4..i * 4 + 4].copy_from_slice(&w.to_ne_bytes());
    }

    /// Whether no chunk type is set in the bitmap.
    pub fn map_clear(&self) -> bool {
        self.chunkmap.0.iter().all(|&b| b == 0)
    }

    /// Whether every chunk type is set (`--chunk-types ... ALL`).
    pub fn map_all(&self) -> bool {
        self.chunkmap.0.iter().all(|&b| b == 0xff)
    }

    /// Flag slot `i`: (chunktype, flag, flag_mask).
    pub fn flag(&self, i: usize) -> (u8, u8, u8) {
        let f = &self.flag_info.0[i * 3..i * 3 + 3];
        (f[0], f[1], f[2])
    }

    /// Sets flag slot `i`: (chunktype, flag, flag_mask).
    pub fn set_flag(&mut self, i: usize, v: (u8, u8, u8)) {
        self.flag_info.0[i * 3..i * 3 + 3].copy_from_slice(&[v.0, v.1, v.2]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-p sctp -m sctp --dport 80 ! --chunk-types any INIT,DATA:Be` as iptables 1.8.9
    /// builds it (flags recorded under the chunk's index in iptables' name table).
    #[test]
    fn layout_and_round_trip() {
        let mut s = Sctp::new();
        Sctp::set_ports(&mut s.dpts, [80, 80]);
        s.set_chunk(1);
        s.set_chunk(0);
        s.set_chunk(193);
        s.chunk_match_type = Sctp::MATCH_ANY;
        s.set_flag(0, (0, 0x02, 0x03));
        s.flag_count = 1;
        s.flags = Sctp::DEST_PORTS | Sctp::CHUNK_TYPES;
        s.invflags = Sctp::CHUNK_TYPES;
        let b = s.encode();
        assert_eq!(b.len(), super::super::xt_align(292));
        assert_eq!(
            &b[0..4],
            &[80u16.to_ne_bytes(), 80u16.to_ne_bytes()].concat()[..]
        );
        assert_eq!(&b[8..12], &3u32.to_ne_bytes());
        // type 193: word 6, bit 1.
        assert_eq!(&b[8 + 24..8 + 28], &2u32.to_ne_bytes());
        assert_eq!(&b[264..268], &1u32.to_ne_bytes());
        assert_eq!(&b[268..280], &[0, 2, 3, 0xff, 0, 0, 0xff, 0, 0, 0xff, 0, 0]);
        assert_eq!(
            &b[280..292],
            &[1u32, 6, 4].map(u32::to_ne_bytes).concat()[..]
        );
        let d = Sctp::decode(&b).unwrap();
        assert_eq!(d, s);
        assert!(d.chunk_set(193) && d.chunk_set(0) && !d.chunk_set(2));
        assert!(Sctp::decode(&b[..288]).is_err());
    }
}
