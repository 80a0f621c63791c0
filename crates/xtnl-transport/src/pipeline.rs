//! The reply accounting of a pipelined round trip ([`super::NlSocket::pipelined`]): several
//! requests in one datagram, and the kernel's answers matched back to them, on any
//! [`Transport`] (a socket, or in tests a scripted kernel).
//!
//! What the kernel sends for a datagram of requests (net/netfilter/nfnetlink.c
//! `nfnetlink_rcv`, net/netlink/af_netlink.c `netlink_rcv_skb`):
//! - without CAP_NET_ADMIN, one error (EPERM) for the *first* message and nothing for the
//!   rest: the datagram is dropped whole;
//! - otherwise each message in order: a GET's reply then its ACK (NLM_F_ACK), or its error,
//!   and the kernel goes on with the next message after a failed one; a dump answers with
//!   its objects and NLMSG_DONE (or an error), no ACK.
//!
//! So an answer to request `i` means every request before it has had all the answers it
//! will get, and an EPERM answer means nothing after it will be answered. The reading stops
//! as soon as the last request is accounted for, or at the first fatal answer; it never
//! waits for an answer the kernel will not send. (A receive timeout on the socket is the
//! last resort: `RECV_TIMEOUT` in socket.rs.)

use std::io;

use xtnl_core::error::{Error, Result};
use xtnl_wire::netlink::{
    AckRepr, MsgWriter, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, NLMSG_DONE,
    NLMSG_ERROR, NlMsgs,
};
use xtnl_wire::nftables::{nfgenmsg, nft_type};

/// What a pipelined round trip needs of a connection: sequence numbers, one send, and the
/// replies (the socket, or in tests a scripted kernel).
pub(super) trait Link {
    /// A fresh sequence number (never 0).
    fn next_seq(&mut self) -> u32;
    /// Sends one datagram.
    fn send(&mut self, bytes: &[u8]) -> Result<()>;
    /// One reply datagram; `Ok(None)` when `nonblocking` and nothing is queued (or, from a
    /// connection that cannot block, when nothing more will come).
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>>;
}

/// A dump was interrupted by a concurrent commit (NLM_F_DUMP_INTR); read it again.
#[derive(Debug)]
pub struct DumpInterrupted;

/// One request of a pipelined round trip (`NlSocket::pipelined`).
pub struct Request<'a> {
    /// The nf_tables message type (see [`xtnl_wire::nftables::msg`]).
    pub msg: u8,
    /// The `nfgenmsg` family (see [`xtnl_wire::nftables::nfproto`]).
    pub family: u8,
    /// Writes the request's attributes.
    pub attrs: &'a dyn Fn(&mut xtnl_wire::attr::AttrWriter<'_>),
    /// What the request is for, in error messages.
    pub what: &'static str,
}

/// The answers of a pipelined round trip (`NlSocket::pipelined`).
pub struct Pipelined {
    /// Each single-object request's reply payload, in the order asked.
    pub replies: Vec<Result<Vec<u8>>>,
    /// How the dump ended, when one was asked for.
    pub dump: Option<std::result::Result<(), DumpInterrupted>>,
}

/// Whether an error answer means the kernel dropped the rest of the datagram: EPERM (and
/// EACCES, which an LSM may return) come from the capability check made once per datagram.
fn drops_the_rest(errno: i32) -> bool {
    errno == libc::EPERM || errno == libc::EACCES
}

fn no_answer(what: &'static str) -> Error {
    Error::Netlink {
        context: what,
        source: io::Error::other("no answer from the kernel (it skipped this request)"),
    }
}

