//! A session's reads, plans, generation retries and error attribution, run without root on
//! the kernel's own replies: captures under `tests/captures/replay/` (`NAME.cap`, the
//! datagrams a [`Conn::recording`] session exchanged with the kernel; `NAME.out`, what the
//! scenario saw then) are played back by a [`Conn::replay`] session, which must send the very
//! same requests (byte for byte: a changed plan, batch or read fails the replay) and must
//! come to the same outcome.
//!
//! `scenarios_record_and_replay_on_the_kernel` (root, a network namespace of its own) runs
//! every scenario on the kernel through a recording, then replays that fresh capture and
//! requires the same outcome; with `XTNL_WRITE_CAPTURES=1` it rewrites the stored captures
//! (re-capture, as root: `XTNL_WRITE_CAPTURES=1 cargo test --test replay -- scenarios`; the
//! filter keeps the replaying tests from reading the files while they are rewritten).

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

use xtnl::ErrorKind;
use xtnl::lock::LockMode;
use xtnl::model::{Action, ChainPolicy, Dir, Family, IpNet, L4Proto, Match, PortRange, Rule};
use xtnl::nft::{ChainRef, ChainSpec, Session, TableRef, Transaction};
use xtnl::transport::{Capture, Conn};

/// The sequence number recordings start from (any fixed value: requests repeat byte for byte).
const FIRST_SEQ: u32 = 1000;

fn table() -> TableRef {
    TableRef::new(Family::Ipv4, "xtnl_replay")
}

fn tcp(port: u16) -> Rule {
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
}

/// The ruleset every scenario starts from (made live, not recorded): a base chain with two
/// rules, one jumping to a regular chain whose rule looks up an anonymous set.
fn setup(s: &mut Session) {
    let t = table();
    let mut tx = Transaction::new();
    tx.ensure_table(&t)
        .ensure_chain(
            &t,
            ChainSpec::base(
                "input",
                xtnl::ipt::tables::builtin("filter", "INPUT")
                    .expect("filter INPUT")
                    .base(ChainPolicy::Accept),
            ),
        )
        .create_chain(&t, ChainSpec::regular("work"))
        .append_rule(
            &t.chain("input"),
            tcp(22).action(Action::Accept).comment("ssh"),
        )
        .append_rule(
            &t.chain("input"),
            Rule::new()
                .with(Match::Address {
                    dir: Dir::Source,
                    net: IpNet::new(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 0)), 24).expect("net"),
                    negated: false,
                })
                .action(Action::Jump("work".into())),
        )
        .append_rule(
            &t.chain("work"),
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
                        PortRange::new(8000, 8080).expect("range"),
                    ],
                    negated: false,
                })
                .action(Action::Accept),
        );
    s.commit(&tx).expect("setup");
}

/// A scenario: runs on a session (recording or replaying) and says what it saw. `interfere`
/// changes the ruleset from outside the session (a second socket) on the live run, and does
/// nothing on a replay, where the change is in the captured replies.
type Run = fn(&mut Session, &mut dyn FnMut()) -> String;

const SCENARIOS: &[(&str, Run)] = &[
    ("listing", listing),
    ("transaction", transaction),
    ("genid_retry", genid_retry),
    ("pipeline_errors", pipeline_errors),
    ("error_attribution", error_attribution),
];

fn listing(s: &mut Session, _: &mut dyn FnMut()) -> String {
    let t = table();
    let mut out = String::new();
    for tb in s.list_tables().expect("tables") {
        out += &format!("table {} flags {}\n", tb.table, tb.flags);
    }
    for c in s.list_chains(&t).expect("chains") {
        out += &format!(
            "chain {} base {:?} use {} counters {:?}\n",
            c.chain, c.base, c.use_count, c.counters
        );
    }
    for r in s.list_table_rules(&t).expect("rules") {
        out += &format!("rule {} #{}: {}\n", r.chain, r.handle, r.rule);
    }
    let snap = s.snapshot(&t).expect("snapshot");
    out += &format!(
        "snapshot generation {} chains {} rules {}\n",
        snap.generation,
        snap.chains.len(),
        snap.rules.len()
    );
    let work = s
        .read(|r| r.rules(&t, Some("work")))
        .expect("read work's rules");
    for r in work {
        out += &format!("read {} #{}: {}\n", r.chain, r.handle, r.rule);
    }
    out
}

