//! The iptables-compatible front: iptables' syntax (the rule view [`IptRule`], the grammar
//! [`parse`](mod@parse), the `-S` printer [`print`](mod@print), the tables [`tables`], the
//! restore file format [`restore_file`], the messages [`messages`]: the `xtnl-ipt` crate,
//! re-exported here under its old paths), and what the library adds on top of it: the
//! encoding iptables-nft uses in nf_tables tables ([`compat`]), the `-L` listings
//! ([`listing`]), nf_tables' executor of a parsed command ([`exec`]) and its restore loop
//! ([`restore`]).

pub(crate) use xtnl_ipt::xt_bridge;
pub use xtnl_ipt::{
    CtStates, Flavour, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange,
    Neg, PortsMatch, RejectWith, XtPayload,
};
pub use xtnl_ipt::{args, dns, hosts, messages, parse, print, protocols, restore_file, tables};

pub mod exec;
pub mod restore;
#[doc(inline)]
pub use xtnl_nft::ipt::{compat, listing};

/// The rule types under the path the files of this module used when `rule` was a sibling
/// of theirs (`super::rule::IptRule`).
mod rule {
    pub(crate) use xtnl_ipt::IptRule;
}

/// iptables-nft's native expressions for the few extensions it writes without nft_compat
/// (the `xtnl-nft` crate's `ipt::ext::native`), under the path the executor used when they
/// were a file of this module.
pub(crate) mod ext {
    pub(crate) use xtnl_nft::ipt::ext::native;
}
