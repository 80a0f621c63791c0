//! The backend-neutral core of xtnl: the rule model ([`model`]), the bounds on every input
//! ([`limits`]) and the one error type ([`error`]) that all of xtnl's layers return.
//!
//! They sit together because each needs the others: the model's constructors and checks
//! return [`Error`] and use [`limits`]' bounds, and [`limits`] words its refusals as
//! [`Error::InvalidInput`]. Below it are only the wire formats (`xtnl-wire`, for
//! [`error::Error::Netlink`] and the family numbers) and `xtnl-sys` (for
//! [`error::exit_on_closed_output`]); nothing here does I/O. The library re-exports the three
//! modules under their old paths (`xtnl::model`, `xtnl::limits`, `xtnl::error`), and
//! [`Error`], [`ErrorKind`], [`OpFailure`] and [`Result`] at its root. [`hash`] is the one
//! FNV-1a hasher of the layers' name-keyed maps.
//!
//! ```
//! use xtnl_core::model::{Action, Family, L4Proto, Rule};
//! use xtnl_core::{Error, ErrorKind};
//!
//! // tcp to 192.0.2.0/24 port 443, accepted and counted.
//! let rule = Rule::new()
//!     .protocol(L4Proto::Tcp)
//!     .destination("192.0.2.0/24".parse()?)
//!     .dport("443".parse()?)
//!     .counted()
//!     .action(Action::Accept);
//! rule.validate(Family::Ipv4)?;
//!
//! // A port needs a tcp or udp match before it: refused, with the reason.
//! let bad = Rule::new().dport("443".parse()?).action(Action::Accept);
//! let err = bad.validate(Family::Ipv4).unwrap_err();
//! assert_eq!(err.kind(), ErrorKind::InvalidInput);
//! assert!(matches!(err, Error::InvalidInput(_)));
//! # Ok::<(), Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod error;
pub mod hash;
pub mod limits;
pub mod model;

pub use error::{Error, ErrorKind, OpFailure, Result};
