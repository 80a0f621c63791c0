//! Named sets and maps (`NFT_MSG_NEWSET`/`DELSET`/`GETSET`) and their elements
//! (`NEWSETELEM`/`DELSETELEM`/`GETSETELEM`): typed representations with `parse` and `emit`.
//!
//! Attribute numbers are `enum nft_set_attributes`, `nft_set_elem_list_attributes` and
//! `nft_set_elem_attributes` of `linux/netfilter/nf_tables.h`. The userdata TLVs (key byte
//! order, comments) are libnftnl's (`NFTNL_UDATA_SET_*`, `NFTNL_UDATA_SET_ELEM_*`): the kernel
//! stores them opaquely, nft reads them to print a set. Anything this file does not model is
//! kept: set flags and policies as raw numbers, unknown attribute types listed in `unknown`
//! so that a listing can say what it left out. Elements (`ElemRepr`, `ElemListRepr`)
//! are in `set_elem.rs`.

use std::fmt;

use super::WireError;
use super::attr::{Attr, AttrWriter, Attrs};
use super::error::ResultExt;
use super::expr::data::NFTA_DATA_VALUE;
use super::expr::{Expr, Verdict, emit_verdict, hex, parse_verdict};
use super::nftables::NFTA_LIST_ELEM;

/// `NFTA_SET_*`, `NFTA_SET_DESC_*`, `NFTA_SET_ELEM_LIST_*` and `NFTA_SET_ELEM_*`.
pub mod field {
    /// `NFTA_SET_TABLE`.
    pub const SET_TABLE: u16 = 1;
    /// `NFTA_SET_NAME`.
    pub const SET_NAME: u16 = 2;
    /// `NFTA_SET_FLAGS` (see [`super::flags`]).
    pub const SET_FLAGS: u16 = 3;
    /// `NFTA_SET_KEY_TYPE`: nft's datatype of the key.
    pub const SET_KEY_TYPE: u16 = 4;
    /// `NFTA_SET_KEY_LEN`: the key's length in bytes.
    pub const SET_KEY_LEN: u16 = 5;
    /// `NFTA_SET_DATA_TYPE`: maps only, the value's datatype.
    pub const SET_DATA_TYPE: u16 = 6;
    /// `NFTA_SET_DATA_LEN`: maps only, the value's length in bytes.
    pub const SET_DATA_LEN: u16 = 7;
    /// `NFTA_SET_POLICY`: performance or memory.
    pub const SET_POLICY: u16 = 8;
    /// `NFTA_SET_DESC`: nested size and concatenation description.
    pub const SET_DESC: u16 = 9;
    /// `NFTA_SET_ID`: the set's id within its batch.
    pub const SET_ID: u16 = 10;
    /// `NFTA_SET_TIMEOUT`: the default element timeout, in milliseconds (u64).
    pub const SET_TIMEOUT: u16 = 11;
    /// `NFTA_SET_GC_INTERVAL`: garbage-collection interval, in milliseconds.
    pub const SET_GC_INTERVAL: u16 = 12;
    /// `NFTA_SET_USERDATA`: libnftnl's TLVs (see [`super::udata`]).
    pub const SET_USERDATA: u16 = 13;
    /// `NFTA_SET_PAD`: alignment padding for 64-bit attributes.
    pub const SET_PAD: u16 = 14;
    /// `NFTA_SET_OBJ_TYPE`: object maps only, the object type.
    pub const SET_OBJ_TYPE: u16 = 15;
    /// `NFTA_SET_HANDLE`: the kernel's id of the set.
    pub const SET_HANDLE: u16 = 16;
    /// `NFTA_SET_EXPR`: one expression every element gets.
    pub const SET_EXPR: u16 = 17;
    /// `NFTA_SET_EXPRESSIONS`: a list of expressions every element gets.
    pub const SET_EXPRESSIONS: u16 = 18;
    /// Reported by newer kernels: the backend's name (`hash`, `rhash`, `pipapo`...).
    pub const SET_TYPE: u16 = 19;
    /// Reported by newer kernels: how many elements the set holds.
    pub const SET_COUNT: u16 = 20;

    /// `NFTA_SET_DESC_SIZE` (in `NFTA_SET_DESC`): the element count the set is sized for.
    pub const DESC_SIZE: u16 = 1;
    /// `NFTA_SET_DESC_CONCAT` (in `NFTA_SET_DESC`): the fields of a concatenated key.
    pub const DESC_CONCAT: u16 = 2;
    /// `NFTA_SET_FIELD_LEN` (in each `NFTA_SET_DESC_CONCAT` item): one field's length.
    pub const FIELD_LEN: u16 = 1;

