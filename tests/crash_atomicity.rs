//! Crash atomicity: the `xtnl` process is SIGKILLed at random points of large
//! transactions, and after every kill the kernel's whole ruleset (`nft list ruleset`) must
//! equal exactly the state before the transaction or the state after it: never a mix.
//!
//! Rows (each run until `KILLS_PER_ROW` kills landed while xtnl was still running):
//! - a 10,000-rule `xtnl restore` (5,000 reservation chains, each jumped to from
//!   PREROUTING with a comment, each with a DNAT forward) onto a small NAT host table;
//! - the reverse: a restore of the small table over the 10,000-rule one, which flushes
//!   PREROUTING and 5,000 chains and deletes them, in one transaction;
//! - `xtnl teardown` (issue 4) of a chain that 2,500 chains jump to: 2,500 rules deleted in
//!   2,500 chains, the chain flushed and deleted.
//!
//! Delays are uniform over 0..1.2 x the measured duration of the whole command, from a
//! seeded generator whose seed is printed (`XTNL_CRASH_SEED=N` replays a run;
//! `XTNL_CRASH_KILLS=N` changes the kills per row). Every row runs on both backends
//! (`--backend nft` and `--backend legacy`); the dump compared is nf_tables' and x_tables'
//! together.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{in_netns, private_lock_path, run_ok};

const KILLS_PER_ROW: usize = 34;

/// The NAT host's own rules, without reservations.
const BASE: &str = "\
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:vcl-nat_host - [0:0]
-A POSTROUTING -j vcl-nat_host
-A vcl-nat_host ! -d 10.0.0.0/20 -o eth1 -m comment --comment \"VCL: change IP of outbound eth1 packets to NAT host IP address 152.1.1.1\" -j MASQUERADE
COMMIT
";

/// BASE plus 5,000 reservations: 10,000 rules more.
fn big() -> String {
    let mut s = String::from(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:vcl-nat_host - [0:0]\n",
    );
    for c in 0..5_000 {
        s.push_str(&format!(":vcld-{c} - [0:0]\n"));
    }
    s.push_str("-A POSTROUTING -j vcl-nat_host\n");
    s.push_str("-A vcl-nat_host ! -d 10.0.0.0/20 -o eth1 -m comment --comment \"VCL: change IP of outbound eth1 packets to NAT host IP address 152.1.1.1\" -j MASQUERADE\n");
    for c in 0..5_000 {
        s.push_str(&format!(
            "-A PREROUTING -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-{c}\" -j vcld-{c}\n"
        ));
        s.push_str(&format!(
            "-A vcld-{c} -i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/{p} --> 192.0.2.{h}:22\" -m tcp --dport {p} -j DNAT --to-destination 192.0.2.{h}:22\n",
            p = 10_000 + c,
            h = 1 + c % 250
        ));
    }
    s.push_str("COMMIT\n");
    s
}

/// BASE plus 2,500 reservation chains that each jump, besides their DNAT, to one shared
/// chain: `xtnl teardown shared` then deletes 2,500 references in 2,500 chains, flushes the
/// chain and deletes it, in one transaction.
fn shared_references() -> String {
    let mut s = String::from(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:vcl-nat_host - [0:0]\n:shared - [0:0]\n",
    );
    for c in 0..2_500 {
        s.push_str(&format!(":vcld-{c} - [0:0]\n"));
    }
    s.push_str("-A POSTROUTING -j vcl-nat_host\n");
    s.push_str("-A shared -p tcp -m tcp --dport 22 -j RETURN\n-A shared -j DNAT --to-destination 192.0.2.254\n");
    for c in 0..2_500 {
        s.push_str(&format!("-A PREROUTING -j vcld-{c}\n"));
        s.push_str(&format!(
            "-A vcld-{c} -i eth1 -p tcp -m tcp --dport {} -j DNAT --to-destination 192.0.2.{}:22\n-A vcld-{c} -j shared\n",
            10_000 + c,
            1 + c % 250
        ));
    }
    s.push_str("COMMIT\n");
    s
}

/// One kind of transaction to kill.
struct Row {
    name: &'static str,
    /// `--backend` of every xtnl command of the row.
    backend: &'static str,
    /// xtnl arguments that make the state before (a restore of a whole file).
    setup: Vec<String>,
    /// The transaction killed at random points.
    op: Vec<String>,
}

fn rows(base: &Path, big: &Path, shared: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for backend in ["nft", "legacy"] {
        let restore = |p: &Path| {
            vec![
                "--backend".to_owned(),
                backend.to_owned(),
                "restore".to_owned(),
                p.display().to_string(),
            ]
        };
        rows.push(Row {
            name: "10,000-rule restore",
            backend,
            setup: restore(base),
            op: restore(big),
        });
        rows.push(Row {
            name: "flush and delete of 5,000 chains (restore of the small table)",
            backend,
            setup: restore(big),
            op: restore(base),
        });
        rows.push(Row {
            name: "teardown of a chain referenced from 2,500 chains",
            backend,
            setup: restore(shared),
            op: vec![
                "--backend".into(),
                backend.into(),
                "teardown".into(),
                "shared".into(),
            ],
        });
    }
    rows
}

