//! Named sets and maps: their description ([`SetSpec`], with nft's data types so that `nft
//! list` prints them as nft would), the operations a [`super::Transaction`] carries
//! ([`SetOp`]: create/delete a set, add/delete/flush elements); the reads a plan or a
//! listing makes are in `set_read.rs` ([`super::Reader::set`], [`super::Reader::sets`],
//! [`super::Reader::elements`], [`super::Reader::elements_by_key`]).
//!
//! Element messages are split so that each stays well under the 64 KiB a netlink attribute
//! can hold; every message is acknowledged, and a failure names the operation and the range
//! of its elements.

#![deny(missing_docs)]

use std::fmt;

use super::refs::TableRef;
pub use super::set_types::{
    DataType, Field, concat_len, concat_type, describe_type, encode, split_type,
};
use crate::error::{Error, Result};
use crate::model::validate_name;
use crate::transport::Batch;
use crate::wire::expr::{Counter, Expr, hex};
use crate::wire::netlink::{NLM_F_CREATE, NLM_F_EXCL};
use crate::wire::nftables::msg;
use crate::wire::set::{ElemListRepr, ElemRepr, SetDefRepr, SetPolicy, field, flags, udata};

/// `NFT_MSG_DELSET`, `NFT_MSG_DELSETELEM` (not in [`msg`], which predates sets).
const DELSET: u8 = 11;
pub(super) const GETSET: u8 = 10;
const DELSETELEM: u8 = 14;

/// Encoded bytes of elements per message (the ELEMENTS nest must stay under 64 KiB).
const ELEMENT_BYTES_PER_MSG: usize = 48 * 1024;
/// Single-element gets sent per round trip.
pub(super) const GETS_PER_ROUND_TRIP: usize = 256;

/// What a map maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapData {
    /// Values of these types (a concatenation when several).
    Values(Vec<DataType>),
    /// Verdicts (a verdict map, `vmap`).
    Verdict,
}

/// A named set or map to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSpec {
    /// The set's name in its table.
    pub name: String,
    /// The key's types; several make a concatenation.
    pub key: Vec<DataType>,
    /// `Some` for a map.
    pub data: Option<MapData>,
    /// [`flags`]: constant, interval, timeout, dynamic (`EVAL`); MAP is implied by `data`.
    pub flags: u32,
    /// Default element timeout (needs the timeout flag).
    pub timeout_ms: Option<u64>,
    /// The most elements it may hold (`size`).
    pub size: Option<u32>,
    /// How the kernel stores it (`policy performance|memory`).
    pub policy: Option<SetPolicy>,
    /// A comment (stored as set userdata, as nft does).
    pub comment: Option<String>,
    /// Every element gets a counter (`counter` in nft's set body; kernel 5.11+).
    pub counters: bool,
}

impl SetSpec {
    /// A plain set of `key`.
    pub fn set(name: impl Into<String>, key: Vec<DataType>) -> Self {
        SetSpec {
            name: name.into(),
            key,
            data: None,
            flags: 0,
            timeout_ms: None,
            size: None,
            policy: None,
            comment: None,
            counters: false,
        }
    }
    /// A map from `key` to `data`.
    pub fn map(name: impl Into<String>, key: Vec<DataType>, data: MapData) -> Self {
        SetSpec {
            data: Some(data),
            ..SetSpec::set(name, key)
        }
    }

    fn validate(&self) -> Result<()> {
        validate_name("set", &self.name)?;
        if self.key.is_empty() || self.key.len() > 5 {
            return Err(Error::InvalidInput(format!(
                "set {}: a key has 1 to 5 fields, not {}",
                self.name,
                self.key.len()
            )));
        }
        if let Some(MapData::Values(v)) = &self.data
            && (v.is_empty() || v.len() > 5)
        {
            return Err(Error::InvalidInput(format!(
                "map {}: a value has 1 to 5 fields, not {}",
                self.name,
                v.len()
            )));
        }
        let known = flags::CONSTANT | flags::INTERVAL | flags::TIMEOUT | flags::EVAL;
        if self.flags & !known != 0 {
            return Err(Error::InvalidInput(format!(
                "set {}: flags 0x{:x} are not constant, interval, timeout or dynamic",
                self.name,
                self.flags & !known
            )));
        }
        if self.timeout_ms.is_some() && self.flags & flags::TIMEOUT == 0 {
            return Err(Error::InvalidInput(format!(
                "set {}: a default timeout needs the timeout flag",
                self.name
            )));
        }
        if let Some(c) = &self.comment
            && c.len() > 254
        {
            return Err(Error::InvalidInput(format!(
                "set {}: the comment is longer than 254 bytes",
                self.name
            )));
        }
        Ok(())
    }

