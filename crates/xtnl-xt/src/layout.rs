//! Declarative payload layouts: `xt_struct!` turns a list of fields with their offsets
//! (read from the kernel's `include/uapi/linux/netfilter*/xt_*.h`) into a struct with
//! `encode` and `decode` in the `Fields`/`sized` style of [`crate`]: exactly the
//! padded size, native byte order unless a field says big endian, zeros wherever no field
//! is (struct padding and kernel-private pointers, which the kernel never hands back).
//!
//! Adding an extension is then one short file per struct; the field types below are all a
//! layout needs.

use super::{Fields, Out};
use xtnl_wire::WireError;

/// A field type of a payload layout.
pub(super) trait Field: Sized {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError>;
    fn put(&self, o: &mut Out, at: usize);
}

impl Field for u8 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.u8(at)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.u8(at, *self);
    }
}

impl Field for u16 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.u16_ne(at)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.u16_ne(at, *self);
    }
}

impl Field for u32 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.u32_ne(at)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.u32_ne(at, *self);
    }
}

impl Field for i32 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.bytes(at).map(i32::from_ne_bytes)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.put(at, &self.to_ne_bytes());
    }
}

impl Field for u64 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.bytes(at).map(u64::from_ne_bytes)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.put(at, &self.to_ne_bytes());
    }
}

/// A big-endian (network order) `__be16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Be16(pub u16);

impl Field for Be16 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.u16_be(at).map(Be16)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.u16_be(at, self.0);
    }
}

/// A big-endian (network order) `__be32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Be32(pub u32);

impl Field for Be32 {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.bytes(at).map(|b| Be32(u32::from_be_bytes(b)))
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.put(at, &self.0.to_be_bytes());
    }
}

/// A fixed byte array: addresses (`union nf_inet_addr`), MACs, and `char[N]` strings
/// (see [`Raw::text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for Raw<N> {
    fn default() -> Self {
        Raw([0; N])
    }
}

impl<const N: usize> Raw<N> {
    /// A `char[N]` holding `s` and its NUL; refuses what does not fit or holds a NUL.
    pub fn from_str(s: &str, what: &'static str) -> Result<Self, WireError> {
        super::check_c_string(s, N, what)?;
        let mut r = [0u8; N];
        r[..s.len()].copy_from_slice(s.as_bytes());
        Ok(Raw(r))
    }
    /// The text up to the first NUL (lossy for bytes that are not UTF-8).
    pub fn text(&self) -> String {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        String::from_utf8_lossy(&self.0[..end]).into_owned()
    }
    /// Bytes after the string's NUL are dropped (iptables writes zeros there; the kernel
    /// never reads them), so that a decode re-encodes to what iptables would write.
    pub fn canonical_text(mut self) -> Self {
        if let Some(end) = self.0.iter().position(|&b| b == 0) {
            self.0[end..].fill(0);
        }
        self
    }
}

impl<const N: usize> Field for Raw<N> {
    fn get(f: &Fields<'_>, at: usize) -> Result<Self, WireError> {
        f.bytes(at).map(Raw)
    }
    fn put(&self, o: &mut Out, at: usize) {
        o.put(at, &self.0);
    }
}

/// Declares a payload struct: `xt_struct!(Name, "c_name", SIZE, { field: Type = OFFSET, ... })`.
/// SIZE is `sizeof` the C struct before `XT_ALIGN`.
macro_rules! xt_struct {
    ($(#[$m:meta])* $name:ident, $what:literal, $size:expr, {
        $($(#[$fm:meta])* $field:ident : $ty:ty = $at:expr),* $(,)?
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct $name {
            $(
                $(#[$fm])*
                #[doc = ""]
                #[doc = concat!("`", stringify!($field), "` at byte offset ", stringify!($at),
                                " of `struct ", $what, "`.")]
                pub $field: $ty,
            )*
        }

        impl $name {
            /// `sizeof` the C struct (before `XT_ALIGN`).
            pub const SIZE: usize = $size;

            /// The kernel's bytes, padded to `XT_ALIGN`.
            pub fn encode(&self) -> Vec<u8> {
                let mut o = super::Out::new($size);
                $( super::layout::Field::put(&self.$field, &mut o, $at); )*
                o.done()
            }

            /// Checks the size and reads the fields; never panics.
            pub fn decode(info: &[u8]) -> Result<Self, xtnl_wire::WireError> {
                let f = super::sized(info, $size, $what)?;
                Ok($name {
                    $($field: super::layout::Field::get(&f, $at)?,)*
                })
            }
        }
    };
}

pub(crate) use xt_struct;
