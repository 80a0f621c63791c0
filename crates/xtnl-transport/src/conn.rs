//! [`Conn`]: the connection a session talks through — the kernel's socket, the socket with
//! a recording of its traffic, or a replay of such a recording. An enum, not a trait object:
//! the socket's calls are direct (one branch each), and the requests, pipelines and dumps
//! are the same code on all three.

use xtnl_core::error::Result;

use super::pipeline::{self, DumpInterrupted, Link, Pipelined, Request};
use super::{Capture, NlSocket, Recording, Replayer, Transport};

/// Where a session's datagrams go.
pub enum Conn {
    /// The kernel's NETLINK_NETFILTER socket.
    Kernel(NlSocket),
    /// The kernel's socket, every datagram kept (to be replayed).
    Recording(Recording),
    /// A recording played back: no socket, no kernel, no privilege.
    Replay(Replayer),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Kernel(_) => "Conn::Kernel",
            Conn::Recording(_) => "Conn::Recording",
            Conn::Replay(_) => "Conn::Replay",
        })
    }
}

impl From<NlSocket> for Conn {
    fn from(s: NlSocket) -> Conn {
        Conn::Kernel(s)
    }
}

impl Conn {
    /// Opens the kernel's socket ([`NlSocket::open`]).
    pub fn open() -> Result<Conn> {
        NlSocket::open().map(Conn::Kernel)
    }

    /// Opens the kernel's socket and records its traffic from sequence number
    /// `first_seq + 1` on ([`Recording`]).
    pub fn recording(first_seq: u32) -> Result<Conn> {
        Ok(Conn::Recording(Recording::new(
            NlSocket::open()?,
            first_seq,
        )))
    }

    /// A connection that plays `capture` back ([`Replayer`]).
    pub fn replay(capture: Capture) -> Conn {
        Conn::Replay(Replayer::new(capture))
    }

    /// What a recording captured so far (`None` unless recording); see
    /// [`Recording::take_capture`].
    pub fn take_capture(&mut self) -> Option<Capture> {
        match self {
            Conn::Recording(r) => Some(r.take_capture()),
            _ => None,
        }
    }

    /// Captured datagrams a replay has not reached yet (0 when not replaying).
    pub fn unreplayed(&self) -> usize {
        match self {
            Conn::Replay(r) => r.remaining(),
            _ => 0,
        }
    }

    /// How many datagrams were sent: round trips to the kernel (or to the capture).
    pub fn round_trips(&self) -> u64 {
        match self {
            Conn::Kernel(s) => s.round_trips(),
            Conn::Recording(r) => r.sock.round_trips(),
            Conn::Replay(r) => r.round_trips(),
        }
    }

    /// Starts keeping a copy of every datagram sent (see [`Conn::take_recorded`]).
    pub fn record_sends(&mut self) {
        match self {
            Conn::Kernel(s) => s.record_sends(),
            Conn::Recording(r) => r.sock.record_sends(),
            Conn::Replay(r) => r.record_sends(),
        }
    }

    /// The datagrams sent since [`Conn::record_sends`] (recording goes on).
    pub fn take_recorded(&mut self) -> Vec<Vec<u8>> {
        match self {
            Conn::Kernel(s) => s.take_recorded(),
            Conn::Recording(r) => r.sock.take_recorded(),
            Conn::Replay(r) => r.tap.as_mut().map(std::mem::take).unwrap_or_default(),
        }
    }

    /// The kernel's socket, when there is one (not in a replay).
    pub fn kernel_socket(&mut self) -> Option<&mut NlSocket> {
        match self {
            Conn::Kernel(s) => Some(s),
            Conn::Recording(r) => Some(&mut r.sock),
            Conn::Replay(_) => None,
        }
    }

    /// Gives up the kernel's socket, if there is one.
    pub fn into_kernel_socket(self) -> Option<NlSocket> {
        match self {
            Conn::Kernel(s) => Some(s),
            Conn::Recording(r) => Some(r.sock),
            Conn::Replay(_) => None,
        }
    }

