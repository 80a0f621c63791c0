//! The x_tables backend against `iptables-legacy -w`, in one run, inside a network namespace
//! the bench creates on its main thread before anything else (every child inherits it; the
//! host's ruleset is never touched). Both use a private xtables lock (`XTABLES_LOCKFILE`).
//!
//! Table `nat` holds N reservations (chain `vcld-<i>`, a jump to it from PREROUTING with the
//! agent's comment, one DNAT rule with its comment), loaded with `iptables-legacy-restore`.
//! Per N (10 and 5,000), interleaved within every iteration:
//!
//! - `flush`: `-t nat -F vcld-7` (one rule), re-added afterwards, untimed, by the same tool;
//! - `insert`: `-t nat -I vcld-7 <DNAT spec>`, deleted afterwards, untimed;
//! - `tx50`: 50 operations (50 `-A vcld-7 <DNAT spec>` with distinct ports) as one
//!   transaction, against 50 `iptables-legacy -w` commands; undone afterwards, untimed.
//!
//! Each is timed three ways: `iptables-legacy -w` processes; the `xtnl --backend legacy`
//! binary as a whole process (`xtnl restore --noflush` for tx50); and the library call
//! ([`xtnl::legacy::execute`] / [`xtnl::legacy::Legacy::transact`]) in this process, which
//! is what an agent linking xtnl pays. Per N, the phases of a library `-F` (read, build the
//! table, apply + lay out, replace) and the kernel floor (a read and a replace of the very blob
//! read, which any x_tables tool pays) are printed after the table.
//!
//! Run: `cargo bench --bench legacy` (about a minute), or `-- --quick` (a few seconds; also
//! what runs without cargo's `--bench` argument). Targets are printed with PASS/FAIL; nothing
//! is asserted.

mod support;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtnl::ipt::parse;
use xtnl::legacy::Legacy;
use xtnl::legacy::exec::LegacyTable;
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;

const TARGET: usize = 7;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Legacy,
    XtnlProcess,
    XtnlLibrary,
}

const WAYS: [Way; 3] = [Way::Legacy, Way::XtnlProcess, Way::XtnlLibrary];

impl Way {
    fn label(self) -> &'static str {
        match self {
            Way::Legacy => "iptables-legacy -w",
            Way::XtnlProcess => "xtnl process",
            Way::XtnlLibrary => "xtnl library",
        }
    }
}

struct Bench {
    xtnl: PathBuf,
    lock: PathBuf,
    dir: PathBuf,
    legacy: Legacy,
}

fn chain(id: usize) -> String {
    format!("vcld-{id}")
}