    /// The `NEWSET` representation, with the userdata nft writes (key and data byte order,
    /// comment) so that `nft list` prints the set's elements as it would its own.
    pub fn repr(&self, table: &TableRef) -> SetDefRepr {
        let order = |types: &[DataType]| match types {
            [one] if one.big_endian() => udata::BYTEORDER_BIG,
            [_] => udata::BYTEORDER_HOST,
            _ => 0,
        };
        let mut u = Vec::new();
        let _ = udata::push(
            &mut u,
            udata::SET_KEYBYTEORDER,
            &order(&self.key).to_ne_bytes(),
        );
        let mut f = self.flags;
        let (mut data_type, mut data_len) = (None, None);
        match &self.data {
            None => {}
            Some(MapData::Values(v)) => {
                f |= flags::MAP;
                data_type = Some(concat_type(v));
                data_len = Some(concat_len(v));
                let _ = udata::push(&mut u, udata::SET_DATABYTEORDER, &order(v).to_ne_bytes());
            }
            Some(MapData::Verdict) => {
                f |= flags::MAP;
                data_type = Some(crate::wire::set::DATA_VERDICT);
                data_len = Some(0);
            }
        }
        if let Some(c) = &self.comment {
            let _ = udata::push_string(&mut u, udata::SET_COMMENT, c);
        }
        SetDefRepr {
            family: table.family.nfproto(),
            table: table.name.clone(),
            name: self.name.clone(),
            flags: f,
            key_type: concat_type(&self.key),
            key_len: concat_len(&self.key),
            data_type,
            data_len,
            policy: self.policy,
            size: self.size,
            concat: if self.key.len() > 1 && self.flags & flags::INTERVAL != 0 {
                self.key.iter().map(|t| t.byte_len()).collect()
            } else {
                Vec::new()
            },
            timeout_ms: self.timeout_ms,
            userdata: Some(u),
            exprs: if self.counters {
                vec![Expr::Counter(Counter::default())]
            } else {
                Vec::new()
            },
            ..Default::default()
        }
    }
}

/// An operation on a named set or its elements, inside a [`super::Transaction`].
// Exhaustive (no `#[non_exhaustive]`) since the engine is a crate of its own: the policy
// (xtnl's `policy::touch`) judges every operation in a match the compiler checks, so that a
// new operation cannot go unjudged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOp {
    /// Create the set unless an identical one exists (a different one is an error).
    Ensure {
        /// The set's table.
        table: TableRef,
        /// The set.
        set: SetSpec,
    },
    /// Delete the set (with its elements); fails while a rule uses it.
    Delete {
        /// The set's table.
        table: TableRef,
        /// The set's name.
        name: String,
    },
    /// Add elements; with `exclusive`, one that exists already fails the transaction,
    /// without it an identical element is accepted as it is.
    AddElements {
        /// The set's table.
        table: TableRef,
        /// The set's name.
        set: String,
        /// The elements.
        elements: Vec<ElemRepr>,
        /// Whether an element that exists already fails the transaction.
        exclusive: bool,
    },
    /// Delete elements, named by key; an absent one fails the transaction.
    DeleteElements {
        /// The set's table.
        table: TableRef,
        /// The set's name.
        set: String,
        /// The keys of the elements to delete, in the set's key layout.
        keys: Vec<Vec<u8>>,
    },
    /// Delete every element.
    Flush {
        /// The set's table.
        table: TableRef,
        /// The set's name.
        set: String,
    },
}

impl SetOp {
    /// The table of the set the operation is about.
    pub fn table(&self) -> &TableRef {
        match self {
            SetOp::Ensure { table, .. }
            | SetOp::Delete { table, .. }
            | SetOp::AddElements { table, .. }
            | SetOp::DeleteElements { table, .. }
            | SetOp::Flush { table, .. } => table,
        }
    }
    /// The name of the set the operation is about.
    pub fn set_name(&self) -> &str {
        match self {
            SetOp::Ensure { set, .. } => &set.name,
            SetOp::Delete { name, .. } => name,
            SetOp::AddElements { set, .. }
            | SetOp::DeleteElements { set, .. }
            | SetOp::Flush { set, .. } => set,
        }
    }
    /// Whether committing it frees kernel objects.
    pub fn deletes(&self) -> bool {
        matches!(
            self,
            SetOp::Delete { .. } | SetOp::DeleteElements { .. } | SetOp::Flush { .. }
        )
    }

