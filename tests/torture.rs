//! Torture: 32 `xtnl` processes at once, 200 mixed operations each (reservation set-up,
//! forward add and remove, teardown, sweep, restore --noflush), on one nat table, while
//! iptables-nft and iptables-legacy -w callers work on the same table (and share the xtables
//! lock). Every xtnl operation must succeed, or fail only where the model says it must (a
//! forward added to a chain that does not exist: status 1); the final table must be exactly
//! what the successful operations imply.
//!
//! Each worker owns its reservations (`vcld-w<W>-r<R>`), so what its operations imply does
//! not depend on the interleaving with the others: the model replays them in order. The
//! other callers only add and remove their own chains.
//!
//! `XTNL_TORTURE_OPS` (default 200) and `XTNL_TORTURE_SEED` change the size and the seed;
//! the seed is printed.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::{in_netns, private_lock_path, run_ok, xtnl_bin};

const WORKERS: usize = 32;
const RESERVATIONS: usize = 3;
const SLOTS: usize = 3;

/// A small deterministic generator (splitmix64): the run is reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A forward as the model tracks it: public port -> destination host (last octet).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Chain {
    /// Rules in order: (port, destination's last octet).
    forwards: Vec<(u16, u8)>,
    /// Jumps to it from PREROUTING.
    jumps: usize,
}

#[derive(Debug)]
enum Op {
    Setup(usize, Vec<(usize, u8)>),
    ForwardAdd(usize, usize, u8),
    ForwardRemove(usize, usize),
    Teardown(usize),
    Sweep(Vec<usize>),
    Restore(usize, Vec<(usize, u8)>),
}

fn chain_name(w: usize, r: usize) -> String {
    format!("vcld-w{w}-r{r}")
}

fn port(w: usize, r: usize, slot: usize) -> u16 {
    (10_000 + w * 100 + r * 10 + slot) as u16
}

fn dest(octet: u8) -> String {
    format!("192.0.2.{octet}:22")
}

fn random_op(rng: &mut Rng) -> Op {
    let r = rng.below(RESERVATIONS);
    let fwds = |rng: &mut Rng| -> Vec<(usize, u8)> {
        let mut v: Vec<(usize, u8)> = Vec::new();
        for slot in 0..SLOTS {
            if rng.below(2) == 0 {
                v.push((slot, 1 + rng.below(9) as u8));
            }
        }
        v
    };
    match rng.below(10) {
        0..=2 => Op::Setup(r, fwds(rng)),
        3 | 4 => Op::ForwardAdd(r, rng.below(SLOTS), 1 + rng.below(9) as u8),
        5 => Op::ForwardRemove(r, rng.below(SLOTS)),
        6 | 7 => Op::Teardown(r),
        8 => Op::Sweep((0..RESERVATIONS).filter(|_| rng.below(2) == 0).collect()),
        _ => Op::Restore(r, fwds(rng)),
    }
}

/// Applies an op to the model; returns the exit status xtnl must give.
fn model(state: &mut BTreeMap<usize, Chain>, w: usize, op: &Op) -> i32 {
    let ensure_forward =
        |c: &mut Chain, p: u16, o: u8| match c.forwards.iter_mut().find(|f| f.0 == p) {
            Some(f) => f.1 = o,
            None => c.forwards.push((p, o)),
        };
    match op {
        Op::Setup(r, fwds) => {
            let c = state.entry(*r).or_insert(Chain {
                forwards: Vec::new(),
                jumps: 0,
            });
            c.jumps = 1;
            for (slot, o) in fwds {
                ensure_forward(c, port(w, *r, *slot), *o);
            }
            0
        }
        Op::ForwardAdd(r, slot, o) => match state.get_mut(r) {
            Some(c) => {
                ensure_forward(c, port(w, *r, *slot), *o);
                0
            }
            None => 1,
        },
        Op::ForwardRemove(r, slot) => {
            if let Some(c) = state.get_mut(r) {
                c.forwards.retain(|f| f.0 != port(w, *r, *slot));
            }
            0
        }
        Op::Teardown(r) => {
            state.remove(r);
            0
        }
        Op::Sweep(keep) => {
            state.retain(|r, _| keep.contains(r));
            0
        }
        Op::Restore(r, fwds) => {
            let c = state.entry(*r).or_insert(Chain {
                forwards: Vec::new(),
                jumps: 0,
            });
            c.forwards = fwds.iter().map(|(s, o)| (port(w, *r, *s), *o)).collect();
            0
        }
    }
}

