//! Netlink message framing (`struct nlmsghdr`), error/ack messages with extended-ack TLVs, and a
//! writer that builds many messages into one buffer (one batch, one `sendmsg`).

use super::WireError;
use super::attr::{AttrWriter, Attrs, align4};
use super::error::WireErrorKind;

pub(super) mod field {
    use std::ops::Range;
    pub const LEN: Range<usize> = 0..4;
    pub const TYPE: Range<usize> = 4..6;
    pub const FLAGS: Range<usize> = 6..8;
    pub const SEQ: Range<usize> = 8..12;
    pub const PID: Range<usize> = 12..16;
    pub const HEADER_LEN: usize = 16;
    /// `struct nlmsgerr`: `int error` then the offending request's header.
    pub const ERR_CODE: Range<usize> = 0..4;
    pub const ERR_REQ: usize = 4;
}

/// The size of `struct nlmsghdr` (16 bytes).
pub const HEADER_LEN: usize = field::HEADER_LEN;

/// `NLMSG_NOOP`: a message to ignore.
pub const NLMSG_NOOP: u16 = 1;
/// `NLMSG_ERROR`: an error, or an acknowledgement when its error code is 0.
pub const NLMSG_ERROR: u16 = 2;
/// `NLMSG_DONE`: the end of a multi-part (dump) reply.
pub const NLMSG_DONE: u16 = 3;

/// `NLM_F_REQUEST`: set on every request.
pub const NLM_F_REQUEST: u16 = 0x1;
/// `NLM_F_MULTI`: a part of a multi-part reply, ended by [`NLMSG_DONE`].
pub const NLM_F_MULTI: u16 = 0x2;
/// `NLM_F_ACK`: asks for an acknowledgement even on success.
pub const NLM_F_ACK: u16 = 0x4;
/// `NLM_F_ECHO`: asks the kernel to echo the request back (nf_tables fills in the handle).
pub const NLM_F_ECHO: u16 = 0x8;
/// `NLM_F_DUMP_INTR`: the dump was interrupted by a change; its content is inconsistent.
pub const NLM_F_DUMP_INTR: u16 = 0x10;
/// `NLM_F_DUMP` (`NLM_F_ROOT
/// NLM_F_MATCH`): a GET request for every object.
pub const NLM_F_DUMP: u16 = 0x300;
/// `NLM_F_REPLACE` (on NEW requests): replace the object (nf_tables: a rule by handle).
pub const NLM_F_REPLACE: u16 = 0x100;
/// `NLM_F_EXCL` (on NEW requests): fail with EEXIST if the object exists.
pub const NLM_F_EXCL: u16 = 0x200;
/// `NLM_F_CREATE` (on NEW requests): create the object if it does not exist.
pub const NLM_F_CREATE: u16 = 0x400;
/// `NLM_F_APPEND` (on NEW requests): add at the end (nf_tables: after the position handle).
pub const NLM_F_APPEND: u16 = 0x800;
/// On error messages: the echoed request was cut to its header (NETLINK_CAP_ACK).
pub const NLM_F_CAPPED: u16 = 0x100;
/// On error messages: extended-ack TLVs follow.
pub const NLM_F_ACK_TLVS: u16 = 0x200;

/// `NLMSGERR_ATTR_MSG`: the extended-ack text, NUL-terminated.
pub const NLMSGERR_ATTR_MSG: u16 = 1;
/// `NLMSGERR_ATTR_OFFS`: the offset of the offending attribute in the echoed request.
pub const NLMSGERR_ATTR_OFFS: u16 = 2;

/// A zero-copy view of one netlink message.
#[derive(Debug, Clone, Copy)]
pub struct NlMsg<'a> {
    buf: &'a [u8],
}

