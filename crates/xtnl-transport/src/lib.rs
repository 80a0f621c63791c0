//! The kernel transport: one NETLINK_NETFILTER socket, batches sent with one `sendmsg`
//! whatever their size, acknowledgements mapped back to operations, and dumps; the
//! connection a session uses ([`Conn`]) is that socket, a recording of it, or a replay of a
//! recording (tests of reads and plans without the kernel).

#![deny(missing_docs)]

mod batch;
mod conn;
mod pipeline;
mod recorder;
mod replay;
mod socket;

pub use batch::{Batch, BatchReply, CommitFailure};
pub use conn::Conn;
pub use pipeline::{DumpInterrupted, Pipelined, Request};
pub use recorder::{Recorder, Transport};
pub use replay::{Capture, Datagram, Recording, Replayer};
pub use socket::NlSocket;
