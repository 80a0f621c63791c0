//! nf_tables expressions. Each kind lives in its own file with `parse` and `emit` side by
//! side. A kind we do not know, or a form of a known kind we do not model (a payload *set*, a
//! meta *set*, ...), is kept whole as [`Expr::Other`]: listing never fails on it, it prints,
//! and the rule model flags the rule so that nothing rewrites it blindly.

mod bitwise;
mod cmp;
mod compat;
mod connlimit;
mod counter;
mod ct;
pub(crate) mod data;
mod dynset;
mod exthdr;
mod fib;
mod hash;
mod immediate;
mod key_load;
mod limit;
mod log;
mod lookup;
mod meta;
mod nat;
mod nflog;
mod numgen;
mod objref;
mod osf;
mod payload;
mod payload_set;
mod redir;
mod reject;
mod setters;
mod shift;
mod synproxy;
mod tproxy;
mod xfrm;

use std::fmt;

pub use bitwise::Bitwise;
pub use cmp::{Cmp, CmpOp, Range};
pub use compat::{Match, Target};
pub use connlimit::Connlimit;
pub use counter::Counter;
pub use ct::Ct;
pub use data::hex;
pub use dynset::Dynset;
pub use exthdr::{Byteorder, Exthdr};
pub use fib::Fib;
pub use hash::Hash;
pub use immediate::{Immediate, ImmediateData, Verdict};
pub(crate) use immediate::{emit_verdict, parse_verdict};
pub use key_load::KeyLoad;
pub use limit::Limit;
pub use log::Log;
pub use lookup::Lookup;
pub use meta::{Meta, MetaKey};
pub use nat::{Masq, Nat, NatKind};
pub use nflog::LogAll;
pub use numgen::Numgen;
pub use objref::Objref;
pub use osf::Osf;
pub use payload::{Payload, PayloadBase};
pub use payload_set::PayloadSet;
pub use redir::Redir;
pub use reject::Reject;
pub use setters::{CtSet, MetaSet};
pub use shift::Shift;
pub use synproxy::Synproxy;
pub use tproxy::Tproxy;
pub use xfrm::Xfrm;

use super::WireError;
use super::attr::{AttrWriter, Attrs};
use super::error::ResultExt;

const NFTA_EXPR_NAME: u16 = 1;
const NFTA_EXPR_DATA: u16 = 2;

/// The verdict register; the data registers are `NFT_REG_1..4` (16 bytes each) or
/// `NFT_REG32_00..15` (4 bytes each, numbered from 8).
pub const REG_VERDICT: u32 = 0;
/// `NFT_REG_1`: the first 16-byte data register.
pub const REG_1: u32 = 1;
/// `NFT_REG_2`.
pub const REG_2: u32 = 2;
/// `NFT_REG_3`.
pub const REG_3: u32 = 3;

/// One nf_tables expression of a rule (`NFTA_LIST_ELEM` in `NFTA_RULE_EXPRESSIONS`), typed when
/// xtnl models its kind and form, kept raw ([`Expr::Other`]) otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expr {
    /// `payload`: load packet header bytes into a register.
    Payload(Payload),
    /// `meta`: load packet metadata (interface, protocol, mark) into a register.
    Meta(Meta),
    /// `cmp`: compare a register with a value.
    Cmp(Cmp),
    /// `range`: whether a register lies within (or outside) two bounds.
    Range(Range),
    /// `bitwise`: mask and XOR a register.
    Bitwise(Bitwise),
    /// `immediate`: load a constant or set the verdict.
    Immediate(Immediate),
    /// `counter`: count packets and bytes.
    Counter(Counter),
    /// `ct`: load conntrack state into a register.
    Ct(Ct),
    /// `reject`: answer with a TCP reset or an ICMP error and drop.
    Reject(Reject),
    /// `log`: log the packet to the kernel log.
    Log(Log),
    /// `redir`: redirect to the local machine.
    Redir(Redir),
    /// `lookup`: look a register up in a set or map.
    Lookup(Lookup),
    /// `nat`: source or destination NAT.
    Nat(Nat),
    /// `masq`: source NAT to the output interface's address.
    Masq(Masq),
    /// An x_tables match run through nft_compat; the xtnl-xt crate (`xtnl::xt`) decodes its
    /// payload.
    Match(Match),
    /// An x_tables target run through nft_compat.
    Target(Target),
    /// Any other expression, kept byte for byte.
    Other(OtherExpr),
}

