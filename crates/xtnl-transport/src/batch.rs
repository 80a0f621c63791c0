use xtnl_core::error::{Error, OpFailure, Result};
use xtnl_wire::attr::AttrWriter;
use xtnl_wire::netlink::{AckRepr, MsgWriter, NLM_F_ACK, NLM_F_REQUEST, NLMSG_ERROR, NlMsgs};
use xtnl_wire::nftables::{
    NFNL_BATCH_GENID, NFNL_MSG_BATCH_BEGIN, NFNL_MSG_BATCH_END, NFNL_SUBSYS_NFTABLES, nfgenmsg,
    nfproto, nft_msg_of, nft_type,
};

use super::Transport;

/// Room in the receive buffer per reply (an error, or an ack): each is its own skb, whose
/// truesize is several times the 36 bytes of a capped ack.
const ACK_TRUESIZE: usize = 1024;

/// One nf_tables transaction on the wire: BEGIN (with the generation id), the object
/// messages, END. Each message's sequence number maps a reply back to the operation (its
/// index in the batch) and its description.
///
/// Not every message asks for an ACK. The kernel processes the whole batch inside the
/// `sendmsg` (`nfnetlink_rcv_batch`) and queues a reply for a message `if (nlh->nlmsg_flags
/// & NLM_F_ACK || err)`: every failing message's error comes back with its sequence number
/// whether it asked or not, so the failing operation is named without an ack per message.
/// Only the last object message asks (the positive answer that the kernel went through the
/// whole batch and its replies reached us), and each message that wants an echo. An ack per
/// message cost the kernel an skb each and us a `recvfrom` each: 44,000 of them for a
/// restore of 4,000 kube-proxy services.
pub struct Batch {
    w: MsgWriter,
    base_seq: u32,
    /// Per message: what it does, and the operation it belongs to (an operation can take
    /// several messages, e.g. a rule and the anonymous set it looks up).
    ops: Vec<String>,
    op_of_msg: Vec<usize>,
    current_op: usize,
    next_set_id: u32,
    echo_bytes: usize,
    /// Where the last object message starts in the writer (it asks for the ACK).
    last_at: Option<usize>,
    /// Messages that ask for an ACK (echoes); the last one is added at close.
    acks_asked: usize,
}

/// What a committed batch sent back besides ACKs: echoed objects (NLM_F_ECHO), by operation.
#[derive(Debug, Default)]
pub struct BatchReply {
    /// Per echoed message, in the order received: the operation's index, the nf_tables
    /// message type, and the payload (`nfgenmsg` header, then the attributes).
    pub echoes: Vec<(usize, u8, Vec<u8>)>,
}

/// Why a commit failed.
#[derive(Debug)]
pub enum CommitFailure {
    /// The generation id in BEGIN is stale (ERESTART): re-read, re-plan, re-send.
    GenerationChanged,
    /// Any other failure: a kernel refusal naming the operation, or I/O.
    Error(Error),
}

impl From<Error> for CommitFailure {
    fn from(e: Error) -> Self {
        CommitFailure::Error(e)
    }
}

impl Batch {
    /// Starts a batch; `genid` makes the kernel refuse it if the ruleset changed since.
    pub fn new(sock: &mut (impl Transport + ?Sized), genid: Option<u32>) -> Self {
        let base_seq = sock.next_seq();
        let mut w = MsgWriter::with_capacity(4096);
        w.message(
            NFNL_MSG_BATCH_BEGIN,
            NLM_F_REQUEST,
            base_seq,
            &nfgenmsg(nfproto::UNSPEC, NFNL_SUBSYS_NFTABLES),
            |a| {
                if let Some(g) = genid {
                    a.u32_be(NFNL_BATCH_GENID, g);
                }
            },
        );
        Batch {
            w,
            base_seq,
            ops: Vec::new(),
            op_of_msg: Vec::new(),
            current_op: 0,
            next_set_id: 1,
            echo_bytes: 0,
            last_at: None,
            acks_asked: 0,
        }
    }

    /// Messages pushed from now on belong to operation `index`.
    pub fn begin_op(&mut self, index: usize) {
        self.current_op = index;
    }

    /// An id for a set created in this batch (NFTA_SET_ID), unique within it.
    pub fn new_set_id(&mut self) -> u32 {
        let id = self.next_set_id;
        self.next_set_id += 1;
        id
    }

    fn seq_of(&self, index: usize) -> u32 {
        self.base_seq.wrapping_add(1).wrapping_add(index as u32)
    }

