//! The floor: what the kernel costs without any library around it. A GETGEN round trip and
//! a one-message batch (a chain flush) built by hand with the wire layer and sent with one
//! `send`, the replies drained and checked.

use xtnl::error::{Error, Result};
use xtnl::transport::{Batch, NlSocket};
use xtnl::wire::netlink::{AckRepr, MsgWriter, NLM_F_ACK, NLM_F_REQUEST, NLMSG_ERROR, NlMsgs};
use xtnl::wire::nftables::{GenRepr, RuleRepr, msg, nfgenmsg, nfproto, nft_type, split_nfgenmsg};

fn refused(what: &str, errno: i32) -> Error {
    Error::Precondition(format!(
        "bench floor: the kernel refused the bare {what}: errno {errno}"
    ))
}

/// The bytes of a batch flushing `chain` of `ip nat`.
pub fn flush_bytes(sock: &mut NlSocket, chain: &str) -> Result<Vec<u8>> {
    let flush = RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: chain.into(),
        ..Default::default()
    };
    let mut b = Batch::new(sock, None);
    b.push(msg::DELRULE, nfproto::IPV4, 0, String::new(), |w| {
        flush.emit(w)
    });
    b.finish_bytes()
}

/// Sends a batch in one `send` and drains what the kernel queued (it processes the batch
/// inside the send). Fails on any error ACK; returns the number of ACKs.
pub fn send_batch(sock: &mut NlSocket, bytes: &[u8]) -> Result<usize> {
    sock.send(bytes)?;
    let mut acks = 0;
    while let Some(dgram) = sock.recv(true)? {
        for m in NlMsgs::new(dgram) {
            let m = m?;
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m)?;
                if ack.errno != 0 {
                    return Err(refused("batch", ack.errno));
                }
                acks += 1;
            }
        }
    }
    Ok(acks)
}

/// The bytes of a GETGEN request and its sequence number.
pub fn getgen_bytes(sock: &mut NlSocket) -> (Vec<u8>, u32) {
    let seq = sock.next_seq();
    let mut w = MsgWriter::new();
    w.message(
        nft_type(msg::GETGEN),
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        &nfgenmsg(nfproto::UNSPEC, 0),
        |_| {},
    );
    (w.into_bytes(), seq)
}

/// A GETGEN round trip from prebuilt bytes: send, block for the reply and the ACK.
pub fn getgen(sock: &mut NlSocket, bytes: &[u8], seq: u32) -> Result<u32> {
    sock.send(bytes)?;
    let mut id = None;
    loop {
        let Some(dgram) = sock.recv(false)? else {
            continue;
        };
        for m in NlMsgs::new(dgram) {
            let m = m?;
            if m.seq() != seq {
                continue;
            }
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m)?;
                if ack.errno != 0 {
                    return Err(refused("GETGEN", ack.errno));
                }
                return id.ok_or_else(|| {
                    Error::Precondition("bench floor: GETGEN acknowledged without a reply".into())
                });
            }
            let (_, attrs) = split_nfgenmsg(m.payload())?;
            id = Some(GenRepr::parse(attrs)?.id);
        }
    }
}