impl<'a> NlMsg<'a> {
    /// Checks that `buf` starts with a whole message and returns it with the rest.
    pub fn split(buf: &'a [u8]) -> Result<(NlMsg<'a>, &'a [u8]), WireError> {
        if buf.len() < field::HEADER_LEN {
            return Err(WireError::truncated(field::HEADER_LEN, buf.len()).within("nlmsghdr"));
        }
        let len = u32::from_ne_bytes(read4(buf, field::LEN.start)) as usize;
        if len < field::HEADER_LEN || len > buf.len() {
            return Err(WireError::new(WireErrorKind::BadLength { len }).within("nlmsghdr"));
        }
        let next = align4(len).min(buf.len());
        Ok((NlMsg { buf: &buf[..len] }, &buf[next..]))
    }
    /// `nlmsg_type`: for nf_tables, the subsystem in the high byte and the message in the low.
    pub fn ty(&self) -> u16 {
        u16::from_ne_bytes([self.buf[field::TYPE.start], self.buf[field::TYPE.start + 1]])
    }
    /// `nlmsg_flags` (`NLM_F_*`).
    pub fn flags(&self) -> u16 {
        u16::from_ne_bytes([
            self.buf[field::FLAGS.start],
            self.buf[field::FLAGS.start + 1],
        ])
    }
    /// `nlmsg_seq`: the request's sequence number, echoed in replies.
    pub fn seq(&self) -> u32 {
        u32::from_ne_bytes(read4(self.buf, field::SEQ.start))
    }
    /// `nlmsg_pid`: the sender's port id (0 from the kernel).
    pub fn pid(&self) -> u32 {
        u32::from_ne_bytes(read4(self.buf, field::PID.start))
    }
    /// The message after its header.
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[field::HEADER_LEN..]
    }
    /// The whole message, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
}

fn read4(buf: &[u8], at: usize) -> [u8; 4] {
    [buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]
}

/// Iterates over the messages of one datagram.
pub struct NlMsgs<'a> {
    rest: &'a [u8],
}

impl<'a> NlMsgs<'a> {
    /// Iterates over the messages of `datagram` (one `recvmsg`'s bytes).
    pub fn new(datagram: &'a [u8]) -> Self {
        NlMsgs { rest: datagram }
    }
}

impl<'a> Iterator for NlMsgs<'a> {
    type Item = Result<NlMsg<'a>, WireError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match NlMsg::split(self.rest) {
            Ok((msg, rest)) => {
                self.rest = rest;
                Some(Ok(msg))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// An `NLMSG_ERROR` message: an ACK (`errno == 0`) or an error, for the request with `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckRepr {
    /// Positive errno, 0 for an ACK.
    pub errno: i32,
    /// Sequence number of the request this answers.
    pub seq: u32,
    /// Extended-ack message text (NLMSGERR_ATTR_MSG).
    pub ext_msg: Option<String>,
    /// Offset of the offending attribute in the request (NLMSGERR_ATTR_OFFS).
    pub ext_offset: Option<u32>,
}

impl AckRepr {
    /// Decodes an `NLMSG_ERROR` message: the errno, the request's sequence number and the
    /// extended-ack attributes when [`NLM_F_ACK_TLVS`] is set.
    pub fn parse(msg: &NlMsg<'_>) -> Result<AckRepr, WireError> {
        let p = msg.payload();
        let need = field::ERR_REQ + field::HEADER_LEN;
        if p.len() < need {
            return Err(WireError::truncated(need, p.len()).within("nlmsgerr"));
        }
        let code = i32::from_ne_bytes(read4(p, field::ERR_CODE.start));
        let (req, _) = NlMsg::split(&p[field::ERR_REQ..]).or_else(|_| {
            // With NETLINK_CAP_ACK the echoed header still carries the request's full length.
            Ok::<_, WireError>((
                NlMsg {
                    buf: &p[field::ERR_REQ..need],
                },
                &p[need..],
            ))
        })?;
        let mut ack = AckRepr {
            errno: code.checked_neg().unwrap_or(i32::MAX).max(0),
            seq: req.seq(),
            ext_msg: None,
            ext_offset: None,
        };
        if msg.flags() & NLM_F_ACK_TLVS != 0 {
            let echoed = if msg.flags() & NLM_F_CAPPED != 0 {
                field::HEADER_LEN
            } else {
                align4(req.bytes().len())
            };
            let tlvs = p.get(field::ERR_REQ + echoed..).unwrap_or(&[]);
            for attr in Attrs::new(tlvs) {
                let attr = attr.map_err(|e| e.within("extended ack"))?;
                match attr.ty {
                    NLMSGERR_ATTR_MSG => ack.ext_msg = Some(attr.string("NLMSGERR_ATTR_MSG")?),
                    NLMSGERR_ATTR_OFFS => {
                        ack.ext_offset =
                            Some(u32::from_ne_bytes(attr.payload.try_into().map_err(
                                |_| WireError::bad_value("bad NLMSGERR_ATTR_OFFS"),
                            )?))
                    }
                    _ => {}
                }
            }
        }
        Ok(ack)
    }
}

/// Builds netlink messages back to back in one buffer.
#[derive(Debug, Default)]
pub struct MsgWriter {
    buf: Vec<u8>,
    overflow: bool,
}

impl MsgWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty writer with room for `n` bytes.
    pub fn with_capacity(n: usize) -> Self {
        MsgWriter {
            buf: Vec::with_capacity(n),
            overflow: false,
        }
    }