fn transaction(s: &mut Session, _: &mut dyn FnMut()) -> String {
    let input = table().chain("input");
    let c = s
        .transact(|r| {
            // The plan reads: the chain must be there, and the new rule goes before the
            // second one (by its handle).
            if r.chain(&input)?.is_none() {
                return Err(xtnl::Error::InvalidInput("no input chain".into()));
            }
            let rules = r.rules(&input.table, Some(&input.name))?;
            let before = rules.get(1).map(|r| r.handle).unwrap_or_default();
            let mut tx = Transaction::new();
            tx.want_rule_handles(true).add_rule(
                &input,
                tcp(2222).action(Action::Drop),
                xtnl::nft::RulePosition::Before(before),
            );
            Ok((tx, before))
        })
        .expect("transaction");
    let after = s.list_rules(&input).expect("rules after");
    let mut out = format!(
        "committed before #{} attempts {} ops {} handles {:?}\n",
        c.value, c.attempts, c.ops, c.rule_handles
    );
    for r in after {
        out += &format!("rule #{}: {}\n", r.handle, r.rule);
    }
    out
}

fn genid_retry(s: &mut Session, interfere: &mut dyn FnMut()) -> String {
    let input = table().chain("input");
    let mut plans = 0;
    let c = s
        .transact(|r| {
            plans += 1;
            let n = r.rules(&input.table, Some(&input.name))?.len();
            if plans == 1 {
                // Someone else commits after this plan read the ruleset: the kernel must
                // refuse the batch (stale generation) and the plan must run again.
                interfere();
            }
            let mut tx = Transaction::new();
            tx.append_rule(&input, tcp(3000 + n as u16).action(Action::Accept));
            Ok((tx, n))
        })
        .expect("transaction after a retry");
    format!(
        "plans {plans} attempts {} rules seen {} retries {}\n",
        c.attempts,
        c.value,
        s.stats().generation_retries
    )
}

fn pipeline_errors(s: &mut Session, _: &mut dyn FnMut()) -> String {
    let t = table();
    let missing_table = TableRef::new(Family::Ipv4, "xtnl_absent");
    let present = [t.chain("input"), t.chain("work")];
    let mut out = String::new();
    // A missing chain at each position of four, then a chain of a missing table, then all
    // missing; with the rules of a present chain, of a missing one, and none.
    let mut shapes: Vec<(Vec<ChainRef>, Option<ChainRef>)> = Vec::new();
    for i in 0..4 {
        let chains = (0..4)
            .map(|j| {
                if j == i {
                    t.chain(format!("nochain{j}"))
                } else {
                    present[j % 2].clone()
                }
            })
            .collect();
        shapes.push((chains, Some(present[i % 2].clone())));
    }
    shapes.push((
        vec![missing_table.chain("input"), t.chain("work")],
        Some(t.chain("nochain")),
    ));
    shapes.push((vec![t.chain("a"), t.chain("b")], None));
    for (chains, rules_of) in shapes {
        let refs: Vec<&ChainRef> = chains.iter().collect();
        let got = s.read(|r| r.chains_and_rules(&refs, rules_of.as_ref()));
        let names: Vec<String> = chains.iter().map(|c| c.to_string()).collect();
        match got {
            Ok((found, rules)) => {
                let found: Vec<&str> = found
                    .iter()
                    .map(|c| if c.is_some() { "found" } else { "absent" })
                    .collect();
                let handles: Vec<u64> = rules.iter().map(|r| r.handle).collect();
                out += &format!("{names:?} -> {found:?} rules {handles:?}\n");
            }
            Err(e) => out += &format!("{names:?} -> error {:?}: {e}\n", e.kind()),
        }
    }
    out
}

fn error_attribution(s: &mut Session, _: &mut dyn FnMut()) -> String {
    let t = table();
    let mut out = String::new();
    // The second operation goes into a chain that does not exist.
    let mut tx = Transaction::new();
    tx.append_rule(&t.chain("input"), tcp(1).action(Action::Accept))
        .append_rule(&t.chain("nochain"), tcp(2).action(Action::Accept));
    let e = s.commit(&tx).expect_err("a rule into a missing chain");
    out += &format!("{:?} index {:?}: {e}\n", e.kind(), op_index(&e));
    // The third one jumps to a chain that does not exist.
    let mut tx = Transaction::new();
    tx.create_chain(&t, ChainSpec::regular("fresh"))
        .append_rule(&t.chain("fresh"), tcp(3).action(Action::Accept))
        .append_rule(
            &t.chain("input"),
            tcp(4).action(Action::Jump("nowhere".into())),
        );
    let e = s.commit(&tx).expect_err("a jump to a missing chain");
    out += &format!("{:?} index {:?}: {e}\n", e.kind(), op_index(&e));
    // The second one deletes a chain that a rule jumps to (EBUSY).
    let mut tx = Transaction::new();
    tx.flush_chain(&t.chain("work"))
        .delete_chain(&t.chain("work"));
    let e = s.commit(&tx).expect_err("a chain in use");
    out += &format!("{:?} index {:?}: {e}\n", e.kind(), op_index(&e));
    // Nothing of either was committed.
    let chains: Vec<String> = s
        .list_chains(&t)
        .expect("chains")
        .iter()
        .map(|c| c.chain.name.clone())
        .collect();
    out += &format!(
        "chains {chains:?} rules {}\n",
        s.list_table_rules(&t).expect("rules").len()
    );
    out
}

