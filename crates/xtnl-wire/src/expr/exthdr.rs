//! `exthdr` (IPv6 extension headers, TCP options, IPv4 options: loads, existence tests and
//! writes) and `byteorder` (the conversion nft puts before writing a host-order value into a
//! header). Read from and written to [`OtherExpr`] like [`Limit`](super::Limit), attributes in
//! the order the kernel lists them.

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::Attrs;

/// `exthdr load <op> <len>b @ <type> + <offset> [present] => reg <dreg>`, or
/// `exthdr write <op> reg <sreg> => <len>b @ <type> + <offset>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exthdr {
    /// `NFTA_EXTHDR_DREG` (a load).
    pub dreg: Option<u32>,
    /// `NFTA_EXTHDR_SREG` (a write).
    pub sreg: Option<u32>,
    /// `NFTA_EXTHDR_TYPE`: the header or option number.
    pub kind: u8,
    /// `NFTA_EXTHDR_OFFSET`.
    pub offset: u32,
    /// `NFTA_EXTHDR_LEN`.
    pub len: u32,
    /// `NFTA_EXTHDR_FLAGS`: [`Exthdr::F_PRESENT`] for an existence test.
    pub flags: Option<u32>,
    /// `NFTA_EXTHDR_OP`: [`Exthdr::OP_IPV6`], [`Exthdr::OP_TCPOPT`], [`Exthdr::OP_IPV4`], ...
    pub op: Option<u32>,
}

impl Exthdr {
    /// `NFT_EXTHDR_F_PRESENT`.
    pub const F_PRESENT: u32 = 1;
    /// `NFT_EXTHDR_OP_IPV6`.
    pub const OP_IPV6: u32 = 0;
    /// `NFT_EXTHDR_OP_TCPOPT`.
    pub const OP_TCPOPT: u32 = 1;
    /// `NFT_EXTHDR_OP_IPV4`.
    pub const OP_IPV4: u32 = 2;

    /// The exthdr an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != "exthdr" || !all_known(&o.data, &[1, 2, 3, 4, 5, 6, 7])? {
            return Ok(None);
        }
        let mut e = Exthdr {
            dreg: None,
            sreg: None,
            kind: 0,
            offset: 0,
            len: 0,
            flags: None,
            op: None,
        };
        for a in Attrs::new(&o.data) {
            let a = a?;
            match a.ty {
                1 => e.dreg = Some(a.u32_be("NFTA_EXTHDR_DREG")?),
                2 => e.kind = a.u8("NFTA_EXTHDR_TYPE")?,
                3 => e.offset = a.u32_be("NFTA_EXTHDR_OFFSET")?,
                4 => e.len = a.u32_be("NFTA_EXTHDR_LEN")?,
                5 => e.flags = Some(a.u32_be("NFTA_EXTHDR_FLAGS")?),
                6 => e.op = Some(a.u32_be("NFTA_EXTHDR_OP")?),
                _ => e.sreg = Some(a.u32_be("NFTA_EXTHDR_SREG")?),
            }
        }
        if e.dreg.is_some() == e.sreg.is_some() {
            return Ok(None);
        }
        Ok(Some(e))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("exthdr", |w| {
            if let Some(r) = self.dreg {
                w.u32_be(1, r);
            }
            if let Some(r) = self.sreg {
                w.u32_be(7, r);
            }
            w.u8(2, self.kind)
                .u32_be(3, self.offset)
                .u32_be(4, self.len);
            if let Some(f) = self.flags {
                w.u32_be(5, f);
            }
            if let Some(op) = self.op {
                w.u32_be(6, op);
            }
        })
    }
}

/// `byteorder reg <dreg> = hton|ntoh(reg <sreg>, <size>, <len>)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Byteorder {
    /// `NFTA_BYTEORDER_SREG`.
    pub sreg: u32,
    /// `NFTA_BYTEORDER_DREG`.
    pub dreg: u32,
    /// `NFTA_BYTEORDER_OP`: 0 `ntoh`, 1 `hton`.
    pub op: u32,
    /// `NFTA_BYTEORDER_LEN`.
    pub len: u32,
    /// `NFTA_BYTEORDER_SIZE`: 2, 4 or 8.
    pub size: u32,
}

impl Byteorder {
    /// `NFT_BYTEORDER_HTON`.
    pub const HTON: u32 = 1;

    /// The conversion an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != "byteorder" || !all_known(&o.data, &[1, 2, 3, 4, 5])? {
            return Ok(None);
        }
        let mut b = Byteorder {
            sreg: 0,
            dreg: 0,
            op: 0,
            len: 0,
            size: 0,
        };
        for a in Attrs::new(&o.data) {
            let a = a?;
            let v = a.u32_be("NFTA_BYTEORDER_*")?;
            match a.ty {
                1 => b.sreg = v,
                2 => b.dreg = v,
                3 => b.op = v,
                4 => b.len = v,
                _ => b.size = v,
            }
        }
        Ok(Some(b))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr("byteorder", |w| {
            w.u32_be(1, self.sreg)
                .u32_be(2, self.dreg)
                .u32_be(3, self.op)
                .u32_be(4, self.len)
                .u32_be(5, self.size);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_writes_and_conversions_round_trip() {
        let present = Exthdr {
            dreg: Some(1),
            sreg: None,
            kind: 4,
            offset: 0,
            len: 1,
            flags: Some(Exthdr::F_PRESENT),
            op: Some(Exthdr::OP_TCPOPT),
        };
        assert_eq!(
            Exthdr::from_other(&present.to_other()).unwrap(),
            Some(present)
        );
        let write = Exthdr {
            dreg: None,
            sreg: Some(1),
            kind: 2,
            offset: 2,
            len: 2,
            flags: Some(0),
            op: Some(Exthdr::OP_TCPOPT),
        };
        assert_eq!(Exthdr::from_other(&write.to_other()).unwrap(), Some(write));
        let b = Byteorder {
            sreg: 1,
            dreg: 1,
            op: Byteorder::HTON,
            len: 2,
            size: 2,
        };
        assert_eq!(Byteorder::from_other(&b.to_other()).unwrap(), Some(b));
    }
}
