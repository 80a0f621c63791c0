//! nft's rule statements (libnftables JSON, the `xtnl-nft-json` crate) to nf_tables
//! expressions (the `xtnl-wire` crate) and back: what nft does in its
//! `netlink_linearize.c` (statements to expressions, with the protocol dependencies it adds)
//! and `netlink_delinearize.c` (expressions to statements, with those dependencies removed),
//! re-done from the kernel's and nft's observable behaviour, without libnftables.
//!
//! - [`DataType`]: nft's datatypes (`ipv4_addr`, `inet_service`, `ct_state`, ...), their numbers
//!   in `NFTA_SET_KEY_TYPE`, sizes and byte orders; a concatenated key is a `Vec<DataType>`.
//! - The value codec: [`decode_value`] and [`encode_value`] turn a key's bytes into the JSON
//!   value `nft -j` prints (`"192.0.2.1"`, `22`, `"established"`, `{"concat": [...]}`) and
//!   back; [`decode_elements`] and [`encode_elements`] do a set's elements (intervals,
//!   prefixes, map data).
//! - [`decode_rule`]: a rule's expressions to its statements, as `nft -j list` prints them.
//! - [`encode_rule`]: statements to expressions, with the anonymous sets the rule needs
//!   ([`EncodedRule`]).
//!
//! Anything not supported is refused with a [`RuleError`] naming the statement or expression
//! and where it is; nothing is dropped or approximated. docs/nft-json.md lists what is covered.
//!
//! `tcp dport { 22, 80 } accept` in an inet table, as nft encodes it (the `meta l4proto tcp`
//! dependency, an anonymous set) and back:
//!
//! ```
//! use std::collections::BTreeMap;
//! use xtnl_nft_json::Statement;
//! use xtnl_nft_rules::{SetView, decode_rule, encode_rule};
//! use xtnl_wire::expr::Expr;
//! use xtnl_wire::nftables::nfproto;
//!
//! let stmts: Vec<Statement> = serde_json::from_str(
//!     r#"[{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}},
//!                    "right": {"set": [22, 80]}}},
//!         {"accept": null}]"#,
//! )?;
//! let named: BTreeMap<String, SetView> = BTreeMap::new();
//! let enc = encode_rule(nfproto::INET, &stmts, &named).expect("encodes");
//! let shown: Vec<String> = enc.exprs.iter().map(|e| e.to_string()).collect();
//! assert_eq!(shown[0], "[ meta load l4proto => reg 1 ]");
//! assert_eq!(enc.anon_sets.len(), 1);
//!
//! // The kernel names the anonymous set; decoding looks it up by that name.
//! let mut exprs = enc.exprs.clone();
//! let mut sets = BTreeMap::new();
//! for e in &mut exprs {
//!     if let Expr::Lookup(l) = e {
//!         l.set = "__set0".into();
//!         l.set_id = None;
//!     }
//! }
//! let mut def = enc.anon_sets[0].def.clone();
//! def.name = "__set0".into();
//! sets.insert(def.name.clone(), SetView::from_def(&def, enc.anon_sets[0].elements.clone()));
//! let back = decode_rule(nfproto::INET, &exprs, &sets).expect("decodes");
//! assert_eq!(back, stmts);
//! # Ok::<(), serde_json::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod datatype;
mod decode;
mod elements;
mod encode;
mod options;
mod proto;
mod symbols;
mod value;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

pub use datatype::{ByteOrder, CONCAT_TYPE_BITS, DataType};
pub use decode::decode_rule;
pub use elements::{decode_elements, encode_elements};
pub use encode::encode_rule;
pub use value::{decode_value, encode_value};

use xtnl_wire::expr::Expr;
use xtnl_wire::set::ElemRepr;
use xtnl_wire::set::{SetDefRepr, flags as set_flags};

/// What kind of refusal a [`RuleError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleErrorKind {
    /// A statement, expression or value this crate does not (yet) translate.
    Unsupported,
    /// Input that cannot be right: a value of the wrong type, a set that does not exist, a
    /// register read before it was written.
    Invalid,
}

/// A refusal: what is not supported or not valid, and where (`expr[2].match.right`,
/// `expression 3 (payload)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// Refused because unsupported, or because invalid.
    pub kind: RuleErrorKind,
    /// Where: the statement's or expression's place in the rule.
    pub at: String,
    /// What.
    pub message: String,
}

impl RuleError {
    /// An [`RuleErrorKind::Unsupported`] refusal.
    pub fn unsupported(at: impl Into<String>, message: impl Into<String>) -> Self {
        RuleError {
            kind: RuleErrorKind::Unsupported,
            at: at.into(),
            message: message.into(),
        }
    }

    /// An [`RuleErrorKind::Invalid`] refusal.
    pub fn invalid(at: impl Into<String>, message: impl Into<String>) -> Self {
        RuleError {
            kind: RuleErrorKind::Invalid,
            at: at.into(),
            message: message.into(),
        }
    }

    /// The same error, its place prefixed with `outer` (`expr[2]` + `.match.right`).
    pub fn within(mut self, outer: &str) -> Self {
        self.at = if self.at.is_empty() {
            outer.to_owned()
        } else if self.at.starts_with('.') || self.at.starts_with('[') {
            format!("{outer}{}", self.at)
        } else {
            format!("{outer}.{}", self.at)
        };
        self
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            RuleErrorKind::Unsupported => "not supported",
            RuleErrorKind::Invalid => "invalid",
        };
        if self.at.is_empty() {
            write!(f, "{what}: {}", self.message)
        } else {
            write!(f, "{}: {what}: {}", self.at, self.message)
        }
    }
}

