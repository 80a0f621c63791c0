//! `dynset`: add or update an element of a set from the packet (`add @s { ip saddr }`).
//! Read raw like [`Limit`](super::Limit).

use std::fmt;

use super::{OtherExpr, all_known, other_expr};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

/// `dynset <op> reg_key <sreg_key> set <set> [timeout <ms>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dynset {
    /// `NFTA_DYNSET_SET_NAME`.
    pub set: String,
    /// `NFTA_DYNSET_SET_ID`: a set created in the same batch.
    pub set_id: Option<u32>,
    /// `NFTA_DYNSET_OP`: [`Dynset::ADD`], [`Dynset::UPDATE`], [`Dynset::DELETE`].
    pub op: u32,
    /// `NFTA_DYNSET_SREG_KEY`.
    pub sreg_key: u32,
    /// `NFTA_DYNSET_SREG_DATA` (maps).
    pub sreg_data: Option<u32>,
    /// `NFTA_DYNSET_TIMEOUT`, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `NFTA_DYNSET_FLAGS`.
    pub flags: Option<u32>,
}

impl Dynset {
    /// The expression's name.
    pub const NAME: &'static str = "dynset";
    /// `NFT_DYNSET_OP_ADD`.
    pub const ADD: u32 = 0;
    /// `NFT_DYNSET_OP_UPDATE`.
    pub const UPDATE: u32 = 1;
    /// `NFT_DYNSET_OP_DELETE`.
    pub const DELETE: u32 = 2;

    /// Decodes the expression's attributes; `None` for a form this type does not model
    /// (with stateful expressions attached to the element).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[1, 2, 3, 4, 5, 6, 9])? {
            return Ok(None);
        }
        let mut d = Dynset {
            set: String::new(),
            set_id: None,
            op: 0,
            sreg_key: 0,
            sreg_data: None,
            timeout_ms: None,
            flags: None,
        };
        let (mut name, mut key) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                1 => name = Some(a.string("NFTA_DYNSET_SET_NAME")?),
                2 => d.set_id = Some(a.u32_be("NFTA_DYNSET_SET_ID")?),
                3 => d.op = a.u32_be("NFTA_DYNSET_OP")?,
                4 => key = Some(a.u32_be("NFTA_DYNSET_SREG_KEY")?),
                5 => d.sreg_data = Some(a.u32_be("NFTA_DYNSET_SREG_DATA")?),
                6 => d.timeout_ms = Some(a.u64_be("NFTA_DYNSET_TIMEOUT")?),
                9 => d.flags = Some(a.u32_be("NFTA_DYNSET_FLAGS")?),
                _ => {}
            }
        }
        d.set = name.ok_or_else(|| WireError::missing("NFTA_DYNSET_SET_NAME"))?;
        d.sreg_key = key.ok_or_else(|| WireError::missing("NFTA_DYNSET_SREG_KEY"))?;
        Ok(Some(d))
    }

    /// Encodes the expression's attributes.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(4, self.sreg_key);
        if let Some(r) = self.sreg_data {
            w.u32_be(5, r);
        }
        w.u32_be(3, self.op);
        w.strz(1, &self.set);
        if let Some(id) = self.set_id {
            w.u32_be(2, id);
        }
        if let Some(t) = self.timeout_ms {
            w.u64_be(6, t);
        }
        if let Some(f) = self.flags {
            w.u32_be(9, f);
        }
    }

    /// The dynset an expression kept raw holds; `None` for another kind or form.
    pub fn from_other(o: &OtherExpr) -> Result<Option<Self>, WireError> {
        if o.name != Self::NAME {
            return Ok(None);
        }
        Self::parse(&o.data)
    }

    /// The expression, raw as [`Expr::Other`](super::Expr::Other) holds it.
    pub fn to_other(&self) -> OtherExpr {
        other_expr(Self::NAME, |w| self.emit(w))
    }
}

impl fmt::Display for Dynset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "dynset {} reg_key {} set {} timeout {:?}",
            self.op, self.sreg_key, self.set, self.timeout_ms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynset_round_trips() {
        let d = Dynset {
            set: "nodeport-ips".into(),
            set_id: None,
            op: Dynset::ADD,
            sreg_key: 1,
            sreg_data: None,
            timeout_ms: Some(10_000),
            flags: None,
        };
        assert_eq!(Dynset::from_other(&d.to_other()).unwrap(), Some(d));
    }
}
