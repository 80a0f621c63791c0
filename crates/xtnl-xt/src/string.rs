//! `-m string` revision 1 (`struct xt_string_info`,
//! include/uapi/linux/netfilter/xt_string.h): offsets, the text-search algorithm's name, a
//! pattern of up to 128 bytes with its length, flags, then the kernel's private search
//! configuration pointer at offset 152 (never handed back).

use super::layout::{Raw, xt_struct};

xt_struct!(
    /// `struct xt_string_info`.
    StringInfo, "xt_string_info", 160, {
    from_offset: u16 = 0,
    to_offset: u16 = 2,
    algo: Raw<16> = 4,
    pattern: Raw<128> = 20,
    patlen: u8 = 148,
    flags: u8 = 149,
});

impl StringInfo {
    /// `XT_STRING_FLAG_INVERT`: `! --string`.
    pub const INVERT: u8 = 0x01;
    /// `XT_STRING_FLAG_IGNORECASE`: `--icase`.
    pub const IGNORECASE: u8 = 0x02;

    /// The pattern's bytes (`patlen` of them, at most 128).
    pub fn pat(&self) -> &[u8] {
        &self.pattern.0[..usize::from(self.patlen).min(128)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-m string ! --string "test" --algo kmp --to 100 --icase`.
    #[test]
    fn layout_and_round_trip() {
        let mut p = [0u8; 128];
        p[..4].copy_from_slice(b"test");
        let s = StringInfo {
            from_offset: 0,
            to_offset: 100,
            algo: Raw::from_str("kmp", "algo").unwrap(),
            pattern: Raw(p),
            patlen: 4,
            flags: StringInfo::INVERT | StringInfo::IGNORECASE,
        };
        let b = s.encode();
        assert_eq!(b.len(), 160);
        assert_eq!(&b[..4], &[0u16, 100].map(u16::to_ne_bytes).concat()[..]);
        assert_eq!(&b[4..8], b"kmp\0");
        assert_eq!(&b[20..24], b"test");
        assert_eq!(&b[148..150], &[4, 3]);
        assert!(b[150..].iter().all(|&x| x == 0));
        let d = StringInfo::decode(&b).unwrap();
        assert_eq!(d, s);
        assert_eq!(d.pat(), b"test");
        assert!(StringInfo::decode(&b[..152]).is_err());
    }
}