/// xorshift64*: small, seedable, good enough to spread delays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..=max.
    fn below(&mut self, max: Duration) -> Duration {
        let n = max.as_micros() as u64 + 1;
        Duration::from_micros(self.next() % n)
    }
}

fn xtnl(lock: &str, args: &[String]) -> Command {
    let mut c = Command::new(common::xtnl_bin());
    c.args(args)
        .env("XTABLES_LOCKFILE", lock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn xtnl_ok(lock: &str, args: &[String]) -> Duration {
    let t = Instant::now();
    let o = xtnl(lock, args).output().expect("run xtnl");
    assert!(
        o.status.success(),
        "xtnl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    t.elapsed()
}

/// The whole ruleset of both backends: nf_tables as nft prints it (handles left out: they
/// are allocated anew each time a state is rebuilt between kills) and the x_tables tables as
/// iptables-legacy-save prints them (without its dated comment lines).
fn ruleset() -> String {
    let legacy: String = run_ok("iptables-legacy-save", &[])
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    format!("{}{legacy}", run_ok("nft", &["list", "ruleset"]))
}

#[derive(Default, Debug)]
struct Tally {
    landed: usize,
    finished_first: usize,
    before: usize,
    after: usize,
    other: Vec<String>,
}

#[test]
fn sigkill_during_large_transactions_leaves_before_or_after() {
    let seed = std::env::var("XTNL_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    let kills: usize = std::env::var("XTNL_CRASH_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(KILLS_PER_ROW);
    eprintln!("crash atomicity seed {seed} (XTNL_CRASH_SEED={seed} replays it)");
    in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        let dir: PathBuf =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("crash-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let (base, big_file) = (dir.join("base.rules"), dir.join("big.rules"));
        std::fs::write(&base, BASE).expect("write base");
        std::fs::write(&big_file, big()).expect("write big");
        let shared = dir.join("shared.rules");
        std::fs::write(&shared, shared_references()).expect("write shared");
        let mut rng = Rng(seed);
        let mut report = Vec::new();
        for row in rows(&base, &big_file, &shared) {
            // The two states, and how long the whole command takes.
            xtnl_ok(&lock, &row.setup);
            let before = ruleset();
            let full = xtnl_ok(&lock, &row.op);
            let after = ruleset();
            assert_ne!(
                before, after,
                "{}: the transaction changes something",
                row.name
            );
            xtnl_ok(&lock, &row.setup);
            assert_eq!(
                ruleset(),
                before,
                "{}: setup rebuilds the same state",
                row.name
            );
            let window = full.mul_f64(1.2);

            let mut t = Tally::default();
            let mut attempts = 0;
            while t.landed < kills {
                attempts += 1;
                assert!(
                    attempts < kills * 4,
                    "{}: kills keep missing: {t:?}",
                    row.name
                );
                let delay = rng.below(window);
                let mut child = xtnl(&lock, &row.op).spawn().expect("spawn xtnl");
                std::thread::sleep(delay);
                let running = child.try_wait().expect("try_wait").is_none();
                let _ = child.kill();
                let status = child.wait().expect("wait");
                if running {
                    t.landed += 1;
                } else {
                    t.finished_first += 1;
                    assert!(status.success(), "{}: xtnl failed on its own", row.name);
                }
                let now = ruleset();
                if now == before {
                    t.before += 1;
                } else if now == after {
                    t.after += 1;
                } else {
                    t.other.push(format!(
                        "kill after {delay:?}: {} lines, neither state",
                        now.lines().count()
                    ));
                }
                if now != before {
                    xtnl_ok(&lock, &row.setup);
                }
            }
            eprintln!(
                "{} ({}): {} kills landed ({} in the before state, {} in the after state, {} neither), {} runs finished before their kill; window {:?}",
                row.name,
                row.backend,
                t.landed,
                t.before,
                t.after,
                t.other.len(),
                t.finished_first,
                window
            );
            report.push((format!("{} ({})", row.name, row.backend), t));
        }
        let _ = std::fs::remove_dir_all(&dir);
        for (name, t) in &report {
            assert!(
                t.other.is_empty(),
                "{name}: {} kills left a partial ruleset (seed {seed}):\n{}",
                t.other.len(),
                t.other.join("\n")
            );
        }
        let landed: usize = report.iter().map(|(_, t)| t.landed).sum();
        assert!(landed >= 6 * kills);
    });
}
