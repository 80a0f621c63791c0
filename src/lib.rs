//! xtnl: Linux firewall changes straight through the kernel's nf_tables netlink interface.
//!
//! Layers, each depending only on the ones above it in this list (the order that holds is
//! `LAYERS` in tests/layers.rs, which fails when a lower module imports a higher one):
//! - [`wire`]: netlink and nf_tables message formats (bytes in, bytes out; no I/O).
//! - [`xt`]: x_tables extension payloads (the C structs of `-m comment`, `-j DNAT`, ...) that
//!   iptables-nft carries in nft_compat expressions and iptables-legacy in its blobs.
//! - [`transport`]: the NETLINK_NETFILTER socket, batches, acknowledgements and dumps.
//! - [`model`]: the backend-neutral rule model (matches and actions).
//! - [`nft`]: the nf_tables backend: model <-> expressions, and [`nft::Session`] with
//!   transactions, generation-id retry and listing.
//! - [`lock`]: the xtables lock, shared with iptables.
//! - [`ipt`]: the iptables front (command syntax, `-S`/`-L`, restore format, iptables-nft's
//!   encoding).
//! - [`seam`]: the backend seam: the one interpreter of iptables commands
//!   ([`seam::interpret`]) over [`seam::IptTable`], which both backends implement, and the
//!   [`seam::Enforcement`] (policy and audit) each backend is opened with.
//! - [`nathost`]: the NAT-host agent's operations (reservations, forwards, teardown, sweep),
//!   each one atomic transaction, written against a backend trait.
//! - [`legacy`]: the x_tables backend (iptables-legacy's get/setsockopt interface), and
//!   [`backend`]: the choice between it and nf_tables.
//! - [`policy`], [`privilege`], [`limits`]: what a caller may change (checked in
//!   [`nft::Session::transact`] before anything is sent), secure mode, audit lines, and the
//!   bounds on every input.
//!
//! [`serve`] is `xtnl serve`, the long-lived helper that takes JSON-line requests over
//! stdio or a unix socket (it uses the layers above as the binary's commands do).
//!
//! [`netns`] names another network namespace ([`netns::Netns`]) for sessions to act in.
//!
//! Not in the library: the command line (src/cli, a module of the `xtnl` binary), the
//! benchmark suite (src/bin/xtnl-bench, a binary of its own) and the scratch-namespace guards
//! of tests, demo and benches (src/scratch.rs).
//!
#![doc = include_str!("../docs/library-examples.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[doc(inline)]
pub use xtnl_backend as backend;
#[doc(inline)]
pub use xtnl_core::{error, limits, model};
pub mod ipt;
#[doc(inline)]
pub use xtnl_host::{lock, netns, privilege};
#[doc(inline)]
pub use xtnl_json as json;
#[doc(inline)]
pub use xtnl_legacy as legacy;
#[doc(inline)]
pub use xtnl_nathost as nathost;
#[doc(inline)]
pub use xtnl_nft as nft;
#[doc(inline)]
pub use xtnl_nft_front as nftjson;
#[doc(inline)]
pub use xtnl_policy as policy;
#[doc(inline)]
pub use xtnl_seam as seam;
#[doc(inline)]
pub use xtnl_serve as serve;
#[doc(inline)]
pub use xtnl_transport as transport;
#[doc(inline)]
pub use xtnl_wire as wire;
#[doc(inline)]
pub use xtnl_xt as xt;

pub use error::{Error, ErrorKind, OpFailure, Result};

/// The README's Rust examples, compiled (not run) by `cargo test --doc`, so that the library
/// example a newcomer reads is one that builds.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
