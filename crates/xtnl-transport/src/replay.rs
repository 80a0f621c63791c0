//! Captures of a connection's traffic ([`Capture`]), taken from the kernel by a
//! [`Recording`] (the real socket, every datagram kept) and served back by a [`Replayer`]
//! (no socket, no kernel, no root): the session's reads, plans, retries and error
//! attribution then run on the kernel's own replies. The model is google/nftables' test
//! connection (sends compared, replies scripted); the replies here are captured, not written.
//!
//! A capture is text: `seq N` (the sequence number the connection started from, so that
//! requests are the same bytes on every run), then one line per datagram in the order they
//! crossed, `> HEX` sent and `< HEX` received; `#` starts a comment line.

use std::fmt::Write as _;
use std::io;

use xtnl_core::error::{Error, Result};
use xtnl_wire::netlink::NlMsgs;

use super::NlSocket;

/// One datagram of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Datagram {
    /// Sent to the kernel (requests, or a whole batch).
    Sent(Vec<u8>),
    /// Received from the kernel.
    Received(Vec<u8>),
}

/// The traffic of one connection: where its sequence numbers started and every datagram
/// sent and received, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Capture {
    /// The sequence counter before the first request (the first request has `first_seq + 1`).
    pub first_seq: u32,
    /// The datagrams, in the order they crossed.
    pub datagrams: Vec<Datagram>,
}

impl Capture {
    /// Parses a capture's text (see the module's documentation).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the line that is not `seq N`, `> HEX`, `< HEX`, a
    /// comment or blank.
    pub fn parse(text: &str) -> Result<Capture> {
        let mut c = Capture::default();
        let mut seen_seq = false;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            let bad = |what: &str| Error::InvalidInput(format!("capture line {}: {what}", n + 1));
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(s) = line.strip_prefix("seq ") {
                c.first_seq = s
                    .trim()
                    .parse()
                    .map_err(|_| bad("`seq` wants a 32-bit number"))?;
                seen_seq = true;
            } else if let Some(h) = line.strip_prefix("> ") {
                c.datagrams
                    .push(Datagram::Sent(unhex(h).ok_or_else(|| bad("bad hex"))?));
            } else if let Some(h) = line.strip_prefix("< ") {
                c.datagrams
                    .push(Datagram::Received(unhex(h).ok_or_else(|| bad("bad hex"))?));
            } else {
                return Err(bad("expected `seq N`, `> HEX`, `< HEX` or `# comment`"));
            }
        }
        if !seen_seq {
            return Err(Error::InvalidInput(
                "capture has no `seq N` line (the sequence number it started from)".into(),
            ));
        }
        Ok(c)
    }

    /// The capture as text, with `comment` (any number of lines) at the top.
    pub fn to_text(&self, comment: &str) -> String {
        let mut out = String::new();
        for l in comment.lines() {
            let _ = writeln!(out, "# {l}");
        }
        let _ = writeln!(out, "seq {}", self.first_seq);
        for d in &self.datagrams {
            let (mark, bytes) = match d {
                Datagram::Sent(b) => ('>', b),
                Datagram::Received(b) => ('<', b),
            };
            let _ = writeln!(out, "{mark} {}", hex(bytes));
        }
        out
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim();
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The real socket, keeping a copy of every datagram that crosses it: a [`Capture`] of
/// what the kernel answered, to replay later with a [`Replayer`].
pub struct Recording {
    pub(super) sock: NlSocket,
    pub(super) capture: Capture,
}

impl Recording {
    /// Wraps `sock`, restarting its sequence numbers from `first_seq` so that the requests
    /// of a replay are the same bytes.
    pub fn new(mut sock: NlSocket, first_seq: u32) -> Recording {
        sock.set_seq(first_seq);
        Recording {
            sock,
            capture: Capture {
                first_seq,
                datagrams: Vec::new(),
            },
        }
    }

    /// Takes what was captured so far (the recording goes on, from an empty capture whose
    /// `first_seq` is the socket's current counter).
    pub fn take_capture(&mut self) -> Capture {
        let next = Capture {
            first_seq: self.sock.seq(),
            datagrams: Vec::new(),
        };
        std::mem::replace(&mut self.capture, next)
    }

    pub(super) fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.capture.datagrams.push(Datagram::Sent(bytes.to_vec()));
        self.sock.send(bytes)
    }

    pub(super) fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        let got = self.sock.recv(nonblocking)?;
        if let Some(d) = &got {
            self.capture.datagrams.push(Datagram::Received(d.to_vec()));
        }
        Ok(got)
    }
}

