//! The bytes of a transaction's batch, checked without a socket, against captures of what
//! the kernel accepted.
//!
//! `recorded_batches_match_the_captures` needs no root: each transaction is sent over a
//! [`Recorder`] (no socket) and its batch compared byte for byte with `tests/captures/*.hex`.
//! `the_kernel_accepts_the_captured_batches` (root, its own network namespace) commits the
//! same transactions through a real [`Session`], taps what the socket sent, and checks that
//! it is the capture too: the captures are what the kernel took. Sequence numbers differ
//! per socket; both sides number a batch's messages from 0 before comparing.
//! `XTNL_WRITE_CAPTURES=1` with root rewrites the captures from the kernel run.

mod common;

use common::in_netns;
use std::net::{IpAddr, Ipv4Addr};
use xtnl::lock::LockMode;
use xtnl::model::{Action, Dir, Family, IpNet, L4Proto, Match, PortRange, Rule};
use xtnl::nft::{ChainSpec, Op, RulePosition, Session, TableRef, Transaction};
use xtnl::transport::Recorder;

/// Named transactions, in the order the kernel run commits them (later ones use what the
/// earlier ones made).
fn transactions() -> Vec<(&'static str, Transaction)> {
    let t = TableRef::new(Family::Ipv4, "xtnl_rec");
    let input = t.chain("input");
    let work = t.chain("work");
    let mut tables = Transaction::new();
    tables
        .ensure_table(&t)
        .ensure_chain(
            &t,
            ChainSpec::base(
                "input",
                xtnl::ipt::tables::builtin("filter", "INPUT")
                    .unwrap()
                    .base(xtnl::model::ChainPolicy::Accept),
            ),
        )
        .create_chain(&t, ChainSpec::regular("work"));

    let tcp = |port: u16| {
        Rule::new()
            .with(Match::Protocol {
                proto: L4Proto::Tcp,
                negated: false,
            })
            .with(Match::Port {
                dir: Dir::Destination,
                ports: PortRange::single(port),
                negated: false,
            })
    };
    let mut native = Transaction::new();
    native
        .append_rule(&input, tcp(22).action(Action::Accept).comment("ssh"))
        .append_rule(
            &input,
            Rule::new()
                .with(Match::Address {
                    dir: Dir::Source,
                    net: IpNet::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 0)), 24).unwrap(),
                    negated: false,
                })
                .action(Action::Jump("work".into())),
        )
        .insert_rule(
            &work,
            Rule::new()
                .with(Match::Protocol {
                    proto: L4Proto::Tcp,
                    negated: false,
                })
                .with(Match::PortSet {
                    dir: Dir::Destination,
                    ports: vec![
                        PortRange::single(80),
                        PortRange::single(443),
                        PortRange::new(8000, 8080).unwrap(),
                    ],
                    negated: false,
                })
                .action(Action::Drop),
        );

    let nat = TableRef::new(Family::Ipv4, "nat");
    let mut ipt = Transaction::new();
    ipt.ensure_table(&nat);
    let builtin = xtnl::ipt::tables::builtin("nat", "PREROUTING").unwrap();
    ipt.ensure_chain(
        &nat,
        ChainSpec::base("PREROUTING", builtin.base(xtnl::model::ChainPolicy::Accept)),
    );
    ipt.create_chain(&nat, ChainSpec::regular("vcld-5205"));
    for line in [
        "-A PREROUTING -p tcp --dport 2222 -j vcld-5205",
        "-A vcld-5205 -d 203.0.113.7/32 -p tcp -m tcp --dport 2222 -m comment --comment res -j DNAT --to-destination 192.0.2.10:22",
    ] {
        let args = xtnl::ipt::parse::split_words(&format!("-t nat {line}")).unwrap();
        let inv = xtnl::ipt::parse::parse(&args, Family::Ipv4).unwrap();
        let xtnl::ipt::parse::Command::Append { chain, rule } = inv.command else {
            panic!("{line}: not an append");
        };
        let encoded = xtnl::ipt::compat::encode(&nat, &rule).unwrap();
        ipt.push(Op::AddEncodedRule {
            chain: nat.chain(chain),
            rule: encoded,
            position: RulePosition::Append,
        });
    }

    // `restore -c` of `:INPUT DROP [12:3456]`: the base chain's policy with its counters
    // (`NFTA_CHAIN_COUNTERS`, packets then bytes, as iptables-nft-restore -c sends them).
    let filter = TableRef::new(Family::Ipv4, "filter");
    let mut counted = Transaction::new();
    counted.ensure_table(&filter).ensure_chain(
        &filter,
        ChainSpec::base(
            "INPUT",
            xtnl::ipt::tables::builtin("filter", "INPUT")
                .unwrap()
                .base(xtnl::model::ChainPolicy::Drop),
        )
        .with_counters(xtnl::model::Counters {
            packets: 12,
            bytes: 3456,
        }),
    );

    let mut teardown = Transaction::new();
    teardown
        .flush_chain(&work)
        .flush_chain(&input)
        .delete_chain(&work)
        .delete_table(&t)
        .flush_table(&nat);
    vec![
        ("table_and_chains", tables),
        ("native_rules", native),
        ("iptables_nft_rules", ipt),
        ("policy_counters", counted),
        ("teardown", teardown),
    ]
}

