//! Engine benchmark: library transactions against the same kernel messages sent as a
//! hand-built batch, with N = 10, 1,000 and 10,000 reservation chains in `ip nat`.
//!
//! Everything runs on the main thread, inside a network namespace the bench creates before
//! criterion starts: the host's ruleset is never touched.
//!
//! Per N, one criterion group measures:
//! - `flush` / `bare_flush`: flush one reservation chain (2 DNAT rules); the chain is refilled
//!   between iterations, untimed.
//! - `setup` / `bare_setup`: chain + jump from PREROUTING + 2 DNAT rules, one batch; untimed
//!   teardown between iterations.
//! - `teardown` / `bare_teardown`: delete the jump by handle, flush and delete the chain, one
//!   batch; untimed setup between iterations.
//! - `getgen` (`Session::generation`) / `bare_getgen`: one GETGEN round trip.
//!
//! The bare variants send bytes built with the public wire layer (`Batch::push` +
//! `finish_bytes`, the reprs of `xtnl::wire::nftables`, `xtnl::nft::codec::encode`) with one
//! `send`, then drain the replies without blocking and check every ACK.
//!
//! Before the groups, the peak memory of listing 30,000 rules (N = 10,000) is measured. After
//! criterion's output a plain summary table is printed (medians of per-iteration timings the
//! bench records itself, from the measurement phase), followed by a breakdown of where the
//! library's time goes beside the bare batch.

#[path = "../src/scratch.rs"]
mod scratch;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use xtnl::model::{
    Action, BaseChain, ChainPolicy, ChainType, Family, Hook, Interface, L4Proto, NatTarget,
    PortRange, Rule, validate_name,
};
use xtnl::nft::{ChainSpec, Op, Session, TableRef, Transaction, codec};
use xtnl::transport::{Batch, NlSocket};
use xtnl::wire::netlink::{
    AckRepr, MsgWriter, NLM_F_ACK, NLM_F_CREATE, NLM_F_REQUEST, NLMSG_ERROR, NlMsgs,
};
use xtnl::wire::nftables::{
    ChainRepr, GenRepr, RuleRepr, msg, nfgenmsg, nfproto, nft_type, split_nfgenmsg,
};

/// Table sizes (reservation chains) benchmarked.
const SIZES: [usize; 3] = [10, 1_000, 10_000];
/// Reservations per populating transaction (one sendmsg each).
const POPULATE_CHUNK: usize = 1_000;
/// Criterion settings per benchmark; the summary uses the last `SAMPLE_SIZE` calls of each
/// benchmark's routine, i.e. the measurement phase (warm-up calls come first).
const SAMPLE_SIZE: usize = 20;
const WARM_UP: Duration = Duration::from_millis(500);
const MEASUREMENT: Duration = Duration::from_secs(5);

/// The reservation whose chain `flush` empties (one of the N).
const FLUSH_TARGET: usize = 0;
/// The reservation `setup` and `teardown` create and remove (not one of the N).
const BENCH_ID: usize = 1_000_000;

// ---------------------------------------------------------------------------------------
// The workload: reservations as tests/engine.rs builds them.

fn nat() -> TableRef {
    TableRef::new(Family::Ipv4, "nat")
}

fn prerouting() -> ChainSpec {
    ChainSpec::base(
        "PREROUTING",
        BaseChain {
            chain_type: ChainType::Nat,
            hook: Hook::Prerouting,
            priority: -100,
            policy: ChainPolicy::Accept,
        },
    )
}

fn chain_name(id: usize) -> String {
    format!("vcld-{id}")
}

fn dnat(port: u16, to: &str, to_port: u16) -> Rule {
    Rule::new()
        .in_interface(Interface::new("eth1").expect("interface name"))
        .protocol(L4Proto::Tcp)
        .dport(PortRange::single(port))
        .counted()
        .action(Action::Dnat(NatTarget {
            addr: to.parse().expect("address"),
            ports: Some(PortRange::single(to_port)),
        }))
        .comment(format!("VCL: forward eth1:tcp/{port} --> {to}:{to_port}"))
}

fn jump(id: usize) -> Rule {
    let name = chain_name(id);
    Rule::new()
        .counted()
        .action(Action::Jump(name.clone()))
        .comment(format!(
            "VCL: jump from nat table PREROUTING chain to reservation NAT chain {name}"
        ))
}

