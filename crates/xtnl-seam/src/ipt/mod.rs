//! nf_tables' side of the seam: the executor of a parsed iptables command through a
//! [`Session`](crate::nft::Session) ([`exec`]), its restore loop ([`restore`]) and the
//! session as a [`RulesetBackend`](crate::RulesetBackend) of the NAT-host operations
//! ([`ruleset`]), over
//! iptables' syntax (the `xtnl-ipt` crate) and iptables-nft's encoding and `-L` printer (the
//! `xtnl-nft` crate's `ipt`), which this module re-exports under the paths these files used
//! in the library's `ipt` (`crate::ipt::parse`, `super::compat`, ...). The library
//! re-exports [`exec`] and [`restore`] as `xtnl::ipt::{exec, restore}`.

pub mod exec;
pub mod restore;
pub mod ruleset;

#[doc(no_inline)]
pub use xtnl_ipt::{
    Flavour, IptMatch, IptRule, IptTarget, messages, parse, print, restore_file, tables,
};
#[doc(no_inline)]
pub use xtnl_nft::ipt::{compat, listing};

/// The rule types under the path the executor used when `rule` was a sibling of its file
/// (`super::rule::IptRule`).
mod rule {
    pub(crate) use xtnl_ipt::IptRule;
}

/// iptables-nft's native expressions for the few extensions it writes without nft_compat
/// (the `xtnl-nft` crate's `ipt::ext::native`), under the path the executor used when they
/// were a file of the library's `ipt`.
mod ext {
    pub(crate) use xtnl_nft::ipt::ext::native;
}
