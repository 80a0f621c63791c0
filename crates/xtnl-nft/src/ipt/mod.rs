//! What nf_tables adds to iptables' syntax (the `xtnl-ipt` crate): the encoding iptables-nft
//! uses in nf_tables tables ([`compat`]), the `-L` listings read through a [`Session`]
//! ([`listing`]), and iptables-nft's native expressions for the few extensions it writes
//! without nft_compat ([`ext::native`]). The library re-exports them as `xtnl::ipt::compat`
//! and `xtnl::ipt::listing`.
//!
//! [`Session`]: crate::Session

pub mod compat;
pub mod listing;

// The paths these files used when they were modules of the library's `ipt`, next to the
// iptables syntax (`super::tables`, `crate::ipt::messages`, ...).
pub(crate) use xtnl_ipt::{
    CtStates, Flavour, IptRule, LogOpts, Multiport, MultiportDir, NatRange, Neg, hosts, messages,
    parse, print, protocols, tables, xt_bridge,
};

/// The rule types under the path these files used when `rule` was a sibling of theirs
/// (`super::rule::IptRule`).
mod rule {
    pub(crate) use xtnl_ipt::{
        IptMatch, IptRule, IptTarget, MultiportDir, NatRange, Neg, PortsMatch, RejectWith,
        XtPayload,
    };
}

/// iptables' extension registry (`xtnl-ipt`'s `ext`), with the native expressions of the
/// extensions iptables-nft writes without nft_compat ([`native`](ext::native)).
pub mod ext {
    pub(crate) use xtnl_ipt::ext::*;
    pub mod native;
}