    /// `NFTA_SET_ELEM_LIST_TABLE`.
    pub const LIST_TABLE: u16 = 1;
    /// `NFTA_SET_ELEM_LIST_SET`: the set's name.
    pub const LIST_SET: u16 = 2;
    /// `NFTA_SET_ELEM_LIST_ELEMENTS`: the list of `NFTA_LIST_ELEM`s.
    pub const LIST_ELEMENTS: u16 = 3;
    /// `NFTA_SET_ELEM_LIST_SET_ID`: a set of the same batch, by id.
    pub const LIST_SET_ID: u16 = 4;

    /// `NFTA_SET_ELEM_KEY`: the element's key (nested `NFTA_DATA_VALUE`).
    pub const ELEM_KEY: u16 = 1;
    /// `NFTA_SET_ELEM_DATA`: maps only, the element's value or verdict.
    pub const ELEM_DATA: u16 = 2;
    /// `NFTA_SET_ELEM_FLAGS` (see [`super::elem_flags`]).
    pub const ELEM_FLAGS: u16 = 3;
    /// `NFTA_SET_ELEM_TIMEOUT`: milliseconds the element lives.
    pub const ELEM_TIMEOUT: u16 = 4;
    /// `NFTA_SET_ELEM_EXPIRATION`: milliseconds left (reported).
    pub const ELEM_EXPIRATION: u16 = 5;
    /// `NFTA_SET_ELEM_USERDATA`: libnftnl's TLVs (the element's comment).
    pub const ELEM_USERDATA: u16 = 6;
    /// `NFTA_SET_ELEM_EXPR`: one stateful expression of the element.
    pub const ELEM_EXPR: u16 = 7;
    // 8 is `NFTA_SET_ELEM_PAD` (alignment of 64-bit attributes; carries nothing).
    /// `NFTA_SET_ELEM_OBJREF`: object maps only, the object's name.
    pub const ELEM_OBJREF: u16 = 9;
    /// `NFTA_SET_ELEM_KEY_END`: the end of a range (interval sets with concatenations).
    pub const ELEM_KEY_END: u16 = 10;
    /// `NFTA_SET_ELEM_EXPRESSIONS`: the element's stateful expressions.
    pub const ELEM_EXPRESSIONS: u16 = 11;
}

/// `NFT_SET_*` flags.
pub mod flags {
    /// `NFT_SET_ANONYMOUS`: bound to the rule that uses it, freed with it.
    pub const ANONYMOUS: u32 = 0x1;
    /// `NFT_SET_CONSTANT`: elements cannot change once the batch is committed.
    pub const CONSTANT: u32 = 0x2;
    /// `NFT_SET_INTERVAL`: elements are ranges.
    pub const INTERVAL: u32 = 0x4;
    /// `NFT_SET_MAP`: elements carry data (a map).
    pub const MAP: u32 = 0x8;
    /// `NFT_SET_TIMEOUT`: elements may expire.
    pub const TIMEOUT: u32 = 0x10;
    /// `NFT_SET_EVAL`: updated from the packet path (dynamic sets).
    pub const EVAL: u32 = 0x20;
    /// `NFT_SET_OBJECT`: an object map.
    pub const OBJECT: u32 = 0x40;
    /// `NFT_SET_CONCAT`: the key is a concatenation with per-field lengths.
    pub const CONCAT: u32 = 0x80;
    /// `NFT_SET_EXPR`: elements carry expressions.
    pub const EXPR: u32 = 0x100;

    /// Names, in `nft`'s words, of the flags set in `f`; bits without a name as hex.
    pub fn names(f: u32) -> Vec<String> {
        const NAMED: [(u32, &str); 9] = [
            (ANONYMOUS, "anonymous"),
            (CONSTANT, "constant"),
            (INTERVAL, "interval"),
            (MAP, "map"),
            (TIMEOUT, "timeout"),
            (EVAL, "dynamic"),
            (OBJECT, "object"),
            (CONCAT, "concat"),
            (EXPR, "expr"),
        ];
        let mut out: Vec<String> = NAMED
            .iter()
            .filter(|(b, _)| f & b != 0)
            .map(|(_, n)| (*n).to_owned())
            .collect();
        let rest = NAMED.iter().fold(f, |acc, (b, _)| acc & !b);
        if rest != 0 {
            out.push(format!("0x{rest:x}"));
        }
        out
    }
}

