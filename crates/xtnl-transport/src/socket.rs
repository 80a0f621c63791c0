use std::io;
use std::os::fd::AsFd;

use netlink_sys::{Socket, protocols::NETLINK_NETFILTER};
use nix::sys::socket::{setsockopt, sockopt};

use xtnl_core::error::{Error, Result};

use super::pipeline::{DumpInterrupted, Link, Pipelined, Request};

/// Large enough for any datagram the kernel sends us: dump skbs are capped at 32 KiB and
/// coalesced notifications at a page or two; with NETLINK_CAP_ACK errors are small.
const RECV_BUF: usize = 64 * 1024;
const DEFAULT_BUF: usize = 256 * 1024;
/// The longest a blocking receive waits. The kernel answers a request inside the `sendmsg`
/// that carries it (and makes each part of a dump inside the `recvmsg` that asks for it), so
/// an answer is either queued at once or never comes: this bound is the last resort that
/// turns a reply the code wrongly waits for into an error instead of a hang.
const RECV_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A NETLINK_NETFILTER socket bound to a kernel-assigned port id.
pub struct NlSocket {
    sock: Socket,
    seq: u32,
    buf: Vec<u8>,
    sndbuf: usize,
    rcvbuf: usize,
    /// Datagrams sent: each is one round trip (a request, a pipelined group, or a batch).
    sends: std::cell::Cell<u64>,
    /// Copies of the datagrams sent, while [`NlSocket::record_sends`] is on (tests capture
    /// what the kernel accepted).
    tap: std::cell::RefCell<Option<Vec<Vec<u8>>>>,
}

impl NlSocket {
    /// Opens a NETLINK_NETFILTER socket in the calling thread's network namespace, with
    /// extended and capped acknowledgements (`NETLINK_EXT_ACK`, `NETLINK_CAP_ACK`) and the
    /// default buffer sizes; EPERM becomes [`Error::NotPermitted`].
    pub fn open() -> Result<Self> {
        let mut sock = Socket::new(NETLINK_NETFILTER)
            .map_err(|e| Error::netlink("socket(NETLINK_NETFILTER)", e))?;
        sock.bind_auto()
            .map_err(|e| Error::netlink("bind netlink socket", e))?;
        // Errors carry the kernel's text, and echo only the failing message's header.
        sock.set_ext_ack(true)
            .map_err(|e| Error::netlink("NETLINK_EXT_ACK", e))?;
        sock.set_cap_ack(true)
            .map_err(|e| Error::netlink("NETLINK_CAP_ACK", e))?;
        let timeout = nix::sys::time::TimeVal::new(RECV_TIMEOUT.as_secs() as _, 0);
        setsockopt(&sock.as_fd(), sockopt::ReceiveTimeout, &timeout)
            .map_err(|e| Error::netlink("SO_RCVTIMEO", e.into()))?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(1);
        let mut s = NlSocket {
            sock,
            seq: seed | 1,
            buf: Vec::with_capacity(RECV_BUF),
            sndbuf: 0,
            rcvbuf: 0,
            sends: std::cell::Cell::new(0),
            tap: std::cell::RefCell::new(None),
        };
        s.size_buffers(DEFAULT_BUF, DEFAULT_BUF)?;
        Ok(s)
    }

