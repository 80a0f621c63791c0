//! The iptables-compatible front: iptables' view of a rule ([`IptRule`], the equivalent of
//! iptables' own command state), its command-line syntax ([`parse`](mod@parse)), the exact text
//! `iptables -S` prints ([`print`](mod@print)), iptables' tables and built-in chains ([`tables`]), and
//! the encoding iptables-nft uses in those tables ([`compat`]).

pub mod args;
pub mod compat;
pub mod dns;
pub mod exec;
pub(crate) mod ext;
pub mod hosts;
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

/// Which iptables a backend answers as, where the two differ for the same command or print
/// the same rule differently (each difference is checked against the real tool by the
/// differential tests). Defined with iptables' syntax, so that the listings can ask it too;
/// the interpreter's questions are in [`crate::seam`], which re-exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// iptables-nft 1.8.9 (nf_tables).
    Nft,
    /// iptables-legacy 1.8.9 (x_tables through libiptc).
    Legacy,
}