/// The two forwards of reservation `id`, in the order they are inserted (at the head).
fn forwards(id: usize) -> [Rule; 2] {
    let port = 20_000 + (id % 40_000) as u16;
    let host = format!("10.{}.{}.{}", (id >> 16) & 255, (id >> 8) & 255, id & 255);
    [dnat(port, &host, 3389), dnat(port + 1, &host, 22)]
}

fn add_reservation(tx: &mut Transaction, id: usize) {
    let t = nat();
    let chain = t.chain(chain_name(id));
    let [rdp, ssh] = forwards(id);
    tx.ensure_chain(&t, ChainSpec::regular(&chain.name))
        .insert_rule(&t.chain("PREROUTING"), jump(id))
        .insert_rule(&chain, rdp)
        .insert_rule(&chain, ssh);
}

/// Set-up of one reservation: ensure chain, insert jump, insert 2 DNAT (4 operations).
fn setup_tx(id: usize) -> Transaction {
    let mut tx = Transaction::new();
    add_reservation(&mut tx, id);
    tx
}

/// Teardown of one reservation: delete the jump by handle, flush, delete the chain.
fn teardown_tx(id: usize, jump_handle: u64) -> Transaction {
    let t = nat();
    let chain = t.chain(chain_name(id));
    let mut tx = Transaction::new();
    tx.delete_rule(&t.chain("PREROUTING"), jump_handle)
        .flush_chain(&chain)
        .delete_chain(&chain);
    tx
}

fn flush_tx(id: usize) -> Transaction {
    let mut tx = Transaction::new();
    tx.flush_chain(&nat().chain(chain_name(id)));
    tx
}

fn refill_tx(id: usize) -> Transaction {
    let chain = nat().chain(chain_name(id));
    let [rdp, ssh] = forwards(id);
    let mut tx = Transaction::new();
    tx.insert_rule(&chain, rdp).insert_rule(&chain, ssh);
    tx
}

/// Adds reservations `from..to`, `POPULATE_CHUNK` per transaction.
fn populate(s: &mut Session, from: usize, to: usize) -> Duration {
    let t = nat();
    let start = Instant::now();
    let mut i = from;
    while i < to {
        let end = (i + POPULATE_CHUNK).min(to);
        let mut tx = Transaction::new();
        tx.ensure_table(&t).ensure_chain(&t, prerouting());
        for id in i..end {
            add_reservation(&mut tx, id);
        }
        s.commit(&tx)
            .unwrap_or_else(|e| panic!("populate reservations {i}..{end}: {e}"));
        i = end;
    }
    start.elapsed()
}

fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .unwrap_or_else(|e| panic!("open netlink session: {e}"))
}

// ---------------------------------------------------------------------------------------
// Bare batches: the same messages, built with the public wire layer.

fn rule_repr(chain: &str, rule: &Rule) -> RuleRepr {
    let (exprs, userdata) = codec::encode(rule, Family::Ipv4).expect("encode rule");
    RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: chain.into(),
        exprs,
        userdata,
        ..Default::default()
    }
}

fn chain_repr(name: &str) -> ChainRepr {
    ChainRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        name: name.into(),
        ..Default::default()
    }
}

fn bare_setup_bytes(sock: &mut NlSocket, id: usize) -> Vec<u8> {
    let name = chain_name(id);
    let chain = chain_repr(&name);
    let jump = rule_repr("PREROUTING", &jump(id));
    let [rdp, ssh] = forwards(id).map(|r| rule_repr(&name, &r));
    let fam = nfproto::IPV4;
    let mut b = Batch::new(sock, None);
    b.push(msg::NEWCHAIN, fam, NLM_F_CREATE, String::new(), |w| {
        chain.emit(w)
    });
    for r in [&jump, &rdp, &ssh] {
        b.push(msg::NEWRULE, fam, NLM_F_CREATE, String::new(), |w| {
            r.emit(w)
        });
    }
    b.finish_bytes().expect("encode bare setup")
}

fn bare_teardown_bytes(sock: &mut NlSocket, id: usize, jump_handle: u64) -> Vec<u8> {
    let name = chain_name(id);
    let del_jump = RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: "PREROUTING".into(),
        handle: Some(jump_handle),
        ..Default::default()
    };
    let flush = RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: name.clone(),
        ..Default::default()
    };
    let chain = chain_repr(&name);
    let fam = nfproto::IPV4;
    let mut b = Batch::new(sock, None);
    b.push(msg::DELRULE, fam, 0, String::new(), |w| del_jump.emit(w));
    b.push(msg::DELRULE, fam, 0, String::new(), |w| flush.emit(w));
    b.push(msg::DELCHAIN, fam, 0, String::new(), |w| chain.emit(w));
    b.finish_bytes().expect("encode bare teardown")
}

