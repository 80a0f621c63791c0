//! The NAT-host map layout against the chain layout, the bare kernel batch, iptables-nft,
//! iptables-legacy -w and nft, as the host grows: N = 100, 1,000, 10,000, 100,000 forwards
//! (the chain layout and the iptables tools up to 10,000 reservations).
//!
//! Per N, in a fresh network namespace:
//! - map layout (library): set-up of a reservation with one forward, a forward add, a
//!   forward remove, and the teardown given the reservation's forwards, in a map already
//!   holding N forwards; each timed after a settle (see src/bench/scaling.rs). Three rows
//!   each: `map:` a long-lived [`MapLayout`] handle in the steady state (planned from its
//!   cache, pinned to the generation: one round trip); `map, no cache:` a one-shot caller
//!   (`map::run_one`: a read round trip, then the commit); `map, after another writer:` the
//!   handle right after another socket committed (the pinned batch is refused, the operation
//!   is planned again from reads);
//! - bare kernel batch: the element message alone (one NEWSETELEM, one DELSETELEM), sent as a
//!   hand-built batch on the same socket (no reads, no generation id);
//! - nft: `nft add element` of one forward (a process, cache loading included);
//! - chain layout (library) and the agent's command sequences through iptables-nft and
//!   iptables-legacy -w, listings included (set-up: -S, -N, -I PREROUTING jump, -S, -I chain
//!   DNAT; teardown: -S, -F, -S, -D jump, -X) with N reservation chains in table nat;
//! - the map layout beside N iptables-nft reservation chains (a commit pays for the other
//!   tables of its namespace too);
//! - populating N forwards in one transaction: the library in a child process (time, peak
//!   RSS) against `nft -f` of the same elements (`/usr/bin/time`).
//!
//! Run: `cargo bench --bench nathost_map` (about 5 minutes here), `-- --quick` for N = 100,
//! 1,000. Targets are printed with PASS/FAIL, never asserted.

#[path = "../src/scratch.rs"]
mod scratch;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use xtnl::lock::LockMode;
use xtnl::model::Family;
use xtnl::nathost::map::{self, MapLayout, MapOp};
use xtnl::nathost::{self, Forward, ForwardProtocol, Reservation};
use xtnl::nft::Session;
use xtnl::nft::set::SetOp;
use xtnl::transport::{Batch, NlSocket};
use xtnl::wire::netlink::{NLM_F_CREATE, NLM_F_EXCL};
use xtnl::wire::nftables::{msg, nfproto};
use xtnl::wire::set::ElemListRepr;

const CHILD_ENV: &str = "XTNL_MAP_BENCH_CHILD";

/// Lets nf_tables' deferred destroy work of earlier deletions finish before a timed step.
/// Releasing a socket (what src/bench/scaling.rs does) did not suffice after element
/// deletions here: the commit after one still waited 12-20 ms (an RCU grace period), so
/// the bench also sleeps past one.
fn settle() {
    drop(NlSocket::open().expect("netlink socket"));
    std::thread::sleep(Duration::from_millis(30));
}

fn session() -> Session {
    Session::builder()
        .lock_mode(LockMode::Never)
        .open()
        .expect("session")
}

fn fwd(iface: Option<&str>, proto: ForwardProtocol, port: u16) -> Forward {
    Forward {
        protocol: proto,
        public_port: port,
        to: SocketAddr::from(([198, 51, 100, 2], 22)),
        in_interface: iface.map(str::to_owned),
        comment: None,
    }
}

/// The i-th background forward: eth1, tcp then udp, ports 1..=65000.
fn background(i: usize) -> Forward {
    let proto = if i < 65_000 {
        ForwardProtocol::Tcp
    } else {
        ForwardProtocol::Udp
    };
    fwd(Some("eth1"), proto, (1 + i % 65_000) as u16)
}

fn populate_map(s: &mut Session, n: usize) -> Duration {
    map::ensure_layout(s, Family::Ipv4).expect("layout");
    let elements = (0..n)
        .map(|i| {
            map::element(Family::Ipv4, &format!("bg-{}", i / 4), &background(i))
                .expect("element")
                .1
        })
        .collect();
    let mut tx = xtnl::nft::Transaction::new();
    tx.set_op(SetOp::AddElements {
        table: map::table(Family::Ipv4),
        set: map::FWD_MAP.into(),
        elements,
        exclusive: true,
    });
    let t = Instant::now();
    s.commit(&tx).expect("populate");
    t.elapsed()
}

