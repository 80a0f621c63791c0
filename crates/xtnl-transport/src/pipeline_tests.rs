//! The reply accounting against a scripted kernel that answers as nfnetlink does (see the
//! module's documentation), for every pipeline shape up to four GETs and a dump, an error at
//! every position and every set of positions, EPERM for the whole datagram, and answers
//! coalesced in every way: each run must end having read every answer the kernel sent and
//! never wait for one it did not send.

use std::collections::VecDeque;

use super::*;
use xtnl_core::error::ErrorKind;
use xtnl_wire::netlink::NLM_F_MULTI;

/// What the scripted kernel does with the next datagram.
#[derive(Clone, Debug, Default)]
struct Script {
    /// No CAP_NET_ADMIN: one EPERM for the first message, nothing for the others.
    no_cap: bool,
    /// The errno each message fails with (0: it succeeds), by position.
    errnos: Vec<i32>,
    /// The dump's objects, and how many go in one datagram (the kernel makes one skb per
    /// `recvmsg`).
    dump_objects: usize,
    per_datagram: usize,
    /// The dump is interrupted by a commit (NLM_F_DUMP_INTR on its messages).
    dump_intr: bool,
    /// Answers queued before the reader's first `recv` are coalesced this many per datagram
    /// (0: one per datagram).
    coalesce: usize,
}

struct Kernel {
    script: Script,
    seq: u32,
    queue: VecDeque<Vec<u8>>,
    current: Vec<u8>,
    /// The running dump: its sequence number and the objects still to send.
    dump: Option<(u32, usize)>,
    /// A blocking `recv` with nothing queued and nothing to make: a real socket would hang.
    hung: bool,
}

fn error(seq: u32, errno: i32) -> Vec<u8> {
    let mut w = MsgWriter::new();
    let mut payload = (-errno).to_ne_bytes().to_vec();
    // The request's header as NETLINK_CAP_ACK echoes it (its length is the request's).
    let mut header = [0u8; 16];
    header[..4].copy_from_slice(&64u32.to_ne_bytes());
    header[8..12].copy_from_slice(&seq.to_ne_bytes());
    payload.extend_from_slice(&header);
    w.message(NLMSG_ERROR, 0, seq, &payload, |_| {});
    w.into_bytes()
}

fn reply(seq: u32, position: usize) -> Vec<u8> {
    let mut w = MsgWriter::new();
    w.message(
        nft_type(1),
        0,
        seq,
        &(position as u32).to_ne_bytes(),
        |_| {},
    );
    w.into_bytes()
}

impl Kernel {
    fn new(script: Script) -> Kernel {
        Kernel {
            script,
            seq: 100,
            queue: VecDeque::new(),
            current: Vec::new(),
            dump: None,
            hung: false,
        }
    }

    fn dump_part(&mut self) {
        let Some((seq, left)) = self.dump else { return };
        let flags = NLM_F_MULTI
            | if self.script.dump_intr {
                NLM_F_DUMP_INTR
            } else {
                0
            };
        let mut w = MsgWriter::new();
        let n = left.min(self.script.per_datagram.max(1));
        for k in 0..n {
            w.message(nft_type(6), flags, seq, &(k as u32).to_ne_bytes(), |_| {});
        }
        if left == n {
            w.message(NLMSG_DONE, flags, seq, &0i32.to_ne_bytes(), |_| {});
            self.dump = None;
        } else {
            self.dump = Some((seq, left - n));
        }
        self.queue.push_back(w.into_bytes());
    }
}

impl Kernel {
    fn queue_answers(&mut self, answers: Vec<Vec<u8>>) {
        let per = self.script.coalesce;
        if per == 0 {
            self.queue.extend(answers);
        } else {
            for group in answers.chunks(per) {
                self.queue.push_back(group.concat());
            }
        }
    }
}

impl Link for Kernel {
    fn next_seq(&mut self) -> u32 {
        self.seq += 1;
        self.seq
    }
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let mut answers = Vec::new();
        for (position, m) in NlMsgs::new(bytes).enumerate() {
            let m = m?;
            if self.script.no_cap {
                // nfnetlink_rcv: EPERM for the first message, the datagram dropped.
                answers.push(error(m.seq(), libc::EPERM));
                break;
            }
            let errno = self.script.errnos.get(position).copied().unwrap_or(0);
            if errno != 0 {
                answers.push(error(m.seq(), errno));
            } else if m.flags() & NLM_F_DUMP == NLM_F_DUMP {
                // netlink_dump_start: the first part now, the rest on each recvmsg; -EINTR
                // to netlink_rcv_skb, which sends no ACK for it.
                self.dump = Some((m.seq(), self.script.dump_objects));
                self.queue_answers(std::mem::take(&mut answers));
                self.dump_part();
            } else {
                answers.push(reply(m.seq(), position));
                answers.push(error(m.seq(), 0));
            }
        }
        self.queue_answers(answers);
        Ok(())
    }
    fn recv(&mut self, nonblocking: bool) -> Result<Option<&[u8]>> {
        if self.queue.is_empty() {
            self.dump_part();
        }
        match self.queue.pop_front() {
            Some(d) => {
                self.current = d;
                Ok(Some(&self.current))
            }
            None if nonblocking => Ok(None),
            None => {
                self.hung = true;
                Err(Error::Netlink {
                    context: "scripted kernel",
                    source: io::Error::other("recv would block forever"),
                })
            }
        }
    }
}