/// An expression xtnl does not model: its name and its raw `NFTA_EXPR_DATA` attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherExpr {
    /// `NFTA_EXPR_NAME`: the expression's kind.
    pub name: String,
    /// `NFTA_EXPR_DATA`: its attributes, as the kernel sent them.
    pub data: Vec<u8>,
}

impl Expr {
    /// Parses the attributes of one `NFTA_LIST_ELEM` of `NFTA_RULE_EXPRESSIONS`.
    pub fn parse(elem: &[u8]) -> Result<Expr, WireError> {
        let (mut name, mut data) = (None, None);
        for a in Attrs::new(elem) {
            let a = a?;
            match a.ty {
                // Borrowed: only an expression kept as `Other` owns its name (a listing
                // parses some ten expressions per rule).
                NFTA_EXPR_NAME => name = Some(a.str("NFTA_EXPR_NAME")?),
                NFTA_EXPR_DATA => data = Some(a.payload),
                _ => {}
            }
        }
        let name = name.ok_or_else(|| WireError::missing("NFTA_EXPR_NAME"))?;
        let data = data.unwrap_or(&[]);
        let typed = match name {
            "payload" => Payload::parse(data).ctx("payload")?.map(Expr::Payload),
            "meta" => Meta::parse(data).ctx("meta")?.map(Expr::Meta),
            "cmp" => Cmp::parse(data).ctx("cmp")?.map(Expr::Cmp),
            "range" => Range::parse(data).ctx("range")?.map(Expr::Range),
            "bitwise" => Bitwise::parse(data).ctx("bitwise")?.map(Expr::Bitwise),
            "immediate" => Immediate::parse(data)
                .ctx("immediate")?
                .map(Expr::Immediate),
            "counter" => Counter::parse(data).ctx("counter")?.map(Expr::Counter),
            "ct" => Ct::parse(data).ctx("ct")?.map(Expr::Ct),
            "reject" => Reject::parse(data).ctx("reject")?.map(Expr::Reject),
            "log" => Log::parse(data).ctx("log")?.map(Expr::Log),
            "redir" => Redir::parse(data).ctx("redir")?.map(Expr::Redir),
            "lookup" => Lookup::parse(data).ctx("lookup")?.map(Expr::Lookup),
            "nat" => Nat::parse(data).ctx("nat")?.map(Expr::Nat),
            "masq" => Masq::parse(data).ctx("masq")?.map(Expr::Masq),
            "match" => Match::parse(data).ctx("match")?.map(Expr::Match),
            "target" => Target::parse(data).ctx("target")?.map(Expr::Target),
            _ => None,
        };
        Ok(typed.unwrap_or_else(|| {
            Expr::Other(OtherExpr {
                name: name.to_owned(),
                data: data.to_vec(),
            })
        }))
    }

    /// The expression's kind, as `NFTA_EXPR_NAME` spells it.
    pub fn name(&self) -> &str {
        match self {
            Expr::Payload(_) => "payload",
            Expr::Meta(_) => "meta",
            Expr::Cmp(_) => "cmp",
            Expr::Range(_) => "range",
            Expr::Bitwise(_) => "bitwise",
            Expr::Immediate(_) => "immediate",
            Expr::Counter(_) => "counter",
            Expr::Ct(_) => "ct",
            Expr::Reject(_) => "reject",
            Expr::Log(_) => "log",
            Expr::Redir(_) => "redir",
            Expr::Lookup(_) => "lookup",
            Expr::Nat(_) => "nat",
            Expr::Masq(_) => "masq",
            Expr::Match(_) => "match",
            Expr::Target(_) => "target",
            Expr::Other(o) => &o.name,
        }
    }