fn bare_flush_bytes(sock: &mut NlSocket, id: usize) -> Vec<u8> {
    let flush = RuleRepr {
        family: nfproto::IPV4,
        table: "nat".into(),
        chain: chain_name(id),
        ..Default::default()
    };
    let mut b = Batch::new(sock, None);
    b.push(msg::DELRULE, nfproto::IPV4, 0, String::new(), |w| {
        flush.emit(w)
    });
    b.finish_bytes().expect("encode bare flush")
}

/// Sends a batch in one `send` and drains what the kernel queued (it processes the batch
/// inside `sendmsg`). Panics on any error ACK; returns the number of ACKs.
fn send_batch(sock: &mut NlSocket, bytes: &[u8]) -> usize {
    sock.send(bytes).expect("send batch");
    let mut acks = 0;
    while let Some(dgram) = sock.recv(true).expect("receive") {
        for m in NlMsgs::new(dgram) {
            let m = m.expect("reply framing");
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m).expect("parse ack");
                assert!(
                    ack.errno == 0,
                    "bare batch refused: errno {} ({:?})",
                    ack.errno,
                    ack.ext_msg
                );
                acks += 1;
            }
        }
    }
    acks
}

fn getgen_bytes(sock: &mut NlSocket) -> (Vec<u8>, u32) {
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

/// A GETGEN round trip from prebuilt bytes: send, block for the NEWGEN reply and the ACK.
fn bare_getgen(sock: &mut NlSocket, bytes: &[u8], seq: u32) -> u32 {
    sock.send(bytes).expect("send GETGEN");
    let mut id = None;
    loop {
        let Some(dgram) = sock.recv(false).expect("receive") else {
            continue;
        };
        for m in NlMsgs::new(dgram) {
            let m = m.expect("reply framing");
            if m.seq() != seq {
                continue;
            }
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m).expect("parse ack");
                assert!(ack.errno == 0, "GETGEN refused: errno {}", ack.errno);
                return id.expect("GETGEN acknowledged without a reply");
            }
            let (_, attrs) = split_nfgenmsg(m.payload()).expect("nfgenmsg");
            id = Some(GenRepr::parse(attrs).expect("NEWGEN").id);
        }
    }
}

/// The handle of a chain, by a single-object GETCHAIN (O(1); a dump would be O(N)).
fn chain_handle(sock: &mut NlSocket, name: &str) -> u64 {
    let seq = sock.next_seq();
    let c = chain_repr(name);
    let mut w = MsgWriter::new();
    w.message(
        nft_type(msg::GETCHAIN),
        NLM_F_REQUEST | NLM_F_ACK,
        seq,
        &nfgenmsg(nfproto::IPV4, 0),
        |a| c.emit(a),
    );
    sock.send(w.as_bytes()).expect("send GETCHAIN");
    let mut handle = None;
    loop {
        let Some(dgram) = sock.recv(false).expect("receive") else {
            continue;
        };
        for m in NlMsgs::new(dgram) {
            let m = m.expect("reply framing");
            if m.seq() != seq {
                continue;
            }
            if m.ty() == NLMSG_ERROR {
                let ack = AckRepr::parse(&m).expect("parse ack");
                assert!(ack.errno == 0, "GETCHAIN {name}: errno {}", ack.errno);
                return handle.expect("GETCHAIN acknowledged without a reply");
            }
            let (fam, attrs) = split_nfgenmsg(m.payload()).expect("nfgenmsg");
            handle = ChainRepr::parse(fam, attrs).expect("NEWCHAIN").handle;
        }
    }
}

/// The handle of the jump that a set-up batch (chain first, then the jump) added: the
/// kernel numbers a table's objects from one counter in batch order, so it is the chain's
/// handle + 1. Checked against a listing by [`check_bare_batches`]; a wrong guess would also
/// make the teardown fail loudly (ENOENT, then EBUSY), never delete another rule.
fn jump_handle_after_setup(sock: &mut NlSocket, id: usize) -> u64 {
    chain_handle(sock, &chain_name(id)) + 1
}