/// `NFT_SET_ELEM_*` element flags.
pub mod elem_flags {
    /// The element ends an interval.
    pub const INTERVAL_END: u32 = 0x1;
    /// The catch-all element (`*`).
    pub const CATCHALL: u32 = 0x2;
}

/// The data type of a verdict map (`NFT_DATA_VERDICT`).
pub const DATA_VERDICT: u32 = 0xffff_ff00;

/// Set lookup policies (`NFT_SET_POL_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetPolicy {
    /// `NFT_SET_POL_PERFORMANCE`: the kernel picks the fastest backend (the default).
    Performance,
    /// `NFT_SET_POL_MEMORY`: the kernel picks the smallest backend.
    Memory,
    /// A policy this version does not know, kept as sent.
    Other(u32),
}

impl SetPolicy {
    /// The policy for the kernel's number.
    pub fn from_raw(v: u32) -> Self {
        match v {
            0 => SetPolicy::Performance,
            1 => SetPolicy::Memory,
            n => SetPolicy::Other(n),
        }
    }
    /// The kernel's number for the policy.
    pub fn raw(self) -> u32 {
        match self {
            SetPolicy::Performance => 0,
            SetPolicy::Memory => 1,
            SetPolicy::Other(n) => n,
        }
    }
}

/// Userdata TLVs (u8 type, u8 length, value) as libnftnl writes them for sets and elements.
pub mod udata {
    /// `NFTNL_UDATA_SET_KEYBYTEORDER`: nft's byte order of the key (u32, host order).
    pub const SET_KEYBYTEORDER: u8 = 0;
    /// `NFTNL_UDATA_SET_DATABYTEORDER`.
    pub const SET_DATABYTEORDER: u8 = 1;
    /// `NFTNL_UDATA_SET_COMMENT` (NUL-terminated).
    pub const SET_COMMENT: u8 = 7;
    /// `NFTNL_UDATA_SET_ELEM_COMMENT` (NUL-terminated).
    pub const ELEM_COMMENT: u8 = 0;
    /// nft's byte orders: big endian (addresses, ports), host (marks, interface names).
    pub const BYTEORDER_HOST: u32 = 1;
    /// `NFT_BYTEORDER_BIG` (2): network order.
    pub const BYTEORDER_BIG: u32 = 2;

    /// The value of the first TLV of type `ty`.
    pub fn find(userdata: &[u8], ty: u8) -> Option<&[u8]> {
        let mut rest = userdata;
        while rest.len() >= 2 {
            let (t, len) = (rest[0], rest[1] as usize);
            let value = rest.get(2..2 + len)?;
            if t == ty {
                return Some(value);
            }
            rest = &rest[2 + len..];
        }
        None
    }

    /// A NUL-terminated string TLV (a comment).
    pub fn string(userdata: &[u8], ty: u8) -> Option<String> {
        let v = find(userdata, ty)?;
        let v = v.strip_suffix(&[0]).unwrap_or(v);
        String::from_utf8(v.to_vec()).ok()
    }

    /// Appends a TLV; `None` if the value does not fit in one (255 bytes).
    pub fn push(out: &mut Vec<u8>, ty: u8, value: &[u8]) -> Option<()> {
        let len = u8::try_from(value.len()).ok()?;
        out.push(ty);
        out.push(len);
        out.extend_from_slice(value);
        Some(())
    }

    /// Appends a NUL-terminated string TLV.
    pub fn push_string(out: &mut Vec<u8>, ty: u8, s: &str) -> Option<()> {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        push(out, ty, &v)
    }
}