/// A connection that serves a [`Capture`]'s replies: each datagram sent must be the next
/// one the capture sent, byte for byte (else the send fails with a report of the first
/// difference: which datagram, which message, which header fields, which byte), and each
/// receive gets the next captured reply. A blocking receive with no captured reply next is
/// an error, where the real socket would wait.
#[derive(Debug)]
pub struct Replayer {
    capture: Capture,
    next: usize,
    seq: u32,
    sends: u64,
    current: Vec<u8>,
    /// Copies of the datagrams sent, while [`Replayer::record_sends`] is on.
    pub(super) tap: Option<Vec<Vec<u8>>>,
}

impl Replayer {
    /// A replayer of `capture`, its sequence numbers starting where the capture's did.
    pub fn new(capture: Capture) -> Replayer {
        Replayer {
            seq: capture.first_seq,
            capture,
            next: 0,
            sends: 0,
            current: Vec::new(),
            tap: None,
        }
    }

    /// How many captured datagrams have not been replayed yet (0 once the code did all the
    /// capture did).
    pub fn remaining(&self) -> usize {
        self.capture.datagrams.len() - self.next
    }

    /// How many datagrams were sent: round trips, as [`NlSocket::round_trips`] counts them.
    pub fn round_trips(&self) -> u64 {
        self.sends
    }

    /// Starts keeping a copy of every datagram sent.
    pub fn record_sends(&mut self) {
        self.tap = Some(Vec::new());
    }

    pub(super) fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        if self.seq == 0 {
            self.seq = 1;
        }
        self.seq
    }

    pub(super) fn skip_seqs(&mut self, n: u32) {
        self.seq = self.seq.wrapping_add(n);
    }

    pub(super) fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let sends = self.sends + 1;
        let expected = match self.capture.datagrams.get(self.next) {
            Some(Datagram::Sent(b)) => b,
            Some(Datagram::Received(_)) => {
                return Err(replay_error(format!(
                    "send #{sends} ({}) where the capture still has a reply to read (datagram {} \
                     of the capture is a reply)",
                    describe(bytes),
                    self.next + 1
                )));
            }
            None => {
                return Err(replay_error(format!(
                    "send #{sends} ({}) after the end of the capture",
                    describe(bytes)
                )));
            }
        };
        if expected != bytes {
            return Err(replay_error(mismatch(sends, expected, bytes)));
        }
        self.next += 1;
        self.sends = sends;
        if let Some(tap) = &mut self.tap {
            tap.push(bytes.to_vec());
        }
        Ok(())
    }

    pub(super) fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        match self.capture.datagrams.get(self.next) {
            Some(Datagram::Received(b)) => {
                self.current.clone_from(b);
                self.next += 1;
                Ok(Some(&self.current))
            }
            _ if nonblocking => Ok(None),
            Some(Datagram::Sent(b)) => Err(replay_error(format!(
                "waiting for a reply after send #{} where the capture sends next ({})",
                self.sends,
                describe(b)
            ))),
            None => Err(replay_error(format!(
                "waiting for a reply after send #{}: the capture has ended",
                self.sends
            ))),
        }
    }
}

fn replay_error(msg: String) -> Error {
    Error::Netlink {
        context: "replay",
        source: io::Error::other(msg),
    }
}

/// The headers of a datagram's messages, `type/flags/seq/len` each, for reports.
fn describe(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, m) in NlMsgs::new(bytes).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match m {
            Ok(m) => {
                let _ = write!(
                    out,
                    "type {:#06x} flags {:#06x} seq {} len {}",
                    m.ty(),
                    m.flags(),
                    m.seq(),
                    m.bytes().len()
                );
            }
            Err(e) => {
                let _ = write!(out, "unparsable ({e})");
                break;
            }
        }
    }
    if out.is_empty() {
        out.push_str("no messages");
    }
    out
}

