//! Process-level benchmark: the `xtnl` binary against `iptables-nft` and `iptables-legacy -w`,
//! each command a whole process (fork + exec + wait, output captured through pipes), the way
//! the NAT-host agent shells out to `/sbin/iptables`.
//!
//! Everything runs in a network namespace the bench creates on its main thread before doing
//! anything else; every child process inherits it, so the host's ruleset is never touched.
//! xtnl and iptables-legacy use a private xtables lock (`XTABLES_LOCKFILE` in a temp dir).
//!
//! Table `nat` holds N reservations (chain `vcld-<i>`, a jump to it from PREROUTING with the
//! agent's comment, one DNAT rule with its comment). The nf_tables side is populated with
//! `iptables-nft-restore --noflush`, the x_tables side with `iptables-legacy-restore
//! --noflush` from the same generated file: the two are separate kernel subsystems, so both
//! live in the one namespace. Per N, interleaved tool by tool within each iteration:
//!
//! - `flush`: `-t nat -F vcld-7` (the chain holds one rule); the rule is re-added between
//!   iterations, untimed, with the same tool.
//! - `insert`: `-t nat -I vcld-7 -i eth1 -p tcp -m tcp --dport 50443 -j DNAT
//!   --to-destination 192.0.2.3:3389`; deleted again (`-D`), untimed, with the same tool.
//! - `flush+next`: a flush immediately followed by the re-add (both timed, no settling in
//!   between), as a teardown's consecutive commands are. See "settling" below.
//! - floors: `/bin/true` (starting any process this way) and `xtnl version` (the xtnl
//!   binary starting and exiting without netlink), back to back and in the loops.
//!
//! Settling: a commit that deletes rules queues nf_tables' deferred destroy work (it waits
//! for an RCU grace period). Releasing any bound NETLINK_NETFILTER socket while that work is
//! pending waits for it, and meanwhile commits from other sockets in the namespace wait too
//! (measured; see CLI-RESULTS.md). Before every timed `flush` and `insert`, the bench opens
//! and closes such a socket itself, so that no tool pays for the deletions of the previous
//! (untimed) step. `flush+next` skips that settling between its two commands on purpose.
//!
//! Peak RSS: each tool's flush and insert run a few times under `/usr/bin/time -v`
//! ("Maximum resident set size"; it includes children the process waited for, i.e. xtnl's
//! short-lived intermediate child of the detached close).
//!
//! The `xtnl` binary: `cargo bench` builds the package's binaries before running a bench and
//! passes the path as `CARGO_BIN_EXE_xtnl` (target/<host triple>/release/xtnl: the bench profile inherits
//! release). If that file is missing at run time (the bench binary was run on its own after
//! a `cargo clean`, say), the bench runs `cargo build --release --bin xtnl` in
//! `CARGO_MANIFEST_DIR` first and uses the release binary from there.
//!
//! Run: `cargo bench --bench cli` (about 1.5 minutes), or `cargo bench --bench cli -- --quick`
//! (N = 10 and 200, few iterations, well under a minute; also what runs without cargo's
//! `--bench` argument, e.g. under `cargo test --benches`). Nothing is asserted: the targets
//! are printed with PASS/FAIL beside them.

#[path = "../src/scratch.rs"]
mod scratch;
mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The reservation whose chain every timed command works on.
const TARGET: usize = 7;
const INSERT_SPEC: &[&str] = &[
    "-i",
    "eth1",
    "-p",
    "tcp",
    "-m",
    "tcp",
    "--dport",
    "50443",
    "-j",
    "DNAT",
    "--to-destination",
    "192.0.2.3:3389",
];
const FLOOR_TRUE: &str = "/bin/true";
const FLOOR_XTNL: &str = "xtnl version";
/// Untimed runs of every step before the timed ones (page cache, dynamic loader).
const WARM_UP: usize = 3;
/// Runs under `/usr/bin/time -v` per tool and operation.
const RSS_RUNS: usize = 3;

struct Plan {
    quick: bool,
    /// (N, iterations of flush/insert, iterations of flush+next)
    sizes: Vec<(usize, usize, usize)>,
    floor_iters: usize,
}