fn in_fresh_netns<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::spawn(move || {
        scratch::enter_new().expect("unshare (run as root)");
        scratch::refuse_initial().expect("not the initial namespace");
        f()
    })
    .join()
    .expect("bench thread")
}

fn timed(samples: &mut Vec<Duration>, f: impl FnOnce()) {
    settle();
    let t = Instant::now();
    f();
    samples.push(t.elapsed());
}

type Table = BTreeMap<(&'static str, usize), Vec<Duration>>;

fn map_layout(n: usize, k: usize, beside_chains: usize, out: &mut Table, notes: &mut Vec<String>) {
    let mut s = session();
    if beside_chains > 0 {
        iptables_restore("iptables-nft-restore", beside_chains);
    }
    let pop = populate_map(&mut s, n);
    notes.push(format!(
        "N = {n}{}: populating the map in one transaction took {pop:.2?}",
        if beside_chains > 0 {
            format!(" beside {beside_chains} iptables-nft chains")
        } else {
            String::new()
        }
    ));
    let tag = if beside_chains > 0 {
        "map beside chains: "
    } else {
        ""
    };
    let key = |op: &str| -> &'static str { Box::leak(format!("{tag}{op}").into_boxed_str()) };
    let fam = Family::Ipv4;
    // The library as a long-lived agent uses it: one handle, warmed by one operation.
    let mut h = MapLayout::new(s, fam);
    h.run(MapOp::Setup {
        reservation: "warm-up".into(),
        forwards: Vec::new(),
    })
    .expect("warm-up");
    // Another writer: a second socket committing an unrelated element.
    let mut other = NlSocket::open().expect("netlink socket");
    let mut other_port = 40_000u16;
    let mut other_commit = |sock: &mut NlSocket| {
        other_port += 1;
        let (m, e) = map::element(
            fam,
            "other",
            &fwd(Some("eth5"), ForwardProtocol::Tcp, other_port),
        )
        .expect("element");
        let list = ElemListRepr {
            family: nfproto::IPV4,
            table: map::TABLE.into(),
            set: m.into(),
            set_id: None,
            elements: vec![e],
        };
        let mut b = Batch::new(sock, None);
        b.push(
            msg::NEWSETELEM,
            nfproto::IPV4,
            NLM_F_CREATE,
            "other".into(),
            |w| list.emit(w),
        );
        assert!(b.commit(sock).is_ok(), "other writer");
    };
    for j in 0..k {
        let res = format!("r-{j}");
        let f1 = fwd(Some("eth2"), ForwardProtocol::Tcp, 1000 + j as u16);
        let f2 = fwd(Some("eth2"), ForwardProtocol::Udp, 1000 + j as u16);
        let ops = [
            (
                "set-up",
                MapOp::Setup {
                    reservation: res.clone(),
                    forwards: vec![f1.clone()],
                },
            ),
            (
                "forward add",
                MapOp::ForwardAdd {
                    reservation: res.clone(),
                    forward: f2.clone(),
                },
            ),
            (
                "forward remove",
                MapOp::ForwardRemove {
                    reservation: res.clone(),
                    key: f2.key(),
                    to: None,
                },
            ),
            (
                "teardown (forwards given)",
                MapOp::Teardown {
                    reservation: res.clone(),
                    forwards: Some(vec![f1.key()]),
                },
            ),
        ];
        // Handle, steady state: planned from its cache, one round trip.
        for (op, m) in ops.clone() {
            let v = out.entry((key(&format!("map: {op}")), n)).or_default();
            timed(v, || {
                let r = h.run(m).expect(op);
                assert_eq!(r.attempts, 1, "{op}: planned again");
            });
        }
        // No cache (a one-shot caller: `xtnl forward add`, `run_one`): reads, then commits.
        if beside_chains == 0 {
            for (op, m) in ops.clone() {
                let v = out
                    .entry((key(&format!("map, no cache: {op}")), n))
                    .or_default();
                timed(v, || {
                    map::run_one(h.session(), fam, m).expect(op);
                });
            }
            // Handle, after another writer's commit: the pinned batch is refused and the
            // operation planned again from reads.
            for (op, m) in ops {
                let v = out
                    .entry((key(&format!("map, after another writer: {op}")), n))
                    .or_default();
                other_commit(&mut other);
                timed(v, || {
                    let r = h.run(m).expect(op);
                    assert!(r.attempts >= 2, "{op}: not planned again");
                });
            }
        }
    }
    let stats = h.stats();
    notes.push(format!(
        "N = {n}{}: handle {stats:?}",
        if beside_chains > 0 {
            " beside chains"
        } else {
            ""
        }
    ));
    let mut s = h.into_session();
    if beside_chains > 0 {
        return;
    }
    // The bare batch: the element message alone.
    let (m, e) = map::element(fam, "bare", &fwd(Some("eth3"), ForwardProtocol::Tcp, 7)).unwrap();
    let list = ElemListRepr {
        family: nfproto::IPV4,
        table: map::TABLE.into(),
        set: m.into(),
        set_id: None,
        elements: vec![e.clone()],
    };
    let keys = ElemListRepr {
        elements: vec![xtnl::wire::set::ElemRepr::key(e.key.clone())],
        ..list.clone()
    };
    for _ in 0..k {
        for (op, message, body, flags) in [
            (
                "bare batch: add element",
                msg::NEWSETELEM,
                &list,
                NLM_F_CREATE | NLM_F_EXCL,
            ),
            ("bare batch: delete element", 14u8, &keys, 0),
        ] {
            let v = out.entry((op, n)).or_default();
            timed(v, || {
                let sock = s.socket();
                let mut b = Batch::new(sock, None);
                b.push(message, nfproto::IPV4, flags, op.into(), |w| body.emit(w));
                if b.commit(s.socket()).is_err() {
                    panic!("{op}");
                }
            });
        }
    }
    // nft adding an element (a process; its cache loading included).
    for j in 0..k.min(10) {
        let v = out.entry(("nft add element", n)).or_default();
        let port = 30_000 + j;
        timed(v, || {
            let o = Command::new("nft")
                .args([
                    "add",
                    "element",
                    "ip",
                    map::TABLE,
                    map::FWD_MAP,
                    &format!("{{ \"eth4\" . tcp . {port} comment \"nft\" : 198.51.100.2 . 22 }}"),
                ])
                .output()
                .expect("nft");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        });
    }
}

fn chain_name(i: usize) -> String {
    format!("vcld-{i}")
}

fn iptables_restore(tool: &str, n: usize) {
    let mut s = String::from("*nat\n");
    for i in 0..n {
        let _ = writeln!(s, ":{} - [0:0]", chain_name(i));
    }
    for i in 0..n {
        let c = chain_name(i);
        let _ = writeln!(
            s,
            "-A PREROUTING -m comment --comment \"VCL: jump to {c}\" -j {c}"
        );
        let _ = writeln!(
            s,
            "-A {c} -i eth1 -p tcp -m tcp --dport {} -j DNAT --to-destination 198.51.100.2:22",
            1 + i % 65_000
        );
    }
    s.push_str("COMMIT\n");
    let mut child = Command::new(tool)
        .arg("--noflush")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect(tool);
    use std::io::Write;
    child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success(), "{tool}");
}

