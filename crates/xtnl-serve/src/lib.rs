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
mod limits;
pub mod request;
mod server;
pub mod thin;

pub use server::{Limits, Listen, Options, SocketAccess, run};

/// The longest request line accepted (an `apply` document's limit, plus the envelope).
pub const MAX_REQUEST_BYTES: usize = crate::json::MAX_DOCUMENT_BYTES + 4096;
/// Requests waiting for the engine, all clients together; a client past that waits.
pub const MAX_QUEUE: usize = 1024;
/// Connections served at once; one more is told so and closed.
pub const MAX_CLIENTS: usize = 256;
/// Lines up to this many bytes are read without a permit; a longer one needs one of the
/// service's [`LARGE_LINES`] permits (one per uid at a time; root's lines need none).
pub const SMALL_LINE: usize = 64 * 1024;
/// Lines longer than [`SMALL_LINE`] held at once, all callers together: a line that passes
/// [`SMALL_LINE`] when none is free (or its uid holds one already) is refused and the rest of
/// it read and dropped, never held.
pub const LARGE_LINES: usize = 4;
/// The longest line of a caller the policy does not name (its requests are answered with the
/// refusal, whatever they say).
pub const REFUSED_LINE: usize = 4096;
/// Connections of callers the policy does not name, at once; one more is told so and closed.
/// They are not counted against `--max-clients`.
pub const REFUSED_CLIENTS: usize = 16;
/// How long a connection of a caller the policy does not name may stay.
pub const REFUSED_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Connections of root (uid 0 or the service's own) served past `--max-clients`.
pub const ROOT_RESERVE: usize = 16;
/// File descriptors kept for the engine (sessions, the lock, x_tables sockets, audit) when
/// `--max-clients` is clamped to the descriptor limit; each client takes two.
pub const ENGINE_FDS: usize = 256;
/// The longest `id` of a request, as JSON text.
pub const MAX_ID_BYTES: usize = 1024;
