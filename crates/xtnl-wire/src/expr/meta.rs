use std::fmt;

use super::all_known;
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const DREG: u16 = 1;
    pub const KEY: u16 = 2;
}

/// `enum nft_meta_keys`; unnamed keys keep their number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaKey(pub u32);

impl MetaKey {
    /// `NFT_META_LEN`: the packet length.
    pub const LEN: MetaKey = MetaKey(0);
    /// `NFT_META_PROTOCOL`: the ethertype (`skb->protocol`).
    pub const PROTOCOL: MetaKey = MetaKey(1);
    /// `NFT_META_MARK`: the packet mark.
    pub const MARK: MetaKey = MetaKey(3);
    /// `NFT_META_IIF`: the input interface index.
    pub const IIF: MetaKey = MetaKey(4);
    /// `NFT_META_OIF`: the output interface index.
    pub const OIF: MetaKey = MetaKey(5);
    /// `NFT_META_IIFNAME`: the input interface name (16 bytes, NUL-padded).
    pub const IIFNAME: MetaKey = MetaKey(6);
    /// `NFT_META_OIFNAME`: the output interface name.
    pub const OIFNAME: MetaKey = MetaKey(7);
    /// `NFT_META_NFPROTO`: the netfilter family (in `inet` tables).
    pub const NFPROTO: MetaKey = MetaKey(15);
    /// `NFT_META_L4PROTO`: the layer-4 protocol (past IPv6 extension headers).
    pub const L4PROTO: MetaKey = MetaKey(16);
    /// `NFT_META_PKTTYPE`: unicast, broadcast, multicast.
    pub const PKTTYPE: MetaKey = MetaKey(19);

    /// The name `nft` prints for the key, for the keys xtnl names.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::LEN => "len",
            Self::PROTOCOL => "protocol",
            Self::MARK => "mark",
            Self::IIF => "iif",
            Self::OIF => "oif",
            Self::IIFNAME => "iifname",
            Self::OIFNAME => "oifname",
            Self::NFPROTO => "nfproto",
            Self::L4PROTO => "l4proto",
            Self::PKTTYPE => "pkttype",
            _ => return None,
        })
    }
}

/// `meta load <key> => reg <dreg>`. The `meta set` form is not modelled (kept raw).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// `NFTA_META_KEY`.
    pub key: MetaKey,
    /// `NFTA_META_DREG`: where the value is loaded.
    pub dreg: u32,
}

impl Meta {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::DREG, attr::KEY])? {
            return Ok(None);
        }
        let (mut dreg, mut key) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::DREG => dreg = Some(a.u32_be("NFTA_META_DREG")?),
                attr::KEY => key = Some(a.u32_be("NFTA_META_KEY")?),
                _ => {}
            }
        }
        let Some(dreg) = dreg else { return Ok(None) };
        let key = key.ok_or_else(|| WireError::missing("NFTA_META_KEY"))?;
        Ok(Some(Meta {
            key: MetaKey(key),
            dreg,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::DREG, self.dreg)
            .u32_be(attr::KEY, self.key.0);
    }
}

impl fmt::Display for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.key.name() {
            Some(n) => write!(f, "meta load {n} => reg {}", self.dreg),
            None => write!(f, "meta load key {} => reg {}", self.key.0, self.dreg),
        }
    }
}
