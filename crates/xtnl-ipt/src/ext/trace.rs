//! `-j TRACE` (revision 0, no payload): the x_tables target in iptables-legacy (the kernel
//! takes it in the raw table only), and in iptables-nft the native expressions its
//! `add_meta_nftrace` writes instead of nft_compat, in any table:
//!
//! ```text
//! -t raw -A PREROUTING -j TRACE   [ immediate reg 9 0x00000001 ]  (one byte of data)
//!                                 [ meta set nftrace with reg 9 ]
//! ```
//!
//! and that `nft_meta_set_to_target` reads back as TRACE (a `meta set nftrace` from a
//! one-byte immediate 0 is "trace is cleared", not iptables syntax).

use super::*;
use crate::wire::attr::{AttrWriter, Attrs};
use crate::wire::expr::{Expr, Immediate, ImmediateData, OtherExpr};

pub(crate) struct Trace;

/// `NFT_REG32_01`, the register iptables-nft loads the trace bit into.
const REG32_01: u32 = 9;
/// `NFT_META_NFTRACE`.
const META_NFTRACE: u32 = 12;

mod meta_attr {
    pub const KEY: u16 = 2;
    pub const SREG: u16 = 3;
}

impl Ext for Trace {
    fn name(&self) -> &'static str {
        "TRACE"
    }
    fn is_target(&self) -> bool {
        true
    }
    fn options(&self) -> &'static [Opt] {
        opts![]
    }
    fn parse(&self, _: &[Given], _: &Ctx<'_>) -> Result<Vec<u8>> {
        Ok(Vec::new())
    }
    fn save(&self, info: &[u8], _: Family, _: &mut String) -> Option<()> {
        info.is_empty().then_some(())
    }
    fn canonical(&self, info: &[u8]) -> Option<Vec<u8>> {
        info.is_empty().then(Vec::new)
    }
}

/// The two expressions iptables-nft writes for `-j TRACE`.
pub fn native() -> Vec<Expr> {
    let mut data = Vec::new();
    let mut overflow = false;
    AttrWriter::new(&mut data, &mut overflow)
        .u32_be(meta_attr::KEY, META_NFTRACE)
        .u32_be(meta_attr::SREG, REG32_01);
    vec![
        Expr::Immediate(Immediate {
            dreg: REG32_01,
            data: ImmediateData::Value(vec![1]),
        }),
        Expr::Other(OtherExpr {
            name: "meta".into(),
            data,
        }),
    ]
}

/// `-j TRACE` if `exprs` are exactly an immediate of a non-zero byte into a register and
/// a `meta set nftrace` from that register (iptables-nft's reading, any register).
pub fn decode_native(exprs: &[Expr], family: Family) -> Option<IptTarget> {
    let [
        Expr::Immediate(Immediate {
            dreg,
            data: ImmediateData::Value(v),
        }),
        Expr::Other(o),
    ] = exprs
    else {
        return None;
    };
    if o.name != "meta" || v.len() != 1 || v[0] == 0 {
        return None;
    }
    let (mut key, mut sreg) = (None, None);
    for a in Attrs::new(&o.data) {
        let a = a.ok()?;
        match a.ty {
            meta_attr::KEY => key = Some(a.u32_be("NFTA_META_KEY").ok()?),
            meta_attr::SREG => sreg = Some(a.u32_be("NFTA_META_SREG").ok()?),
            _ => return None,
        }
    }
    (key == Some(META_NFTRACE) && sreg == Some(*dreg)).then(|| {
        IptTarget::Ext(XtPayload {
            name: "TRACE".into(),
            rev: 0,
            info: Vec::new(),
            family,
        })
    })
}