/// An error and its sources, as the CLI prints them.
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text += &format!(": {s}");
        source = s.source();
    }
    text
}

/// The netlink message types of a datagram, in order.
fn message_types(d: &[u8]) -> Vec<u16> {
    let mut types = Vec::new();
    let mut at = 0;
    while at + 16 <= d.len() {
        let len = u32::from_ne_bytes(d[at..at + 4].try_into().expect("4 bytes")) as usize;
        types.push(u16::from_ne_bytes([d[at + 4], d[at + 5]]));
        if len < 16 {
            break;
        }
        at += (len + 3) & !3;
    }
    types
}

fn op_index(e: &xtnl::Error) -> Option<usize> {
    e.op_failure().map(|f| f.index)
}

fn capture_path(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/captures/replay")
        .join(format!("{name}.{ext}"))
}

fn stored(name: &str) -> (Capture, String) {
    let read = |ext| {
        let p = capture_path(name, ext);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let cap = Capture::parse(&read("cap")).unwrap_or_else(|e| panic!("{name}.cap: {e}"));
    (cap, read("out"))
}

fn replay_session(capture: Capture) -> Session {
    Session::builder()
        .lock_mode(LockMode::Never)
        .open_on(Conn::replay(capture))
}

/// Replays a stored capture through its scenario: `(outcome, session)`.
fn replay(name: &str) -> (String, String, Session) {
    let (cap, want) = stored(name);
    let run = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| *r)
        .expect("scenario");
    let mut s = replay_session(cap);
    s.socket().record_sends();
    let got = run(&mut s, &mut || {});
    (got, want, s)
}

fn replays_to_the_captured_outcome(name: &str) -> (String, Session) {
    let (got, want, mut s) = replay(name);
    assert_eq!(
        got, want,
        "{name}: the replay saw something else than the kernel run"
    );
    assert_eq!(
        s.socket().unreplayed(),
        0,
        "{name}: the replay stopped before the end of the capture"
    );
    (got, s)
}

#[test]
fn a_captured_ruleset_lists_without_root() {
    let (out, s) = replays_to_the_captured_outcome("listing");
    // The anonymous set's elements were read (GETSETELEM) and decoded into the rule.
    assert!(
        out.contains("rule ip xtnl_replay work") && out.contains("80") && out.contains("443"),
        "{out}"
    );
    assert_eq!(
        out.matches("\nrule ").count() + out.starts_with("rule ") as usize,
        3,
        "{out}"
    );
    assert_eq!(s.stats().dump_restarts, 0);
}

#[test]
fn a_planned_transaction_sends_the_captured_batch() {
    let (out, mut s) = replays_to_the_captured_outcome("transaction");
    assert!(out.starts_with("committed before #"), "{out}");
    assert!(out.contains("attempts 1 ops 1 handles [(0, "), "{out}");
    // The plan's reads (the generation with the chain, then the chain's rules), the batch,
    // the listing after it.
    assert_eq!(s.socket().round_trips(), 5, "{out}");
    let sent = s.socket().take_recorded();
    let batch = sent
        .iter()
        .find(|d| message_types(d).first() == Some(&0x10))
        .expect("a batch among the datagrams sent");
    // Batch begin, the new rule (NFT_MSG_NEWRULE in subsystem nf_tables), batch end.
    assert_eq!(message_types(batch), [0x10, 0x0a06, 0x11]);
    // A plan that puts the rule elsewhere sends another batch: the replay refuses it and
    // says where the bytes differ.
    let (cap, _) = stored("transaction");
    let mut s = replay_session(cap);
    let input = table().chain("input");
    let e = s
        .transact(|r| {
            r.chain(&input)?;
            r.rules(&input.table, Some(&input.name))?;
            let mut tx = Transaction::new();
            tx.want_rule_handles(true)
                .append_rule(&input, tcp(2222).action(Action::Drop));
            Ok((tx, ()))
        })
        .expect_err("a different batch");
    let text = with_sources(&e);
    assert!(
        text.contains("replay: send #4 differs from the capture at message 1, byte"),
        "{text}"
    );
}

