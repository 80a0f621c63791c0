//! Netlink attributes (`struct nlattr`): an iterator that refuses malformed input and a writer
//! that patches lengths of nested attributes.

use super::WireError;
use super::error::WireErrorKind;

pub(super) mod field {
    pub const LEN: std::ops::Range<usize> = 0..2;
    pub const TYPE: std::ops::Range<usize> = 2..4;
    pub const HEADER_LEN: usize = 4;
}

/// `NLA_F_NESTED`: the attribute's payload is itself a run of attributes.
pub const NLA_F_NESTED: u16 = 0x8000;
/// `NLA_F_NET_BYTEORDER`: the payload is in network byte order.
pub const NLA_F_NET_BYTEORDER: u16 = 0x4000;
/// The bits of `nla_type` that are the type, flags stripped (`NLA_TYPE_MASK`).
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

/// Rounds up to netlink's 4-byte alignment (`NLA_ALIGN`, `NLMSG_ALIGN`).
pub const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// One attribute: its type (flags stripped) and its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr<'a> {
    /// `nla_type` with [`NLA_F_NESTED`] and [`NLA_F_NET_BYTEORDER`] stripped.
    pub ty: u16,
    /// The payload, without the header or the alignment padding.
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// A one-byte attribute; `name` (the kernel's name for it) goes into the error's context.
    pub fn u8(&self, name: &'static str) -> Result<u8, WireError> {
        self.fixed::<1>(name).map(|b| b[0])
    }
    /// A big-endian `u32` attribute (nf_tables sends its integers in network order).
    pub fn u32_be(&self, name: &'static str) -> Result<u32, WireError> {
        self.fixed::<4>(name).map(u32::from_be_bytes)
    }
    /// A big-endian `i32` attribute (chain priorities).
    pub fn i32_be(&self, name: &'static str) -> Result<i32, WireError> {
        self.fixed::<4>(name).map(i32::from_be_bytes)
    }
    /// A big-endian `u64` attribute (handles, counters).
    pub fn u64_be(&self, name: &'static str) -> Result<u64, WireError> {
        self.fixed::<8>(name).map(u64::from_be_bytes)
    }
    /// A NUL-terminated string attribute (the NUL is optional, as the kernel accepts both).
    pub fn string(&self, name: &'static str) -> Result<String, WireError> {
        self.str(name).map(str::to_owned)
    }
    /// [`Attr::string`], borrowed from the message (no copy, for names only compared).
    pub fn str(&self, name: &'static str) -> Result<&'a str, WireError> {
        let bytes = match self.payload.iter().position(|&b| b == 0) {
            Some(nul) => &self.payload[..nul],
            None => self.payload,
        };
        std::str::from_utf8(bytes)
            .map_err(|_| WireError::bad_value("string is not UTF-8").within(name))
    }
    /// The attributes nested in this one's payload.
    pub fn nested(&self) -> Attrs<'a> {
        Attrs::new(self.payload)
    }
    fn fixed<const N: usize>(&self, name: &'static str) -> Result<[u8; N], WireError> {
        <[u8; N]>::try_from(self.payload).map_err(|_| {
            WireError::new(WireErrorKind::BadLength {
                len: self.payload.len(),
            })
            .within(name)
        })
    }
}

/// Iterates over a run of attributes; a malformed header ends the iteration with an error.
#[derive(Debug, Clone)]
pub struct Attrs<'a> {
    rest: &'a [u8],
}

impl<'a> Attrs<'a> {
    /// Iterates over the attributes in `buf` (a message's payload after its fixed header).
    pub fn new(buf: &'a [u8]) -> Self {
        Attrs { rest: buf }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() < field::HEADER_LEN {
            let err = WireError::truncated(field::HEADER_LEN, self.rest.len()).within("attribute");
            self.rest = &[];
            return Some(Err(err));
        }
        let len = u16::from_ne_bytes([self.rest[field::LEN.start], self.rest[field::LEN.start + 1]])
            as usize;
        let ty = u16::from_ne_bytes([
            self.rest[field::TYPE.start],
            self.rest[field::TYPE.start + 1],
        ]);
        if len < field::HEADER_LEN || len > self.rest.len() {
            let err = WireError::new(WireErrorKind::BadLength { len })
                .within(format_args!("attribute type {}", ty & NLA_TYPE_MASK));
            self.rest = &[];
            return Some(Err(err));
        }
        let attr = Attr {
            ty: ty & NLA_TYPE_MASK,
            payload: &self.rest[field::HEADER_LEN..len],
        };
        self.rest = &self.rest[align4(len).min(self.rest.len())..];
        Some(Ok(attr))
    }
}

/// Appends attributes to a message buffer. Nested attributes are closed by the closure
/// returning, which patches their length. A length over 65,535 bytes cannot be expressed in
/// netlink; it is recorded and reported by
/// [`MsgWriter::overflowed`](super::netlink::MsgWriter::overflowed) (callers bound their
/// input so that this never happens for validated data).
pub struct AttrWriter<'a> {
    buf: &'a mut Vec<u8>,
    overflow: &'a mut bool,
}

