use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const TYPE: u16 = 1;
    pub const ICMP_CODE: u16 = 2;
}

/// `reject type <t> [code <c>]`: `enum nft_reject_types` (0 ICMP unreachable of the family,
/// 1 TCP reset, 2 ICMPX unreachable); the code only for the ICMP types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reject {
    /// `NFTA_REJECT_TYPE`: [`Reject::ICMP_UNREACH`], [`Reject::TCP_RST`] or [`Reject::ICMPX_UNREACH`].
    pub kind: u32,
    /// `NFTA_REJECT_ICMP_CODE`: the ICMP (or ICMPX) code.
    pub code: Option<u8>,
}

impl Reject {
    /// `NFT_REJECT_ICMP_UNREACH`: an ICMP (IPv4) or ICMPv6 unreachable of the family's kind.
    pub const ICMP_UNREACH: u32 = 0;
    /// `NFT_REJECT_TCP_RST`: a TCP reset.
    pub const TCP_RST: u32 = 1;
    /// `NFT_REJECT_ICMPX_UNREACH`: a family-neutral code, translated per family (`inet` tables).
    pub const ICMPX_UNREACH: u32 = 2;

    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::TYPE, attr::ICMP_CODE])? {
            return Ok(None);
        }
        let (mut kind, mut code) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::TYPE => kind = Some(a.u32_be("NFTA_REJECT_TYPE")?),
                attr::ICMP_CODE => code = Some(a.u8("NFTA_REJECT_ICMP_CODE")?),
                _ => {}
            }
        }
        let kind = kind.ok_or_else(|| WireError::missing("NFTA_REJECT_TYPE"))?;
        Ok(Some(Reject { kind, code }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::TYPE, self.kind);
        if let Some(c) = self.code {
            w.u8(attr::ICMP_CODE, c);
        }
    }
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "reject type {} code {}",
            self.kind,
            self.code.unwrap_or(0)
        )
    }
}
