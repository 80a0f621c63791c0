//! nft's own JSON (libnftables-json(5)) against the kernel, without nft or libnftables
//! (issue 26): [`list`] reads the ruleset into an [`xtnl_nft_json::Document`] as `nft -j
//! list` prints it, and [`apply`] commits a document's commands as one nf_tables batch
//! through a [`Session`], with its generation-id retry, policy and audit, as `nft -j -f` does
//! (all or nothing). The rule statements and set values go through the `xtnl-nft-rules`
//! codec; this crate maps objects and commands to messages ([`xtnl_nft::Message`]). The
//! library re-exports it as `xtnl::nftjson`.
//!
//! What is covered and what is refused: docs/nft-json.md.
//!
//! Listing and applying need a [`Session`] (root, a network namespace); printing does not. A
//! document printed as `nft -j` prints it (jansson's layout, on one line):
//!
//! ```
//! use xtnl_nft_front::to_nft_text;
//! use xtnl_nft_json::Document;
//!
//! let doc: Document = serde_json::from_str(
//!     r#"{"nftables": [{"add": {"table": {"family": "inet", "name": "demo"}}}]}"#,
//! )?;
//! assert_eq!(
//!     to_nft_text(&doc)?,
//!     r#"{"nftables": [{"add": {"table": {"family": "inet", "name": "demo"}}}]}"#
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `nftjson` module, and its files keep the
// `crate::nft::...`, `crate::wire::...` paths they had there (as the crates below did).
use xtnl_core::{error, model};
use xtnl_nft as nft;
use xtnl_wire as wire;

mod apply;
mod list;
mod objects;
mod print;
mod sets;

use xtnl_nft_json::Document;

use crate::error::{Error, Result};
use crate::nft::{Committed, Session};

pub use apply::plan;
pub use list::{Listing, read};
pub use print::to_nft_text;

/// The version words `nft -j list` puts in its `metainfo` (this implementation prints what
/// nftables 1.0.6 prints, the version it is compared against).
pub const NFT_VERSION: &str = "1.0.6";
/// nft's release name of [`NFT_VERSION`].
pub const NFT_RELEASE_NAME: &str = "Lester Gooch #5";
/// The JSON schema version nft prints.
pub const JSON_SCHEMA_VERSION: u64 = 1;

/// Reads what `listing` names from the kernel, as `nft -j list` prints it.
///
/// # Errors
/// An [`Error`] when the kernel cannot be read, when the named table, chain or set does not
/// exist, or when part of the ruleset cannot be printed whole (a rule, set or family the
/// codec does not support is named, never printed half).
pub fn list(session: &mut Session, listing: &Listing) -> Result<Document> {
    session.read(|r| read(r, listing))
}

/// Applies every command of `doc` in one nf_tables batch: all of them take effect, or none
/// does. The plan reads the ruleset (sets whose elements or rules refer to, rule handles by
/// index) and is planned again if the ruleset changed before the commit.
///
/// # Errors
/// [`Error::InvalidInput`] naming the item for a shape the types or the codec do not
/// support (nothing is sent), or the kernel's refusal naming the command.
pub fn apply(session: &mut Session, doc: &Document) -> Result<Committed<()>> {
    let unknown = doc.unknowns();
    if !unknown.is_empty() {
        let list: Vec<String> = unknown.iter().map(ToString::to_string).collect();
        return Err(Error::InvalidInput(format!(
            "the document has shapes xtnl does not understand: {}",
            list.join("; ")
        )));
    }
    session.transact(|r| Ok((plan(r, doc)?, ())))
}

/// [`apply`] as a method of the session (`session.apply_nft_json(&doc)`, with this trait in
/// scope): the session is the nf_tables engine's (the `xtnl-nft` crate), which cannot know
/// nft's JSON front above it, so the method is this trait's.
pub trait ApplyNftJson {
    /// Commits an nft JSON document ([`Document`], what `nft -j -f` reads) in one batch,
    /// with this session's generation-id retry, policy and audit: see [`apply`].
    ///
    /// # Errors
    /// As [`apply`].
    fn apply_nft_json(&mut self, doc: &Document) -> Result<Committed<()>>;
}

impl ApplyNftJson for Session {
    fn apply_nft_json(&mut self, doc: &Document) -> Result<Committed<()>> {
        apply(self, doc)
    }
}
