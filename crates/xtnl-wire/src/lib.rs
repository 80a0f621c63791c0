//! Netlink and nf_tables wire formats: views over bytes, typed representations with `parse`
//! (checks meaning) and `emit` (cannot fail once the input is validated). No I/O here.
//!
//! Unknown codes are kept (`Unknown(n)`, [`expr::Expr::Other`]) so that a rule written by any
//! tool can be listed and printed, never silently shortened.
//!
//! The lowest layer of xtnl's data path (docs/layers.md): it imports no other xtnl crate, and
//! the library re-exports it as `xtnl::wire`. An nf_tables table as the kernel reads it, and
//! back:
//!
//! ```
//! use xtnl_wire::attr::AttrWriter;
//! use xtnl_wire::nftables::{TableRepr, nfproto};
//!
//! let table = TableRepr {
//!     family: nfproto::INET,
//!     name: "filter".into(),
//!     flags: Some(0),
//!     handle: None,
//!     use_count: None,
//! };
//! let (mut bytes, mut overflow) = (Vec::new(), false);
//! table.emit(&mut AttrWriter::new(&mut bytes, &mut overflow));
//! assert!(!overflow);
//! // NFTA_TABLE_NAME "filter" (NUL-terminated, padded to 4 bytes) comes first.
//! assert_eq!(&bytes[..12], b"\x0b\x00\x01\x00filter\x00\x00");
//! assert_eq!(TableRepr::parse(nfproto::INET, &bytes)?, table);
//! # Ok::<(), xtnl_wire::WireError>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod abi;
pub mod attr;
mod error;
pub mod expr;
pub mod netlink;
pub mod nftables;
pub mod object;
pub mod set;

pub use error::{WireError, WireErrorKind};