/// The batch with every message's sequence number made relative to the first (BEGIN).
fn normalized(batch: &[u8]) -> Vec<u8> {
    let mut out = batch.to_vec();
    let base = u32::from_ne_bytes(out[8..12].try_into().unwrap());
    let mut at = 0;
    while at + 16 <= out.len() {
        let len = u32::from_ne_bytes(out[at..at + 4].try_into().unwrap()) as usize;
        assert!(
            len >= 16 && at + len <= out.len(),
            "bad message length {len}"
        );
        let seq = u32::from_ne_bytes(out[at + 8..at + 12].try_into().unwrap());
        out[at + 8..at + 12].copy_from_slice(&seq.wrapping_sub(base).to_ne_bytes());
        at += (len + 3) & !3;
    }
    assert_eq!(at, out.len(), "trailing bytes");
    out
}

fn recorded(tx: &Transaction) -> Vec<u8> {
    let mut rec = Recorder::new(1000);
    tx.send_over(&mut rec)
        .expect("the recorder acknowledges every message");
    let sent = rec.take_sent();
    assert_eq!(sent.len(), 1, "one datagram per batch");
    normalized(&sent[0])
}

fn capture_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/captures")
        .join(format!("{name}.hex"))
}

fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::new();
    for chunk in bytes.chunks(32) {
        for b in chunk {
            s.push_str(&format!("{b:02x}"));
        }
        s.push('\n');
    }
    s
}

fn read_capture(name: &str) -> Vec<u8> {
    let path = capture_path(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let hex: String = text.split_whitespace().collect();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex capture"))
        .collect()
}

/// The first offset where two batches differ, for the failure message.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(
            "first difference at byte {i} ({:#04x} vs {:#04x})",
            a[i], b[i]
        ),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

#[test]
fn recorded_batches_match_the_captures() {
    for (name, tx) in transactions() {
        let got = recorded(&tx);
        let want = read_capture(name);
        assert!(
            got == want,
            "{name}: the recorded batch differs from tests/captures/{name}.hex: {}",
            first_difference(&got, &want)
        );
    }
}

#[test]
fn the_recorder_numbers_and_acknowledges_like_the_kernel() {
    // Every message but BEGIN/END asks for an ACK; the recorder answers each with errno 0,
    // and the batch's own accounting (acked == operations) accepts that.
    let (_, tx) = transactions().remove(1);
    let mut rec = Recorder::new(41);
    let reply = tx.send_over(&mut rec).unwrap();
    assert!(reply.echoes.is_empty());
    let batch = &rec.sent()[0];
    assert_eq!(u32::from_ne_bytes(batch[8..12].try_into().unwrap()), 42);
    // A batch that is not sent is not recorded: an invalid transaction fails before.
    let mut bad = Transaction::new();
    bad.ensure_table(&TableRef::new(Family::Ipv4, "a\u{1}b"));
    let mut rec = Recorder::new(0);
    assert!(bad.send_over(&mut rec).is_err());
    assert!(rec.sent().is_empty());
}

#[test]
fn the_kernel_accepts_the_captured_batches() {
    in_netns(|| {
        let mut s = Session::builder()
            .lock_mode(LockMode::Never)
            .open()
            .expect("session");
        s.socket().record_sends();
        let write = std::env::var_os("XTNL_WRITE_CAPTURES").is_some();
        for (name, tx) in transactions() {
            s.socket().take_recorded();
            s.commit(&tx)
                .unwrap_or_else(|e| panic!("{name}: the kernel refused the batch: {e}"));
            let sent = s.socket().take_recorded();
            let batch = sent
                .iter()
                .find(|d| d.len() >= 16 && u16::from_ne_bytes([d[4], d[5]]) == 0x10)
                .unwrap_or_else(|| panic!("{name}: no batch among {} datagrams", sent.len()));
            let got = normalized(batch);
            assert_eq!(
                got,
                recorded(&tx),
                "{name}: socket and recorder sent different bytes"
            );
            if write {
                std::fs::create_dir_all(capture_path(name).parent().unwrap()).unwrap();
                std::fs::write(capture_path(name), to_hex(&got)).unwrap();
            }
            let want = read_capture(name);
            assert!(
                got == want,
                "{name}: the kernel took bytes that differ from tests/captures/{name}.hex: {}",
                first_difference(&got, &want)
            );
        }
        // The kernel keeps the counters the policy was sent with, and reports them.
        let chains = s
            .list_chains(&TableRef::new(Family::Ipv4, "filter"))
            .expect("list filter");
        let input = chains
            .iter()
            .find(|c| c.chain.name == "INPUT")
            .expect("INPUT");
        assert_eq!(
            input.counters,
            Some(xtnl::model::Counters {
                packets: 12,
                bytes: 3456
            })
        );
    });
}