    pub(crate) fn encode(&self, b: &mut Batch) -> Result<()> {
        let table = self.table();
        validate_name("table", &table.name)?;
        validate_name("set", self.set_name())?;
        let family = table.family.nfproto();
        let desc = self.to_string();
        match self {
            SetOp::Ensure { table, set } => {
                set.validate()?;
                // The kernel requires a batch id for every new set, named or not.
                let repr = SetDefRepr {
                    id: Some(b.new_set_id()),
                    ..set.repr(table)
                };
                b.push(msg::NEWSET, family, NLM_F_CREATE, desc, |w| repr.emit(w));
            }
            SetOp::Delete { table, name } => {
                let (t, n) = (table.name.clone(), name.clone());
                b.push(DELSET, family, 0, desc, |w| {
                    w.strz(field::SET_TABLE, &t).strz(field::SET_NAME, &n);
                });
            }
            SetOp::Flush { table, set } => {
                let list = ElemListRepr {
                    family,
                    table: table.name.clone(),
                    set: set.clone(),
                    ..Default::default()
                };
                b.push(DELSETELEM, family, 0, desc, |w| list.emit(w));
            }
            SetOp::AddElements {
                table,
                set,
                elements,
                exclusive,
            } => {
                let flags = NLM_F_CREATE | if *exclusive { NLM_F_EXCL } else { 0 };
                push_chunks(b, msg::NEWSETELEM, flags, table, set, elements, &desc)?;
            }
            SetOp::DeleteElements { table, set, keys } => {
                let elements: Vec<ElemRepr> = keys.iter().cloned().map(ElemRepr::key).collect();
                push_chunks(b, DELSETELEM, 0, table, set, &elements, &desc)?;
            }
        }
        Ok(())
    }
}

fn elem_size(e: &ElemRepr) -> usize {
    let data = match &e.data {
        Some(crate::wire::set::ElemData::Value(v)) => v.len(),
        Some(crate::wire::set::ElemData::Verdict(_)) => 64,
        None => 0,
    };
    64 + e.key.len()
        + e.key_end.as_ref().map_or(0, Vec::len)
        + data
        + e.userdata.as_ref().map_or(0, Vec::len)
        + 48 * e.exprs.len()
}

/// Element messages for `NEWSETELEM`/`DELSETELEM` of `elements` (split into messages that
/// fit), for front ends that build elements themselves ([`super::Message`]).
pub(super) fn push_elements(
    b: &mut Batch,
    m: u8,
    flags: u16,
    table: &TableRef,
    set: &str,
    elements: &[ElemRepr],
    desc: &str,
) -> Result<()> {
    push_chunks(b, m, flags, table, set, elements, desc)
}

fn push_chunks(
    b: &mut Batch,
    m: u8,
    flags: u16,
    table: &TableRef,
    set: &str,
    elements: &[ElemRepr],
    desc: &str,
) -> Result<()> {
    if elements.is_empty() {
        return Ok(());
    }
    for e in elements {
        if e.userdata.as_ref().is_some_and(|u| u.len() > 256) {
            return Err(Error::InvalidInput(format!(
                "an element's userdata is {} bytes; the kernel holds at most 256",
                e.userdata.as_ref().map_or(0, Vec::len)
            )));
        }
        if e.key.len() > 64 {
            return Err(Error::InvalidInput(format!(
                "an element key of {} bytes; at most 64 fit in the kernel's registers",
                e.key.len()
            )));
        }
    }
    let family = table.family.nfproto();
    let mut start = 0;
    while start < elements.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < elements.len()
            && (end == start || bytes + elem_size(&elements[end]) < ELEMENT_BYTES_PER_MSG)
        {
            bytes += elem_size(&elements[end]);
            end += 1;
        }
        let list = ElemListRepr {
            family,
            table: table.name.clone(),
            set: set.to_owned(),
            set_id: None,
            elements: elements[start..end].to_vec(),
        };
        let what = if start == 0 && end == elements.len() {
            desc.to_owned()
        } else {
            format!("{desc} (elements {start}..{end})")
        };
        b.push(m, family, flags, what, |w| list.emit(w));
        start = end;
    }
    Ok(())
}

impl fmt::Display for SetOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetOp::Ensure { table, set } => {
                let kind = if set.data.is_some() { "map" } else { "set" };
                write!(f, "add {kind} {table} {}", set.name)
            }
            SetOp::Delete { table, name } => write!(f, "delete set {table} {name}"),
            SetOp::AddElements {
                table,
                set,
                elements,
                ..
            } => {
                write!(f, "add {} element(s) to {table} {set}", elements.len())?;
                let shown = elements.iter().map(|e| match e.comment() {
                    Some(c) => format!("{} {c:?}", hex(&e.key)),
                    None => hex(&e.key),
                });
                list_some(f, shown, elements.len())
            }
            SetOp::DeleteElements { table, set, keys } => {
                write!(f, "delete {} element(s) from {table} {set}", keys.len())?;
                list_some(f, keys.iter().map(|k| hex(k)), keys.len())
            }
            SetOp::Flush { table, set } => write!(f, "flush set {table} {set}"),
        }
    }
}

/// Names the first few elements (audit lines and errors say which ones changed).
fn list_some(
    f: &mut fmt::Formatter<'_>,
    items: impl Iterator<Item = String>,
    total: usize,
) -> fmt::Result {
    const SHOWN: usize = 4;
    let items: Vec<String> = items.take(SHOWN).collect();
    if items.is_empty() {
        return Ok(());
    }
    write!(f, " [{}", items.join(", "))?;
    if total > SHOWN {
        write!(f, ", and {} more", total - SHOWN)?;
    }
    write!(f, "]")
}
