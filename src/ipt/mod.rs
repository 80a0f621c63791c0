//! The iptables-compatible front: iptables' view of a rule ([`IptRule`], the equivalent of
//! iptables' own command state), its command-line syntax ([`parse`](mod@parse)), the exact text
//! `iptables -S` prints ([`print`](mod@print)), iptables' tables and built-in chains ([`tables`]), and
//! the encoding iptables-nft uses in those tables ([`compat`]).

pub mod args;
pub mod compat;
pub mod exec;
pub(crate) mod ext;
pub mod listing;
pub mod messages;
pub mod parse;
pub mod print;
pub mod protocols;
pub mod restore;
pub mod restore_file;
mod rule;
pub mod tables;
pub(crate) mod xt_bridge;

pub use rule::{
    CtStates, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange, Neg,
    PortsMatch, RejectWith, XtPayload,
};
