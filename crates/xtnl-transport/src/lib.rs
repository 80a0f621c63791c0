//! The kernel transport: one NETLINK_NETFILTER socket, batches sent with one `sendmsg`
//! whatever their size, acknowledgements mapped back to operations, and dumps; the
//! connection a session uses ([`Conn`]) is that socket, a recording of it, or a replay of a
//! recording (tests of reads and plans without the kernel).
//!
//! It sits on `xtnl-wire` (the message formats) and `xtnl-core` (the error type); the
//! nf_tables engine above it (the library's `xtnl::nft`) builds its transactions into a
//! [`Batch`]. The library re-exports this crate as `xtnl::transport`.
//!
//! A batch can be built and "committed" with no socket, no kernel and no root, through a
//! [`Recorder`], which keeps what is sent and acknowledges what asks:
//!
//! ```
//! use xtnl_transport::{Batch, Recorder};
//! use xtnl_wire::netlink::NlMsgs;
//! use xtnl_wire::nftables::{NFTA_TABLE_NAME, msg, nfproto};
//!
//! let mut conn = Recorder::new(100);
//! let mut batch = Batch::new(&mut conn, Some(7)); // refused if the generation is not 7
//! batch.push(msg::NEWTABLE, nfproto::INET, 0, "add table inet demo".into(), |a| {
//!     a.strz(NFTA_TABLE_NAME, "demo");
//! });
//! let reply = batch.commit(&mut conn).map_err(|_| "commit failed")?;
//! assert!(reply.echoes.is_empty());
//!
//! // One datagram: BEGIN, the table, END, with the sequence numbers from 101 on.
//! let sent = conn.take_sent();
//! assert_eq!(sent.len(), 1);
//! let seqs: Vec<u32> = NlMsgs::new(&sent[0]).map(|m| m.map(|m| m.seq())).collect::<Result<_, _>>()?;
//! assert_eq!(seqs, [101, 102, 103]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

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