/// Where a sent datagram first differs from the captured one.
fn mismatch(send: u64, expected: &[u8], got: &[u8]) -> String {
    let mut exp = NlMsgs::new(expected);
    let mut sent = NlMsgs::new(got);
    let mut index = 0usize;
    loop {
        match (exp.next(), sent.next()) {
            (Some(Ok(e)), Some(Ok(s))) if e.bytes() == s.bytes() => index += 1,
            (Some(Ok(e)), Some(Ok(s))) => {
                let (e, s) = (e.bytes(), s.bytes());
                let at = e
                    .iter()
                    .zip(s)
                    .position(|(a, b)| a != b)
                    .unwrap_or(e.len().min(s.len()));
                return format!(
                    "send #{send} differs from the capture at message {index}, byte {at}: sent \
                     [{}] {}, captured [{}] {} (the first 16 bytes are the header: len, type, \
                     flags, seq, pid)",
                    describe(s),
                    hex_around(s, at),
                    describe(e),
                    hex_around(e, at),
                );
            }
            (None, None) => {
                return format!(
                    "send #{send} differs from the capture outside its messages ({} bytes sent, \
                     {} captured)",
                    got.len(),
                    expected.len()
                );
            }
            (Some(Ok(e)), None) => {
                return format!(
                    "send #{send} has {index} messages; the capture has more, the next [{}]",
                    describe(e.bytes())
                );
            }
            (None, Some(Ok(s))) => {
                return format!(
                    "send #{send} has more messages than the capture's {index}, the next [{}]",
                    describe(s.bytes())
                );
            }
            (Some(Err(e)), _) | (_, Some(Err(e))) => {
                return format!("send #{send}: message {index} does not parse: {e}");
            }
        }
    }
}

/// Up to 16 bytes of hex from `at` (rounded down to 4), marked with their offset.
fn hex_around(b: &[u8], at: usize) -> String {
    let start = at - at % 4;
    let end = (start + 16).min(b.len());
    format!("bytes {start}..{end}: {}", hex(&b[start.min(end)..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_text_round_trips_and_bad_lines_are_named() {
        let c = Capture {
            first_seq: 7,
            datagrams: vec![
                Datagram::Sent(vec![1, 2, 0xab]),
                Datagram::Received(vec![0xff]),
            ],
        };
        let text = c.to_text("two lines\nof comment");
        assert!(text.starts_with("# two lines\n# of comment\nseq 7\n> 0102ab\n< ff\n"));
        assert_eq!(Capture::parse(&text).unwrap(), c);
        let e = Capture::parse("seq 1\n> 0g\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("hex"), "{e}");
        let e = Capture::parse("> 00\n").unwrap_err().to_string();
        assert!(e.contains("seq"), "{e}");
    }

    /// An error and its source (where a replay's report is).
    fn text(e: Error) -> String {
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        format!("{e}: {}", source.unwrap_or_default())
    }

    #[test]
    fn a_replayer_refuses_a_different_request_and_names_the_byte() {
        let mut w = xtnl_wire::netlink::MsgWriter::new();
        w.message(0x0a10, 1, 5, &[2, 0, 0, 0], |_| {});
        let captured = w.into_bytes();
        let mut other = captured.clone();
        other[17] = 9; // in the payload, after the 16-byte header
        let mut r = Replayer::new(Capture {
            first_seq: 4,
            datagrams: vec![
                Datagram::Sent(captured.clone()),
                Datagram::Received(vec![1]),
            ],
        });
        let e = text(r.send(&other).unwrap_err());
        assert!(
            e.contains("send #1") && e.contains("message 0, byte 17"),
            "{e}"
        );
        // Nothing was consumed: the right request still goes through.
        r.send(&captured).unwrap();
        assert_eq!(r.recv(true).unwrap(), Some(&[1u8][..]));
        assert_eq!(r.recv(true).unwrap(), None);
        let e = text(r.recv(false).unwrap_err());
        assert!(e.contains("capture has ended"), "{e}");
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.next_seq(), 5);
    }
}