impl<'a> AttrWriter<'a> {
    /// Writes into `buf`; sets `*overflow` if an attribute is too long for its 16-bit length.
    pub fn new(buf: &'a mut Vec<u8>, overflow: &'a mut bool) -> Self {
        AttrWriter { buf, overflow }
    }

    /// An attribute with this raw payload (padded to 4 bytes).
    pub fn bytes(&mut self, ty: u16, payload: &[u8]) -> &mut Self {
        let len = field::HEADER_LEN + payload.len();
        self.header(ty, len);
        self.buf.extend_from_slice(payload);
        self.pad();
        self
    }
    /// A one-byte attribute.
    pub fn u8(&mut self, ty: u16, v: u8) -> &mut Self {
        self.bytes(ty, &[v])
    }
    /// A `u32` attribute in network byte order.
    pub fn u32_be(&mut self, ty: u16, v: u32) -> &mut Self {
        self.bytes(ty, &v.to_be_bytes())
    }
    /// An `i32` attribute in network byte order.
    pub fn i32_be(&mut self, ty: u16, v: i32) -> &mut Self {
        self.bytes(ty, &v.to_be_bytes())
    }
    /// A `u64` attribute in network byte order.
    pub fn u64_be(&mut self, ty: u16, v: u64) -> &mut Self {
        self.bytes(ty, &v.to_be_bytes())
    }
    /// A string with its terminating NUL, as the kernel's NLA_STRING policies expect.
    pub fn strz(&mut self, ty: u16, s: &str) -> &mut Self {
        let len = field::HEADER_LEN + s.len() + 1;
        self.header(ty, len);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        self.pad();
        self
    }
    /// A nested attribute ([`NLA_F_NESTED`] set) whose payload `body` writes.
    pub fn nested(&mut self, ty: u16, body: impl FnOnce(&mut AttrWriter<'_>)) -> &mut Self {
        let start = self.buf.len();
        self.header(ty | NLA_F_NESTED, 0);
        body(&mut AttrWriter {
            buf: self.buf,
            overflow: self.overflow,
        });
        let len = self.buf.len() - start;
        self.patch_len(start, len);
        self
    }

    fn header(&mut self, ty: u16, len: usize) {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0, 0]);
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.patch_len(start, len);
    }
    fn patch_len(&mut self, at: usize, len: usize) {
        let len = u16::try_from(len).unwrap_or_else(|_| {
            *self.overflow = true;
            u16::MAX
        });
        self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
    }
    fn pad(&mut self) {
        let padded = align4(self.buf.len());
        self.buf.resize(padded, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_round_trip() {
        let mut buf = Vec::new();
        let mut of = false;
        AttrWriter::new(&mut buf, &mut of)
            .strz(1, "nat")
            .nested(2, |w| {
                w.u32_be(1, 0xdead_beef);
            })
            .u8(3, 7);
        assert!(!of);
        // "nat\0" needs no padding; the nest is 4 + 8 bytes; the u8 is padded to 8.
        assert_eq!(buf.len(), 8 + 12 + 8);
        let attrs: Vec<_> = Attrs::new(&buf).collect::<Result<_, _>>().unwrap();
        assert_eq!(attrs.len(), 3);
        assert_eq!(attrs[0].string("name").unwrap(), "nat");
        assert_eq!(attrs[1].ty, 2, "NLA_F_NESTED is stripped");
        let inner: Vec<_> = attrs[1].nested().collect::<Result<_, _>>().unwrap();
        assert_eq!(inner[0].u32_be("v").unwrap(), 0xdead_beef);
        assert_eq!(attrs[2].u8("b").unwrap(), 7);
    }

    #[test]
    fn malformed_length_is_an_error_not_a_skip() {
        // Claims 12 bytes, has 8.
        let buf = [12u8, 0, 1, 0, 0, 0, 0, 0];
        let mut it = Attrs::new(&buf);
        let err = it.next().unwrap().unwrap_err();
        assert!(
            matches!(err.kind, WireErrorKind::BadLength { len: 12 }),
            "{err}"
        );
        assert!(it.next().is_none());
        // Shorter than a header.
        let err = Attrs::new(&[4u8, 0]).next().unwrap().unwrap_err();
        assert!(matches!(err.kind, WireErrorKind::Truncated { .. }));
    }

    #[test]
    fn wrong_size_scalar_names_the_attribute() {
        let attr = Attr {
            ty: 1,
            payload: &[1, 2, 3],
        };
        let err = attr.u32_be("NFTA_CHAIN_POLICY").unwrap_err();
        assert!(err.to_string().contains("NFTA_CHAIN_POLICY"), "{err}");
    }

    #[test]
    fn oversized_attribute_is_reported() {
        let mut buf = Vec::new();
        let mut of = false;
        AttrWriter::new(&mut buf, &mut of).bytes(1, &vec![0u8; 70_000]);
        assert!(of);
    }
}
