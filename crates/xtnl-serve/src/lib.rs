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
//!
//! The library re-exports this crate as `xtnl::serve`. Serving needs root; a request line
//! is parsed whole, unknown keys refused, without it:
//!
//! ```
//! use xtnl_serve::request::{Body, parse};
//!
//! let req = parse(br#"{"id": 5, "iptables": ["-t", "nat", "-N", "vcld-5206"]}"#)?;
//! assert_eq!(req.id, 5);
//! assert!(matches!(req.body, Body::Iptables(ref args) if args.len() == 4));
//! assert!(parse(br#"{"id": 6, "ping": {}, "pong": {}}"#).is_err());
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `serve` module, and its files keep the
// `crate::serve::...`, `crate::backend::...`, `crate::json::...` paths they had there (as
// the crates below did).
use crate as serve;
use xtnl_backend as backend;
use xtnl_core::{error, model};
use xtnl_host::{lock, netns, privilege};
use xtnl_json as json;
use xtnl_nathost as nathost;
use xtnl_nft as nft;
use xtnl_policy as policy;
use xtnl_seam as seam;
use xtnl_sys as sys;

/// iptables' syntax under the library's paths (`crate::ipt::parse`).
mod ipt {
    pub(crate) use xtnl_ipt::parse;
}

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