impl Plan {
    /// `--quick`: the small plan. `cargo bench` passes `--bench`; without it (`cargo test
    /// --benches`, which runs bench targets as smoke tests) the small plan runs too.
    fn from_args() -> Plan {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
        if quick {
            Plan {
                quick,
                sizes: vec![(10, 15, 8), (200, 10, 5)],
                floor_iters: 30,
            }
        } else {
            Plan {
                quick,
                sizes: vec![(10, 200, 60), (5_000, 100, 40)],
                floor_iters: 300,
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tool {
    Xtnl,
    Nft,
    Legacy,
}

const TOOLS: [Tool; 3] = [Tool::Xtnl, Tool::Nft, Tool::Legacy];

impl Tool {
    fn label(self) -> &'static str {
        match self {
            Tool::Xtnl => "xtnl",
            Tool::Nft => "iptables-nft",
            Tool::Legacy => "iptables-legacy -w",
        }
    }
}

struct Bench {
    xtnl: PathBuf,
    lock: PathBuf,
    dir: PathBuf,
}

impl Bench {
    /// The command line of `tool` with `args` (iptables syntax, without the program).
    fn command(&self, tool: Tool, args: &[&str]) -> Command {
        let mut c = match tool {
            Tool::Xtnl => Command::new(&self.xtnl),
            Tool::Nft => Command::new("iptables-nft"),
            Tool::Legacy => {
                let mut c = Command::new("iptables-legacy");
                c.arg("-w");
                c
            }
        };
        c.args(args)
            .env("XTABLES_LOCKFILE", &self.lock)
            .stdin(Stdio::null());
        c
    }

    /// Runs a command to completion with its output captured; returns its wall time.
    /// Panics (with the tool's stderr) unless it succeeded.
    fn timed(&self, tool: Tool, args: &[&str]) -> Duration {
        let mut c = self.command(tool, args);
        let start = Instant::now();
        let out = c.output();
        let took = start.elapsed();
        check(&format!("{} {}", tool.label(), args.join(" ")), out);
        took
    }

    fn run(&self, tool: Tool, args: &[&str]) -> String {
        let out = self.command(tool, args).output();
        check(&format!("{} {}", tool.label(), args.join(" ")), out)
    }

    fn flush(&self, tool: Tool) -> Duration {
        self.timed(tool, &["-t", "nat", "-F", &chain(TARGET)])
    }
    fn readd(&self, tool: Tool) -> Duration {
        let c = chain(TARGET);
        let mut args = vec!["-t", "nat", "-A", &c];
        let spec = dnat_spec(TARGET);
        args.extend(spec.iter().map(String::as_str));
        self.timed(tool, &args)
    }
    fn insert_args(&self, op: &str) -> Vec<String> {
        let mut args: Vec<String> = ["-t", "nat", op, &chain(TARGET)]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(INSERT_SPEC.iter().map(|s| s.to_string()));
        args
    }
    fn insert(&self, tool: Tool) -> Duration {
        let a = self.insert_args("-I");
        self.timed(tool, &a.iter().map(String::as_str).collect::<Vec<_>>())
    }
    fn delete_inserted(&self, tool: Tool) -> Duration {
        let a = self.insert_args("-D");
        self.timed(tool, &a.iter().map(String::as_str).collect::<Vec<_>>())
    }
    /// `-S vcld-7` of the kernel subsystem `tool` writes to, as iptables lists it: xtnl's
    /// work is read back with iptables-nft (an independent reader; `xtnl -S` at N = 5,000
    /// takes minutes, see CLI-RESULTS.md).
    fn list_target(&self, tool: Tool) -> String {
        let lister = if tool == Tool::Legacy {
            Tool::Legacy
        } else {
            Tool::Nft
        };
        self.run(lister, &["-t", "nat", "-S", &chain(TARGET)])
    }
}

fn check(what: &str, out: std::io::Result<Output>) -> String {
    let out = out.unwrap_or_else(|e| panic!("cli bench: cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "cli bench: `{what}` failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits until nf_tables' deferred destroy work (queued by any earlier deletion in this
/// namespace, or by a detached closer still finishing) is done: releasing a bound
/// NETLINK_NETFILTER socket flushes it.
fn settle() {
    let sock = xtnl::transport::NlSocket::open().expect("open a netlink socket to settle");
    drop(sock);
}

fn chain(id: usize) -> String {
    format!("vcld-{id}")
}

fn host(id: usize) -> String {
    format!("10.{}.{}.{}", (id >> 16) & 255, (id >> 8) & 255, id & 255)
}

/// The reservation's one DNAT rule, as the agent writes it (comment included).
fn dnat_spec(id: usize) -> Vec<String> {
    let port = 20_000 + id % 40_000;
    let to = format!("{}:3389", host(id));
    [
        "-i",
        "eth1",
        "-p",
        "tcp",
        "-m",
        "comment",
        "--comment",
        &format!("VCL: forward eth1:tcp/{port} --> {to}"),
        "-m",
        "tcp",
        "--dport",
        &port.to_string(),
        "-j",
        "DNAT",
        "--to-destination",
        &to,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// iptables-restore input adding reservations `from..to` to table nat.
fn restore_file(from: usize, to: usize) -> String {
    let mut s = String::from("*nat\n");
    for i in from..to {
        let _ = writeln!(s, ":{} - [0:0]", chain(i));
    }
    for i in from..to {
        let c = chain(i);
        let _ = writeln!(
            s,
            "-A PREROUTING -m comment --comment \"VCL: jump from nat table PREROUTING chain \
             to reservation NAT chain {c}\" -j {c}"
        );
        let port = 20_000 + i % 40_000;
        let to = format!("{}:3389", host(i));
        let _ = writeln!(
            s,
            "-A {c} -i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/{port} --> \
             {to}\" -m tcp --dport {port} -j DNAT --to-destination {to}"
        );
    }
    s.push_str("COMMIT\n");
    s
}

fn populate(b: &Bench, from: usize, to: usize) -> (Duration, Duration) {
    let file = b.dir.join(format!("populate-{from}-{to}.rules"));
    std::fs::write(&file, restore_file(from, to)).expect("write restore file");
    let f = file.to_str().expect("utf-8 temp path");
    let restore = |program: &str, args: &[&str]| {
        let start = Instant::now();
        let out = Command::new(program)
            .args(args)
            .arg(f)
            .env("XTABLES_LOCKFILE", &b.lock)
            .stdin(Stdio::null())
            .output();
        check(&format!("{program} {args:?} {f}"), out);
        start.elapsed()
    };
    let nft = restore("iptables-nft-restore", &["--noflush"]);
    let legacy = restore("iptables-legacy-restore", &["-w", "--noflush"]);
    let _ = std::fs::remove_file(&file);
    (nft, legacy)
}

/// Reservation 7 is populated on both sides, and each tool's flush, re-add, insert and
/// delete do what they say (read back with `-S`, see [`Bench::list_target`]). Runs before
/// the timings.
fn verify(b: &Bench) {
    let c = chain(TARGET);
    for tool in TOOLS {
        let rules = |b: &Bench| {
            b.list_target(tool)
                .lines()
                .filter(|l| l.starts_with("-A "))
                .count()
        };
        assert_eq!(
            rules(b),
            1,
            "{}: {c} should hold its DNAT rule",
            tool.label()
        );
        b.flush(tool);
        assert_eq!(rules(b), 0, "{}: {c} should be empty", tool.label());
        b.readd(tool);
        b.insert(tool);
        let listed = b.list_target(tool);
        let first = listed.lines().find(|l| l.starts_with("-A ")).unwrap_or("");
        assert!(
            first.contains("--dport 50443") && first.contains("192.0.2.3:3389"),
            "{}: the inserted rule should come first in {c}:\n{listed}",
            tool.label()
        );
        b.delete_inserted(tool);
        assert_eq!(
            rules(b),
            1,
            "{}: {c} should hold one rule again",
            tool.label()
        );
    }
    settle();
}

#[derive(Default)]
struct Samples(Vec<(String, usize, Tool, Duration)>);

impl Samples {
    fn push(&mut self, op: &str, n: usize, tool: Tool, d: Duration) {
        self.0.push((op.to_owned(), n, tool, d));
    }
    fn get(&self, op: &str, n: usize, tool: Tool) -> Vec<Duration> {
        let mut v: Vec<Duration> = self
            .0
            .iter()
            .filter(|(o, m, t, _)| o == op && *m == n && *t == tool)
            .map(|s| s.3)
            .collect();
        v.sort();
        v
    }
    fn stats(&self, op: &str, n: usize, tool: Tool) -> Option<Stats> {
        Stats::of(&self.get(op, n, tool))
    }
}

#[derive(Clone, Copy)]
struct Stats {
    p50: Duration,
    p99: Duration,
    count: usize,
}

impl Stats {
    /// Nearest-rank percentiles of sorted samples.
    fn of(sorted: &[Duration]) -> Option<Stats> {
        if sorted.is_empty() {
            return None;
        }
        let rank = |p: f64| {
            let k = (p * sorted.len() as f64).ceil() as usize;
            sorted[k.clamp(1, sorted.len()) - 1]
        };
        Some(Stats {
            p50: rank(0.50),
            p99: rank(0.99),
            count: sorted.len(),
        })
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// One N: flush and insert, the three tools interleaved within each iteration.
fn measure_size(b: &Bench, s: &mut Samples, n: usize, iters: usize, pair_iters: usize) {
    for i in 0..WARM_UP + iters {
        for tool in TOOLS {
            settle();
            let f = b.flush(tool);
            b.readd(tool);
            settle();
            let ins = b.insert(tool);
            b.delete_inserted(tool);
            if i >= WARM_UP {
                s.push("flush", n, tool, f);
                s.push("insert", n, tool, ins);
            }
        }
        // The floors again, in the same position as the timed commands (after a settle
        // that may have slept, so with the same cold start).
        settle();
        let t = timed_floor(Path::new("/bin/true"), &[]);
        settle();
        let v = timed_floor(&b.xtnl, &["version"]);
        if i >= WARM_UP {
            s.push(FLOOR_TRUE, n, Tool::Xtnl, t);
            s.push(FLOOR_XTNL, n, Tool::Xtnl, v);
        }
    }
    settle();
    // A flush and the very next command of the same tool, as a teardown issues them.
    for i in 0..1 + pair_iters {
        for tool in TOOLS {
            settle();
            let f = b.flush(tool);
            let next = b.readd(tool);
            if i >= 1 {
                s.push("flush+next: flush", n, tool, f);
                s.push("flush+next: next", n, tool, next);
                s.push("flush+next", n, tool, f + next);
            }
        }
    }
    settle();
}

fn timed_floor(program: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output();
    let took = start.elapsed();
    check(&program.to_string_lossy(), out);
    took
}

/// Process floors, back to back: `/bin/true`, and `xtnl version` (the xtnl binary starting
/// and exiting without touching netlink), interleaved.
fn measure_floor(b: &Bench, s: &mut Samples, iters: usize) {
    for i in 0..WARM_UP + iters {
        let took = timed_floor(Path::new("/bin/true"), &[]);
        let version = timed_floor(&b.xtnl, &["version"]);
        if i >= WARM_UP {
            s.push(FLOOR_TRUE, 0, Tool::Xtnl, took);
            s.push(FLOOR_XTNL, 0, Tool::Xtnl, version);
        }
    }
}

/// Peak RSS (KiB) of `tool`'s flush and insert under `/usr/bin/time -v`; None without it.
fn measure_rss(b: &Bench, tool: Tool) -> Option<(u64, u64)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let maxrss = |args: &[&str]| -> u64 {
        let std = b.command(tool, args);
        let mut c = Command::new(time);
        c.arg("-v").arg(std.get_program()).args(std.get_args());
        c.env("XTABLES_LOCKFILE", &b.lock).stdin(Stdio::null());
        let out = c.output().expect("run /usr/bin/time");
        assert!(
            out.status.success(),
            "/usr/bin/time -v {} failed: {}",
            tool.label(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("Maximum resident set size (kbytes):")
                    .and_then(|v| v.trim().parse().ok())
            })
            .expect("/usr/bin/time -v prints the maximum resident set size")
    };
    let c = chain(TARGET);
    let (mut flush, mut insert) = (0, 0);
    for _ in 0..RSS_RUNS {
        settle();
        flush = flush.max(maxrss(&["-t", "nat", "-F", &c]));
        b.readd(tool);
        settle();
        let a = b.insert_args("-I");
        insert = insert.max(maxrss(&a.iter().map(String::as_str).collect::<Vec<_>>()));
        b.delete_inserted(tool);
    }
    settle();
    Some((flush, insert))
}

fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
            s.push_str(&String::from_utf8_lossy(&o.stderr));
            s.lines().next().unwrap_or("").trim().to_owned()
        })
        .unwrap_or_else(|| "missing".into())
}

fn main() {
    // Before anything else: the main thread, which runs every child, moves to a fresh
    // network namespace, and refuses to go on in the initial one.
    if let Err(e) = scratch::enter_new() {
        panic!(
            "cli bench: cannot create a network namespace ({e}); it needs root \
             (CAP_SYS_ADMIN) and touches netfilter only inside its own namespace"
        );
    }
    if let Err(e) = scratch::refuse_initial() {
        panic!("cli bench: still in the initial network namespace, refusing to run: {e}");
    }
    let run_start = Instant::now();
    let load_start = loadavg();
    let plan = Plan::from_args();
    let dir = std::env::temp_dir().join(format!("xtnl-clibench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    let b = Bench {
        xtnl: support::locate_xtnl("cli"),
        lock: dir.join("xtables.lock"),
        dir,
    };

    let mut s = Samples::default();
    measure_floor(&b, &mut s, plan.floor_iters);
    let mut populated = 0;
    let mut notes = Vec::new();
    let mut rss = Vec::new();
    for &(n, iters, pair_iters) in &plan.sizes {
        let (nft, legacy) = populate(&b, populated, n);
        populated = n;
        notes.push(format!(
            "populate to N={n}: iptables-nft-restore {}, iptables-legacy-restore {}",
            ms(nft),
            ms(legacy)
        ));
        verify(&b);
        let start = Instant::now();
        measure_size(&b, &mut s, n, iters, pair_iters);
        notes.push(format!(
            "N={n}: {iters} iterations (+{WARM_UP} warm-up) of flush and insert per tool, \
             {pair_iters} of flush+next, in {:.1} s",
            start.elapsed().as_secs_f64()
        ));
        for tool in TOOLS {
            if let Some((f, i)) = measure_rss(&b, tool) {
                rss.push((n, tool, f, i));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&b.dir);

    let report = report(
        &plan,
        &load_start,
        &b,
        &s,
        &rss,
        &notes,
        run_start.elapsed(),
    );
    println!("{report}");
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

#[allow(clippy::too_many_arguments)]
fn report(
    plan: &Plan,
    load_start: &str,
    b: &Bench,
    s: &Samples,
    rss: &[(usize, Tool, u64, u64)],
    notes: &[String],
    total: Duration,
) -> String {
    let mut r = String::new();
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let _ = writeln!(r, "## xtnl CLI benchmark (whole processes)\n");
    let by_cargo_bench = std::env::args().any(|a| a == "--bench");
    let _ = writeln!(
        r,
        "- command: `cargo bench --bench cli{}`{}",
        if plan.quick { " -- --quick" } else { "" },
        if by_cargo_bench {
            ""
        } else {
            " (plan; this run had no `--bench` argument, so it ran the quick plan)"
        }
    );
    let _ = writeln!(r, "- machine: nproc {nproc}, kernel {}", kernel.trim());
    let _ = writeln!(
        r,
        "- load average (1, 5, 15 min) at start: {}; at end: {} (other processes share the \
         machine: compare runs under similar load)",
        load_start,
        loadavg()
    );
    let _ = writeln!(
        r,
        "- tools: {} ({}), {}, {}",
        b.xtnl.display(),
        first_line(&b.xtnl.to_string_lossy(), &["version"]),
        first_line("iptables-nft", &["-V"]),
        first_line("iptables-legacy", &["-V"]),
    );
    for (name, what) in [
        (FLOOR_TRUE, "`/bin/true`"),
        (
            FLOOR_XTNL,
            "`xtnl version` (xtnl's own start and exit, no netlink)",
        ),
    ] {
        if let Some(f) = s.stats(name, 0, Tool::Xtnl) {
            let _ = writeln!(
                r,
                "- floor, back to back: {what}: p50 {}, p99 {} ({} runs)",
                ms(f.p50),
                ms(f.p99),
                f.count
            );
        }
        for &(n, _, _) in &plan.sizes {
            if let Some(f) = s.stats(name, n, Tool::Xtnl) {
                let _ = writeln!(
                    r,
                    "- floor, in the N={n} loop after a settle: {what}: p50 {}, p99 {} ({} runs)",
                    ms(f.p50),
                    ms(f.p99),
                    f.count
                );
            }
        }
    }
    for n in notes {
        let _ = writeln!(r, "- {n}");
    }
    let _ = writeln!(r, "- whole run: {:.1} s\n", total.as_secs_f64());

    let _ = writeln!(
        r,
        "Wall time per command (fork + exec + wait, output captured), each timed command \
         preceded by a settle (see benches/cli.rs); ratio = p50 of the other tool / p50 of \
         xtnl.\n"
    );
    let _ = writeln!(
        r,
        "| op | N | xtnl p50 | xtnl p99 | iptables-nft p50 | iptables-nft p99 | \
         iptables-legacy -w p50 | iptables-legacy -w p99 | runs | nft / xtnl | \
         legacy -w / xtnl |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for op in ["flush", "insert"] {
        for &(n, _, _) in &plan.sizes {
            let (Some(x), Some(nft), Some(leg)) = (
                s.stats(op, n, Tool::Xtnl),
                s.stats(op, n, Tool::Nft),
                s.stats(op, n, Tool::Legacy),
            ) else {
                continue;
            };
            let _ = writeln!(
                r,
                "| {op} | {n} | {} | {} | {} | {} | {} | {} | {} | {:.1}x | {:.1}x |",
                ms(x.p50),
                ms(x.p99),
                ms(nft.p50),
                ms(nft.p99),
                ms(leg.p50),
                ms(leg.p99),
                x.count,
                ratio(nft.p50, x.p50),
                ratio(leg.p50, x.p50),
            );
        }
    }

    let _ = writeln!(
        r,
        "\nA flush and the very next command of the same tool (the re-add), without settling \
         in between, as a teardown issues its commands:\n\n| N | tool | flush p50 | next \
         p50 | next p99 | flush + next p50 | flush + next p99 | runs |\n\
         |---:|---|---:|---:|---:|---:|---:|---:|"
    );
    for &(n, _, _) in &plan.sizes {
        for tool in TOOLS {
            let (Some(f), Some(nx), Some(pair)) = (
                s.stats("flush+next: flush", n, tool),
                s.stats("flush+next: next", n, tool),
                s.stats("flush+next", n, tool),
            ) else {
                continue;
            };
            let _ = writeln!(
                r,
                "| {n} | {} | {} | {} | {} | {} | {} | {} |",
                tool.label(),
                ms(f.p50),
                ms(nx.p50),
                ms(nx.p99),
                ms(pair.p50),
                ms(pair.p99),
                pair.count
            );
        }
    }

    if !rss.is_empty() {
        let _ = writeln!(
            r,
            "\nPeak RSS (`/usr/bin/time -v`, max of {RSS_RUNS} runs):\n\n| N | tool | flush | insert |\n|---:|---|---:|---:|"
        );
        for (n, tool, f, i) in rss {
            let _ = writeln!(
                r,
                "| {n} | {} | {:.2} MiB | {:.2} MiB |",
                tool.label(),
                *f as f64 / 1024.0,
                *i as f64 / 1024.0
            );
        }
    } else {
        let _ = writeln!(
            r,
            "\nPeak RSS: /usr/bin/time is not installed; not measured."
        );
    }

    // Targets.
    let small = plan.sizes[0].0;
    let large = plan.sizes[plan.sizes.len() - 1].0;
    let _ = writeln!(
        r,
        "\nTargets (p50 ratios; large-N targets evaluated at N={large}{}):\n\n| target | measured | result |\n|---|---:|---|",
        if plan.quick {
            ", not 5,000: quick run"
        } else {
            ""
        }
    );
    let mut target = |name: String, op: &str, n: usize, other: Tool, want: f64| {
        let (Some(x), Some(o)) = (s.stats(op, n, Tool::Xtnl), s.stats(op, n, other)) else {
            return;
        };
        let got = ratio(o.p50, x.p50);
        let _ = writeln!(
            r,
            "| {name} | {got:.1}x | {} |",
            if got >= want { "PASS" } else { "FAIL" }
        );
    };
    for &(n, _, _) in &plan.sizes {
        target(
            format!("flush >= 10x faster than iptables-nft, N={n}"),
            "flush",
            n,
            Tool::Nft,
            10.0,
        );
    }
    target(
        format!("insert >= 2.5x faster than iptables-nft, N={small}"),
        "insert",
        small,
        Tool::Nft,
        2.5,
    );
    target(
        format!("insert >= 4x faster than iptables-nft, N={large}"),
        "insert",
        large,
        Tool::Nft,
        4.0,
    );
    for op in ["flush", "insert"] {
        target(
            format!("{op} >= 20x faster than iptables-legacy -w, N={large}"),
            op,
            large,
            Tool::Legacy,
            20.0,
        );
    }
    let xtnl_peak = rss
        .iter()
        .filter(|e| e.1 == Tool::Xtnl)
        .map(|e| e.2.max(e.3))
        .max();
    match xtnl_peak {
        Some(k) => {
            let _ = writeln!(
                r,
                "| xtnl peak RSS < 8 MiB (flush, insert, every N) | {:.2} MiB | {} |",
                k as f64 / 1024.0,
                if k < 8 * 1024 { "PASS" } else { "FAIL" }
            );
        }
        None => {
            let _ = writeln!(r, "| xtnl peak RSS < 8 MiB | not measured | - |");
        }
    }
    r
}
