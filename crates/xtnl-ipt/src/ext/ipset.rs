//! The ipset subsystem's name <-> index lookups that `-m set` needs: a rule carries a set's
//! kernel index (`ip_set_id_t`), iptables shows its name. Asked over NETLINK_NETFILTER
//! (`NFNL_SUBSYS_IPSET`, `IPSET_CMD_GET_BYNAME` / `IPSET_CMD_GET_BYINDEX`, protocol 7,
//! include/uapi/linux/netfilter/ipset/ip_set.h), in the calling thread's network namespace,
//! where the sets live.

use crate::error::{Error, Result};
use crate::transport::NlSocket;
use crate::wire::attr::Attrs;
use crate::wire::netlink::{AckRepr, MsgWriter, NLM_F_ACK, NLM_F_REQUEST, NLMSG_ERROR, NlMsgs};

const NFNL_SUBSYS_IPSET: u16 = 6;
const CMD_GET_BYNAME: u16 = 14;
const CMD_GET_BYINDEX: u16 = 15;
const ATTR_PROTOCOL: u16 = 1;
const ATTR_SETNAME: u16 = 2;
const ATTR_INDEX: u16 = 11;
const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
const PROTOCOL: u8 = 7;
/// `IPSET_MAXNAMELEN`, with its NUL.
pub(crate) const MAXNAMELEN: usize = 32;

/// One request, its reply's attributes (after the `nfgenmsg`), or the kernel's errno.
fn ask(cmd: u16, attrs: impl FnOnce(&mut crate::wire::attr::AttrWriter<'_>)) -> Result<Vec<u8>> {
    let mut sock = NlSocket::open()?;
    let seq = sock.next_seq();
    let mut w = MsgWriter::new();
    w.message(
        (NFNL_SUBSYS_IPSET << 8) | cmd,
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        &[libc::AF_INET as u8, 0, 0, 0],
        attrs,
    );
    sock.send(w.as_bytes())?;
    let mut reply = None;
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
                    return Err(Error::InvalidInput(format!(
                        "ipset: {}",
                        std::io::Error::from_raw_os_error(ack.errno)
                    )));
                }
                return reply.ok_or_else(|| Error::InvalidInput("ipset: no reply".into()));
            }
            reply = Some(m.payload().get(4..).unwrap_or_default().to_vec());
        }
    }
}

/// The index of the set called `name`, or iptables' complaint.
pub(crate) fn index_of(name: &str) -> Result<u16> {
    if name.len() >= MAXNAMELEN {
        return Err(Error::InvalidInput(format!(
            "Setname '{name}' is too long, max {} characters.",
            MAXNAMELEN - 1
        )));
    }
    let reply = ask(CMD_GET_BYNAME, |a| {
        a.u8(ATTR_PROTOCOL, PROTOCOL);
        a.strz(ATTR_SETNAME, name);
    })
    .map_err(|_| Error::InvalidInput(format!("Set {name} doesn't exist.")))?;
    Attrs::new(&reply)
        .filter_map(|a| a.ok())
        .find(|a| a.ty & !NLA_F_NET_BYTEORDER == ATTR_INDEX)
        .and_then(|a| <[u8; 2]>::try_from(a.payload).ok())
        .map(u16::from_be_bytes)
        .ok_or_else(|| Error::InvalidInput(format!("Set {name} doesn't exist.")))
}

/// The name of the set at `index`, if there is one.
pub(crate) fn name_of(index: u16) -> Option<String> {
    let reply = ask(CMD_GET_BYINDEX, |a| {
        a.u8(ATTR_PROTOCOL, PROTOCOL);
        a.bytes(ATTR_INDEX | NLA_F_NET_BYTEORDER, &index.to_be_bytes());
    })
    .ok()?;
    Attrs::new(&reply)
        .filter_map(|a| a.ok())
        .find(|a| a.ty == ATTR_SETNAME)
        .and_then(|a| a.string("setname").ok())
        .filter(|n| !n.is_empty())
}
