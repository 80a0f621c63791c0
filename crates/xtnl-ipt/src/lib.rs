//! iptables' syntax: iptables' view of a rule ([`IptRule`], the equivalent of iptables' own
//! command state), its command-line grammar ([`parse`](mod@parse)), the exact text
//! `iptables -S` prints ([`print`](mod@print)), iptables' tables and built-in chains
//! ([`tables`]), the `iptables-restore` file format ([`restore_file`]), iptables' messages
//! ([`messages`]), and the extension registry ([`ext`]: `-m NAME`, `-j NAME`, each with its
//! options, parser and printer, over the payloads of `xtnl-xt`).
//!
//! No backend is here: the library's `xtnl::ipt` adds iptables-nft's encoding (`compat`),
//! the `-L` listings, the command executor and the restore loop above both backends, and
//! re-exports this crate's modules under their old paths (`xtnl::ipt::parse`, ...). Below it
//! are `xtnl-core` (the model, bounds, error), `xtnl-wire`, `xtnl-xt`, `xtnl-host` (the `-w`
//! wait policy) and `xtnl-transport` (the ipset name lookups of `-m set`).
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_ipt::parse::{Command, parse};
//! use xtnl_ipt::print::append_line;
//!
//! // An iptables command line, parsed as iptables parses it, and its rule printed back the
//! // way `iptables -S` prints it (iptables' own order of the options).
//! let words = ["-A", "INPUT", "-p", "tcp", "--dport", "22", "-m", "comment", "--comment",
//!              "ssh", "-j", "ACCEPT"];
//! let parsed = parse(&words.map(String::from), Family::Ipv4)?;
//! let Command::Append { chain, rule } = &parsed.command else { panic!("not -A") };
//! let line = append_line(chain, rule, false);
//! assert_eq!(line, "-A INPUT -p tcp -m tcp --dport 22 -m comment --comment ssh -j ACCEPT");
//!
//! // A bad option is refused with iptables' words, and nothing else happens.
//! assert!(parse(&["-A", "INPUT", "--dport", "22"].map(String::from), Family::Ipv4).is_err());
//! # Ok::<(), xtnl_core::Error>(())
//! ```
//!
//! The files keep the paths they had as the library's `ipt` module (`crate::ipt::parse`,
//! `crate::model`, `crate::xt`, ...) through the private aliases below, so that edits other
//! branches make to them merge without path changes; rewriting them to direct paths is a
//! mechanical follow-up once those branches are in.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths (see the crate docs): `crate::ipt` is this crate.
use crate as ipt;
use xtnl_core::{Error, ErrorKind, Result, error, limits, model};
use xtnl_host::lock;
#[cfg(feature = "extensions")]
use xtnl_transport as transport;
use xtnl_wire as wire;
use xtnl_xt as xt;

pub mod args;
pub mod dns;
pub mod ext;
pub mod hosts;
pub mod messages;
pub mod parse;
pub mod print;
pub mod protocols;
pub mod restore_file;
mod rule;
pub mod tables;
pub mod xt_bridge;

pub use rule::{
    CtStates, IptMatch, IptRule, IptTarget, LogOpts, Multiport, MultiportDir, NatRange, Neg,
    PortsMatch, RejectWith, XtPayload,
};

/// Which iptables a backend answers as, where the two differ for the same command or print
/// the same rule differently (each difference is checked against the real tool by the
/// differential tests). Defined with iptables' syntax, so that the listings can ask it too;
/// the interpreter's questions are in the library's `xtnl::seam`, which re-exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// iptables-nft 1.8.9 (nf_tables).
    Nft,
    /// iptables-legacy 1.8.9 (x_tables through libiptc).
    Legacy,
}