    /// Appends one object message. `flags` are the NLM_F_* creation flags; REQUEST is
    /// added, and ACK with ECHO (the last message's ACK is added at close). Returns the
    /// message's index.
    pub fn push(
        &mut self,
        msg: u8,
        family: u8,
        flags: u16,
        description: String,
        attrs: impl FnOnce(&mut AttrWriter<'_>),
    ) -> usize {
        let index = self.ops.len();
        let seq = self.seq_of(index);
        let before = self.w.len();
        let echo = flags & xtnl_wire::netlink::NLM_F_ECHO != 0;
        let ack = if echo { NLM_F_ACK } else { 0 };
        self.w.message(
            nft_type(msg),
            NLM_F_REQUEST | ack | flags,
            seq,
            &nfgenmsg(family, 0),
            attrs,
        );
        if echo {
            self.echo_bytes += (self.w.len() - before) * 2 + 512;
            self.acks_asked += 1;
        }
        self.last_at = Some(before);
        self.ops.push(description);
        self.op_of_msg.push(self.current_op);
        index
    }

    /// The number of operations (not messages: an operation may send several).
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// Whether the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// The encoded size so far, in bytes.
    pub fn byte_len(&self) -> usize {
        self.w.len()
    }

    /// The whole batch as it goes on the wire (BEGIN .. END); for benchmarks and tests.
    pub fn finish_bytes(mut self) -> Result<Vec<u8>> {
        self.close()?;
        Ok(self.w.into_bytes())
    }

    fn close(&mut self) -> Result<()> {
        if let Some(at) = self.last_at.take() {
            let flags_at = at + 6;
            let asked = self
                .w
                .as_bytes()
                .get(flags_at..flags_at + 2)
                .is_some_and(|f| u16::from_ne_bytes([f[0], f[1]]) & NLM_F_ACK != 0);
            if !asked {
                self.w.add_flags(at, NLM_F_ACK);
                self.acks_asked += 1;
            }
        }
        let end_seq = self.seq_of(self.ops.len());
        self.w.message(
            NFNL_MSG_BATCH_END,
            NLM_F_REQUEST,
            end_seq,
            &nfgenmsg(nfproto::UNSPEC, NFNL_SUBSYS_NFTABLES),
            |_| {},
        );
        if self.w.overflowed() {
            return Err(Error::InvalidInput(
                "an object in the transaction is too large to encode in netlink".into(),
            ));
        }
        Ok(())
    }

    /// Sends the batch in one `sendmsg` and collects every reply.
    ///
    /// The kernel processes the whole batch inside that `sendmsg`, so when it returns every
    /// reply is already queued: we drain without blocking and never wait for an ACK that an
    /// older kernel would not send (BEGIN/END) or that an aborted batch will not get.
    pub fn commit(
        mut self,
        sock: &mut (impl Transport + ?Sized),
    ) -> Result<BatchReply, CommitFailure> {
        self.close()?;
        let n = self.ops.len();
        // Room for an error per message (a batch can fail at every message after a first
        // failure) besides the acks asked and the echoes.
        sock.size_buffers(self.w.len(), n * ACK_TRUESIZE + self.echo_bytes)?;
        sock.skip_seqs(n as u32 + 1);
        sock.drain()?;
        sock.send(self.w.as_bytes())?;

        let mut acked = 0usize;
        let mut failures: Vec<OpFailure> = Vec::new();
        let mut begin_error: Option<AckRepr> = None;
        let mut reply = BatchReply::default();
        // ENOBUFS: replies were dropped for want of room. The kernel queues them in batch
        // order, so the first failure is among those kept; the rest are still read.
        let mut overrun = false;
        loop {
            let dgram = match sock.recv(true) {
                Ok(Some(d)) => d,
                Ok(None) => break,
                Err(Error::Netlink { source, .. })
                    if source.raw_os_error() == Some(libc::ENOBUFS) && !overrun =>
                {
                    overrun = true;
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            for m in NlMsgs::new(dgram) {
                let m = m.map_err(Error::from)?;
                let offset = m.seq().wrapping_sub(self.base_seq) as usize;
                if offset > n + 1 {
                    continue; // not ours (a stale reply)
                }
                if m.ty() == NLMSG_ERROR {
                    let ack = AckRepr::parse(&m).map_err(Error::from)?;
                    if offset == 0 || offset == n + 1 {
                        if ack.errno != 0 {
                            begin_error = Some(ack);
                        }
                    } else if ack.errno == 0 {
                        acked += 1;
                    } else {
                        failures.push(OpFailure {
                            index: self.op_of_msg[offset - 1],
                            op: self.ops[offset - 1].clone(),
                            errno: ack.errno,
                            ext_ack: ack.ext_msg,
                        });
                    }
                } else if let Some(msg) = nft_msg_of(m.ty())
                    && (1..=n).contains(&offset)
                {
                    reply
                        .echoes
                        .push((self.op_of_msg[offset - 1], msg, m.payload().to_vec()));
                }
            }
        }
        if let Some(ack) = begin_error {
            if ack.errno == libc::ERESTART {
                return Err(CommitFailure::GenerationChanged);
            }
            return Err(Error::from_op_failure(OpFailure {
                index: 0,
                op: "batch".into(),
                errno: ack.errno,
                ext_ack: ack.ext_msg,
            })
            .into());
        }
        if let Some(first) = failures.into_iter().min_by_key(|f| f.index) {
            return Err(Error::from_op_failure(first).into());
        }
        if acked != self.acks_asked {
            return Err(Error::Netlink {
                context: "commit",
                source: std::io::Error::other(format!(
                    "the kernel acknowledged {acked} of the {} messages that asked, and \
                     reported no error{}; replies were lost",
                    self.acks_asked,
                    if overrun {
                        " (receive buffer overrun)"
                    } else {
                        ""
                    }
                )),
            }
            .into());
        }
        Ok(reply)
    }
}