/// A named set or map: what `NEWSET` creates and `GETSET` reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetDefRepr {
    /// The `nfgenmsg` family.
    pub family: u8,
    /// `NFTA_SET_TABLE`.
    pub table: String,
    /// `NFTA_SET_NAME`.
    pub name: String,
    /// Reported by the kernel; a request may name the set by it.
    pub handle: Option<u64>,
    /// `NFT_SET_*` ([`flags`]); unknown bits kept.
    pub flags: u32,
    /// nft's datatype number; a concatenation packs one per 6 bits.
    pub key_type: u32,
    /// `NFTA_SET_KEY_LEN`: the key's length in bytes (a concatenation's fields padded to 4 each).
    pub key_len: u32,
    /// Maps only: the value's datatype ([`DATA_VERDICT`] for a verdict map) and length.
    pub data_type: Option<u32>,
    /// `NFTA_SET_DATA_LEN`: maps only, the value's length ([`DATA_VERDICT`] maps: 16).
    pub data_len: Option<u32>,
    /// `NFTA_SET_POLICY`, when present.
    pub policy: Option<SetPolicy>,
    /// `NFTA_SET_DESC_SIZE`: the element count the set is sized for.
    pub size: Option<u32>,
    /// `NFTA_SET_DESC_CONCAT`: the length of each field of a concatenated key (intervals).
    pub concat: Vec<u32>,
    /// Requests: the set's id in its batch (rules and elements of the batch may name it so).
    pub id: Option<u32>,
    /// Default element timeout, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// `NFTA_SET_GC_INTERVAL`, in milliseconds.
    pub gc_interval_ms: Option<u32>,
    /// `NFTA_SET_USERDATA`: libnftnl's TLVs (see [`udata`]): key byte order, comment.
    pub userdata: Option<Vec<u8>>,
    /// Object maps: the object type.
    pub obj_type: Option<u32>,
    /// Expressions every element gets (`counter` in a set's body).
    pub exprs: Vec<Expr>,
    /// Reported (kernel 6.x): the backend the kernel chose.
    pub backend: Option<String>,
    /// Reported (kernel 6.x): the number of elements.
    pub count: Option<u32>,
    /// Attribute types this parser does not know.
    pub unknown: Vec<u16>,
}

impl SetDefRepr {
    /// Whether it is a map ([`flags::MAP`]).
    pub fn is_map(&self) -> bool {
        self.flags & flags::MAP != 0
    }

    /// The comment nft shows (`comment "..."`), from the userdata.
    pub fn comment(&self) -> Option<String> {
        udata::string(self.userdata.as_deref()?, udata::SET_COMMENT)
    }

    /// Decodes a set message's attributes; unknown attribute types go to `unknown`.
    pub fn parse(family: u8, attrs: &[u8]) -> Result<Self, WireError> {
        let mut s = SetDefRepr {
            family,
            ..Default::default()
        };
        let (mut table, mut name, mut key_type, mut key_len) = (None, None, None, None);
        for a in Attrs::new(attrs) {
            let a = a.ctx("set")?;
            match a.ty {
                field::SET_TABLE => table = Some(a.string("NFTA_SET_TABLE")?),
                field::SET_NAME => name = Some(a.string("NFTA_SET_NAME")?),
                field::SET_HANDLE => s.handle = Some(a.u64_be("NFTA_SET_HANDLE")?),
                field::SET_FLAGS => s.flags = a.u32_be("NFTA_SET_FLAGS")?,
                field::SET_KEY_TYPE => key_type = Some(a.u32_be("NFTA_SET_KEY_TYPE")?),
                field::SET_KEY_LEN => key_len = Some(a.u32_be("NFTA_SET_KEY_LEN")?),
                field::SET_DATA_TYPE => s.data_type = Some(a.u32_be("NFTA_SET_DATA_TYPE")?),
                field::SET_DATA_LEN => s.data_len = Some(a.u32_be("NFTA_SET_DATA_LEN")?),
                field::SET_POLICY => {
                    s.policy = Some(SetPolicy::from_raw(a.u32_be("NFTA_SET_POLICY")?))
                }
                field::SET_ID => s.id = Some(a.u32_be("NFTA_SET_ID")?),
                field::SET_TIMEOUT => s.timeout_ms = Some(a.u64_be("NFTA_SET_TIMEOUT")?),
                field::SET_GC_INTERVAL => {
                    s.gc_interval_ms = Some(a.u32_be("NFTA_SET_GC_INTERVAL")?)
                }
                field::SET_USERDATA => s.userdata = Some(a.payload.to_vec()),
                field::SET_OBJ_TYPE => s.obj_type = Some(a.u32_be("NFTA_SET_OBJ_TYPE")?),
                field::SET_DESC => parse_desc(&a, &mut s).ctx("set")?,
                field::SET_EXPR => {
                    s.exprs
                        .push(Expr::parse(a.payload).ctx("set").ctx("NFTA_SET_EXPR")?);
                }
                field::SET_EXPRESSIONS => {
                    s.exprs = parse_expr_list(&a).ctx("set").ctx("NFTA_SET_EXPRESSIONS")?;
                }
                field::SET_TYPE => match a.string("NFTA_SET_TYPE") {
                    Ok(t) => s.backend = Some(t),
                    Err(_) => s.unknown.push(a.ty),
                },
                field::SET_COUNT => match a.u32_be("NFTA_SET_COUNT") {
                    Ok(n) => s.count = Some(n),
                    Err(_) => s.unknown.push(a.ty),
                },
                field::SET_PAD => {}
                other => s.unknown.push(other),
            }
        }
        s.table = table.ok_or_else(|| WireError::missing("NFTA_SET_TABLE").within("set"))?;
        s.name = name.ok_or_else(|| WireError::missing("NFTA_SET_NAME").within("set"))?;
        s.key_type = key_type.unwrap_or(0);
        s.key_len = key_len.ok_or_else(|| WireError::missing("NFTA_SET_KEY_LEN").within("set"))?;
        Ok(s)
    }