/// Untimed: sets up reservation `id` through the library, returning the jump's handle.
fn setup_with_handle(s: &mut Session, id: usize) -> u64 {
    let mut tx = setup_tx(id);
    tx.want_rule_handles(true);
    let done = s.commit(&tx).expect("untimed setup");
    done.rule_handles
        .iter()
        .find(|(op, _)| *op == 1)
        .map(|(_, h)| *h)
        .expect("handle of the jump (operation #1)")
}

/// The session's kernel socket, for the bare batches sent beside the library.
fn sock(s: &mut Session) -> &mut NlSocket {
    s.socket()
        .kernel_socket()
        .expect("a session on the kernel's socket")
}

/// Verifies once that the bare batches do what the library's do.
fn check_bare_batches(s: &mut Session) {
    let t = nat();
    let chain = t.chain(chain_name(BENCH_ID));
    // Bare setup, then compare with the library's rules.
    let bytes = bare_setup_bytes(sock(s), BENCH_ID);
    assert_eq!(
        send_batch(sock(s), &bytes),
        1,
        "one ACK (the last message's) for bare setup"
    );
    let listed: Vec<Rule> = s
        .list_rules(&chain)
        .expect("list bench chain")
        .into_iter()
        .map(|r| r.rule)
        .collect();
    let [rdp, ssh] = forwards(BENCH_ID);
    assert_eq!(
        listed,
        vec![ssh, rdp],
        "bare setup wrote the library's rules"
    );
    let guessed = jump_handle_after_setup(sock(s), BENCH_ID);
    let pre = s
        .list_rules(&t.chain("PREROUTING"))
        .expect("list PREROUTING");
    let head = &pre[0];
    assert_eq!(head.rule, jump(BENCH_ID), "jump inserted at the head");
    assert_eq!(head.handle, guessed, "jump handle = chain handle + 1");
    // Bare teardown removes it all.
    let bytes = bare_teardown_bytes(sock(s), BENCH_ID, guessed);
    assert_eq!(
        send_batch(sock(s), &bytes),
        1,
        "one ACK (the last message's) for bare teardown"
    );
    assert!(
        s.list_chains(&t)
            .expect("list chains")
            .iter()
            .all(|c| c.chain.name != chain.name)
    );
    // Bare flush empties the target.
    let target = t.chain(chain_name(FLUSH_TARGET));
    let bytes = bare_flush_bytes(sock(s), FLUSH_TARGET);
    assert_eq!(send_batch(sock(s), &bytes), 1);
    assert!(s.list_rules(&target).expect("list target").is_empty());
    s.commit(&refill_tx(FLUSH_TARGET)).expect("refill");
    assert_eq!(s.list_rules(&target).expect("list target").len(), 2);
}

// ---------------------------------------------------------------------------------------
// Recording: every timed iteration, grouped by routine call.

#[derive(Default)]
struct Samples {
    /// (N, operation) -> one vector of per-iteration nanoseconds per call of the routine.
    calls: BTreeMap<(usize, &'static str), Vec<Vec<f64>>>,
}

impl Samples {
    fn call(&mut self, n: usize, op: &'static str) -> &mut Vec<f64> {
        let calls = self.calls.entry((n, op)).or_default();
        calls.push(Vec::new());
        calls.last_mut().expect("just pushed")
    }
    /// Per-iteration timings of the measurement phase (the last `SAMPLE_SIZE` calls).
    fn measured(&self, n: usize, op: &str) -> Option<Vec<f64>> {
        let calls = self.calls.iter().find(|((k, o), _)| *k == n && *o == op)?.1;
        let skip = calls.len().saturating_sub(SAMPLE_SIZE);
        let v: Vec<f64> = calls[skip..].iter().flatten().copied().collect();
        (!v.is_empty()).then_some(v)
    }
    fn median(&self, n: usize, op: &str) -> Option<f64> {
        self.measured(n, op).map(|mut v| median(&mut v))
    }
    fn count(&self, n: usize, op: &str) -> usize {
        self.measured(n, op).map_or(0, |v| v.len())
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

fn ns(d: Duration) -> f64 {
    d.as_nanos() as f64
}

fn fmt_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} us", ns / 1e3)
    }
}

/// Times `op` once, after `prepare` (untimed); records it and adds it to `total`.
fn timed(rec: &mut Vec<f64>, total: &mut Duration, op: impl FnOnce()) {
    let start = Instant::now();
    op();
    let d = start.elapsed();
    rec.push(ns(d));
    *total += d;
}

// ---------------------------------------------------------------------------------------
// The benchmarks of one table size.

