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
/// A message pushed with [`Batch::push_op`] stores no description: the operation's own is
/// made only when the kernel refuses it, by the describer given to
/// [`Batch::commit_described`] (at 80,000 rules a string per message was some 6 MB held
/// until the commit, and the formatting of each). Per message the batch keeps 4 bytes.
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
    /// Per message, the operation it belongs to (an operation can take several messages,
    /// e.g. a rule and the anonymous set it looks up).
    op_of_msg: Vec<u32>,
    /// The descriptions given with [`Batch::push`], by message index (ascending).
    notes: Vec<(u32, String)>,
    current_op: u32,
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
            op_of_msg: Vec::new(),
            notes: Vec::new(),
            current_op: 0,
            next_set_id: 1,
            echo_bytes: 0,
            last_at: None,
            acks_asked: 0,
        }
    }

    /// Messages pushed from now on belong to operation `index`.
    pub fn begin_op(&mut self, index: usize) {
        // An operation index beyond u32 cannot occur: a transaction holds at most
        // `limits::MAX_TRANSACTION_OPS` operations, and the sequence numbers are u32 too.
        self.current_op = u32::try_from(index).unwrap_or(u32::MAX);
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
    /// message's index. `description` names the message in an error.
    pub fn push(
        &mut self,
        msg: u8,
        family: u8,
        flags: u16,
        description: String,
        attrs: impl FnOnce(&mut AttrWriter<'_>),
    ) -> usize {
        let index = self.push_op(msg, family, flags, attrs);
        self.notes
            .push((u32::try_from(index).unwrap_or(u32::MAX), description));
        index
    }

    /// [`Batch::push`] without a description: an error names the message by its
    /// operation's description, made on error by the describer of
    /// [`Batch::commit_described`].
    pub fn push_op(
        &mut self,
        msg: u8,
        family: u8,
        flags: u16,
        attrs: impl FnOnce(&mut AttrWriter<'_>),
    ) -> usize {
        let index = self.op_of_msg.len();
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
        self.op_of_msg.push(self.current_op);
        index
    }

    /// The number of messages between BEGIN and END (an operation may send several).
    pub fn len(&self) -> usize {
        self.op_of_msg.len()
    }
    /// Whether the batch holds no message.
    pub fn is_empty(&self) -> bool {
        self.op_of_msg.is_empty()
    }

    /// The description of message `index`: the one pushed with it, else its operation's.
    fn describe(&self, index: usize, describe_op: &dyn Fn(usize) -> String) -> String {
        match self
            .notes
            .binary_search_by_key(&index, |(i, _)| *i as usize)
        {
            Ok(k) => self.notes[k].1.clone(),
            Err(_) => describe_op(self.op_of_msg[index] as usize),
        }
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
        let end_seq = self.seq_of(self.op_of_msg.len());
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
    /// A refused message pushed without a description is named `operation #N`; see
    /// [`Batch::commit_described`].
    pub fn commit(self, sock: &mut (impl Transport + ?Sized)) -> Result<BatchReply, CommitFailure> {
        self.commit_described(sock, &|i| format!("operation #{i}"))
    }

    /// [`Batch::commit`], describing a refused message pushed with [`Batch::push_op`] by
    /// `describe_op` of its operation's index (called only for a refusal).
    pub fn commit_described(
        mut self,
        sock: &mut (impl Transport + ?Sized),
        describe_op: &dyn Fn(usize) -> String,
    ) -> Result<BatchReply, CommitFailure> {
        self.close()?;
        let n = self.op_of_msg.len();
        // Room for an error per message (a batch can fail at every message after a first
        // failure) besides the acks asked and the echoes.
        sock.size_buffers(self.w.len(), n * ACK_TRUESIZE + self.echo_bytes)?;
        sock.skip_seqs(n as u32 + 1);
        sock.drain()?;
        sock.send(self.w.as_bytes())?;

        let mut acked = 0usize;
        // Per refused message: its index, the errno and the extended ack (described once
        // the first is known: a batch can fail at every message after a first failure).
        let mut failures: Vec<(usize, i32, Option<String>)> = Vec::new();
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
                        failures.push((offset - 1, ack.errno, ack.ext_msg));
                    }
                } else if let Some(msg) = nft_msg_of(m.ty())
                    && (1..=n).contains(&offset)
                {
                    reply.echoes.push((
                        self.op_of_msg[offset - 1] as usize,
                        msg,
                        m.payload().to_vec(),
                    ));
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
        if let Some((msg, errno, ext_ack)) = failures.into_iter().min_by_key(|f| f.0) {
            return Err(Error::from_op_failure(OpFailure {
                index: self.op_of_msg[msg] as usize,
                op: self.describe(msg, describe_op),
                errno,
                ext_ack,
            })
            .into());
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
