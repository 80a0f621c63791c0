//! `-m policy` revision 0: `struct xt_policy_info` (both families), four
//! `struct xt_policy_elem` of 76 bytes then the flags and the element count.

use super::layout::{Raw, xt_struct};

/// `XT_POLICY_MATCH_*`.
pub mod policy_flags {
    /// `XT_POLICY_MATCH_IN`: `--dir in` (the decapsulation policy).
    pub const IN: u16 = 0x1;
    /// `XT_POLICY_MATCH_OUT`: `--dir out` (the encapsulation policy).
    pub const OUT: u16 = 0x2;
    /// `XT_POLICY_MATCH_NONE`: `--pol none` (no IPsec policy applied).
    pub const NONE: u16 = 0x4;
    /// `XT_POLICY_MATCH_STRICT`: `--strict` (every element in order, no others).
    pub const STRICT: u16 = 0x8;
}

/// Bits of `struct xt_policy_spec` (`saddr:1, daddr:1, proto:1, mode:1, spi:1, reqid:1`).
pub mod policy_spec {
    /// `--tunnel-src` given for the element.
    pub const SADDR: u8 = 1 << 0;
    /// `--tunnel-dst` given for the element.
    pub const DADDR: u8 = 1 << 1;
    /// `--proto` given for the element.
    pub const PROTO: u8 = 1 << 2;
    /// `--mode` given for the element.
    pub const MODE: u8 = 1 << 3;
    /// `--spi` given for the element.
    pub const SPI: u8 = 1 << 4;
    /// `--reqid` given for the element.
    pub const REQID: u8 = 1 << 5;
}

/// `XT_POLICY_MAX_ELEM`.
pub const POLICY_MAX_ELEM: usize = 4;
/// `sizeof(struct xt_policy_elem)`.
pub const POLICY_ELEM_SIZE: usize = 76;

xt_struct!(
    /// One policy element: tunnel addresses and masks (`union xt_policy_addr`), the SPI
    /// (iptables stores the number as given, in host order, in the `__be32`), reqid,
    /// protocol, mode (0 transport, 1 tunnel), which fields to match and which to invert.
    PolicyElem, "xt_policy_elem", 76, {
    saddr: Raw<16> = 0,
    smask: Raw<16> = 16,
    daddr: Raw<16> = 32,
    dmask: Raw<16> = 48,
    spi: u32 = 64,
    reqid: u32 = 68,
    proto: u8 = 72,
    mode: u8 = 73,
    matches: u8 = 74,
    invert: u8 = 75,
});

xt_struct!(
    /// The four elements (raw; see [`PolicyElem`]), `XT_POLICY_MATCH_*` flags and how many
    /// elements are used.
    PolicyInfo, "xt_policy_info", 308, {
    pol: Raw<304> = 0,
    flags: u16 = 304,
    len: u16 = 306,
});

impl PolicyInfo {
    /// Element `i` (below [`POLICY_MAX_ELEM`]).
    pub fn elem(&self, i: usize) -> PolicyElem {
        let at = i * POLICY_ELEM_SIZE;
        // 76 bytes from a 304-byte array: decoding cannot fail on the size; the default
        // only stands for an index out of range.
        self.pol
            .0
            .get(at..at + POLICY_ELEM_SIZE)
            .and_then(|b| PolicyElem::decode(&pad(b)).ok())
            .unwrap_or_default()
    }

    /// Writes element `i`.
    pub fn set_elem(&mut self, i: usize, e: &PolicyElem) {
        let at = i * POLICY_ELEM_SIZE;
        let b = e.encode();
        if let Some(dst) = self.pol.0.get_mut(at..at + POLICY_ELEM_SIZE) {
            dst.copy_from_slice(&b[..POLICY_ELEM_SIZE]);
        }
    }
}

/// An element's bytes padded to `XT_ALIGN`, as [`PolicyElem::decode`] expects them.
fn pad(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    v.resize(super::xt_align(POLICY_ELEM_SIZE), 0);
    v
}