#[test]
fn a_changed_generation_replans_and_commits() {
    let (out, s) = replays_to_the_captured_outcome("genid_retry");
    assert!(out.starts_with("plans 2 attempts 2 "), "{out}");
    assert_eq!(s.stats().generation_retries, 1);
}

#[test]
fn pipelined_reads_account_for_an_error_at_each_position() {
    let (out, _) = replays_to_the_captured_outcome("pipeline_errors");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    for (i, l) in lines[..4].iter().enumerate() {
        let (_, found) = l.split_once(" -> ").expect("arrow");
        let want: Vec<&str> = (0..4)
            .map(|j| if j == i { "\"absent\"" } else { "\"found\"" })
            .collect();
        assert!(
            found.starts_with(&format!("[{}]", want.join(", "))),
            "position {i}: {l}"
        );
    }
    assert!(
        lines[4].contains("[\"absent\", \"found\"] rules []"),
        "{out}"
    );
    assert!(
        lines[5].contains("[\"absent\", \"absent\"] rules []"),
        "{out}"
    );
}

#[test]
fn a_refused_transaction_names_the_operation_and_what_is_missing() {
    let (out, _) = replays_to_the_captured_outcome("error_attribution");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NotFound index Some(1)") && lines[0].contains("nochain"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("NotFound index Some(2)")
            && lines[1].contains("jump target chain nowhere does not exist"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("InUse index Some(1)") && lines[2].contains("work"),
        "{out}"
    );
    assert_eq!(lines[3], "chains [\"input\", \"work\"] rules 3", "{out}");
}

#[test]
fn a_replay_that_sends_another_request_fails_naming_the_difference() {
    let (cap, _) = stored("listing");
    let mut s = replay_session(cap);
    s.list_tables().expect("tables");
    // The capture goes on with a dump of the chains; a generation read instead is refused.
    let e = s.generation().expect_err("not the captured request");
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    let text = with_sources(&e);
    // Named: the datagram, the message, the byte, and both headers (GETGEN sent, GETCHAIN
    // captured).
    assert!(
        text.contains(
            "replay: send #2 differs from the capture at message 0, byte 0: sent [type 0x0a10 "
        ) && text.contains("captured [type 0x0a04 "),
        "{text}"
    );
    assert!(s.socket().unreplayed() > 0);
}

#[test]
fn scenarios_record_and_replay_on_the_kernel() {
    common::in_netns(|| {
        let write = std::env::var_os("XTNL_WRITE_CAPTURES").is_some();
        for &(name, run) in SCENARIOS {
            let mut plain = Session::builder()
                .lock_mode(LockMode::Never)
                .open()
                .expect("session");
            setup(&mut plain);
            let mut s = Session::builder()
                .lock_mode(LockMode::Never)
                .open_on(Conn::recording(FIRST_SEQ).expect("recording socket"));
            let mut interfere = || {
                let mut tx = Transaction::new();
                tx.ensure_table(&TableRef::new(Family::Ipv4, "xtnl_other"));
                plain.commit(&tx).expect("interfering commit");
            };
            let live = run(&mut s, &mut interfere);
            let cap = s.socket().take_capture().expect("a recording");
            let mut r = replay_session(cap.clone());
            let again = run(&mut r, &mut || {});
            assert_eq!(again, live, "{name}: replay and kernel differ");
            assert_eq!(r.socket().unreplayed(), 0, "{name}");
            if write {
                let comment = format!(
                    "{name}: tests/replay.rs's scenario on the kernel (re-capture as root: \
                     XTNL_WRITE_CAPTURES=1 cargo test --test replay -- scenarios)"
                );
                std::fs::create_dir_all(capture_path(name, "cap").parent().expect("dir"))
                    .expect("mkdir");
                std::fs::write(capture_path(name, "cap"), cap.to_text(&comment)).expect("write");
                std::fs::write(capture_path(name, "out"), &live).expect("write");
            }
            // Each scenario starts from the same ruleset, in a namespace whose tables are
            // gone (xtnl_other only exists after an interfering commit).
            for t in [table(), TableRef::new(Family::Ipv4, "xtnl_other")] {
                let mut tx = Transaction::new();
                tx.delete_table(&t);
                let _ = plain.commit(&tx);
            }
            assert!(plain.list_tables().expect("tables").is_empty(), "{name}");
        }
    });
}
