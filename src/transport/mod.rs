//! The kernel transport: one NETLINK_NETFILTER socket, batches sent with one `sendmsg`
//! whatever their size, acknowledgements mapped back to operations, and dumps.

#![deny(missing_docs)]

mod batch;
mod pipeline;
mod recorder;
mod socket;

pub use batch::{Batch, BatchReply, CommitFailure};
pub use pipeline::{DumpInterrupted, Pipelined, Request};
pub use recorder::{Recorder, Transport};
pub use socket::NlSocket;
