//! What a batch needs from a connection ([`Transport`]), and a connection that records
//! instead of sending ([`Recorder`]): a transaction's batch can then be built, "committed"
//! and its bytes compared with captures, with no socket, no kernel and no root (the model is
//! google/nftables' recording connection).

use std::collections::VecDeque;

use xtnl_core::error::Result;
use xtnl_wire::netlink::{MsgWriter, NLM_F_ACK, NLMSG_ERROR, NlMsgs};

use super::NlSocket;

/// The operations [`super::Batch`] uses to go out and come back: sequence numbers, buffer
/// room, one send, and the replies queued by then.
pub trait Transport {
    /// A fresh sequence number (never 0).
    fn next_seq(&mut self) -> u32;
    /// Moves the sequence counter past `n` numbers a batch has taken for itself.
    fn skip_seqs(&mut self, n: u32);
    /// Makes room for `send` bytes out and `recv` bytes of replies.
    fn size_buffers(&mut self, send: usize, recv: usize) -> Result<()>;
    /// Drops replies still queued from earlier requests.
    fn drain(&mut self) -> Result<()>;
    /// Sends one datagram (a whole batch).
    fn send(&mut self, bytes: &[u8]) -> Result<()>;
    /// One queued reply datagram; `Ok(None)` when `nonblocking` and nothing is queued.
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>>;
}

impl Transport for NlSocket {
    fn next_seq(&mut self) -> u32 {
        NlSocket::next_seq(self)
    }
    fn skip_seqs(&mut self, n: u32) {
        NlSocket::skip_seqs(self, n)
    }
    fn size_buffers(&mut self, send: usize, recv: usize) -> Result<()> {
        NlSocket::size_buffers(self, send, recv)
    }
    fn drain(&mut self) -> Result<()> {
        NlSocket::drain(self)
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        NlSocket::send(self, bytes)
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        NlSocket::recv(self, nonblocking)
    }
}

/// A transport that keeps every datagram sent and answers each message that asks for an
/// acknowledgement with success (errno 0, the request's header echoed as with
/// `NETLINK_CAP_ACK`), as the kernel does for a batch it accepts.
#[derive(Debug, Default)]
pub struct Recorder {
    seq: u32,
    sent: Vec<Vec<u8>>,
    replies: VecDeque<Vec<u8>>,
    current: Vec<u8>,
}

impl Recorder {
    /// A recorder whose first sequence number is `first_seq + 1` (fixed, so that recorded
    /// bytes are the same on every run).
    pub fn new(first_seq: u32) -> Recorder {
        Recorder {
            seq: first_seq,
            ..Recorder::default()
        }
    }

    /// Every datagram sent so far, in order.
    pub fn sent(&self) -> &[Vec<u8>] {
        &self.sent
    }

    /// Takes the datagrams sent so far.
    pub fn take_sent(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.sent)
    }
}

impl Transport for Recorder {
    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }
    fn skip_seqs(&mut self, n: u32) {
        self.seq = self.seq.wrapping_add(n);
    }
    fn size_buffers(&mut self, _send: usize, _recv: usize) -> Result<()> {
        Ok(())
    }
    fn drain(&mut self) -> Result<()> {
        self.replies.clear();
        Ok(())
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let mut w = MsgWriter::with_capacity(64);
        for m in NlMsgs::new(bytes) {
            let m = m?;
            if m.flags() & NLM_F_ACK == 0 {
                continue;
            }
            // struct nlmsgerr: errno 0, then the request's header (CAP_ACK: header only).
            let mut payload = vec![0u8; 4];
            payload.extend_from_slice(&bytes_of_header(&m));
            w.message(NLMSG_ERROR, 0, m.seq(), &payload, |_| {});
        }
        let acks = w.into_bytes();
        if !acks.is_empty() {
            self.replies.push_back(acks);
        }
        self.sent.push(bytes.to_vec());
        Ok(())
    }
    fn recv(&mut self, _nonblocking: bool) -> Result<Option<&[u8]>> {
        match self.replies.pop_front() {
            Some(r) => {
                self.current = r;
                Ok(Some(&self.current))
            }
            None => Ok(None),
        }
    }
}

/// The 16-byte `struct nlmsghdr` of a message, as the kernel echoes it in an ACK.
fn bytes_of_header(m: &xtnl_wire::netlink::NlMsg<'_>) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..16].copy_from_slice(&m.bytes()[..16]);
    h
}