fn chain_layout(n: usize, k: usize, tools_k: usize, out: &mut Table) {
    iptables_restore("iptables-nft-restore", n);
    let mut s = session();
    for j in 0..k {
        let mut r = Reservation::new(format!("new-{j}"));
        r.forwards = vec![fwd(Some("eth2"), ForwardProtocol::Tcp, 1000 + j as u16)];
        let f2 = fwd(Some("eth2"), ForwardProtocol::Udp, 1000 + j as u16);
        let c = r.chain.clone();
        timed(out.entry(("chains: set-up", n)).or_default(), || {
            nathost::setup(&mut s, &r).expect("setup");
        });
        timed(out.entry(("chains: forward add", n)).or_default(), || {
            nathost::forward_add(&mut s, Family::Ipv4, "nat", &c, &f2).expect("add");
        });
        timed(
            out.entry(("chains: forward remove", n)).or_default(),
            || {
                nathost::forward_remove(&mut s, Family::Ipv4, "nat", &c, &f2.key(), None)
                    .expect("remove");
            },
        );
        timed(out.entry(("chains: teardown", n)).or_default(), || {
            nathost::teardown(&mut s, Family::Ipv4, "nat", &c, "PREROUTING").expect("teardown");
        });
    }
    for (tool, legacy) in [("iptables-nft", false), ("iptables-legacy -w", true)] {
        if legacy {
            iptables_restore("iptables-legacy-restore", n);
        }
        let ipt = |args: &[&str]| {
            let mut cmd = Command::new(if legacy {
                "iptables-legacy"
            } else {
                "iptables-nft"
            });
            if legacy {
                cmd.arg("-w");
            }
            let o = cmd
                .args(["-t", "nat"])
                .args(args)
                .output()
                .expect("iptables");
            assert!(
                o.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        // The agent's sequences (/work/shared/notes/nat-host-workload.md), with its listings:
        // set-up lists the nat table (is the chain there, does a jump to it exist), creates
        // the chain, inserts the jump, lists again (is an equal DNAT rule there) and inserts
        // the DNAT rule; teardown lists, flushes the chain, lists again (which rules jump to
        // it), deletes the jump and the chain. The agent's save to a file after each change
        // is left out (no other row saves either).
        let list = || {
            let mut cmd = Command::new(if legacy {
                "iptables-legacy"
            } else {
                "iptables-nft"
            });
            if legacy {
                cmd.arg("-w");
            }
            let o = cmd.args(["-t", "nat", "-S"]).output().expect("iptables -S");
            assert!(o.status.success() && !o.stdout.is_empty(), "iptables -S");
        };
        let setup_key: &'static str = Box::leak(
            format!("{tool}: set-up (agent: -S, -N, -I jump, -S, -I DNAT)").into_boxed_str(),
        );
        let down_key: &'static str = Box::leak(
            format!("{tool}: teardown (agent: -S, -F, -S, -D jump, -X)").into_boxed_str(),
        );
        for j in 0..tools_k {
            let c = format!("tool-{j}");
            let port = (2000 + j).to_string();
            timed(out.entry((setup_key, n)).or_default(), || {
                list();
                ipt(&["-N", &c]);
                ipt(&[
                    "-I",
                    "PREROUTING",
                    "-m",
                    "comment",
                    "--comment",
                    "j",
                    "-j",
                    &c,
                ]);
                list();
                ipt(&[
                    "-I",
                    &c,
                    "-i",
                    "eth1",
                    "-p",
                    "tcp",
                    "-m",
                    "tcp",
                    "--dport",
                    &port,
                    "-j",
                    "DNAT",
                    "--to-destination",
                    "198.51.100.2:22",
                ]);
            });
            timed(out.entry((down_key, n)).or_default(), || {
                list();
                ipt(&["-F", &c]);
                list();
                ipt(&[
                    "-D",
                    "PREROUTING",
                    "-m",
                    "comment",
                    "--comment",
                    "j",
                    "-j",
                    &c,
                ]);
                ipt(&["-X", &c]);
            });
        }
    }
}

