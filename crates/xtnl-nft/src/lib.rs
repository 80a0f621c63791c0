//! The nf_tables engine: the rule model encoded natively ([`codec`]), transactions of
//! table/chain/rule operations ([`Transaction`]) committed as one batch by a [`Session`], and
//! listing; with iptables-nft's encoding of iptables rules ([`ipt::compat`]) and the `-L`
//! printer that reads through a session ([`ipt::listing`]). The library re-exports it as
//! `xtnl::nft` (and the two as `xtnl::ipt::compat`, `xtnl::ipt::listing`).
//!
//! A [`Session`] checks every transaction with its [`Guard`] and records it with its
//! [`Auditor`] before anything is sent: both are traits of this crate, which the policy above
//! it (the library's `xtnl::policy`) implements, so that the engine needs nothing above it.
//!
//! A transaction is bytes before it is a commit: [`Transaction::send_over`] encodes it as the
//! one batch a session sends, and over `xtnl_transport::Recorder` (which acknowledges every
//! message, as the kernel does a batch it accepts) that needs no socket and no root:
//!
//! ```
//! use xtnl_core::model::{Action, Dir, Family, L4Proto, Match, PortRange, Rule};
//! use xtnl_nft::{ChainSpec, TableRef, Transaction};
//! use xtnl_transport::Recorder;
//! use xtnl_wire::netlink::NlMsgs;
//!
//! let t = TableRef::new(Family::Ipv4, "demo");
//! let ssh = Rule::new()
//!     .with(Match::Protocol { proto: L4Proto::Tcp, negated: false })
//!     .with(Match::Port { dir: Dir::Destination, ports: PortRange::single(22), negated: false })
//!     .action(Action::Accept);
//! let mut tx = Transaction::new();
//! tx.ensure_table(&t)
//!     .create_chain(&t, ChainSpec::regular("work"))
//!     .append_rule(&t.chain("work"), ssh);
//!
//! let mut rec = Recorder::new(0);
//! tx.send_over(&mut rec)?;
//! // One datagram: BEGIN, the table, the chain, the rule, END.
//! assert_eq!(rec.sent().len(), 1);
//! assert_eq!(NlMsgs::new(&rec.sent()[0]).count(), 5);
//!
//! // An iptables rule in iptables' own tables is encoded as iptables-nft encodes it.
//! let args = xtnl_ipt::parse::split_words("-A INPUT -p tcp --dport 22 -j ACCEPT").unwrap();
//! let inv = xtnl_ipt::parse::parse(&args, Family::Ipv4)?;
//! let xtnl_ipt::parse::Command::Append { rule, .. } = inv.command else { unreachable!() };
//! let enc = xtnl_nft::ipt::compat::encode(&TableRef::new(Family::Ipv4, "filter"), &rule)?;
//! assert!(enc.exprs.iter().any(|e| e.to_string().contains("payload")));
//! # Ok::<(), xtnl_core::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `nft` module, and its files keep the
// `crate::nft::...`, `crate::model::...` paths they had there (as xtnl-ipt's did).
use crate as nft;
use xtnl_core::{Error, ErrorKind, OpFailure, Result, error, limits, model};
use xtnl_host::lock;
use xtnl_sys as sys;
use xtnl_transport as transport;
use xtnl_wire as wire;
use xtnl_xt as xt;

pub mod codec;
pub mod ipt;
mod listing;
mod message;
mod netns;
mod refs;
mod session;
pub mod set;
mod set_read;
pub mod set_rules;
mod set_types;
mod transaction;

pub use listing::{Chain, ListedRule, RawRule, Table, TableSnapshot};
pub use message::{AnonSetDef, Message, MessageBody, MessageVerb};
pub use session::{
    AuditOutcome, Auditor, Committed, Guard, Reader, Session, SessionBuilder, SessionStats,
    SetElements,
};
pub use transaction::{ChainRef, ChainSpec, EncodedRule, Op, RulePosition, TableRef, Transaction};