fn expected_kind(errno: i32) -> ErrorKind {
    Error::from_op_failure(xtnl_core::OpFailure {
        index: 0,
        op: "x".into(),
        errno,
        ext_ack: None,
    })
    .kind()
}

const WHAT: [&str; 4] = ["get 0", "get 1", "get 2", "get 3"];

fn run_script(gets: usize, with_dump: bool, script: Script) -> (Result<Pipelined>, usize, Kernel) {
    let mut k = Kernel::new(script);
    let attrs = |_: &mut xtnl_wire::attr::AttrWriter<'_>| {};
    let requests: Vec<Request<'_>> = (0..gets)
        .map(|i| Request {
            msg: 1,
            family: 2,
            attrs: &attrs,
            what: WHAT[i],
        })
        .collect();
    let dump = with_dump.then_some(Request {
        msg: 6,
        family: 2,
        attrs: &attrs,
        what: "list",
    });
    let mut objects = 0;
    let r = run(&mut k, &requests, dump, |_, _| {
        objects += 1;
        Ok(())
    });
    (r, objects, k)
}

#[test]
fn every_pipeline_ends_with_every_answer_read_and_none_awaited() {
    let mut cases = 0;
    for gets in 0..=4usize {
        for with_dump in [false, true] {
            let n = gets + usize::from(with_dump);
            if n == 0 {
                continue;
            }
            for failing in 0..(1u32 << n) {
                for errno in [libc::ENOENT, libc::EINVAL, libc::EBUSY] {
                    for (dump_objects, per_datagram) in [(0, 1), (3, 1), (5, 2)] {
                        for dump_intr in [false, true] {
                            for coalesce in 0..=3 {
                                let errnos: Vec<i32> = (0..n)
                                    .map(|p| if failing >> p & 1 == 1 { errno } else { 0 })
                                    .collect();
                                let script = Script {
                                    no_cap: false,
                                    errnos: errnos.clone(),
                                    dump_objects,
                                    per_datagram,
                                    dump_intr,
                                    coalesce,
                                };
                                let (r, objects, k) = run_script(gets, with_dump, script.clone());
                                cases += 1;
                                assert!(!k.hung, "waited for an answer never sent: {script:?}");
                                assert!(k.queue.is_empty() && k.dump.is_none(), "{script:?}");
                                let dump_failed = with_dump && errnos[gets] != 0;
                                let p = match r {
                                    Err(e) => {
                                        assert!(dump_failed, "{script:?}: {e}");
                                        continue;
                                    }
                                    Ok(p) => p,
                                };
                                assert!(!dump_failed, "{script:?}: a failed dump is an error");
                                assert_eq!(p.replies.len(), gets);
                                for (i, r) in p.replies.iter().enumerate() {
                                    match (errnos[i], r) {
                                        (0, Ok(payload)) => {
                                            assert_eq!(payload[..], (i as u32).to_ne_bytes())
                                        }
                                        (0, Err(e)) => panic!("{script:?}: get {i}: {e}"),
                                        (_, Ok(_)) => panic!("{script:?}: get {i} succeeded"),
                                        (_, Err(e)) => assert_eq!(
                                            e.kind(),
                                            expected_kind(errno),
                                            "{script:?}: {e}"
                                        ),
                                    }
                                }
                                if with_dump {
                                    if dump_intr {
                                        assert!(matches!(p.dump, Some(Err(DumpInterrupted))));
                                        assert_eq!(objects, 0, "an interrupted dump's objects");
                                    } else {
                                        assert!(matches!(p.dump, Some(Ok(()))), "{script:?}");
                                        assert_eq!(objects, dump_objects, "{script:?}");
                                    }
                                } else {
                                    assert!(p.dump.is_none());
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 5_000, "{cases} cases");
}

#[test]
fn without_cap_net_admin_the_first_answer_ends_the_pipeline_as_not_permitted() {
    for gets in 0..=4usize {
        for with_dump in [false, true] {
            if gets == 0 && !with_dump {
                continue;
            }
            let script = Script {
                no_cap: true,
                dump_objects: 2,
                per_datagram: 1,
                ..Script::default()
            };
            let (r, objects, k) = run_script(gets, with_dump, script);
            assert!(!k.hung, "{gets} gets, dump {with_dump}: waited forever");
            assert_eq!(objects, 0);
            let e = r.err().expect("EPERM is an error");
            assert_eq!(e.kind(), ErrorKind::NotPermitted, "{e}");
        }
    }
}
