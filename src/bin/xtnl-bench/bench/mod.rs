//! The benchmark suite (`xtnl bench`, `cargo bench --bench suite`): xtnl against the
//! shell-out path it replaces, in one run, inside a network namespace of its own.
//!
//! - Scaling: table `nat` holds N reservations (chain `vcld-<i>`, a jump to it from
//!   PREROUTING and two DNAT rules, all with the NAT-host agent's comments), on the nf_tables
//!   side (populated with `iptables-nft-restore --noflush`) and the x_tables side
//!   (`iptables-legacy-restore --noflush`) of the same namespace. For every tool, p50 and p99
//!   of: flush a chain, set up a reservation, tear one down, insert a rule, list a chain.
//! - Contention: P worker threads, each running the tool's processes to set up and tear down
//!   its own reservation K times, all on one nat table: throughput, p99, failures.
//! - The floor: a bare GETGEN round trip and a bare one-message batch, same run.
//!
//! Every timed step is preceded by a "settle" (open and close a NETLINK_NETFILTER socket):
//! a deleting commit leaves nf_tables' deferred destroy work pending, and whoever closes a
//! socket next waits for it (see benches/CLI-RESULTS.md); settling keeps one tool from
//! paying for the previous tool's untimed clean-up.
//!
//! The runner refuses to run in the initial network namespace: callers first move the
//! calling thread into a new one ([`enter_scratch_namespace`]); every thread and process the
//! runner starts inherits it, so the host's ruleset is never touched.

pub mod cluster;
mod cluster_input;
mod contention;
mod floor;
mod process;
mod report;
mod scaling;
mod serve_worker;
mod spec;
pub mod stream;
pub mod stream_report;
mod svg;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use xtnl::error::{Error, Result};

pub use contention::ContentionRun;
pub use report::{csv, markdown};
pub use svg::svg;

/// What the runner works with (scaling's and contention's; defined here so that neither
/// module imports the other's).
struct Env<'a> {
    cfg: &'a Config,
    /// The xtables lock every tool shares (a private file, never /run/xtables.lock).
    lock: PathBuf,
    dir: PathBuf,
    session: xtnl::nft::Session,
    bare: xtnl::transport::NlSocket,
    insert: xtnl::ipt::parse::Invocation,
}

/// The tools compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    /// The xtnl library in this process: one long-lived session.
    Library,
    /// The `xtnl` binary, one process per operation.
    Binary,
    IptablesNft,
    IptablesLegacy,
    Nft,
    NftRestore,
    LegacyRestore,
}

impl Tool {
    pub const ALL: [Tool; 7] = [
        Tool::Library,
        Tool::Binary,
        Tool::IptablesNft,
        Tool::IptablesLegacy,
        Tool::Nft,
        Tool::NftRestore,
        Tool::LegacyRestore,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Tool::Library => "xtnl library",
            Tool::Binary => "xtnl binary",
            Tool::IptablesNft => "iptables-nft",
            Tool::IptablesLegacy => "iptables-legacy -w",
            Tool::Nft => "nft",
            Tool::NftRestore => "iptables-nft-restore --noflush",
            Tool::LegacyRestore => "iptables-legacy-restore --noflush",
        }
    }

    /// Whether the tool writes x_tables (its state lives apart from nf_tables').
    fn legacy(self) -> bool {
        matches!(self, Tool::IptablesLegacy | Tool::LegacyRestore)
    }

    /// Whether the tool has a way to list one chain (the restore tools have none).
    fn lists(self) -> bool {
        !matches!(self, Tool::NftRestore | Tool::LegacyRestore)
    }
}

/// The operations timed at every N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Flush,
    Setup,
    Teardown,
    Insert,
    List,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Flush, Op::Setup, Op::Teardown, Op::Insert, Op::List];

    pub fn label(self) -> &'static str {
        match self {
            Op::Flush => "flush a chain",
            Op::Setup => "set up a reservation",
            Op::Teardown => "tear one down",
            Op::Insert => "insert a rule",
            Op::List => "list a chain",
        }
    }
}