fn bench_size(g: &mut BenchmarkGroup<'_, WallTime>, s: &mut Session, rec: &mut Samples, n: usize) {
    let flush = flush_tx(FLUSH_TARGET);
    let refill = refill_tx(FLUSH_TARGET);
    let setup = setup_tx(BENCH_ID);

    g.bench_function("flush", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "flush");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                s.commit(&refill).expect("refill");
                timed(r, &mut total, || {
                    s.commit(&flush).expect("flush");
                });
            }
            total
        })
    });
    let bytes = bare_flush_bytes(sock(s), FLUSH_TARGET);
    g.bench_function("bare_flush", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "bare_flush");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                s.commit(&refill).expect("refill");
                let mut acks = 0;
                timed(r, &mut total, || acks = send_batch(sock(s), &bytes));
                assert_eq!(acks, 1);
            }
            total
        })
    });

    g.bench_function("setup", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "setup");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                timed(r, &mut total, || {
                    s.commit(&setup).expect("setup");
                });
                let h = jump_handle_after_setup(sock(s), BENCH_ID);
                s.commit(&teardown_tx(BENCH_ID, h))
                    .expect("untimed teardown");
            }
            total
        })
    });
    let bytes = bare_setup_bytes(sock(s), BENCH_ID);
    g.bench_function("bare_setup", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "bare_setup");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut acks = 0;
                timed(r, &mut total, || acks = send_batch(sock(s), &bytes));
                assert_eq!(acks, 1);
                let h = jump_handle_after_setup(sock(s), BENCH_ID);
                s.commit(&teardown_tx(BENCH_ID, h))
                    .expect("untimed teardown");
            }
            total
        })
    });

    g.bench_function("teardown", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "teardown");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let h = setup_with_handle(s, BENCH_ID);
                let tx = teardown_tx(BENCH_ID, h);
                timed(r, &mut total, || {
                    s.commit(&tx).expect("teardown");
                });
            }
            total
        })
    });
    g.bench_function("bare_teardown", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "bare_teardown");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let h = setup_with_handle(s, BENCH_ID);
                let bytes = bare_teardown_bytes(sock(s), BENCH_ID, h);
                let mut acks = 0;
                timed(r, &mut total, || acks = send_batch(sock(s), &bytes));
                assert_eq!(acks, 1);
            }
            total
        })
    });

    g.bench_function("getgen", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "getgen");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                timed(r, &mut total, || {
                    std::hint::black_box(s.generation().expect("GETGEN"));
                });
            }
            total
        })
    });
    let (bytes, seq) = getgen_bytes(sock(s));
    g.bench_function("bare_getgen", |b| {
        b.iter_custom(|iters| {
            let r = rec.call(n, "bare_getgen");
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                timed(r, &mut total, || {
                    std::hint::black_box(bare_getgen(sock(s), &bytes, seq));
                });
            }
            total
        })
    });
}

// ---------------------------------------------------------------------------------------
// Peak memory of listing.

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

struct ListingPeak {
    what: String,
    rules: usize,
    time: Duration,
    baseline_rss_kib: u64,
    peak_kib: u64,
    /// Resident after the listing, with the list still alive.
    held_kib: u64,
}

/// Lists with `list`, reporting how far the process's peak RSS rose above its RSS just
/// before. Free heap is handed back first (malloc_trim) and the peak is reset
/// (clear_refs 5), so that neither earlier allocations nor earlier peaks hide the growth.
fn listing_peak(what: &str, list: impl FnOnce() -> Vec<xtnl::nft::ListedRule>) -> ListingPeak {
    // SAFETY: malloc_trim only returns free memory of the allocator to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM (clear_refs 5)");
    let baseline = status_kib("VmRSS");
    let start = Instant::now();
    let rules = list();
    let time = start.elapsed();
    let peak = status_kib("VmHWM");
    let held = status_kib("VmRSS");
    let out = ListingPeak {
        what: what.into(),
        rules: rules.len(),
        time,
        baseline_rss_kib: baseline,
        peak_kib: peak.saturating_sub(baseline),
        held_kib: held.saturating_sub(baseline),
    };
    drop(std::hint::black_box(rules));
    out
}