    /// Appends one message: header, a fixed family header, then attributes.
    pub fn message(
        &mut self,
        ty: u16,
        flags: u16,
        seq: u32,
        fixed_header: &[u8],
        attrs: impl FnOnce(&mut AttrWriter<'_>),
    ) {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(&flags.to_ne_bytes());
        self.buf.extend_from_slice(&seq.to_ne_bytes());
        self.buf.extend_from_slice(&0u32.to_ne_bytes());
        self.buf.extend_from_slice(fixed_header);
        self.buf.resize(align4(self.buf.len()), 0);
        attrs(&mut AttrWriter::new(&mut self.buf, &mut self.overflow));
        let len = self.buf.len() - start;
        match u32::try_from(len) {
            Ok(len) => self.buf[start..start + 4].copy_from_slice(&len.to_ne_bytes()),
            Err(_) => self.overflow = true,
        }
    }

    /// Adds `flags` to the header of the message written at byte `at` (a [`Self::len`]
    /// taken before writing it); nothing when no message starts there.
    pub fn add_flags(&mut self, at: usize, flags: u16) {
        if let Some(f) = self.buf.get_mut(at + 6..at + 8) {
            let old = u16::from_ne_bytes([f[0], f[1]]);
            f.copy_from_slice(&(old | flags).to_ne_bytes());
        }
    }

    /// Whether some attribute or message was too large to encode.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
    /// The bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    /// The messages written, back to back.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
    /// The messages written, as one buffer to send.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK for a NEWRULE (type 0x0a06) with seq 7, captured with NETLINK_CAP_ACK and
    /// NETLINK_EXT_ACK on: ENOENT with the kernel's text.
    fn captured_error() -> Vec<u8> {
        let mut m = Vec::new();
        let text = b"chain not found\0";
        let tlv_len = 4 + text.len();
        let total = 16 + 4 + 16 + align4(tlv_len);
        m.extend_from_slice(&(total as u32).to_ne_bytes());
        m.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
        m.extend_from_slice(&(NLM_F_CAPPED | NLM_F_ACK_TLVS).to_ne_bytes());
        m.extend_from_slice(&7u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&(-2i32).to_ne_bytes());
        // echoed request header: len 200 (more than echoed), type, flags, seq 7, pid 0
        m.extend_from_slice(&200u32.to_ne_bytes());
        m.extend_from_slice(&0x0a06u16.to_ne_bytes());
        m.extend_from_slice(&0x0c05u16.to_ne_bytes());
        m.extend_from_slice(&7u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&(tlv_len as u16).to_ne_bytes());
        m.extend_from_slice(&NLMSGERR_ATTR_MSG.to_ne_bytes());
        m.extend_from_slice(text);
        m.resize(total, 0);
        m
    }

    #[test]
    fn capped_error_with_ext_ack() {
        let buf = captured_error();
        let (msg, rest) = NlMsg::split(&buf).unwrap();
        assert!(rest.is_empty());
        assert_eq!(msg.ty(), NLMSG_ERROR);
        let ack = AckRepr::parse(&msg).unwrap();
        assert_eq!(ack.errno, libc::ENOENT);
        assert_eq!(ack.seq, 7);
        assert_eq!(ack.ext_msg.as_deref(), Some("chain not found"));
    }

    #[test]
    fn writer_frames_messages_back_to_back() {
        let mut w = MsgWriter::new();
        w.message(0x10, NLM_F_REQUEST, 1, &[0, 0, 0, 10], |_| {});
        w.message(0x0a00, NLM_F_REQUEST | NLM_F_ACK, 2, &[2, 0, 0, 0], |a| {
            a.strz(1, "nat");
        });
        let msgs: Vec<_> = NlMsgs::new(w.as_bytes()).collect::<Result<_, _>>().unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].bytes().len(), 20);
        assert_eq!(msgs[1].seq(), 2);
        assert_eq!(msgs[1].flags(), NLM_F_REQUEST | NLM_F_ACK);
        assert_eq!(&msgs[1].payload()[..4], &[2, 0, 0, 0]);
        assert_eq!(msgs[1].bytes().len(), 16 + 4 + 8);
    }

    #[test]
    fn truncated_datagram_is_an_error() {
        let mut w = MsgWriter::new();
        w.message(0x10, 0, 1, &[0; 4], |_| {});
        let bytes = w.into_bytes();
        assert!(NlMsg::split(&bytes[..bytes.len() - 1]).is_err());
        assert!(NlMsg::split(&bytes[..10]).is_err());
    }
}
