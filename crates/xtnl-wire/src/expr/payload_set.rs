//! The write form of `payload` (`payload write reg 1 => 2b @ network header + 8 csum_type 1
//! csum_off 10 csum_flags 0x0`), which [`Payload`](super::Payload) (a load) does not model:
//! read from and written to [`OtherExpr`] like [`Limit`](super::Limit).

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::Attrs;

/// `payload write reg <sreg> => <len>b @ <base> + <offset> csum_type <t> csum_off <o>
/// csum_flags <f>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadSet {
    /// `NFTA_PAYLOAD_SREG`.
    pub sreg: u32,
    /// `NFTA_PAYLOAD_BASE` (`enum nft_payload_bases`).
    pub base: u32,
    /// `NFTA_PAYLOAD_OFFSET`.
    pub offset: u32,
    /// `NFTA_PAYLOAD_LEN`.
    pub len: u32,
    /// `NFTA_PAYLOAD_CSUM_TYPE`: 0 none, 1 the internet checksum.
    pub csum_type: u32,
    /// `NFTA_PAYLOAD_CSUM_OFFSET`.
    pub csum_offset: u32,
    /// `NFTA_PAYLOAD_CSUM_FLAGS`: 1 (`NFT_PAYLOAD_L4CSUM_PSEUDOHDR`) to update the transport
    /// checksum too.
    pub csum_flags: u32,
}

impl PayloadSet {
    /// The write an expression kept raw holds; `None` for another kind or form (a load).
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != "payload" || !all_known(&o.data, &[2, 3, 4, 5, 6, 7, 8])? {
            return Ok(None);
        }
        let mut p = PayloadSet {
            sreg: 0,
            base: 0,
            offset: 0,
            len: 0,
            csum_type: 0,
            csum_offset: 0,
            csum_flags: 0,
        };
        let mut sreg = None;
        for a in Attrs::new(&o.data) {
            let a = a?;
            let v = a.u32_be("NFTA_PAYLOAD_*")?;
            match a.ty {
                2 => p.base = v,
                3 => p.offset = v,
                4 => p.len = v,
                5 => sreg = Some(v),
                6 => p.csum_type = v,
                7 => p.csum_offset = v,
                _ => p.csum_flags = v,
            }
        }
        let Some(sreg) = sreg else { return Ok(None) };
        p.sreg = sreg;
        Ok(Some(p))
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it (the kernel's
    /// order: sreg, base, offset, len, then the checksum attributes).
    pub fn to_other(&self) -> OtherExpr {
        other_expr("payload", |w| {
            w.u32_be(5, self.sreg)
                .u32_be(2, self.base)
                .u32_be(3, self.offset)
                .u32_be(4, self.len)
                .u32_be(6, self.csum_type)
                .u32_be(7, self.csum_offset)
                .u32_be(8, self.csum_flags);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_round_trips_and_a_load_is_not_a_write() {
        let p = PayloadSet {
            sreg: 1,
            base: 1,
            offset: 8,
            len: 2,
            csum_type: 1,
            csum_offset: 10,
            csum_flags: 0,
        };
        assert_eq!(PayloadSet::from_other(&p.to_other()).unwrap(), Some(p));
        // `payload load 4b @ network header + 12 => reg 1` (DREG 1) is not a write.
        let load = OtherExpr {
            name: "payload".into(),
            data: vec![8, 0, 1, 0, 0, 0, 0, 1, 8, 0, 2, 0, 0, 0, 0, 1],
        };
        assert_eq!(PayloadSet::from_other(&load).unwrap(), None);
    }
}