    /// Encodes the set; attributes that are `None` or empty are left out.
    pub fn emit(&self, w: &mut AttrWriter<'_>) {
        w.strz(field::SET_TABLE, &self.table);
        if !self.name.is_empty() {
            w.strz(field::SET_NAME, &self.name);
        }
        if let Some(h) = self.handle {
            w.u64_be(field::SET_HANDLE, h);
        }
        w.u32_be(field::SET_FLAGS, self.flags)
            .u32_be(field::SET_KEY_TYPE, self.key_type)
            .u32_be(field::SET_KEY_LEN, self.key_len);
        if let Some(t) = self.data_type {
            w.u32_be(field::SET_DATA_TYPE, t);
        }
        if let Some(l) = self.data_len {
            w.u32_be(field::SET_DATA_LEN, l);
        }
        // nft's order: the batch id before the policy and description.
        if let Some(id) = self.id {
            w.u32_be(field::SET_ID, id);
        }
        if let Some(p) = self.policy {
            w.u32_be(field::SET_POLICY, p.raw());
        }
        if self.size.is_some() || !self.concat.is_empty() {
            w.nested(field::SET_DESC, |w| {
                if let Some(n) = self.size {
                    w.u32_be(field::DESC_SIZE, n);
                }
                if !self.concat.is_empty() {
                    w.nested(field::DESC_CONCAT, |w| {
                        for l in &self.concat {
                            w.nested(NFTA_LIST_ELEM, |w| {
                                w.u32_be(field::FIELD_LEN, *l);
                            });
                        }
                    });
                }
            });
        }
        if let Some(t) = self.timeout_ms {
            w.u64_be(field::SET_TIMEOUT, t);
        }
        if let Some(g) = self.gc_interval_ms {
            w.u32_be(field::SET_GC_INTERVAL, g);
        }
        if let Some(u) = &self.userdata {
            w.bytes(field::SET_USERDATA, u);
        }
        if let Some(o) = self.obj_type {
            w.u32_be(field::SET_OBJ_TYPE, o);
        }
        emit_exprs(w, &self.exprs, field::SET_EXPR, field::SET_EXPRESSIONS);
    }
}

fn parse_desc(a: &Attr<'_>, s: &mut SetDefRepr) -> Result<(), WireError> {
    for d in a.nested() {
        let d = d.ctx("NFTA_SET_DESC")?;
        match d.ty {
            field::DESC_SIZE => s.size = Some(d.u32_be("NFTA_SET_DESC_SIZE")?),
            field::DESC_CONCAT => {
                for f in d.nested() {
                    let f = f.ctx("NFTA_SET_DESC_CONCAT")?;
                    for l in f.nested() {
                        let l = l.ctx("NFTA_SET_DESC_CONCAT")?;
                        if l.ty == field::FIELD_LEN {
                            s.concat.push(l.u32_be("NFTA_SET_FIELD_LEN")?);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn parse_expr_list(a: &Attr<'_>) -> Result<Vec<Expr>, WireError> {
    let mut out = Vec::new();
    for (i, e) in a.nested().enumerate() {
        let e = e.ctx(format_args!("expression #{i}"))?;
        out.push(Expr::parse(e.payload).ctx(format_args!("expression #{i}"))?);
    }
    Ok(out)
}

/// One expression as `single` (what nft sends for one), several as a `list` of them.
fn emit_exprs(w: &mut AttrWriter<'_>, exprs: &[Expr], single: u16, list: u16) {
    match exprs {
        [] => {}
        [e] => {
            w.nested(single, |w| e.emit(w));
        }
        many => {
            w.nested(list, |w| {
                for e in many {
                    w.nested(NFTA_LIST_ELEM, |w| e.emit(w));
                }
            });
        }
    }
}

#[path = "set_elem.rs"]
mod elem;
pub use elem::{ElemData, ElemListRepr, ElemRepr, verdict_word};

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
