//! The nf_tables backend: the rule model encoded natively ([`codec`]), transactions of
//! table/chain/rule operations ([`Transaction`]) committed as one batch by a [`Session`], and
//! listing.

pub mod codec;
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
