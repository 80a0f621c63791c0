use std::fmt;

use super::all_known;
use super::data::{emit_value, hex, value};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const SREG: u16 = 1;
    pub const OP: u16 = 2;
    pub const DATA: u16 = 3;
    pub const RANGE_FROM: u16 = 3;
    pub const RANGE_TO: u16 = 4;
}

/// `enum nft_cmp_ops` (range uses only eq/neq).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `NFT_CMP_EQ`.
    Eq,
    /// `NFT_CMP_NEQ`.
    Neq,
    /// `NFT_CMP_LT`.
    Lt,
    /// `NFT_CMP_LTE`.
    Lte,
    /// `NFT_CMP_GT`.
    Gt,
    /// `NFT_CMP_GTE`.
    Gte,
    /// An operator this version does not know, kept as sent.
    Unknown(u32),
}

impl CmpOp {
    /// The operator for the kernel's number.
    pub fn from_u32(v: u32) -> Self {
        match v {
            0 => Self::Eq,
            1 => Self::Neq,
            2 => Self::Lt,
            3 => Self::Lte,
            4 => Self::Gt,
            5 => Self::Gte,
            n => Self::Unknown(n),
        }
    }
    /// The kernel's number for the operator.
    pub fn to_u32(self) -> u32 {
        match self {
            Self::Eq => 0,
            Self::Neq => 1,
            Self::Lt => 2,
            Self::Lte => 3,
            Self::Gt => 4,
            Self::Gte => 5,
            Self::Unknown(n) => n,
        }
    }
    fn name(self) -> String {
        match self {
            Self::Eq => "eq".into(),
            Self::Neq => "neq".into(),
            Self::Lt => "lt".into(),
            Self::Lte => "lte".into(),
            Self::Gt => "gt".into(),
            Self::Gte => "gte".into(),
            Self::Unknown(n) => format!("op{n}"),
        }
    }
}

/// `cmp <op> reg <sreg> <data>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmp {
    /// `NFTA_CMP_SREG`: the register compared.
    pub sreg: u32,
    /// `NFTA_CMP_OP`.
    pub op: CmpOp,
    /// `NFTA_CMP_DATA`: the value, as many bytes as the loaded field (network order for header fields).
    pub data: Vec<u8>,
}

impl Cmp {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::SREG, attr::OP, attr::DATA])? {
            return Ok(None);
        }
        let (mut sreg, mut op, mut val) = (None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::SREG => sreg = Some(a.u32_be("NFTA_CMP_SREG")?),
                attr::OP => op = Some(a.u32_be("NFTA_CMP_OP")?),
                attr::DATA => val = Some(value(&a, "NFTA_CMP_DATA")?),
                _ => {}
            }
        }
        Ok(Some(Cmp {
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_CMP_SREG"))?,
            op: CmpOp::from_u32(op.ok_or_else(|| WireError::missing("NFTA_CMP_OP"))?),
            data: val.ok_or_else(|| WireError::missing("NFTA_CMP_DATA"))?,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::SREG, self.sreg)
            .u32_be(attr::OP, self.op.to_u32());
        emit_value(w, attr::DATA, &self.data);
    }
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cmp {} reg {} {}",
            self.op.name(),
            self.sreg,
            hex(&self.data)
        )
    }
}

/// `range <op> reg <sreg> <from> <to>` (inclusive bounds, big-endian comparison).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// `NFTA_RANGE_SREG`: the register compared.
    pub sreg: u32,
    /// `NFTA_RANGE_OP`: [`CmpOp::Eq`] (inside) or [`CmpOp::Neq`] (outside).
    pub op: CmpOp,
    /// `NFTA_RANGE_FROM_DATA`: the low bound, inclusive.
    pub from: Vec<u8>,
    /// `NFTA_RANGE_TO_DATA`: the high bound, inclusive.
    pub to: Vec<u8>,
}

impl Range {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(
            data,
            &[attr::SREG, attr::OP, attr::RANGE_FROM, attr::RANGE_TO],
        )? {
            return Ok(None);
        }
        let (mut sreg, mut op, mut from, mut to) = (None, None, None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::SREG => sreg = Some(a.u32_be("NFTA_RANGE_SREG")?),
                attr::OP => op = Some(a.u32_be("NFTA_RANGE_OP")?),
                attr::RANGE_FROM => from = Some(value(&a, "NFTA_RANGE_FROM_DATA")?),
                attr::RANGE_TO => to = Some(value(&a, "NFTA_RANGE_TO_DATA")?),
                _ => {}
            }
        }
        Ok(Some(Range {
            sreg: sreg.ok_or_else(|| WireError::missing("NFTA_RANGE_SREG"))?,
            op: CmpOp::from_u32(op.ok_or_else(|| WireError::missing("NFTA_RANGE_OP"))?),
            from: from.ok_or_else(|| WireError::missing("NFTA_RANGE_FROM_DATA"))?,
            to: to.ok_or_else(|| WireError::missing("NFTA_RANGE_TO_DATA"))?,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::SREG, self.sreg)
            .u32_be(attr::OP, self.op.to_u32());
        emit_value(w, attr::RANGE_FROM, &self.from);
        emit_value(w, attr::RANGE_TO, &self.to);
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "range {} reg {} {} {}",
            self.op.name(),
            self.sreg,
            hex(&self.from),
            hex(&self.to)
        )
    }
}