fn dnat_spec(id: usize, port: usize) -> Vec<String> {
    let to = format!("10.0.{}.{}:3389", (id >> 8) & 255, id & 255);
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

fn restore_file(from: usize, to: usize) -> String {
    let mut s = String::from("*nat\n");
    for i in from..to {
        let _ = writeln!(s, ":{} - [0:0]", chain(i));
    }
    for i in from..to {
        let _ = writeln!(
            s,
            "-A PREROUTING -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain {c}\" -j {c}",
            c = chain(i)
        );
        let spec: Vec<String> = dnat_spec(i, 20_000 + i)
            .into_iter()
            .map(|w| {
                if w.contains(' ') {
                    format!("\"{w}\"")
                } else {
                    w
                }
            })
            .collect();
        let _ = writeln!(s, "-A {} {}", chain(i), spec.join(" "));
    }
    s.push_str("COMMIT\n");
    s
}

impl Bench {
    fn command(&self, way: Way, args: &[String]) -> Command {
        let mut c = match way {
            Way::Legacy => {
                let mut c = Command::new("iptables-legacy");
                c.arg("-w");
                c
            }
            _ => {
                let mut c = Command::new(&self.xtnl);
                c.args(["--backend", "legacy", "-w"]);
                c
            }
        };
        c.args(args)
            .env("XTABLES_LOCKFILE", &self.lock)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, way: Way, args: &[String]) {
        if way == Way::XtnlLibrary {
            let inv = parse::parse(args, Family::Ipv4).expect("bench command parses");
            xtnl::legacy::execute(&self.legacy, &inv)
                .unwrap_or_else(|e| panic!("library {args:?}: {e}"));
            return;
        }
        let out = self.command(way, args).output().expect("run tool");
        assert!(
            out.status.success(),
            "{} {args:?}: {}",
            way.label(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn timed(&self, way: Way, args: &[String]) -> Duration {
        let start = Instant::now();
        self.run(way, args);
        start.elapsed()
    }

    fn op(&self, op: &str, spec: &[String]) -> Vec<String> {
        let mut v: Vec<String> = ["-t", "nat", op, &chain(TARGET)]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(spec.iter().cloned());
        v
    }

    /// 50 appends to vcld-7, as one transaction (or 50 commands).
    fn tx50(&self, way: Way) -> Duration {
        let cmds: Vec<Vec<String>> = (0..50)
            .map(|i| self.op("-A", &dnat_spec(TARGET, 30_000 + i)))
            .collect();
        match way {
            Way::Legacy => {
                let start = Instant::now();
                for c in &cmds {
                    self.run(way, c);
                }
                start.elapsed()
            }
            Way::XtnlProcess => {
                let mut file = String::from("*nat\n");
                for c in &cmds {
                    let words: Vec<String> = c[2..]
                        .iter()
                        .map(|w| {
                            if w.contains(' ') {
                                format!("\"{w}\"")
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    let _ = writeln!(file, "{}", words.join(" "));
                }
                file.push_str("COMMIT\n");
                let path = self.dir.join("tx50.rules");
                std::fs::write(&path, file).expect("write tx file");
                let start = Instant::now();
                let out = Command::new(&self.xtnl)
                    .args(["--backend", "legacy", "restore", "--noflush", "-w"])
                    .arg(&path)
                    .env("XTABLES_LOCKFILE", &self.lock)
                    .output()
                    .expect("run xtnl restore");
                let took = start.elapsed();
                assert!(
                    out.status.success(),
                    "xtnl restore: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                took
            }
            Way::XtnlLibrary => {
                let start = Instant::now();
                let parsed: Vec<parse::Command> = cmds
                    .iter()
                    .map(|c| parse::parse(c, Family::Ipv4).expect("parses").command)
                    .collect();
                self.legacy
                    .transact("nat", |t| {
                        let mut a = LegacyTable::new(t, false);
                        for c in &parsed {
                            xtnl::seam::interpret(&mut a, c)?;
                        }
                        Ok(((), a.changed))
                    })
                    .expect("library transaction");
                start.elapsed()
            }
        }
    }

    /// Undoes tx50 (and any other change to vcld-7): the chain back to its one rule.
    fn reset_target(&self) {
        self.run(
            Way::Legacy,
            &["-t".into(), "nat".into(), "-F".into(), chain(TARGET)],
        );
        self.run(
            Way::Legacy,
            &self.op("-A", &dnat_spec(TARGET, 20_000 + TARGET)),
        );
    }

    fn rules_in_target(&self) -> usize {
        let out = Command::new("iptables-legacy")
            .args(["-w", "-t", "nat", "-S", &chain(TARGET)])
            .env("XTABLES_LOCKFILE", &self.lock)
            .output()
            .expect("list");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("-A"))
            .count()
    }
}

/// Where a library `-F` spends its time: the read (`GET_INFO` + `GET_ENTRIES`), building the
/// table from the blob, laying it out again, and the replace (the kernel's part, and the
/// counters); `kernel floor` replaces the table with the very blob just read, which is what
/// any tool pays at the least for a read and a replace.
fn phases(b: &Bench, n: usize, iters: usize, out: &mut String) {
    use xtnl::legacy::kernel::XtSocket;
    let sock = XtSocket::open(Family::Ipv4).expect("raw socket");
    let mut s: [Vec<Duration>; 5] = Default::default();
    for _ in 0..iters.max(3) {
        let t0 = Instant::now();
        let (info, blob) = sock.read_raw("nat").map_err(|_| ()).expect("read");
        let t1 = Instant::now();
        let mut t = xtnl::legacy::Table::from_blob(
            Family::Ipv4,
            "nat",
            info.valid_hooks,
            &info.hook_entry,
            &info.underflow,
            &blob,
        )
        .expect("decode");
        let t2 = Instant::now();
        xtnl::seam::interpret(
            &mut LegacyTable::new(&mut t, false),
            &parse::parse(
                &["-t".into(), "nat".into(), "-F".into(), chain(TARGET)],
                Family::Ipv4,
            )
            .expect("parses")
            .command,
        )
        .expect("flush");
        let layout = t.to_blob().expect("layout");
        let t3 = Instant::now();
        sock.replace(&t).map_err(|_| ()).expect("replace");
        let t4 = Instant::now();
        s[0].push(t1 - t0);
        s[1].push(t2 - t1);
        s[2].push(t3 - t2);
        s[3].push((t4 - t3).saturating_sub(t3 - t2));
        drop(layout);
        b.reset_target();
        let (info, blob) = sock.read_raw("nat").map_err(|_| ()).expect("read");
        let t5 = Instant::now();
        sock.replace_raw("nat", &info, &blob)
            .map_err(|_| ())
            .expect("replace raw");
        s[4].push(t5.elapsed());
    }
    let _ = writeln!(
        out,
        "phases of a library -F at N = {n} (p50): read {}, decode {}, apply + layout {}, replace {}; kernel floor (replace with the blob read) {}",
        ms(p50(&mut s[0])),
        ms(p50(&mut s[1])),
        ms(p50(&mut s[2])),
        ms(p50(&mut s[3])),
        ms(p50(&mut s[4])),
    );
}

fn p50(v: &mut [Duration]) -> Duration {
    v.sort();
    v[(v.len() - 1) / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    if let Err(e) = xtnl::netns::enter_new() {
        panic!("legacy bench: cannot create a network namespace ({e}); it needs root");
    }
    if let Err(e) = xtnl::netns::refuse_initial() {
        panic!("legacy bench: still in the initial network namespace: {e}");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let (sizes, tx_iters): (Vec<(usize, usize)>, usize) = if quick {
        (vec![(10, 10), (5_000, 4)], 3)
    } else {
        (vec![(10, 100), (5_000, 30)], 10)
    };
    let dir = std::env::temp_dir().join(format!("xtnl-legacybench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let lock = dir.join("xtables.lock");
    let b = Bench {
        xtnl: support::locate_xtnl("legacy"),
        legacy: Legacy::open(Family::Ipv4, XtablesLock::new(&lock, WaitPolicy::Forever))
            .expect("open x_tables"),
        lock,
        dir: dir.clone(),
    };
    let start = Instant::now();
    let mut report = String::new();
    let mut targets = Vec::new();
    let _ = writeln!(
        report,
        "| op | N | iptables-legacy -w p50 | xtnl process p50 | xtnl library p50 | legacy / process | legacy / library |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let mut loaded = 0;
    let mut report_phases = String::new();
    for (n, iters) in sizes {
        let path = dir.join("populate.rules");
        std::fs::write(&path, restore_file(loaded, n)).expect("write rules");
        let o = Command::new("iptables-legacy-restore")
            .arg("--noflush")
            .arg(&path)
            .env("XTABLES_LOCKFILE", &b.lock)
            .output()
            .expect("iptables-legacy-restore");
        assert!(
            o.status.success(),
            "populate: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        loaded = n;
        let mut rows: Vec<(&str, [Vec<Duration>; 3])> = vec![
            ("flush", Default::default()),
            ("insert", Default::default()),
            ("tx50", Default::default()),
        ];
        let insert_spec = dnat_spec(TARGET, 50_443);
        for it in 0..iters + 2 {
            for (k, way) in WAYS.iter().enumerate() {
                let f = b.timed(
                    *way,
                    &["-t".into(), "nat".into(), "-F".into(), chain(TARGET)],
                );
                assert_eq!(b.rules_in_target(), 0, "{} flush", way.label());
                b.reset_target();
                let i = b.timed(*way, &b.op("-I", &insert_spec));
                assert_eq!(b.rules_in_target(), 2, "{} insert", way.label());
                b.run(Way::Legacy, &b.op("-D", &insert_spec));
                // Warm-up iterations are dropped.
                if it >= 2 {
                    rows[0].1[k].push(f);
                    rows[1].1[k].push(i);
                }
            }
            if it < tx_iters + 1 {
                for (k, way) in WAYS.iter().enumerate() {
                    let t = b.tx50(*way);
                    assert_eq!(b.rules_in_target(), 51, "{} tx50", way.label());
                    b.reset_target();
                    if it >= 1 {
                        rows[2].1[k].push(t);
                    }
                }
            }
        }
        phases(&b, n, iters, &mut report_phases);
        for (op, mut samples) in rows {
            let [l, p, lib] = [
                p50(&mut samples[0]),
                p50(&mut samples[1]),
                p50(&mut samples[2]),
            ];
            let (rp, rl) = (
                l.as_secs_f64() / p.as_secs_f64(),
                l.as_secs_f64() / lib.as_secs_f64(),
            );
            let _ = writeln!(
                report,
                "| {op} | {n} | {} | {} | {} | {rp:.1}x | {rl:.1}x |",
                ms(l),
                ms(p),
                ms(lib)
            );
            let want = if op == "tx50" { 20.0 } else { 3.0 };
            if op == "tx50" || n == 10 {
                targets.push(format!(
                    "{op} at N = {n}: >= {want}x faster than iptables-legacy -w: process {rp:.1}x {}, library {rl:.1}x {}",
                    if rp >= want { "PASS" } else { "FAIL" },
                    if rl >= want { "PASS" } else { "FAIL" },
                ));
            }
        }
    }
    println!(
        "legacy bench ({}), {:.1} s, load average {}",
        if quick { "quick" } else { "full" },
        start.elapsed().as_secs_f64(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    print!("{report}");
    for t in targets {
        println!("{t}");
    }
    print!("{report_phases}");
    let _ = std::fs::remove_dir_all(&dir);
}