fn measure_listing(s: &mut Session) -> Vec<ListingPeak> {
    let n = *SIZES.last().expect("sizes");
    populate(s, 0, n);
    let t = nat();
    let table = listing_peak(&format!("list_table_rules(ip nat), N={n}"), || {
        s.list_table_rules(&t).expect("list table rules")
    });
    assert_eq!(table.rules, 3 * n, "N jumps and 2N forwards");
    let pre = t.chain("PREROUTING");
    let chain = listing_peak(&format!("list_rules(PREROUTING), N={n}"), || {
        s.list_rules(&pre).expect("list PREROUTING")
    });
    assert_eq!(chain.rules, n);
    // Back to an empty ruleset for the groups, which grow it from N = 10.
    let mut tx = Transaction::new();
    tx.delete_table(&t);
    s.commit(&tx).expect("delete table nat");
    vec![table, chain]
}

// ---------------------------------------------------------------------------------------
// Breakdown: where the library's time goes beside the bare batch. Not criterion: variants of
// one operation at the same N, interleaved round-robin so that drift hits all alike.

/// What `Session::commit` does before its `send`, rebuilt with public API: clone the
/// transaction, describe and encode every operation (names checked, rules validated and
/// encoded by the codec), frame them in a `Batch`. Returns the bytes.
fn encode_like_library(sock: &mut NlSocket, tx: &Transaction) -> Vec<u8> {
    let tx = tx.clone();
    let mut b = Batch::new(sock, None);
    for op in tx.ops() {
        let desc = op.to_string();
        match op {
            Op::EnsureChain { table, chain } => {
                validate_name("table", &table.name).expect("table name");
                validate_name("chain", &chain.name).expect("chain name");
                let c = chain_repr(&chain.name);
                b.push(msg::NEWCHAIN, nfproto::IPV4, NLM_F_CREATE, desc, |w| {
                    c.emit(w)
                });
            }
            Op::AddRule { chain, rule, .. } => {
                validate_name("chain", &chain.name).expect("chain name");
                let r = rule_repr(&chain.name, rule);
                b.push(msg::NEWRULE, nfproto::IPV4, NLM_F_CREATE, desc, |w| {
                    r.emit(w)
                });
            }
            Op::DeleteRule { chain, handle } => {
                validate_name("chain", &chain.name).expect("chain name");
                let r = RuleRepr {
                    family: nfproto::IPV4,
                    table: chain.table.name.clone(),
                    chain: chain.name.clone(),
                    handle: Some(*handle),
                    ..Default::default()
                };
                b.push(msg::DELRULE, nfproto::IPV4, 0, desc, |w| r.emit(w));
            }
            Op::DeleteChain(chain) => {
                validate_name("chain", &chain.name).expect("chain name");
                let c = chain_repr(&chain.name);
                b.push(msg::DELCHAIN, nfproto::IPV4, 0, desc, |w| c.emit(w));
            }
            Op::FlushChain(chain) => {
                validate_name("chain", &chain.name).expect("chain name");
                let r = RuleRepr {
                    family: nfproto::IPV4,
                    table: chain.table.name.clone(),
                    chain: chain.name.clone(),
                    ..Default::default()
                };
                b.push(msg::DELRULE, nfproto::IPV4, 0, desc, |w| r.emit(w));
            }
            other => panic!("breakdown does not rebuild {other}"),
        }
    }
    b.finish_bytes().expect("encode")
}

/// Untimed preparation of one call: the library transaction and the bare bytes to send.
type Prepare<'a> = Box<dyn FnMut(&mut Session) -> (Transaction, Vec<u8>) + 'a>;

/// One operation's variants for the breakdown.
struct OpVariants<'a> {
    op: &'static str,
    acks: usize,
    /// Untimed, before each timed call: the state it needs, and the library transaction and
    /// bare bytes of this call.
    before: Prepare<'a>,
    /// Untimed, after each timed call.
    after: Box<dyn FnMut(&mut Session) + 'a>,
}

struct Breakdown {
    n: usize,
    iters: usize,
    /// (operation, variant, median ns)
    rows: Vec<(&'static str, &'static str, f64)>,
}

const VARIANTS: [&str; 4] = [
    "library (Session::commit)",
    "bare: prebuilt bytes, send + drain",
    "bare + one drain() before send",
    "bare + drain() + bytes encoded per call like the library",
];

fn breakdown_iters(n: usize) -> usize {
    match n {
        0..=100 => 3_000,
        101..=1_000 => 1_000,
        _ => 100,
    }
}