    /// One request, one reply message (e.g. GETGEN): its payload ([`NlSocket::request`]).
    pub fn request(&mut self, msg: u8, family: u8, what: &'static str) -> Result<Vec<u8>> {
        self.request_with(msg, family, |_| {}, what)
    }

    /// A request for one object: its reply's payload ([`NlSocket::request_with`]).
    pub fn request_with(
        &mut self,
        msg: u8,
        family: u8,
        attrs: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
        what: &'static str,
    ) -> Result<Vec<u8>> {
        match self {
            Conn::Kernel(s) => pipeline::request_with(s, msg, family, attrs, what),
            Conn::Recording(r) => pipeline::request_with(r, msg, family, attrs, what),
            Conn::Replay(r) => pipeline::request_with(r, msg, family, attrs, what),
        }
    }

    /// Several requests and at most one dump in one round trip ([`NlSocket::pipelined`]).
    pub fn pipelined(
        &mut self,
        gets: &[Request<'_>],
        dump: Option<Request<'_>>,
        each: impl FnMut(u16, &[u8]) -> Result<()>,
    ) -> Result<Pipelined> {
        match self {
            Conn::Kernel(s) => pipeline::run(s, gets, dump, each),
            Conn::Recording(r) => pipeline::run(r, gets, dump, each),
            Conn::Replay(r) => pipeline::run(r, gets, dump, each),
        }
    }

    /// A dump request ([`NlSocket::dump`]).
    pub fn dump(
        &mut self,
        msg: u8,
        family: u8,
        filter: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
        each: impl FnMut(u16, &[u8]) -> Result<()>,
    ) -> Result<std::result::Result<(), DumpInterrupted>> {
        match self {
            Conn::Kernel(s) => pipeline::dump(s, msg, family, filter, each),
            Conn::Recording(r) => pipeline::dump(r, msg, family, filter, each),
            Conn::Replay(r) => pipeline::dump(r, msg, family, filter, each),
        }
    }
}

impl Transport for Conn {
    fn next_seq(&mut self) -> u32 {
        match self {
            Conn::Kernel(s) => s.next_seq(),
            Conn::Recording(r) => r.sock.next_seq(),
            Conn::Replay(r) => r.next_seq(),
        }
    }
    fn skip_seqs(&mut self, n: u32) {
        match self {
            Conn::Kernel(s) => s.skip_seqs(n),
            Conn::Recording(r) => r.sock.skip_seqs(n),
            Conn::Replay(r) => r.skip_seqs(n),
        }
    }
    fn size_buffers(&mut self, send: usize, recv: usize) -> Result<()> {
        match self {
            Conn::Kernel(s) => s.size_buffers(send, recv),
            Conn::Recording(r) => r.sock.size_buffers(send, recv),
            Conn::Replay(_) => Ok(()),
        }
    }
    fn drain(&mut self) -> Result<()> {
        while Transport::recv(self, true)?.is_some() {}
        Ok(())
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            Conn::Kernel(s) => NlSocket::send(s, bytes),
            Conn::Recording(r) => r.send(bytes),
            Conn::Replay(r) => r.send(bytes),
        }
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        match self {
            Conn::Kernel(s) => NlSocket::recv(s, nonblocking),
            Conn::Recording(r) => r.recv(nonblocking),
            Conn::Replay(r) => r.recv(nonblocking),
        }
    }
}

impl Link for Recording {
    fn next_seq(&mut self) -> u32 {
        self.sock.next_seq()
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        Recording::send(self, bytes)
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        Recording::recv(self, nonblocking)
    }
}

impl Link for Replayer {
    fn next_seq(&mut self) -> u32 {
        Replayer::next_seq(self)
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        Replayer::send(self, bytes)
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        Replayer::recv(self, nonblocking)
    }
}