/// Reference timings taken in the same run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Floor {
    /// A hand-built one-message batch (flush of the same chain), one send, ACKs drained.
    BareBatch,
    /// A hand-built GETGEN request and its reply.
    BareGetgen,
    /// `Session::generation`: the library's GETGEN.
    LibraryGetgen,
    /// `/bin/true` as a process (fork + exec + wait).
    ProcessTrue,
    /// `xtnl version`: the binary starting and exiting without netlink.
    XtnlVersion,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub quick: bool,
    /// (N, timed iterations at that N). One more iteration first checks every tool's
    /// operations against the ruleset and is not counted.
    pub sizes: Vec<(usize, usize)>,
    /// Contention runs after the scaling step at this N (it must be one of `sizes`).
    pub contention_at: usize,
    /// Worker counts P.
    pub workers: Vec<usize>,
    /// Set-up/teardown cycles per worker (K).
    pub cycles: usize,
    /// Workers per side in the mixed run (xtnl beside iptables-legacy -w).
    pub mixed_workers: usize,
    /// A worker starts no new cycle after this long, and stops a sequence between two
    /// commands after twice this long (counted as stopped, not failed): under contention
    /// iptables-nft's cycles take tens of seconds, and the run must end.
    pub time_box: Duration,
}

impl Plan {
    /// The full plan: N = 10 .. 10,000, P = 1 .. 64.
    pub fn full() -> Plan {
        Plan {
            quick: false,
            sizes: vec![(10, 30), (100, 30), (1_000, 10), (10_000, 4)],
            contention_at: 100,
            workers: vec![1, 4, 16, 64],
            cycles: 4,
            mixed_workers: 32,
            time_box: Duration::from_secs(15),
        }
    }

    /// Proves the runner works: small N, few iterations, P = 1 and 4 (well under a minute).
    pub fn quick() -> Plan {
        Plan {
            quick: true,
            sizes: vec![(10, 3), (100, 2)],
            contention_at: 10,
            workers: vec![1, 4],
            cycles: 2,
            mixed_workers: 2,
            time_box: Duration::from_secs(10),
        }
    }
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub plan: Plan,
    /// The `xtnl` binary timed as a process.
    pub xtnl: PathBuf,
    /// Scratch files (restore inputs, lock files, saves) go here; removed afterwards.
    pub scratch: PathBuf,
    /// The command line that started the run, for the report.
    pub command: String,
    /// Progress lines on standard error.
    pub progress: bool,
}

/// p50 and p99 (nearest rank) of a set of samples.
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    pub p50: Duration,
    pub p99: Duration,
    pub count: usize,
}

impl Stats {
    pub fn of(samples: &[Duration]) -> Option<Stats> {
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
            count: s.len(),
        })
    }
}

/// Everything a run measured.
#[derive(Debug, Clone, Default)]
pub struct Results {
    pub quick: bool,
    pub command: String,
    pub sizes: Vec<usize>,
    pub samples: BTreeMap<(Op, Tool, usize), Vec<Duration>>,
    pub floors: BTreeMap<(Floor, usize), Vec<Duration>>,
    /// Kernel round trips of the library's set-up and teardown (per operation, max seen).
    pub round_trips: BTreeMap<Op, u64>,
    pub contention: Vec<ContentionRun>,
    /// The contention runs' time box.
    pub time_box: Duration,
    /// Free-form facts of the run (populate times, per-N durations).
    pub notes: Vec<String>,
    pub machine: Machine,
    pub elapsed: Duration,
}

impl Results {
    pub fn stats(&self, op: Op, tool: Tool, n: usize) -> Option<Stats> {
        self.samples.get(&(op, tool, n)).and_then(|v| Stats::of(v))
    }
    pub fn floor(&self, f: Floor, n: usize) -> Option<Stats> {
        self.floors.get(&(f, n)).and_then(|v| Stats::of(v))
    }
}