fn breakdown(s: &mut Session, n: usize) -> Breakdown {
    let iters = breakdown_iters(n);
    let refill = refill_tx(FLUSH_TARGET);
    let flush = flush_tx(FLUSH_TARGET);
    let flush_bytes = bare_flush_bytes(sock(s), FLUSH_TARGET);
    let setup = setup_tx(BENCH_ID);
    let setup_bytes = bare_setup_bytes(sock(s), BENCH_ID);
    let ops = vec![
        OpVariants {
            op: "flush",
            acks: 1,
            before: Box::new(|s: &mut Session| {
                s.commit(&refill).expect("refill");
                (flush.clone(), flush_bytes.clone())
            }),
            after: Box::new(|_: &mut Session| {}),
        },
        OpVariants {
            op: "setup",
            acks: 1,
            before: Box::new(|_: &mut Session| (setup.clone(), setup_bytes.clone())),
            after: Box::new(|s: &mut Session| {
                let h = jump_handle_after_setup(sock(s), BENCH_ID);
                s.commit(&teardown_tx(BENCH_ID, h))
                    .expect("untimed teardown");
            }),
        },
        OpVariants {
            op: "teardown",
            acks: 1,
            before: Box::new(|s: &mut Session| {
                let h = setup_with_handle(s, BENCH_ID);
                let bytes = bare_teardown_bytes(sock(s), BENCH_ID, h);
                (teardown_tx(BENCH_ID, h), bytes)
            }),
            after: Box::new(|_: &mut Session| {}),
        },
    ];
    let mut rows = Vec::new();
    for mut o in ops {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
        let mut last_tx = Transaction::new();
        for i in 0..iters * VARIANTS.len() {
            let v = i % VARIANTS.len();
            let (tx, bare) = (o.before)(s);
            let start = Instant::now();
            let acks = match v {
                0 => {
                    s.commit(&tx).expect("library op");
                    o.acks
                }
                1 => send_batch(sock(s), &bare),
                2 => {
                    sock(s).drain().expect("drain");
                    send_batch(sock(s), &bare)
                }
                _ => {
                    let sock = sock(s);
                    let bytes = encode_like_library(sock, &tx);
                    sock.drain().expect("drain");
                    send_batch(sock, &bytes)
                }
            };
            times[v].push(ns(start.elapsed()));
            assert_eq!(acks, o.acks);
            (o.after)(s);
            last_tx = tx;
        }
        for (name, t) in VARIANTS.iter().zip(times.iter_mut()) {
            rows.push((o.op, *name, median(t)));
        }
        // Pure CPU: the per-call encoding alone, in a tight loop.
        let k = 20_000;
        let start = Instant::now();
        for _ in 0..k {
            std::hint::black_box(encode_like_library(sock(s), &last_tx));
        }
        rows.push((
            o.op,
            "cpu only: encode like the library (clone, describe, validate, encode, frame)",
            ns(start.elapsed()) / f64::from(k),
        ));
    }
    let k = 20_000;
    let start = Instant::now();
    for _ in 0..k {
        sock(s).drain().expect("drain");
    }
    rows.push((
        "-",
        "syscall only: drain() with nothing queued (one recvmsg, EAGAIN)",
        ns(start.elapsed()) / f64::from(k),
    ));
    Breakdown { n, iters, rows }
}

// ---------------------------------------------------------------------------------------

fn main() {
    // Before criterion (or anything else) starts: the main thread, which does all the work,
    // moves to a fresh network namespace, and refuses to go on in the initial one.
    if let Err(e) = scratch::enter_new() {
        panic!(
            "engine bench: cannot create a network namespace ({e}); it needs root \
             (CAP_SYS_ADMIN) and touches netfilter only inside its own namespace"
        );
    }
    if let Err(e) = scratch::refuse_initial() {
        panic!("engine bench: still in the initial network namespace, refusing to run: {e}");
    }
    let run_start = Instant::now();
    let mut s = session();

    // Peak memory of listing 30,000 rules, first, before criterion grows the heap.
    let listings = measure_listing(&mut s);

    let mut c = Criterion::default()
        .sample_size(SAMPLE_SIZE)
        .warm_up_time(WARM_UP)
        .measurement_time(MEASUREMENT)
        .configure_from_args();
    // `cargo test --benches` runs each benchmark once (`--test`); skip the breakdown then.
    let smoke_only = std::env::args().any(|a| a == "--test" || a == "--list");
    let mut rec = Samples::default();
    let mut populated = 0;
    let mut populate_times = Vec::new();
    let mut breakdowns = Vec::new();
    for &n in &SIZES {
        populate_times.push((n, populate(&mut s, populated, n)));
        populated = n;
        if n == SIZES[0] {
            check_bare_batches(&mut s);
        }
        let mut g = c.benchmark_group(format!("engine/N={n}"));
        if n >= 10_000 {
            // Iterations of milliseconds (with their untimed halves): equal-sized samples.
            g.sampling_mode(SamplingMode::Flat);
        }
        bench_size(&mut g, &mut s, &mut rec, n);
        g.finish();
        if !smoke_only {
            breakdowns.push(breakdown(&mut s, n));
        }
    }
    c.final_summary();

    print_summary(
        &rec,
        &listings,
        &populate_times,
        &breakdowns,
        run_start.elapsed(),
    );
}