    /// Emits the body of one `NFTA_LIST_ELEM`.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(NFTA_EXPR_NAME, self.name());
        match self {
            Expr::Other(o) => {
                w.bytes(NFTA_EXPR_DATA | super::attr::NLA_F_NESTED, &o.data);
            }
            typed => {
                w.nested(NFTA_EXPR_DATA, |w| match typed {
                    Expr::Payload(e) => e.emit(w),
                    Expr::Meta(e) => e.emit(w),
                    Expr::Cmp(e) => e.emit(w),
                    Expr::Range(e) => e.emit(w),
                    Expr::Bitwise(e) => e.emit(w),
                    Expr::Immediate(e) => e.emit(w),
                    Expr::Counter(e) => e.emit(w),
                    Expr::Ct(e) => e.emit(w),
                    Expr::Reject(e) => e.emit(w),
                    Expr::Log(e) => e.emit(w),
                    Expr::Redir(e) => e.emit(w),
                    Expr::Lookup(e) => e.emit(w),
                    Expr::Nat(e) => e.emit(w),
                    Expr::Masq(e) => e.emit(w),
                    Expr::Match(e) => e.emit(w),
                    Expr::Target(e) => e.emit(w),
                    Expr::Other(_) => {}
                });
            }
        }
    }
}

/// Prints in the style of `nft --debug=netlink`, e.g. `[ cmp eq reg 1 0x00000006 ]`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Payload(e) => write!(f, "[ {e} ]"),
            Expr::Meta(e) => write!(f, "[ {e} ]"),
            Expr::Cmp(e) => write!(f, "[ {e} ]"),
            Expr::Range(e) => write!(f, "[ {e} ]"),
            Expr::Bitwise(e) => write!(f, "[ {e} ]"),
            Expr::Immediate(e) => write!(f, "[ {e} ]"),
            Expr::Counter(e) => write!(f, "[ {e} ]"),
            Expr::Ct(e) => write!(f, "[ {e} ]"),
            Expr::Reject(e) => write!(f, "[ {e} ]"),
            Expr::Log(e) => write!(f, "[ {e} ]"),
            Expr::Redir(e) => write!(f, "[ {e} ]"),
            Expr::Lookup(e) => write!(f, "[ {e} ]"),
            Expr::Nat(e) => write!(f, "[ {e} ]"),
            Expr::Masq(e) => write!(f, "[ {e} ]"),
            Expr::Match(e) => write!(f, "[ {e} ]"),
            Expr::Target(e) => write!(f, "[ {e} ]"),
            Expr::Other(o) => write!(f, "[ {} (unparsed: {}) ]", o.name, hex(&o.data)),
        }
    }
}