/// Child: populate N forwards through the library, print `micros peak_kb start_kb`.
fn child(spec: &str) {
    let n: usize = spec.parse().expect("N");
    let hwm = || {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
            })
            .unwrap_or_default()
    };
    let start = hwm();
    let t = Instant::now();
    let mut s = session();
    populate_map(&mut s, n);
    println!("{} {} {start}", t.elapsed().as_micros(), hwm());
}

fn populate_vs_nft(n: usize, notes: &mut Vec<String>) {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe)
        .env(CHILD_ENV, n.to_string())
        .output()
        .expect("child");
    let lib = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let f: Vec<&str> = lib.split_whitespace().collect();
    // The same elements through nft -f, in a table it creates the same way.
    settle();
    let _ = Command::new("nft")
        .args(["delete", "table", "ip", map::TABLE])
        .output();
    let mut file = String::new();
    let _ = writeln!(
        file,
        "table ip {t} {{\n  map forwards {{ type ifname . inet_proto . inet_service : ipv4_addr . inet_service; counter; }}\n}}",
        t = map::TABLE
    );
    let _ = write!(file, "add element ip {} forwards {{ ", map::TABLE);
    for i in 0..n {
        let b = background(i);
        let _ = write!(
            file,
            "{}\"eth1\" . {} . {} comment \"bg-{}\" : 198.51.100.2 . 22",
            if i == 0 { "" } else { ", " },
            b.protocol.as_str(),
            b.public_port,
            i / 4
        );
    }
    file.push_str(" }\n");
    let path = std::env::temp_dir().join(format!("xtnl-map-bench-{}.nft", std::process::id()));
    std::fs::write(&path, file).expect("write nft file");
    let t = Instant::now();
    let o = Command::new("/usr/bin/time")
        .args(["-f", "%M", "nft", "-f"])
        .arg(&path)
        .output()
        .expect("/usr/bin/time nft");
    let nft_time = t.elapsed();
    let _ = std::fs::remove_file(&path);
    assert!(
        o.status.success(),
        "nft -f: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let nft_kb = String::from_utf8_lossy(&o.stderr)
        .trim()
        .lines()
        .last()
        .unwrap_or("")
        .to_owned();
    if f.len() == 3 {
        let lib_time = Duration::from_micros(f[0].parse().unwrap_or(0));
        notes.push(format!(
            "populate {n} forwards in one transaction: library {lib_time:.2?} (peak RSS {} kB, \
             {} kB at start; the bench binary's own), nft -f {nft_time:.2?} (peak RSS {nft_kb} kB) \
             -> time ratio nft/library {:.1}x",
            f[1],
            f[2],
            nft_time.as_secs_f64() / lib_time.as_secs_f64().max(1e-9)
        ));
    } else {
        notes.push(format!(
            "populate {n}: child said {lib:?}, nft {nft_time:.2?} {nft_kb} kB"
        ));
    }
}

