//! The libnftables JSON schema (libnftables-json(5)) as Rust types: what `nft -j list` prints
//! and what `nft -j -f` reads, with no kernel code. The bottom layer of xtnl's nft JSON front
//! (docs/nft-json.md); it depends on serde only.
//!
//! A document is `{"nftables": [...]}`: a [`Document`] of [`Item`]s, each the metainfo, a
//! command (`add`, `create`, `insert`, `replace`, `delete`, `destroy`, `flush`, `reset`,
//! `list`) wrapping an [`Object`], or a bare object (as `nft -j list` prints them). Rules hold
//! [`Statement`]s, which hold [`Expression`]s.
//!
//! Nothing is lost silently: a shape this crate does not type yet parses into an `Other`
//! variant ([`Item::Other`], [`Object::Other`], [`Statement::Other`], [`ExprObject::Other`])
//! that serializes back unchanged, and [`Document::unknowns`] names each of them, so that a
//! layer that acts on a document refuses it with a message naming the object.
//!
//! Building the document that `nft -j -f` reads for `add table inet demo`, a base chain and a
//! rule `tcp dport 22 accept`:
//!
//! ```
//! use xtnl_nft_json::*;
//!
//! let doc = Document::new(vec![
//!     Item::Add(Object::Table(Table::new(Family::Inet, "demo"))),
//!     Item::Add(Object::Chain(Chain {
//!         hook: Some("input".into()),
//!         kind: Some("filter".into()),
//!         prio: Some(0),
//!         policy: Some("accept".into()),
//!         ..Chain::new(Family::Inet, "demo", "input")
//!     })),
//!     Item::Add(Object::Rule(Rule::new(
//!         Family::Inet,
//!         "demo",
//!         "input",
//!         vec![
//!             Statement::Match(Match {
//!                 op: "==".into(),
//!                 left: Expression::payload("tcp", "dport"),
//!                 right: Expression::Number(22),
//!             }),
//!             Statement::Accept(()),
//!         ],
//!     ))),
//! ]);
//! let text = serde_json::to_string(&doc)?;
//! assert!(text.contains(r#"{"match":{"op":"==","left":{"payload":{"protocol":"tcp","field":"dport"}},"right":22}}"#));
//! assert!(text.contains(r#"{"accept":null}"#));
//! let back: Document = serde_json::from_str(&text)?;
//! assert_eq!(back, doc);
//! assert!(back.unknowns().is_empty());
//! # Ok::<(), serde_json::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod expr;
mod object;
mod stmt;
mod unknown;

pub use expr::*;
pub use object::*;
pub use stmt::*;
pub use unknown::Unknown;

use serde::{Deserialize, Serialize};

/// A whole libnftables JSON document: `{"nftables": [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// The items in order (nft applies a document's commands as one transaction).
    pub nftables: Vec<Item>,
}

impl Document {
    /// A document of these items.
    pub fn new(nftables: Vec<Item>) -> Self {
        Document { nftables }
    }

    /// Reads a document from JSON text.
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

    /// The document as compact JSON text. (It cannot fail for a document of these types,
    /// whose maps all have string keys; serde_json's signature keeps the error.)
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }

    /// Every part of the document that parsed into an `Other` variant (not typed by this
    /// crate), with its place: `nftables[3].rule.expr[1]`. Empty when the whole document is
    /// typed.
    pub fn unknowns(&self) -> Vec<Unknown> {
        let mut out = Vec::new();
        for (i, item) in self.nftables.iter().enumerate() {
            item.unknowns(&format!("nftables[{i}]"), &mut out);
        }
        out
    }
}

/// One element of the `nftables` array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Item {
    /// `{"metainfo": {...}}`: which nft wrote the document.
    Metainfo(Metainfo),
    /// `{"add": OBJECT}`: add, not an error if it exists.
    Add(Object),
    /// `{"create": OBJECT}`: add, an error if it exists.
    Create(Object),
    /// `{"insert": RULE}`: a rule at the start of its chain (or before `handle`/`position`).
    Insert(Object),
    /// `{"replace": RULE}`: the rule of this handle replaced.
    Replace(Object),
    /// `{"delete": OBJECT}`: delete, an error if missing.
    Delete(Object),
    /// `{"destroy": OBJECT}`: delete, not an error if missing.
    Destroy(Object),
    /// `{"flush": OBJECT}`: empty a table, chain, set, map or the ruleset.
    Flush(Object),
    /// `{"reset": OBJECT}`: zero counters or quotas.
    Reset(Object),
    /// `{"list": OBJECT}`: ask for a listing.
    List(Object),
    /// `{"rename": CHAIN}`: a chain renamed to its `newname`.
    Rename(Object),
    /// A bare object, as `nft -j list` prints them (`nft -j -f` reads it as `add`).
    #[serde(untagged)]
    Object(Object),
    /// Anything else, kept as it was read.
    #[serde(untagged)]
    Other(serde_json::Value),
}

/// `{"metainfo": {...}}`: the version of nft and of the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metainfo {
    /// nft's version, `1.0.6`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub version: Option<String>,
    /// nft's release name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub release_name: Option<String>,
    /// The schema's version (1).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub json_schema_version: Option<u64>,
}

/// An optional property that is present: its value, never `null`. A `null` where the schema
/// has a value is not read as an absent property (which would drop it when written again):
/// it fails, so that the object lands in its `Other` variant, kept as it was.
pub(crate) fn some<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Whether an optional property is absent (and so left out when written).
pub(crate) fn none<T>(value: &Option<T>) -> bool {
    value.is_none()
}
