//! `struct xt_udp`: `-p udp` ports. iptables-nft 1.8.9 writes every udp option natively, so
//! only legacy rulesets and older iptables-nft carry this.

use super::{Out, sized};
use xtnl_wire::WireError;

pub(super) mod field {
    pub const SPTS: usize = 0;
    pub const DPTS: usize = 4;
    pub const INVFLAGS: usize = 8;
    /// 9 bytes of fields, rounded up to the struct's 2-byte alignment.
    pub const SIZE: usize = 10;
}

const WHAT: &str = "xt_udp";

/// `-p udp -m udp`: `struct xt_udp`, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp {
    /// Source port range, inclusive.
    pub spts: [u16; 2],
    /// Destination port range, inclusive.
    pub dpts: [u16; 2],
    /// `XT_UDP_INV_*`; unknown bits are kept (the kernel refuses them).
    pub invflags: u8,
}

impl Udp {
    /// `XT_UDP_INV_SRCPT`: `! --sport`.
    pub const INV_SRCPT: u8 = 0x01;
    /// `XT_UDP_INV_DSTPT`: `! --dport`.
    pub const INV_DSTPT: u8 = 0x02;
    /// `XT_UDP_INV_MASK`: every bit the kernel accepts.
    pub const INV_MASK: u8 = 0x03;

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(field::SIZE)
            .u16_ne(field::SPTS, self.spts[0])
            .u16_ne(field::SPTS + 2, self.spts[1])
            .u16_ne(field::DPTS, self.dpts[0])
            .u16_ne(field::DPTS + 2, self.dpts[1])
            .u8(field::INVFLAGS, self.invflags)
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<Udp, WireError> {
        let f = sized(info, field::SIZE, WHAT)?;
        Ok(Udp {
            spts: [f.u16_ne(field::SPTS)?, f.u16_ne(field::SPTS + 2)?],
            dpts: [f.u16_ne(field::DPTS)?, f.u16_ne(field::DPTS + 2)?],
            invflags: f.u8(field::INVFLAGS)?,
        })
    }
}

/// Any port: what `-p udp -m udp` alone means.
impl Default for Udp {
    fn default() -> Self {
        Udp {
            spts: [0, u16::MAX],
            dpts: [0, u16::MAX],
            invflags: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        let u = Udp {
            spts: [5, 6],
            invflags: Udp::INV_SRCPT,
            ..Udp::default()
        };
        let b = u.encode();
        assert_eq!(b.len(), 16);
        assert_eq!(&b[0..2], &5u16.to_ne_bytes());
        assert_eq!(&b[2..4], &6u16.to_ne_bytes());
        assert_eq!(&b[6..8], &u16::MAX.to_ne_bytes());
        assert_eq!(b[8], 1);
        assert_eq!(&b[9..], &[0; 7]);
        assert_eq!(Udp::decode(&b).unwrap(), u);
    }
}