/// An expression kept raw, its data written by `emit` (for the kinds [`Expr::parse`] keeps
/// raw but a caller types: [`Limit`], [`Fib`], [`LogAll`]).
pub(crate) fn other_expr(name: &str, emit: impl FnOnce(&mut AttrWriter<'_>)) -> OtherExpr {
    let mut data = Vec::new();
    let mut overflow = false;
    emit(&mut AttrWriter::new(&mut data, &mut overflow));
    OtherExpr {
        name: name.to_owned(),
        data,
    }
}

/// Whether an unknown attribute type appeared: typed parsers give up (keep the raw bytes) in
/// that case instead of dropping information.
pub(crate) fn all_known(data: &[u8], known: &[u16]) -> Result<bool, WireError> {
    for a in Attrs::new(data) {
        if !known.contains(&a?.ty) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The attributes of a raw expression of kind `name`, `None` for another kind or an
/// attribute outside `known` (the kinds kept raw that a caller types: [`Connlimit`],
/// [`Hash`], [`KeyLoad`], [`Tproxy`], [`Shift`], [`Synproxy`], [`Xfrm`], [`Osf`]).
pub(crate) fn attrs_of<'a>(
    o: &'a OtherExpr,
    name: &str,
    known: &[u16],
) -> Result<Option<Attrs<'a>>, WireError> {
    if o.name != name || !all_known(&o.data, known)? {
        return Ok(None);
    }
    Ok(Some(Attrs::new(&o.data)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(e: Expr) -> Expr {
        let mut buf = Vec::new();
        let mut of = false;
        e.emit(&mut AttrWriter::new(&mut buf, &mut of));
        let back = Expr::parse(&buf).unwrap();
        assert_eq!(back, e);
        back
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(Expr::Payload(Payload {
            dreg: 1,
            base: PayloadBase::Network,
            offset: 16,
            len: 4,
        }));
        round_trip(Expr::Meta(Meta {
            key: MetaKey::L4PROTO,
            dreg: 1,
        }));
        round_trip(Expr::Cmp(Cmp {
            sreg: 1,
            op: CmpOp::Neq,
            data: vec![6],
        }));
        round_trip(Expr::Range(Range {
            sreg: 1,
            op: CmpOp::Eq,
            from: vec![0, 1],
            to: vec![0, 9],
        }));
        round_trip(Expr::Bitwise(Bitwise {
            sreg: 1,
            dreg: 1,
            len: 4,
            mask: vec![255, 255, 240, 0],
            xor: vec![0; 4],
        }));
        round_trip(Expr::Counter(Counter {
            packets: 3,
            bytes: 180,
        }));
        round_trip(Expr::Immediate(Immediate {
            dreg: 1,
            data: ImmediateData::Value(vec![10, 1, 2, 3]),
        }));
        for v in [
            Verdict::Accept,
            Verdict::Drop,
            Verdict::Return,
            Verdict::Jump("vcld-1".into()),
            Verdict::Goto("x".into()),
        ] {
            round_trip(Expr::Immediate(Immediate {
                dreg: 0,
                data: ImmediateData::Verdict(v),
            }));
        }
        round_trip(Expr::Nat(Nat {
            kind: NatKind::Dnat,
            family: 2,
            reg_addr_min: Some(1),
            reg_addr_max: None,
            reg_proto_min: Some(2),
            reg_proto_max: Some(3),
            flags: Some(3),
        }));
        round_trip(Expr::Masq(Masq {
            flags: None,
            reg_proto_min: Some(1),
            reg_proto_max: Some(2),
        }));
        round_trip(Expr::Ct(Ct {
            key: Ct::KEY_STATE,
            dreg: 1,
            direction: None,
        }));
        round_trip(Expr::Reject(Reject {
            kind: Reject::ICMP_UNREACH,
            code: Some(3),
        }));
        round_trip(Expr::Reject(Reject {
            kind: Reject::TCP_RST,
            code: None,
        }));
        round_trip(Expr::Log(Log {
            prefix: Some("x: ".into()),
            level: Some(6),
            flags: None,
        }));
        round_trip(Expr::Redir(Redir {
            reg_proto_min: Some(1),
            reg_proto_max: None,
            flags: Some(2),
        }));
        round_trip(Expr::Match(Match {
            name: "multiport".into(),
            rev: 1,
            info: vec![1; 48],
        }));
        round_trip(Expr::Target(Target {
            name: "MASQUERADE".into(),
            rev: 0,
            info: vec![0; 24],
        }));
    }

    #[test]
    fn unknown_expression_is_kept_and_re_emitted_identically() {
        // `[ log group 2 prefix "x" ]`: an NFLOG group (NFTA_LOG_GROUP = 1) is not modelled.
        let mut buf = Vec::new();
        let mut of = false;
        let mut w = AttrWriter::new(&mut buf, &mut of);
        w.strz(NFTA_EXPR_NAME, "log");
        w.nested(NFTA_EXPR_DATA, |w| {
            w.bytes(1, &2u16.to_be_bytes());
            w.strz(2, "x");
        });
        let e = Expr::parse(&buf).unwrap();
        let Expr::Other(o) = &e else {
            panic!("log must be kept raw: {e:?}")
        };
        assert_eq!(o.name, "log");
        let mut again = Vec::new();
        e.emit(&mut AttrWriter::new(&mut again, &mut of));
        assert_eq!(again, buf);
        assert!(e.to_string().contains("log"));
    }

    #[test]
    fn payload_set_form_is_kept_raw() {
        // A payload *write* (NFTA_PAYLOAD_SREG = 5) is not modelled: it must not parse as a load.
        let mut buf = Vec::new();
        let mut of = false;
        let mut w = AttrWriter::new(&mut buf, &mut of);
        w.strz(NFTA_EXPR_NAME, "payload");
        w.nested(NFTA_EXPR_DATA, |w| {
            w.u32_be(5, 1).u32_be(2, 1).u32_be(3, 8).u32_be(4, 1);
        });
        assert!(matches!(Expr::parse(&buf).unwrap(), Expr::Other(_)));
    }
}
