//! Test fixtures for the crates above this one (cargo feature `test-fixtures`, off by
//! default): the NAT host's test policy, the one copy every test of the workspace reads,
//! kept in this package (`fixtures/nat_host_policy.toml`) so that a published package of a
//! crate whose unit tests read it still finds it. A crate's tests take it through a
//! dev-dependency with the feature,
//!
//! ```toml
//! [dev-dependencies]
//! xtnl-policy = { workspace = true, features = ["test-fixtures"] }
//! ```
//!
//! which cargo's resolver turns on only in builds of test, bench and example targets, never
//! in a normal build of the library or the binary.
//!
//! ```
//! use std::path::Path;
//! use xtnl_policy::{Policy, fixtures};
//!
//! let p = Policy::parse(&fixtures::nat_host_policy(4), Path::new("p.toml"))?;
//! assert_eq!(p.max_ops, Some((4, 1)));
//! let lines: Vec<usize> = p.allow.iter().map(|a| a.line).collect();
//! assert_eq!(lines, [3, 9]);
//! # Ok::<(), xtnl_core::Error>(())
//! ```

/// The NAT host's test policy: reservation chains `vcld-*` made, flushed, deleted and
/// filled; PREROUTING holding only jumps to them. Its `[[allow]]` entries start on lines 1
/// and 7.
pub const NAT_HOST_POLICY: &str = include_str!("../fixtures/nat_host_policy.toml");

/// [`NAT_HOST_POLICY`] behind `max_ops = N` and a blank line: its entries start on lines 3
/// and 9.
pub fn nat_host_policy(max_ops: usize) -> String {
    format!("max_ops = {max_ops}\n\n{NAT_HOST_POLICY}")
}
