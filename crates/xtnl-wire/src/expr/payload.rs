use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const DREG: u16 = 1;
    pub const BASE: u16 = 2;
    pub const OFFSET: u16 = 3;
    pub const LEN: u16 = 4;
}

/// `enum nft_payload_bases`: the header an offset counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadBase {
    /// `NFT_PAYLOAD_LL_HEADER`: the link-layer header.
    Link,
    /// `NFT_PAYLOAD_NETWORK_HEADER`: the IPv4/IPv6 header.
    Network,
    /// `NFT_PAYLOAD_TRANSPORT_HEADER`: the TCP/UDP/... header.
    Transport,
    /// `NFT_PAYLOAD_INNER_HEADER`: an encapsulated packet's header.
    Inner,
    /// A base this version does not know, kept as sent.
    Unknown(u32),
}

impl PayloadBase {
    fn from_u32(v: u32) -> Self {
        match v {
            0 => Self::Link,
            1 => Self::Network,
            2 => Self::Transport,
            3 => Self::Inner,
            n => Self::Unknown(n),
        }
    }
    fn to_u32(self) -> u32 {
        match self {
            Self::Link => 0,
            Self::Network => 1,
            Self::Transport => 2,
            Self::Inner => 3,
            Self::Unknown(n) => n,
        }
    }
}

/// `payload load <len>b @ <base> header + <offset> => reg <dreg>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// `NFTA_PAYLOAD_DREG`: where the bytes are loaded.
    pub dreg: u32,
    /// `NFTA_PAYLOAD_BASE`.
    pub base: PayloadBase,
    /// `NFTA_PAYLOAD_OFFSET`: bytes from the start of the base header.
    pub offset: u32,
    /// `NFTA_PAYLOAD_LEN`: bytes loaded.
    pub len: u32,
}

impl Payload {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::DREG, attr::BASE, attr::OFFSET, attr::LEN])? {
            return Ok(None);
        }
        let (mut dreg, mut base, mut offset, mut len) = (None, None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::DREG => dreg = Some(a.u32_be("NFTA_PAYLOAD_DREG")?),
                attr::BASE => base = Some(a.u32_be("NFTA_PAYLOAD_BASE")?),
                attr::OFFSET => offset = Some(a.u32_be("NFTA_PAYLOAD_OFFSET")?),
                attr::LEN => len = Some(a.u32_be("NFTA_PAYLOAD_LEN")?),
                _ => {}
            }
        }
        let Some(dreg) = dreg else { return Ok(None) };
        Ok(Some(Payload {
            dreg,
            base: PayloadBase::from_u32(
                base.ok_or_else(|| WireError::missing("NFTA_PAYLOAD_BASE"))?,
            ),
            offset: offset.ok_or_else(|| WireError::missing("NFTA_PAYLOAD_OFFSET"))?,
            len: len.ok_or_else(|| WireError::missing("NFTA_PAYLOAD_LEN"))?,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::DREG, self.dreg)
            .u32_be(attr::BASE, self.base.to_u32())
            .u32_be(attr::OFFSET, self.offset)
            .u32_be(attr::LEN, self.len);
    }
}

impl fmt::Display for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match self.base {
            PayloadBase::Link => "link".to_string(),
            PayloadBase::Network => "network".to_string(),
            PayloadBase::Transport => "transport".to_string(),
            PayloadBase::Inner => "inner".to_string(),
            PayloadBase::Unknown(n) => format!("base {n}"),
        };
        write!(
            f,
            "payload load {}b @ {base} header + {} => reg {}",
            self.len, self.offset, self.dreg
        )
    }
}