fn print_summary(
    rec: &Samples,
    listings: &[ListingPeak],
    populate_times: &[(usize, Duration)],
    breakdowns: &[Breakdown],
    total: Duration,
) {
    println!();
    println!("==== xtnl engine summary ====");
    println!(
        "criterion run: medians of per-iteration times of the measurement phase, each \
         benchmark run after the other;"
    );
    println!(
        "interleaved: medians from the breakdown below, library and bare alternating \
         call by call (same kernel state, no drift between them)."
    );
    println!(
        "{:>6}  {:<9}  {:>10}  {:>10}  {:>6}  {:>11}  {:>10}  {:>6}  {:>15}",
        "N",
        "op",
        "library",
        "bare",
        "ratio",
        "lib (intl.)",
        "bare (intl.)",
        "ratio",
        "iters lib/bare"
    );
    let interleaved = |n: usize, op: &str| -> Option<(f64, f64)> {
        let b = breakdowns.iter().find(|b| b.n == n)?;
        let get = |variant: &str| {
            b.rows
                .iter()
                .find(|(o, v, _)| *o == op && *v == variant)
                .map(|r| r.2)
        };
        Some((get(VARIANTS[0])?, get(VARIANTS[1])?))
    };
    let (mut worst, mut worst_il): (f64, f64) = (0.0, 0.0);
    for &n in &SIZES {
        for op in ["flush", "setup", "teardown", "getgen"] {
            let bare_op = format!("bare_{op}");
            let (Some(lib), Some(bare)) = (rec.median(n, op), rec.median(n, &bare_op)) else {
                continue;
            };
            let ratio = lib / bare;
            let (il, ib, ir) = match interleaved(n, op) {
                Some((l, b)) => (fmt_time(l), fmt_time(b), format!("{:.2}", l / b)),
                None => ("-".into(), "-".into(), "-".into()),
            };
            if op != "getgen" {
                worst = worst.max(ratio);
                if let Some((l, b)) = interleaved(n, op) {
                    worst_il = worst_il.max(l / b);
                }
            }
            println!(
                "{:>6}  {:<9}  {:>10}  {:>10}  {:>6.2}  {:>11}  {:>10}  {:>6}  {:>15}",
                n,
                op,
                fmt_time(lib),
                fmt_time(bare),
                ratio,
                il,
                ib,
                ir,
                format!("{}/{}", rec.count(n, op), rec.count(n, &bare_op)),
            );
        }
    }
    println!(
        "target: library op within 2x of its bare batch at every N (flush, setup, teardown): \
         worst ratio {worst:.2} (criterion run), {worst_il:.2} (interleaved) -> {}",
        if worst > 0.0 && worst <= 2.0 && worst_il <= 2.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!();
    for l in listings {
        println!(
            "listing: {} -> {} rules in {}; peak RSS growth {:.1} MiB ({:.0} B/rule), \
             still resident with the list alive {:.1} MiB (RSS before {:.1} MiB)",
            l.what,
            l.rules,
            fmt_time(ns(l.time)),
            l.peak_kib as f64 / 1024.0,
            l.peak_kib as f64 * 1024.0 / l.rules.max(1) as f64,
            l.held_kib as f64 / 1024.0,
            l.baseline_rss_kib as f64 / 1024.0,
        );
    }
    for (n, d) in populate_times {
        println!("populate: up to N={n} in {}", fmt_time(ns(*d)));
    }
    println!();
    for b in breakdowns {
        println!(
            "breakdown at N={} (medians of {} interleaved iterations per variant):",
            b.n, b.iters
        );
        for (op, name, t) in &b.rows {
            println!("  {op:<8} {:>10}  {name}", fmt_time(*t));
        }
    }
    println!();
    println!(
        "whole bench process: {:.1} s (setup, criterion, breakdown)",
        total.as_secs_f64()
    );
}