fn us(d: Duration) -> String {
    let u = d.as_secs_f64() * 1e6;
    if u >= 10_000.0 {
        format!("{:.1} ms", u / 1000.0)
    } else {
        format!("{u:.0} µs")
    }
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        child(&spec);
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: Vec<usize> = if quick {
        vec![100, 1000]
    } else {
        vec![100, 1000, 10_000, 100_000]
    };
    let load = |_: ()| std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let started = Instant::now();
    let load_start = load(());
    let mut table = Table::new();
    let mut notes = Vec::new();
    for &n in &sizes {
        let k = if n >= 100_000 { 20 } else { 30 };
        let (t, nn) = in_fresh_netns(move || {
            let mut t = Table::new();
            let mut notes = Vec::new();
            map_layout(n, k, 0, &mut t, &mut notes);
            (t, notes)
        });
        table.extend(t);
        notes.extend(nn);
        eprintln!("[{:>6.1?}] map layout at N = {n} done", started.elapsed());
        if n <= 10_000 {
            let tools_k = if n >= 10_000 { 3 } else { 5 };
            let t = in_fresh_netns(move || {
                let mut t = Table::new();
                chain_layout(n, 10, tools_k, &mut t);
                t
            });
            table.extend(t);
            eprintln!("[{:>6.1?}] chain layout at N = {n} done", started.elapsed());
        }
    }
    // The map beside a large iptables-nft table.
    let beside = if quick { 1000 } else { 10_000 };
    for &n in [sizes[0], *sizes.last().unwrap_or(&100)].iter() {
        let (t, nn) = in_fresh_netns(move || {
            let mut t = Table::new();
            let mut notes = Vec::new();
            map_layout(n, 20, beside, &mut t, &mut notes);
            (t, notes)
        });
        table.extend(t);
        notes.extend(nn);
    }
    let pop_n = *sizes.last().unwrap_or(&100);
    let nn = in_fresh_netns(move || {
        let mut notes = Vec::new();
        populate_vs_nft(pop_n, &mut notes);
        notes
    });
    notes.extend(nn);

    // Report.
    let uname = Command::new("uname")
        .arg("-r")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("# NAT-host map layout benchmark\n");
    println!(
        "- command: `cargo bench --bench nathost_map{}`",
        if quick { " -- --quick" } else { "" }
    );
    println!(
        "- machine: {} CPUs, kernel {uname}; load average at start {} at end {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_start
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        load(())
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("- whole run: {:.1?}\n", started.elapsed());
    println!(
        "p50 (p99) per operation; N = forwards in the map, or reservation chains in nat for the chain layout and the iptables tools; growth = p50 at the largest N / p50 at the smallest.\n"
    );
    let mut header = String::from("| operation |");
    let mut rule = String::from("|---|");
    for n in &sizes {
        let _ = write!(header, " N = {n} |");
        rule.push_str("---:|");
    }
    header.push_str(" growth |");
    rule.push_str("---:|");
    println!("{header}\n{rule}");
    let ops: Vec<&'static str> = {
        let mut v: Vec<&'static str> = table.keys().map(|(o, _)| *o).collect();
        v.dedup();
        v
    };
    let mut ops = ops;
    ops.sort();
    ops.dedup();
    for op in &ops {
        let mut line = format!("| {op} |");
        let mut first = None;
        let mut last = None;
        for n in &sizes {
            match table.get(&(*op, *n)).and_then(|v| Stats::of(v)) {
                Some(s) => {
                    let _ = write!(line, " {} ({}) |", us(s.p50), us(s.p99));
                    first.get_or_insert(s.p50);
                    last = Some(s.p50);
                }
                None => line.push_str(" – |"),
            }
        }
        match (first, last) {
            (Some(a), Some(b)) => {
                let _ = write!(line, " {:.2}x |", b.as_secs_f64() / a.as_secs_f64());
            }
            _ => line.push_str(" – |"),
        }
        println!("{line}");
    }
    println!("\n## Targets\n");
    let p50 = |op: &str, n: usize| {
        table
            .get(&(op, n))
            .and_then(|v| Stats::of(v))
            .map(|s| s.p50)
    };
    let big = *sizes.last().unwrap_or(&100);
    for op in [
        "map: set-up",
        "map: forward add",
        "map: forward remove",
        "map: teardown (forwards given)",
    ] {
        if let (Some(a), Some(b)) = (p50(op, sizes[0]), p50(op, big)) {
            let r = b.as_secs_f64() / a.as_secs_f64();
            println!(
                "- {op}: p50 at N = {big} / p50 at N = {} = {r:.2}x (target <= 1.5x: {})",
                sizes[0],
                if r <= 1.5 { "PASS" } else { "FAIL" }
            );
        }
        let bare = if op.contains("remove") || op.contains("teardown") {
            "bare batch: delete element"
        } else {
            "bare batch: add element"
        };
        for n in &sizes {
            if let (Some(a), Some(b)) = (p50(op, *n), p50(bare, *n)) {
                let r = a.as_secs_f64() / b.as_secs_f64();
                println!(
                    "  - N = {n}: {op} / {bare} = {r:.2}x (target <= 2x: {})",
                    if r <= 2.0 { "PASS" } else { "FAIL" }
                );
            }
        }
    }
    println!(
        "\n## Ratio to the bare kernel batch (p50 / p50 of the bare batch, same N, same run)\n"
    );
    let mut header = String::from("| operation |");
    let mut rule = String::from("|---|");
    for n in &sizes {
        let _ = write!(header, " N = {n} |");
        rule.push_str("---:|");
    }
    println!("{header}\n{rule}");
    for prefix in ["map: ", "map, no cache: ", "map, after another writer: "] {
        for op in [
            "set-up",
            "forward add",
            "forward remove",
            "teardown (forwards given)",
        ] {
            let name = format!("{prefix}{op}");
            let bare = if op.contains("remove") || op.contains("teardown") {
                "bare batch: delete element"
            } else {
                "bare batch: add element"
            };
            let mut line = format!("| {name} / {bare} |");
            for n in &sizes {
                match (
                    table.get(&(name.as_str(), *n)).and_then(|v| Stats::of(v)),
                    p50(bare, *n),
                ) {
                    (Some(a), Some(b)) => {
                        let _ = write!(line, " {:.2}x |", a.p50.as_secs_f64() / b.as_secs_f64());
                    }
                    _ => line.push_str(" – |"),
                }
            }
            println!("{line}");
        }
    }
    let svg = plot(&table, &sizes);
    let svg_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(if quick {
        "target/map-layout-quick.svg"
    } else {
        "benches/results/map-layout.svg"
    });
    match std::fs::write(&svg_path, svg) {
        Ok(()) => notes.push(format!("plot: {}", svg_path.display())),
        Err(e) => notes.push(format!("plot not written to {}: {e}", svg_path.display())),
    }
    println!("\n## Notes\n");
    for n in notes {
        println!("- {n}");
    }
}