/// The machine and its load, as the report shows them.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    pub nproc: usize,
    pub cpu: String,
    pub kernel: String,
    pub load_start: String,
    pub load_end: String,
    pub versions: Vec<String>,
}

/// Moves the calling thread into a new network namespace and checks that it is not the
/// initial one. Threads and processes started from this thread afterwards inherit it.
pub fn enter_scratch_namespace() -> Result<()> {
    crate::scratch::enter_new()
        .map_err(|e| e.context("xtnl bench: cannot create a network namespace (needs root)"))?;
    crate::scratch::refuse_initial()?;
    let id = crate::scratch::current_id()?;
    SCRATCH.with(|s| s.set(Some(id)));
    Ok(())
}

thread_local! {
    /// The namespace [`enter_scratch_namespace`] created for this thread.
    static SCRATCH: std::cell::Cell<Option<(u64, u64)>> = const { std::cell::Cell::new(None) };
}

/// Runs the plan. Refuses to run anywhere but in the namespace [`enter_scratch_namespace`]
/// created for the calling thread (so never in the initial one).
pub fn run(cfg: &Config) -> Result<Results> {
    crate::scratch::refuse_initial()?;
    if SCRATCH.with(|s| s.get()) != Some(crate::scratch::current_id()?) {
        return Err(Error::InvalidInput(
            "xtnl bench: refusing to run outside the network namespace that \
             enter_scratch_namespace created for this thread (it might be the initial network \
             namespace)"
                .into(),
        ));
    }
    let start = std::time::Instant::now();
    std::fs::create_dir_all(&cfg.scratch).map_err(|e| io("create scratch dir", e))?;
    let mut results = Results {
        quick: cfg.plan.quick,
        command: cfg.command.clone(),
        sizes: cfg.plan.sizes.iter().map(|s| s.0).collect(),
        time_box: cfg.plan.time_box,
        ..Results::default()
    };
    results.machine.load_start = loadavg();
    let outcome = scaling::run(cfg, &mut results);
    let _ = std::fs::remove_dir_all(&cfg.scratch);
    outcome?;
    results.machine = Machine {
        load_start: results.machine.load_start.clone(),
        ..machine(&cfg.xtnl)
    };
    results.elapsed = start.elapsed();
    Ok(results)
}

/// Where [`write()`] put the results.
#[derive(Debug, Clone)]
pub struct Written {
    pub table: PathBuf,
    pub plot: PathBuf,
    pub csv: PathBuf,
}

/// Writes `results.md`, `latency.svg` and `results.csv` into `dir` (created if missing).
pub fn write(results: &Results, dir: &Path) -> Result<Written> {
    std::fs::create_dir_all(dir).map_err(|e| io("create results dir", e))?;
    let w = Written {
        table: dir.join("results.md"),
        plot: dir.join("latency.svg"),
        csv: dir.join("results.csv"),
    };
    std::fs::write(&w.table, markdown(results)).map_err(|e| io("write results.md", e))?;
    std::fs::write(&w.plot, svg(results)).map_err(|e| io("write latency.svg", e))?;
    std::fs::write(&w.csv, csv(results)).map_err(|e| io("write results.csv", e))?;
    Ok(w)
}

fn io(context: &'static str, source: std::io::Error) -> Error {
    Error::Netlink { context, source }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn machine(xtnl: &Path) -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let first_line = |program: &Path, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .ok()
            .map(|o| {
                let mut s = String::from_utf8_lossy(&o.stdout).into_owned();
                s.push_str(&String::from_utf8_lossy(&o.stderr));
                s.lines().next().unwrap_or("").trim().to_owned()
            })
            .unwrap_or_else(|| format!("{} missing", program.display()))
    };
    Machine {
        nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        load_start: String::new(),
        load_end: loadavg(),
        versions: vec![
            first_line(xtnl, &["version"]),
            first_line(Path::new("iptables-nft"), &["-V"]),
            first_line(Path::new("iptables-legacy"), &["-V"]),
            first_line(Path::new("nft"), &["-v"]),
        ],
    }
}
