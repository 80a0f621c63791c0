//! The iptables-compatible front: iptables' syntax (the rule view [`IptRule`], the grammar
//! [`parse`](mod@parse), the `-S` printer [`print`](mod@print), the tables [`tables`], the
//! restore file format [`restore_file`], the messages [`messages`]: the `xtnl-ipt` crate,
//! re-exported here under its old paths), and what the library adds on top of it: the
//! encoding iptables-nft uses in nf_tables tables ([`compat`]), the `-L` listings
//! ([`listing`]: the `xtnl-nft` crate's), nf_tables' executor of a parsed command
//! ([`exec`]) and its restore loop ([`restore`]: the `xtnl-seam` crate's).

pub use xtnl_ipt::{
    CtStates, Flavour, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange,
    Neg, PortsMatch, RejectWith, XtPayload,
};
pub use xtnl_ipt::{args, dns, hosts, messages, parse, print, protocols, restore_file, tables};

#[doc(inline)]
pub use xtnl_nft::ipt::{compat, listing};
#[doc(inline)]
pub use xtnl_seam::ipt::{exec, restore};
