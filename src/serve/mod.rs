//! `xtnl serve`: a long-lived helper that keeps its nf_tables sessions open and takes
//! requests as JSON lines, over standard input/output or a unix socket (see docs/serve.md).
//!
//! Threads: one per client reads its lines (bounded), parses each request whole and hands it
//! to the engine ([`engine::Engine`]) through a bounded queue, then writes the response
//! before reading the next line, so a client's responses come in the order of its requests.
//! The engine thread executes requests one at a time (commits are serialised); a request is
//! executed only once its whole line has arrived, and each of its transactions is one
//! atomic batch, so a client that goes away mid-request leaves nothing half sent. SIGTERM
//! and SIGINT are taken by a thread of their own: the request in flight finishes and its
//! response is written, then the process exits 0.

#![deny(missing_docs)]

pub mod engine;
pub mod request;
mod server;

pub use server::{Listen, Options, SocketAccess, run};

/// The longest request line accepted (an `apply` document's limit, plus the envelope).
pub const MAX_REQUEST_BYTES: usize = crate::json::MAX_DOCUMENT_BYTES + 4096;
/// Requests waiting for the engine, all clients together; a client past that waits.
pub const MAX_QUEUE: usize = 1024;
/// Connections served at once; one more is told so and closed.
pub const MAX_CLIENTS: usize = 256;