impl std::error::Error for RuleError {}

/// What the rule codec needs to know of a set or map: its name, key and data types, flags,
/// and, for an anonymous set (`__set0`, `__map0`), its elements (an anonymous set is printed
/// inline in the rule that uses it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetView {
    /// The set's name (without `@`).
    pub name: String,
    /// The key's datatypes (more than one: a concatenation).
    pub key: Vec<DataType>,
    /// `NFTA_SET_KEY_LEN`: the key's bytes.
    pub key_len: u32,
    /// The key's byte order (nft keeps it in the set's userdata; [`ByteOrder::Big`] for
    /// addresses and ports, [`ByteOrder::Host`] for marks and conntrack state).
    pub key_order: ByteOrder,
    /// A map's data type ([`DataType::Verdict`] for a verdict map); `None` for a set.
    pub data: Option<DataType>,
    /// `NFTA_SET_DATA_LEN`: a map's data bytes (0 for a verdict map).
    pub data_len: u32,
    /// `NFTA_SET_FLAGS` ([`xtnl_wire::set::flags`]).
    pub flags: u32,
    /// The elements, as the kernel holds them: needed for anonymous sets only (empty for a
    /// named set, whose elements the rule does not print).
    pub elements: Vec<ElemRepr>,
}

impl SetView {
    /// The view of a set as the kernel lists it, with its elements when it is anonymous.
    pub fn from_def(def: &SetDefRepr, elements: Vec<ElemRepr>) -> SetView {
        let key = if def.concat.len() > 1 {
            let mut k = DataType::unpack(def.key_type);
            // A concatenation of unknown types keeps its field count from NFTA_SET_DESC.
            if k.len() != def.concat.len() {
                k = vec![DataType::Other(def.key_type)];
            }
            k
        } else {
            DataType::unpack(def.key_type)
        };
        let key_order = value::key_order_from_userdata(def.userdata.as_deref())
            .unwrap_or_else(|| key.first().map_or(ByteOrder::Host, |t| t.byte_order()));
        SetView {
            name: def.name.clone(),
            key,
            key_len: def.key_len,
            key_order,
            data: def.data_type.map(|d| {
                if d == xtnl_wire::set::DATA_VERDICT {
                    DataType::Verdict
                } else {
                    DataType::from_id(d)
                }
            }),
            data_len: def.data_len.unwrap_or(0),
            flags: def.flags,
            elements,
        }
    }

    /// Whether the set is anonymous (created for one rule, printed inline).
    pub fn is_anonymous(&self) -> bool {
        self.flags & set_flags::ANONYMOUS != 0
    }

    /// Whether the set holds ranges (`flags interval`).
    pub fn is_interval(&self) -> bool {
        self.flags & set_flags::INTERVAL != 0
    }

    /// Whether the set is a map.
    pub fn is_map(&self) -> bool {
        self.flags & set_flags::MAP != 0
    }
}

/// Where the rule codec finds the sets a rule names (`@name`, or `__set0` for an anonymous
/// set), in the rule's table.
pub trait SetLookup {
    /// The set called `name` (without `@`), if the table has it.
    fn set(&self, name: &str) -> Option<&SetView>;
}

impl SetLookup for HashMap<String, SetView> {
    fn set(&self, name: &str) -> Option<&SetView> {
        self.get(name)
    }
}

impl SetLookup for BTreeMap<String, SetView> {
    fn set(&self, name: &str) -> Option<&SetView> {
        self.get(name)
    }
}

impl SetLookup for [SetView] {
    fn set(&self, name: &str) -> Option<&SetView> {
        self.iter().find(|s| s.name == name)
    }
}

impl SetLookup for Vec<SetView> {
    fn set(&self, name: &str) -> Option<&SetView> {
        self.as_slice().set(name)
    }
}

/// An anonymous set a rule needs, to be created in the same batch before the rule: its
/// definition (named `__set%d` or `__map%d` as nft names them, with a batch-local
/// `NFTA_SET_ID`; family and table are left empty for the caller to fill) and its elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonSet {
    /// The set (flags include `ANONYMOUS` and `CONSTANT`).
    pub def: SetDefRepr,
    /// Its elements.
    pub elements: Vec<ElemRepr>,
}

/// A rule's statements encoded: the expressions of `NFTA_RULE_EXPRESSIONS` and the anonymous
/// sets they look up (by `NFTA_LOOKUP_SET_ID`), which the batch must create first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedRule {
    /// The expressions, in order.
    pub exprs: Vec<Expr>,
    /// The anonymous sets, their ids numbered from 0 within the rule (see
    /// [`EncodedRule::assign_set_ids`]).
    pub anon_sets: Vec<AnonSet>,
}

impl EncodedRule {
    /// Renumbers the anonymous sets' ids (and the lookups that use them) from `*next`, so that
    /// they are unique in a batch of several rules; `*next` is left past the last one.
    pub fn assign_set_ids(&mut self, next: &mut u32) {
        let base = *next;
        for s in &mut self.anon_sets {
            let old = s.def.id.unwrap_or(0);
            s.def.id = Some(base + old);
        }
        for e in &mut self.exprs {
            if let Expr::Lookup(l) = e {
                if let Some(id) = l.set_id.as_mut() {
                    *id += base;
                }
            }
        }
        *next = base + self.anon_sets.len() as u32;
    }
}