/// Sends `gets` and then `dump` (at most one, last) in one datagram on `t` and accounts for
/// every answer; see the module's documentation.
pub(super) fn run<T: Link + ?Sized>(
    t: &mut T,
    gets: &[Request<'_>],
    dump: Option<Request<'_>>,
    mut each: impl FnMut(u16, &[u8]) -> Result<()>,
) -> Result<Pipelined> {
    let mut w = MsgWriter::new();
    let mut seqs = Vec::with_capacity(gets.len());
    for g in gets {
        let seq = t.next_seq();
        w.message(
            nft_type(g.msg),
            NLM_F_REQUEST | NLM_F_ACK,
            seq,
            &nfgenmsg(g.family, 0),
            |a| (g.attrs)(a),
        );
        seqs.push(seq);
    }
    let dump_seq = dump.as_ref().map(|d| {
        let seq = t.next_seq();
        w.message(
            nft_type(d.msg),
            NLM_F_REQUEST | NLM_F_DUMP,
            seq,
            &nfgenmsg(d.family, 0),
            |a| (d.attrs)(a),
        );
        seq
    });
    t.send(w.as_bytes())?;
    let mut replies: Vec<Option<Vec<u8>>> = vec![None; gets.len()];
    let mut results: Vec<Option<Result<Vec<u8>>>> = (0..gets.len()).map(|_| None).collect();
    // Requests before this index have had every answer they will get.
    let mut settled = 0usize;
    let mut dump_result: Option<std::result::Result<(), DumpInterrupted>> = None;
    let mut interrupted = false;
    let done = |settled: usize, dump_result: &Option<_>| {
        settled >= gets.len() && (dump_seq.is_none() || dump_result.is_some())
    };
    while !done(settled, &dump_result) {
        let Some(dgram) = t.recv(false)? else {
            // Only a transport that cannot block says this: nothing more will come.
            break;
        };
        for m in NlMsgs::new(dgram) {
            let m = m?;
            if let Some(i) = seqs.iter().position(|&s| s == m.seq()) {
                if results[i].is_some() {
                    continue;
                }
                // The kernel answers in order: the requests before this one are done.
                settled = settled.max(i);
                if m.ty() != NLMSG_ERROR {
                    replies[i] = Some(m.payload().to_vec());
                    continue;
                }
                let ack = AckRepr::parse(&m)?;
                let what = gets[i].what;
                if ack.errno != 0 {
                    let e = Error::from_op_failure(xtnl_core::OpFailure {
                        index: i,
                        op: what.into(),
                        errno: ack.errno,
                        ext_ack: ack.ext_msg,
                    });
                    if drops_the_rest(ack.errno) {
                        return Err(e);
                    }
                    results[i] = Some(Err(e));
                } else {
                    results[i] = Some(replies[i].take().ok_or_else(|| Error::Netlink {
                        context: what,
                        source: io::Error::other("acknowledged without a reply"),
                    }));
                }
                settled = settled.max(i + 1);
            } else if Some(m.seq()) == dump_seq && dump_result.is_none() {
                settled = gets.len();
                if m.flags() & NLM_F_DUMP_INTR != 0 {
                    interrupted = true;
                }
                match m.ty() {
                    NLMSG_DONE => {
                        dump_result = Some(if interrupted {
                            Err(DumpInterrupted)
                        } else {
                            Ok(())
                        });
                    }
                    NLMSG_ERROR => {
                        let ack = AckRepr::parse(&m)?;
                        if ack.errno == libc::EINTR {
                            dump_result = Some(Err(DumpInterrupted));
                        } else if ack.errno != 0 {
                            return Err(Error::from_op_failure(xtnl_core::OpFailure {
                                index: gets.len(),
                                op: "list".into(),
                                errno: ack.errno,
                                ext_ack: ack.ext_msg,
                            }));
                        } else {
                            dump_result = Some(Ok(()));
                        }
                    }
                    ty => {
                        if !interrupted {
                            each(ty, m.payload())?;
                        }
                    }
                }
            }
        }
    }
    if dump_seq.is_some() && dump_result.is_none() {
        return Err(no_answer("list"));
    }
    Ok(Pipelined {
        replies: results
            .into_iter()
            .zip(gets)
            .map(|(r, g)| r.unwrap_or_else(|| Err(no_answer(g.what))))
            .collect(),
        dump: dump_result,
    })
}

/// A request for one object (a GET without NLM_F_DUMP) on `t`: its reply's payload. A
/// missing object is `Err` with kind NotFound.
pub(super) fn request_with<T: Link + ?Sized>(
    t: &mut T,
    msg: u8,
    family: u8,
    attrs: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
    what: &'static str,
) -> Result<Vec<u8>> {
    let seq = t.next_seq();
    let mut w = MsgWriter::new();
    w.message(
        nft_type(msg),
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        &nfgenmsg(family, 0),
        attrs,
    );
    t.send(w.as_bytes())?;
    let mut reply = None;
    loop {
        let Some(dgram) = t.recv(false)? else {
            // Only a transport that cannot block says this: nothing more will come.
            return Err(no_answer(what));
        };
        for m in NlMsgs::new(dgram) {
            let m = m?;
            if m.seq() != seq {
                continue; // a stale reply to an earlier request
            }
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m)?;
                if ack.errno != 0 {
                    return Err(Error::from_op_failure(xtnl_core::OpFailure {
                        index: 0,
                        op: what.into(),
                        errno: ack.errno,
                        ext_ack: ack.ext_msg,
                    }));
                }
                return reply.ok_or_else(|| Error::Netlink {
                    context: what,
                    source: io::Error::other("acknowledged without a reply"),
                });
            }
            reply = Some(m.payload().to_vec());
        }
    }
}

/// A dump request on `t`: every reply message's payload, in order, handed to `each`. An
/// interrupted dump (NLM_F_DUMP_INTR, or EINTR) is `Ok(Err(DumpInterrupted))`.
pub(super) fn dump<T: Link + ?Sized>(
    t: &mut T,
    msg: u8,
    family: u8,
    filter: impl FnOnce(&mut xtnl_wire::attr::AttrWriter<'_>),
    each: impl FnMut(u16, &[u8]) -> Result<()>,
) -> Result<std::result::Result<(), DumpInterrupted>> {
    let filter = std::cell::Cell::new(Some(filter));
    let attrs = |w: &mut xtnl_wire::attr::AttrWriter<'_>| {
        if let Some(f) = filter.take() {
            f(w);
        }
    };
    let request = Request {
        msg,
        family,
        attrs: &attrs,
        what: "list",
    };
    let answers = run(t, &[], Some(request), each)?;
    Ok(answers.dump.unwrap_or(Ok(())))
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;
