//! `struct xt_tcp`: `-p tcp` ports, flags and option. Legacy iptables writes every `--dport`
//! with it; iptables-nft 1.8.9 only when something has no native form (`--tcp-option`), and
//! older iptables-nft for everything. Ports are host byte order; "any" is `0..=65535`.

use super::{Out, sized};
use xtnl_wire::WireError;

pub(super) mod field {
    pub const SPTS: usize = 0;
    pub const DPTS: usize = 4;
    pub const OPTION: usize = 8;
    pub const FLG_MASK: usize = 9;
    pub const FLG_CMP: usize = 10;
    pub const INVFLAGS: usize = 11;
    pub const SIZE: usize = 12;
}

const WHAT: &str = "xt_tcp";

/// `-p tcp -m tcp`: `struct xt_tcp`, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcp {
    /// Source port range, inclusive.
    pub spts: [u16; 2],
    /// Destination port range, inclusive.
    pub dpts: [u16; 2],
    /// A TCP option kind that must be present; 0: no check.
    pub option: u8,
    /// `--tcp-flags mask cmp`: the flags examined, and those of them that must be set.
    pub flg_mask: u8,
    /// The flags of `flg_mask` that must be set.
    pub flg_cmp: u8,
    /// `XT_TCP_INV_*`; unknown bits are kept (the kernel refuses them).
    pub invflags: u8,
}

impl Tcp {
    /// `XT_TCP_INV_SRCPT`: `! --sport`.
    pub const INV_SRCPT: u8 = 0x01;
    /// `XT_TCP_INV_DSTPT`: `! --dport`.
    pub const INV_DSTPT: u8 = 0x02;
    /// `XT_TCP_INV_FLAGS`: `! --tcp-flags`.
    pub const INV_FLAGS: u8 = 0x04;
    /// `XT_TCP_INV_OPTION`: `! --tcp-option`.
    pub const INV_OPTION: u8 = 0x08;
    /// `XT_TCP_INV_MASK`: every bit the kernel accepts.
    pub const INV_MASK: u8 = 0x0f;

    /// The kernel's bytes of the payload, padded to `XT_ALIGN`.
    pub fn encode(&self) -> Vec<u8> {
        Out::new(field::SIZE)
            .u16_ne(field::SPTS, self.spts[0])
            .u16_ne(field::SPTS + 2, self.spts[1])
            .u16_ne(field::DPTS, self.dpts[0])
            .u16_ne(field::DPTS + 2, self.dpts[1])
            .u8(field::OPTION, self.option)
            .u8(field::FLG_MASK, self.flg_mask)
            .u8(field::FLG_CMP, self.flg_cmp)
            .u8(field::INVFLAGS, self.invflags)
            .done()
    }

    /// Checks the payload's size and reads its fields; an error names the struct (never panics).
    pub fn decode(info: &[u8]) -> Result<Tcp, WireError> {
        let f = sized(info, field::SIZE, WHAT)?;
        Ok(Tcp {
            spts: [f.u16_ne(field::SPTS)?, f.u16_ne(field::SPTS + 2)?],
            dpts: [f.u16_ne(field::DPTS)?, f.u16_ne(field::DPTS + 2)?],
            option: f.u8(field::OPTION)?,
            flg_mask: f.u8(field::FLG_MASK)?,
            flg_cmp: f.u8(field::FLG_CMP)?,
            invflags: f.u8(field::INVFLAGS)?,
        })
    }
}

/// Any port, no flags, no option: what `-p tcp -m tcp` alone means.
impl Default for Tcp {
    fn default() -> Self {
        Tcp {
            spts: [0, u16::MAX],
            dpts: [0, u16::MAX],
            option: 0,
            flg_mask: 0,
            flg_cmp: 0,
            invflags: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-p tcp ! --tcp-option 2 ! --dport 22 ! --tcp-flags ALL NONE` from iptables-nft.
    #[test]
    fn matches_captured_bytes() {
        let t = Tcp {
            dpts: [22, 22],
            option: 2,
            flg_mask: 0x3f,
            invflags: Tcp::INV_DSTPT | Tcp::INV_FLAGS | Tcp::INV_OPTION,
            ..Tcp::default()
        };
        let b = t.encode();
        if cfg!(target_endian = "little") {
            assert_eq!(
                b,
                [
                    0, 0, 0xff, 0xff, 0x16, 0, 0x16, 0, 2, 0x3f, 0, 0x0e, 0, 0, 0, 0
                ]
            );
        }
        assert_eq!(Tcp::decode(&b).unwrap(), t);
        assert!(Tcp::decode(&b[..12]).is_err());
    }
}
