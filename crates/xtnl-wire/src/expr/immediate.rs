use std::fmt;

use super::all_known;
use super::data::{NFTA_DATA_VALUE, NFTA_DATA_VERDICT, hex};
use crate::WireError;
use crate::attr::{AttrWriter, Attrs};

mod attr {
    pub const DREG: u16 = 1;
    pub const DATA: u16 = 2;
    pub const VERDICT_CODE: u16 = 1;
    pub const VERDICT_CHAIN: u16 = 2;
}

mod code {
    pub const DROP: i32 = 0;
    pub const ACCEPT: i32 = 1;
    pub const CONTINUE: i32 = -1;
    pub const BREAK: i32 = -2;
    pub const JUMP: i32 = -3;
    pub const GOTO: i32 = -4;
    pub const RETURN: i32 = -5;
}

/// An nf_tables verdict (`NFTA_VERDICT_CODE`, with `NFTA_VERDICT_CHAIN` for jump and goto).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// `NF_ACCEPT`.
    Accept,
    /// `NF_DROP`.
    Drop,
    /// `NFT_RETURN`: back to the calling chain.
    Return,
    /// `NFT_CONTINUE`: on to the next expression.
    Continue,
    /// `NFT_BREAK`: stop this rule, on to the next one.
    Break,
    /// `NFT_JUMP` to the named chain, coming back after it.
    Jump(String),
    /// `NFT_GOTO` the named chain, not coming back.
    Goto(String),
    /// Queue and other codes, kept as the kernel sent them.
    Unknown(i32),
}

/// What an immediate loads: a value into a data register, or a verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImmediateData {
    /// `NFTA_DATA_VALUE`: raw bytes.
    Value(Vec<u8>),
    /// `NFTA_DATA_VERDICT`.
    Verdict(Verdict),
}

/// `immediate reg <dreg> <data>`: loads a constant or sets the verdict (dreg 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Immediate {
    /// `NFTA_IMMEDIATE_DREG`: [`super::REG_VERDICT`] for a verdict.
    pub dreg: u32,
    /// `NFTA_IMMEDIATE_DATA`.
    pub data: ImmediateData,
}

impl Immediate {
    /// Decodes the expression's attributes (the inside of `NFTA_EXPR_DATA`); `None` for a form
    /// this type does not model, which the caller keeps as [`Expr::Other`](super::Expr::Other).
    pub fn parse(data: &[u8]) -> Result<Option<Self>, WireError> {
        if !all_known(data, &[attr::DREG, attr::DATA])? {
            return Ok(None);
        }
        let (mut dreg, mut value) = (None, None);
        for a in Attrs::new(data) {
            let a = a?;
            match a.ty {
                attr::DREG => dreg = Some(a.u32_be("NFTA_IMMEDIATE_DREG")?),
                attr::DATA => {
                    for d in a.nested() {
                        let d = d.map_err(|e| e.within("NFTA_IMMEDIATE_DATA"))?;
                        match d.ty {
                            NFTA_DATA_VALUE => {
                                value = Some(ImmediateData::Value(d.payload.to_vec()))
                            }
                            NFTA_DATA_VERDICT => {
                                value = Some(ImmediateData::Verdict(parse_verdict(d.payload)?))
                            }
                            _ => return Ok(None),
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(Some(Immediate {
            dreg: dreg.ok_or_else(|| WireError::missing("NFTA_IMMEDIATE_DREG"))?,
            data: value.ok_or_else(|| WireError::missing("NFTA_IMMEDIATE_DATA"))?,
        }))
    }

    /// Encodes the expression's attributes (the inside of `NFTA_EXPR_DATA`).
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.u32_be(attr::DREG, self.dreg);
        w.nested(attr::DATA, |w| match &self.data {
            ImmediateData::Value(v) => {
                w.bytes(NFTA_DATA_VALUE, v);
            }
            ImmediateData::Verdict(v) => emit_verdict(w, v),
        });
    }
}

/// Emits an `NFTA_DATA_VERDICT` (inside a data attribute: immediate data, set element data).
pub(crate) fn emit_verdict(w: &mut AttrWriter<'_>, v: &Verdict) {
    w.nested(NFTA_DATA_VERDICT, |w| {
        let (c, chain) = match v {
            Verdict::Accept => (code::ACCEPT, None),
            Verdict::Drop => (code::DROP, None),
            Verdict::Return => (code::RETURN, None),
            Verdict::Continue => (code::CONTINUE, None),
            Verdict::Break => (code::BREAK, None),
            Verdict::Jump(c) => (code::JUMP, Some(c)),
            Verdict::Goto(c) => (code::GOTO, Some(c)),
            Verdict::Unknown(n) => (*n, None),
        };
        w.i32_be(attr::VERDICT_CODE, c);
        if let Some(chain) = chain {
            w.strz(attr::VERDICT_CHAIN, chain);
        }
    });
}

/// Parses the body of an `NFTA_DATA_VERDICT`.
pub(crate) fn parse_verdict(buf: &[u8]) -> Result<Verdict, WireError> {
    let (mut c, mut chain) = (None, None);
    for a in Attrs::new(buf) {
        let a = a.map_err(|e| e.within("NFTA_DATA_VERDICT"))?;
        match a.ty {
            attr::VERDICT_CODE => c = Some(a.i32_be("NFTA_VERDICT_CODE")?),
            attr::VERDICT_CHAIN => chain = Some(a.string("NFTA_VERDICT_CHAIN")?),
            _ => {}
        }
    }
    let c = c.ok_or_else(|| WireError::missing("NFTA_VERDICT_CODE"))?;
    let need_chain = || {
        chain
            .clone()
            .ok_or_else(|| WireError::missing("NFTA_VERDICT_CHAIN"))
    };
    Ok(match c {
        code::ACCEPT => Verdict::Accept,
        code::DROP => Verdict::Drop,
        code::RETURN => Verdict::Return,
        code::CONTINUE => Verdict::Continue,
        code::BREAK => Verdict::Break,
        code::JUMP => Verdict::Jump(need_chain()?),
        code::GOTO => Verdict::Goto(need_chain()?),
        n => Verdict::Unknown(n),
    })
}

impl fmt::Display for Immediate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.data {
            ImmediateData::Value(v) => write!(f, "immediate reg {} {}", self.dreg, hex(v)),
            ImmediateData::Verdict(v) => {
                let v = match v {
                    Verdict::Accept => "accept".to_string(),
                    Verdict::Drop => "drop".to_string(),
                    Verdict::Return => "return".to_string(),
                    Verdict::Continue => "continue".to_string(),
                    Verdict::Break => "break".to_string(),
                    Verdict::Jump(c) => format!("jump -> {c}"),
                    Verdict::Goto(c) => format!("goto -> {c}"),
                    Verdict::Unknown(n) => format!("verdict {n}"),
                };
                write!(f, "immediate reg {} {v}", self.dreg)
            }
        }
    }
}
