//! `-m hashlimit` revision 3 (`struct xt_hashlimit_mtinfo3`,
//! include/uapi/linux/netfilter/xt_hashlimit.h), the one iptables 1.8.9 writes: a name of
//! up to 254 bytes, then `struct hashlimit_cfg3` at the next 8-byte boundary, then the
//! kernel's table pointer (never handed back: the kernel's `usersize` ends before it).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct xt_hashlimit_mtinfo3`.
    Hashlimit, "xt_hashlimit_mtinfo3", 312, {
    name: Raw<255> = 0,
    /// Time between packets x 1,000,000 (or a byte cost with `BYTES`).
    avg: u64 = 256,
    burst: u64 = 264,
    /// `XT_HASHLIMIT_HASH_*`, `INVERT`, `BYTES`, `RATE_MATCH`.
    mode: u32 = 272,
    size: u32 = 276,
    max: u32 = 280,
    gc_interval: u32 = 284,
    expire: u32 = 288,
    interval: u32 = 292,
    srcmask: u8 = 296,
    dstmask: u8 = 297,
});

impl Hashlimit {
    /// `XT_HASHLIMIT_HASH_DIP`: buckets per destination address (`--hashlimit-mode dstip`).
    pub const HASH_DIP: u32 = 1 << 0;
    /// `XT_HASHLIMIT_HASH_DPT`: per destination port (`dstport`).
    pub const HASH_DPT: u32 = 1 << 1;
    /// `XT_HASHLIMIT_HASH_SIP`: per source address (`srcip`).
    pub const HASH_SIP: u32 = 1 << 2;
    /// `XT_HASHLIMIT_HASH_SPT`: per source port (`srcport`).
    pub const HASH_SPT: u32 = 1 << 3;
    /// `XT_HASHLIMIT_INVERT`: `--hashlimit-above` (match over the rate).
    pub const INVERT: u32 = 1 << 4;
    /// `XT_HASHLIMIT_BYTES`: the rate is in bytes (`--hashlimit-upto 1kb/s`).
    pub const BYTES: u32 = 1 << 5;
    /// `XT_HASHLIMIT_RATE_MATCH`: `--hashlimit-rate-match`.
    pub const RATE_MATCH: u32 = 1 << 6;
    /// `XT_HASHLIMIT_SCALE_v2`.
    pub const SCALE: u64 = 1_000_000;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-m hashlimit --hashlimit-upto 40/sec --hashlimit-burst 20 --hashlimit-mode srcip
    /// --hashlimit-name syn-flood` (IPv4) as iptables 1.8.9 builds it.
    #[test]
    fn layout_and_round_trip() {
        let h = Hashlimit {
            name: Raw::from_str("syn-flood", "name").unwrap(),
            avg: 25_000,
            burst: 20,
            mode: Hashlimit::HASH_SIP,
            gc_interval: 1000,
            expire: 1000,
            srcmask: 32,
            dstmask: 32,
            ..Hashlimit::default()
        };
        let b = h.encode();
        assert_eq!(b.len(), 312);
        assert_eq!(&b[..10], b"syn-flood\0");
        assert_eq!(&b[256..264], &25_000u64.to_ne_bytes());
        assert_eq!(&b[264..272], &20u64.to_ne_bytes());
        assert_eq!(&b[272..276], &4u32.to_ne_bytes());
        assert_eq!(
            &b[284..292],
            &[1000u32, 1000].map(u32::to_ne_bytes).concat()[..]
        );
        assert_eq!(&b[296..298], &[32, 32]);
        assert!(b[298..].iter().all(|&x| x == 0));
        assert_eq!(Hashlimit::decode(&b).unwrap(), h);
        assert!(Hashlimit::decode(&b[..304]).is_err());
    }
}