    /// A fresh sequence number (never 0, so that it never matches kernel notifications).
    pub fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            self.seq = 1;
        }
        self.seq
    }

    /// Restarts the sequence counter (a recording starts from a fixed number, so that a
    /// replay sends the same bytes).
    pub(super) fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// The sequence counter (the last number handed out).
    pub(super) fn seq(&self) -> u32 {
        self.seq
    }

    /// Moves the sequence counter past `n` numbers a batch has taken for itself.
    pub fn skip_seqs(&mut self, n: u32) {
        self.seq = self.seq.wrapping_add(n);
    }

    /// Grows the socket buffers so that a batch of `send` bytes goes out in one `sendmsg`
    /// and its `recv` bytes of replies fit without loss. Uses the *FORCE variants (we hold
    /// CAP_NET_ADMIN, or nothing here works) so that `net.core.[rw]mem_max` do not cap them.
    pub fn size_buffers(&mut self, send: usize, recv: usize) -> Result<()> {
        let fd = self.sock.as_fd();
        if send > self.sndbuf {
            let want = send.saturating_add(64 * 1024).min(i32::MAX as usize / 2);
            setsockopt(&fd, sockopt::SndBufForce, &want)
                .or_else(|_| setsockopt(&fd, sockopt::SndBuf, &want))
                .map_err(|e| Error::netlink("SO_SNDBUF", e.into()))?;
            self.sndbuf = want;
        }
        if recv > self.rcvbuf {
            let want = recv.saturating_add(64 * 1024).min(i32::MAX as usize / 2);
            setsockopt(&fd, sockopt::RcvBufForce, &want)
                .or_else(|_| setsockopt(&fd, sockopt::RcvBuf, &want))
                .map_err(|e| Error::netlink("SO_RCVBUF", e.into()))?;
            self.rcvbuf = want;
        }
        Ok(())
    }

    /// Sends a buffer of messages in one `sendmsg`: the kernel sees it as one batch.
    pub fn send(&self, bytes: &[u8]) -> Result<()> {
        self.sends.set(self.sends.get() + 1);
        if let Some(tap) = self.tap.borrow_mut().as_mut() {
            tap.push(bytes.to_vec());
        }
        loop {
            match self.sock.send(bytes, 0) {
                Ok(n) if n == bytes.len() => return Ok(()),
                Ok(n) => {
                    return Err(Error::Netlink {
                        context: "send batch",
                        source: io::Error::other(format!(
                            "short send: {n} of {} bytes",
                            bytes.len()
                        )),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::netlink("send batch", e)),
            }
        }
    }

    /// Receives one datagram; `Ok(None)` when `nonblocking` and nothing is queued.
    pub fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        let flags = libc::MSG_TRUNC | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
        loop {
            self.buf.clear();
            self.buf.reserve(RECV_BUF);
            match self.sock.recv(&mut self.buf, flags) {
                Ok(n) if n > self.buf.len() => {
                    return Err(Error::Netlink {
                        context: "receive",
                        source: io::Error::other(format!("datagram of {n} bytes truncated")),
                    });
                }
                Ok(_) => return Ok(Some(&self.buf)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if nonblocking && e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(Error::Netlink {
                        context: "receive",
                        source: io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!(
                                "no answer from the kernel within {} s",
                                RECV_TIMEOUT.as_secs()
                            ),
                        ),
                    });
                }
                Err(e) => return Err(Error::netlink("receive", e)),
            }
        }
    }

    /// Starts keeping a copy of every datagram sent (see [`NlSocket::take_recorded`]).
    pub fn record_sends(&mut self) {
        self.tap.replace(Some(Vec::new()));
    }

    /// The datagrams sent since [`NlSocket::record_sends`] (recording goes on).
    pub fn take_recorded(&mut self) -> Vec<Vec<u8>> {
        self.tap
            .borrow_mut()
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// How many datagrams this socket has sent: its round trips to the kernel.
    pub fn round_trips(&self) -> u64 {
        self.sends.get()
    }

    /// Drops whatever replies are still queued (after an error, the kernel may have queued
    /// more than we waited for).
    pub fn drain(&mut self) -> Result<()> {
        while self.recv(true)?.is_some() {}
        Ok(())
    }

    /// One request, one reply message (e.g. GETGEN). Returns the reply's payload bytes.
    pub fn request(&mut self, msg: u8, family: u8, what: &'static str) -> Result<Vec<u8>> {
        self.request_with(msg, family, |_| {}, what)
    }

    /// A request for one object (a GET without NLM_F_DUMP): its reply's payload. A missing
    /// object is `Err` with kind NotFound.
    pub fn request_with(
        &mut self,
        msg: u8,
        family: u8,
        attrs: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
        what: &'static str,
    ) -> Result<Vec<u8>> {
        super::pipeline::request_with(self, msg, family, attrs, what)
    }

    /// Several single-object requests, and optionally one dump after them, sent in one
    /// `sendmsg` and answered in one go: one round trip where asking in turn would take one
    /// each. The kernel answers the messages of a datagram in order and goes on after a
    /// failed one; only one dump can run on a socket at a time, hence at most one, last.
    ///
    /// Returns each request's reply payload (or its error) in order, and the dump's outcome;
    /// the dump's messages go to `each` as in [`NlSocket::dump`]. Every answer is accounted
    /// for and none is awaited that the kernel will not send: without CAP_NET_ADMIN the
    /// kernel answers the first message with EPERM and drops the rest, which is
    /// [`Error::NotPermitted`] at once (the accounting: `pipeline.rs`).
    pub fn pipelined(
        &mut self,
        gets: &[Request<'_>],
        dump: Option<Request<'_>>,
        each: impl FnMut(u16, &[u8]) -> Result<()>,
    ) -> Result<Pipelined> {
        super::pipeline::run(self, gets, dump, each)
    }

    /// A dump request: every reply message's payload, in order, handed to `each`. An
    /// interrupted dump (NLM_F_DUMP_INTR, or EINTR) is `Ok(Err(DumpInterrupted))`.
    pub fn dump(
        &mut self,
        msg: u8,
        family: u8,
        filter: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
        each: impl FnMut(u16, &[u8]) -> Result<()>,
    ) -> Result<std::result::Result<(), DumpInterrupted>> {
        super::pipeline::dump(self, msg, family, filter, each)
    }

    /// Gives up the socket, for `sys::close_in_detached_process`.
    pub fn into_socket(self) -> Socket {
        self.sock
    }
}

impl Link for NlSocket {
    fn next_seq(&mut self) -> u32 {
        NlSocket::next_seq(self)
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        NlSocket::send(self, bytes)
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        NlSocket::recv(self, nonblocking)
    }
}