fn forward_spec(w: usize, r: usize, slot: usize, o: u8) -> String {
    format!("eth1:tcp/{}={}", port(w, r, slot), dest(o))
}

fn run_op(backend: &str, w: usize, op: &Op, lock: &Path, scratch: &Path) -> (i32, String) {
    let mut args: Vec<String> = vec!["--backend".into(), backend.into()];
    let mut stdin_file = None;
    match op {
        Op::Setup(r, fwds) => {
            args.extend(["reservation", "setup"].map(String::from));
            args.push(chain_name(w, *r));
            for (slot, o) in fwds {
                args.push("--forward".into());
                args.push(forward_spec(w, *r, *slot, *o));
            }
        }
        Op::ForwardAdd(r, slot, o) => {
            args.extend(["forward", "add"].map(String::from));
            args.push(chain_name(w, *r));
            args.push(forward_spec(w, *r, *slot, *o));
        }
        Op::ForwardRemove(r, slot) => {
            args.extend(["forward", "remove"].map(String::from));
            args.push(chain_name(w, *r));
            args.push(format!("eth1:tcp/{}", port(w, *r, *slot)));
        }
        Op::Teardown(r) => {
            args.push("teardown".into());
            args.push(chain_name(w, *r));
        }
        Op::Sweep(keep) => {
            args.extend(["sweep", "--prefix"].map(String::from));
            args.push(format!("vcld-w{w}-"));
            args.push("--keep".into());
            args.push(
                keep.iter()
                    .map(|r| chain_name(w, *r))
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        Op::Restore(r, fwds) => {
            let c = chain_name(w, *r);
            let mut text = format!("*nat\n:{c} - [0:0]\n");
            for (slot, o) in fwds {
                let p = port(w, *r, *slot);
                text.push_str(&format!(
                    "-A {c} -i eth1 -p tcp -m comment --comment \"xtnl: forward eth1:tcp/{p} --> {}\" -m tcp --dport {p} -j DNAT --to-destination {}\n",
                    dest(*o),
                    dest(*o)
                ));
            }
            text.push_str("COMMIT\n");
            let f = scratch.join(format!("restore-{backend}-{w}.rules"));
            std::fs::write(&f, text).expect("write restore file");
            args.extend(["restore", "--noflush", "-w"].map(String::from));
            stdin_file = Some(f);
        }
    }
    let mut cmd = Command::new(xtnl_bin());
    cmd.args(&args).env("XTABLES_LOCKFILE", lock);
    if let Some(f) = stdin_file {
        cmd.arg(f);
    }
    let out = cmd.output().expect("run xtnl");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "xtnl {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// What `iptables-nft -t nat -S` says of one worker's chains.
fn observed(listing: &str, w: usize) -> BTreeMap<usize, Chain> {
    let mut out = BTreeMap::new();
    for r in 0..RESERVATIONS {
        let c = chain_name(w, r);
        if !listing.lines().any(|l| l == format!("-N {c}")) {
            continue;
        }
        let jumps = listing
            .lines()
            .filter(|l| l.starts_with("-A PREROUTING") && l.ends_with(&format!("-j {c}")))
            .count();
        let forwards = listing
            .lines()
            .filter(|l| l.starts_with(&format!("-A {c} ")))
            .map(|l| {
                let p = l
                    .split("--dport ")
                    .nth(1)
                    .and_then(|s| s.split(' ').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let o = l
                    .split("--to-destination 192.0.2.")
                    .nth(1)
                    .and_then(|s| s.split(':').next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                (p, o)
            })
            .collect();
        out.insert(r, Chain { forwards, jumps });
    }
    out
}

/// Another caller: creates its chain, adds rules, flushes, deletes, until told to stop.
fn bystander(
    tool: &'static str,
    id: usize,
    lock: Arc<std::path::PathBuf>,
    stop: Arc<AtomicBool>,
    fails: Arc<AtomicU64>,
    runs: Arc<AtomicU64>,
) {
    let c = format!("by-{id}");
    let wait: &[&str] = if tool == "iptables-legacy" {
        &["-w"]
    } else {
        &[]
    };
    let step = |args: &[&str]| {
        let mut v: Vec<&str> = wait.to_vec();
        v.extend_from_slice(args);
        let out = Command::new(tool)
            .args(&v)
            .env("XTABLES_LOCKFILE", lock.as_path())
            .output()
            .expect("run bystander");
        runs.fetch_add(1, Ordering::Relaxed);
        if !out.status.success() {
            fails.fetch_add(1, Ordering::Relaxed);
            eprintln!("{tool} {v:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
    };
    while !stop.load(Ordering::Relaxed) {
        step(&["-t", "nat", "-N", &c]);
        step(&["-t", "nat", "-A", &c, "-p", "tcp", "-j", "RETURN"]);
        step(&["-t", "nat", "-F", &c]);
        step(&["-t", "nat", "-X", &c]);
    }
}

#[test]
fn thirty_two_xtnl_processes_beside_iptables_callers_lose_nothing_on_nf_tables() {
    torture("nft");
}

#[test]
fn thirty_two_xtnl_processes_beside_iptables_callers_lose_nothing_on_x_tables() {
    torture("legacy");
}

fn torture(backend: &'static str) {
    let ops: usize = std::env::var("XTNL_TORTURE_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let seed: u64 = std::env::var("XTNL_TORTURE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(1)
        });
    eprintln!(
        "torture on {backend}: {WORKERS} workers x {ops} operations, seed {seed} (XTNL_TORTURE_SEED)"
    );
    in_netns(move || {
        let lock = Arc::new(private_lock_path());
        let scratch = lock.parent().map(Path::to_path_buf).unwrap_or_default();
        // The legacy nat table exists before the bystanders start (module and table).
        run_ok("iptables-legacy", &["-w", "-t", "nat", "-S"]);
        let stop = Arc::new(AtomicBool::new(false));
        let mut bystanders = Vec::new();
        let counters: Vec<(&str, Arc<AtomicU64>, Arc<AtomicU64>)> = [
            "iptables-nft",
            "iptables-nft",
            "iptables-legacy",
            "iptables-legacy",
        ]
        .into_iter()
        .map(|t| (t, Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0))))
        .collect();
        for (i, (tool, fails, runs)) in counters.iter().enumerate() {
            let (tool, lock, stop, fails, runs) = (
                *tool,
                lock.clone(),
                stop.clone(),
                fails.clone(),
                runs.clone(),
            );
            bystanders.push(std::thread::spawn(move || {
                bystander(tool, i, lock, stop, fails, runs)
            }));
        }
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let lock = lock.clone();
                let scratch = scratch.clone();
                std::thread::spawn(move || {
                    let mut rng = Rng(seed ^ (w as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
                    let mut state = BTreeMap::new();
                    let mut unexpected = Vec::new();
                    for _ in 0..ops {
                        let op = random_op(&mut rng);
                        let want = model(&mut state, w, &op);
                        let (got, text) = run_op(backend, w, &op, &lock, &scratch);
                        if got != want {
                            unexpected.push(format!("wanted {want}, got {got}: {text}"));
                        }
                    }
                    (state, unexpected)
                })
            })
            .collect();
        let mut results = Vec::new();
        for h in workers {
            results.push(h.join().expect("worker thread"));
        }
        stop.store(true, Ordering::Relaxed);
        for b in bystanders {
            b.join().expect("bystander thread");
        }
        let listing = match backend {
            "nft" => run_ok("iptables-nft", &["-t", "nat", "-S"]),
            _ => run_ok("iptables-legacy", &["-w", "-t", "nat", "-S"]),
        };
        let mut failures = Vec::new();
        for (w, (state, unexpected)) in results.iter().enumerate() {
            failures.extend(unexpected.iter().cloned());
            let seen = observed(&listing, w);
            if &seen != state {
                failures.push(format!("worker {w}: model {state:?}\n  kernel {seen:?}"));
            }
        }
        for (tool, fails, runs) in &counters {
            eprintln!(
                "{tool}: {} commands, {} failed",
                runs.load(Ordering::Relaxed),
                fails.load(Ordering::Relaxed)
            );
            if *tool == "iptables-legacy" {
                assert_eq!(
                    fails.load(Ordering::Relaxed),
                    0,
                    "iptables-legacy -w failed beside xtnl"
                );
            }
        }
        eprintln!(
            "torture on {backend}: {} xtnl operations, {} unexpected outcomes or state differences",
            WORKERS * ops,
            failures.len()
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    });
}
