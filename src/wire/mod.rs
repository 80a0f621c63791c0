//! Netlink and nf_tables wire formats: views over bytes, typed representations with `parse`
//! (checks meaning) and `emit` (cannot fail once the input is validated). No I/O here.
//!
//! Unknown codes are kept (`Unknown(n)`, [`expr::Expr::Other`]) so that a rule written by any
//! tool can be listed and printed, never silently shortened.

#![deny(missing_docs)]

mod abi;
pub mod attr;
mod error;
pub mod expr;
pub mod netlink;
pub mod nftables;
pub mod set;

pub use error::{WireError, WireErrorKind};