/// p50 against N, log-log: set-up (left) and teardown (right), one line per tool.
fn plot(table: &Table, sizes: &[usize]) -> String {
    const W: f64 = 520.0;
    const H: f64 = 360.0;
    const M: (f64, f64, f64, f64) = (70.0, 20.0, 40.0, 50.0); // left, right, top, bottom
    let panels: [(&str, [(&str, &str); 7]); 2] = [
        (
            "set up a reservation / add a forward (p50)",
            [
                ("map: set-up", "#1f77b4"),
                ("map beside chains: map: set-up", "#17becf"),
                ("bare batch: add element", "#444444"),
                ("chains: set-up", "#2ca02c"),
                (
                    "iptables-nft: set-up (agent: -S, -N, -I jump, -S, -I DNAT)",
                    "#ff7f0e",
                ),
                (
                    "iptables-legacy -w: set-up (agent: -S, -N, -I jump, -S, -I DNAT)",
                    "#d62728",
                ),
                ("nft add element", "#9467bd"),
            ],
        ),
        (
            "tear a reservation down (p50)",
            [
                ("map: teardown (forwards given)", "#1f77b4"),
                (
                    "map beside chains: map: teardown (forwards given)",
                    "#17becf",
                ),
                ("bare batch: delete element", "#444444"),
                ("chains: teardown", "#2ca02c"),
                (
                    "iptables-nft: teardown (agent: -S, -F, -S, -D jump, -X)",
                    "#ff7f0e",
                ),
                (
                    "iptables-legacy -w: teardown (agent: -S, -F, -S, -D jump, -X)",
                    "#d62728",
                ),
                ("", ""),
            ],
        ),
    ];
    let xs: Vec<f64> = sizes.iter().map(|&n| (n as f64).log10()).collect();
    let (xmin, xmax) = (
        xs.first().copied().unwrap_or(2.0),
        xs.last()
            .copied()
            .unwrap_or(5.0)
            .max(xs.first().copied().unwrap_or(2.0) + 1.0),
    );
    let (ylo, yhi) = (1.0_f64, 6.0_f64); // 10 µs .. 1 s
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        W * 2.0
    );
    for (i, (title, series)) in panels.iter().enumerate() {
        let ox = i as f64 * W;
        let (x0, x1, y0, y1) = (ox + M.0, ox + W - M.1, M.2, H - M.3);
        let px = |x: f64| x0 + (x - xmin) / (xmax - xmin) * (x1 - x0);
        let py = |y: f64| y1 - (y.clamp(ylo, yhi) - ylo) / (yhi - ylo) * (y1 - y0);
        let _ = writeln!(
            s,
            "<text x=\"{x0}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{title}</text>"
        );
        let _ = writeln!(
            s,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>",
            x1 - x0,
            y1 - y0
        );
        for d in ylo as i32..=yhi as i32 {
            let y = py(d as f64);
            let label = ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s"][d as usize];
            let _ = writeln!(
                s,
                "<line x1=\"{x0}\" y1=\"{y:.1}\" x2=\"{x1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
                x0 - 4.0,
                y + 4.0
            );
        }
        for &n in sizes {
            let x = px((n as f64).log10());
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{n}</text>",
                y1 + 16.0
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">N (forwards; reservations for chains and iptables)</text>",
            (x0 + x1) / 2.0,
            y1 + 34.0
        );
        for (k, (op, colour)) in series.iter().enumerate() {
            if op.is_empty() {
                continue;
            }
            let pts: Vec<String> = sizes
                .iter()
                .filter_map(|&n| {
                    let st = table.get(&(*op, n)).and_then(|v| Stats::of(v))?;
                    let y = (st.p50.as_secs_f64() * 1e6).max(1.0).log10();
                    Some(format!("{:.1},{:.1}", px((n as f64).log10()), py(y)))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let dash = if op.starts_with("bare") {
                " stroke-dasharray=\"4 3\""
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>",
                pts.join(" ")
            );
            let ly = y0 + 12.0 + k as f64 * 13.0;
            let _ = writeln!(
                s,
                "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\">{op}</text>",
                x0 + 6.0,
                x0 + 24.0,
                x0 + 28.0,
                ly + 4.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

/// p50 and p99 (nearest rank) of a set of samples (as xtnl-bench reports them).
#[derive(Debug, Clone, Copy)]
struct Stats {
    p50: Duration,
    p99: Duration,
}

impl Stats {
    fn of(samples: &[Duration]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort();
        let rank = |p: f64| {
            let k = (p * s.len() as f64).ceil() as usize;
            s[k.clamp(1, s.len()) - 1]
        };
        Some(Stats {
            p50: rank(0.50),
            p99: rank(0.99),
        })
    }
}
