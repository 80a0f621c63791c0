//! `xtnl-bench [stream] [--quick] [--out DIR] [--xtnl PATH]`: the benchmark suite for operators and
//! developers, a binary of its own so that the privileged helper `xtnl` carries none of it
//! (it starts processes: iptables-nft, iptables-legacy, nft, the restore tools and `xtnl`).
//! It moves itself into a network namespace of its own before anything else, so it never
//! touches the host's ruleset; it needs root (to create the namespace) and the tools it
//! compares. Why a binary and not a crate: docs/architecture.md, "The benchmark suite".
#![deny(unsafe_code)]

mod bench;
#[path = "../../scratch.rs"]
mod scratch;

use std::io::Write;
use std::path::PathBuf;

use bench::{Config, Plan};
use xtnl::error::{Error, Result};

const USAGE: &str = "\
usage: xtnl-bench [stream] [--quick] [--out DIR] [--xtnl PATH]
       xtnl-bench cluster [--services N[,N...]] [--out DIR] [--xtnl PATH]

Times xtnl against iptables-nft, iptables-legacy, nft and the restore tools in a network
namespace of its own; writes results.md, latency.svg and results.csv to DIR.

  stream         instead: the NAT-host agent's command stream back to back (20 VCL
                 reservation cycles on a nat table of 10, 500 and 2,000 reservations) through
                 iptables-nft, xtnl as `iptables`, xtnl serve --stdio, the library and the
                 kernel alone; writes stream.md and stream.csv to DIR

  --quick        a smoke run of seconds (small N, few iterations, P = 1 and 4)
  --out DIR      where the results go (default ./xtnl-bench)
  --xtnl PATH    the xtnl binary timed as a process (default: the xtnl beside this binary)

`cluster`: kube-proxy's nat table of N services (8N rules, 3N chains; default N = 10000
and 50000) restored whole, synced with --noflush and saved by iptables-nft-restore, xtnl,
iptables-legacy-restore and xtnl --backend legacy, each in a fresh network namespace, with
the kernel's time for xtnl's batches; prints a table and the ratios, writes cluster.md.

Needs root (it creates a network namespace) and the tools it compares. Exit status: 0 ok,
2 bad arguments, otherwise what the failing step's error says (as xtnl's).";

struct Args {
    stream: bool,
    quick: bool,
    /// `cluster`: the numbers of services.
    cluster: Option<Vec<usize>>,
    dir: PathBuf,
    xtnl: Option<PathBuf>,
    help: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        stream: false,
        quick: false,
        cluster: None,
        dir: PathBuf::from("xtnl-bench"),
        xtnl: None,
        help: false,
    };
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .map(PathBuf::from)
                .ok_or_else(|| Error::InvalidInput(format!("option {name} needs a value")))
        };
        match w.as_str() {
            "stream" => a.stream = true,
            "--quick" => a.quick = true,
            "cluster" if a.cluster.is_none() => a.cluster = Some(vec![10_000, 50_000]),
            "--services" if a.cluster.is_some() => {
                let v = it
                    .next()
                    .ok_or_else(|| Error::InvalidInput("option --services needs a value".into()))?;
                let sizes: Option<Vec<usize>> = v
                    .split(',')
                    .map(|n| n.parse().ok().filter(|&n| n > 0 && n <= 200_000))
                    .collect();
                a.cluster = Some(sizes.ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "--services {v:?}: numbers from 1 to 200000, separated by commas"
                    ))
                })?);
            }
            "--out" => a.dir = value("--out")?,
            "--xtnl" => a.xtnl = Some(value("--xtnl")?),
            "--help" | "-h" | "help" => a.help = true,
            o => {
                return Err(Error::InvalidInput(format!(
                    "unknown argument {o:?}; usage: xtnl-bench [stream] [--quick] [--out DIR] \
                     [--xtnl PATH]"
                )));
            }
        }
    }
    Ok(a)
}

/// The `xtnl` binary beside this one (cargo puts both in `target/<profile>/`).
fn sibling_xtnl() -> Result<PathBuf> {
    let me = std::env::current_exe().map_err(|e| Error::Netlink {
        context: "find the running xtnl-bench binary",
        source: e,
    })?;
    let xtnl = me.with_file_name("xtnl");
    if !xtnl.is_file() {
        return Err(Error::InvalidInput(format!(
            "no xtnl binary at {} (build it: cargo build --release --bin xtnl), or name one \
             with --xtnl PATH",
            xtnl.display()
        )));
    }
    Ok(xtnl)
}

fn run(out: &mut impl Write, args: &[String]) -> Result<()> {
    if args.first().map(String::as_str) == Some("cluster-floor") {
        // The cluster benchmark's own worker, started by it under `unshare -n`.
        let [_, full, partial] = args else {
            return Err(Error::InvalidInput(
                "usage: xtnl-bench cluster-floor FULL PARTIAL".into(),
            ));
        };
        let secs = bench::cluster::floor_worker(full.as_ref(), partial.as_ref())?;
        writeln!(out, "{secs}").map_err(io_error)?;
        return Ok(());
    }
    let a = parse(args)?;
    if a.help {
        writeln!(out, "{USAGE}").map_err(io_error)?;
        return Ok(());
    }
    let xtnl = match a.xtnl.clone() {
        Some(x) => x,
        None => sibling_xtnl()?,
    };
    // Before anything else: this thread, and every thread and process it starts, moves to
    // a fresh network namespace; the runner refuses to go on in the initial one.
    bench::enter_scratch_namespace()?;
    if a.stream {
        return stream(out, &a, &xtnl);
    }
    if let Some(sizes) = &a.cluster {
        let scratch = std::env::temp_dir().join(format!("xtnl-bench-{}", std::process::id()));
        let md = bench::cluster::run(&xtnl, sizes, &scratch, true);
        let _ = std::fs::remove_dir_all(&scratch);
        let md = md?;
        std::fs::create_dir_all(&a.dir).map_err(io_error)?;
        let path = a.dir.join("cluster.md");
        std::fs::write(&path, &md).map_err(io_error)?;
        writeln!(
            out,
            "{md}
written: {}",
            path.display()
        )
        .map_err(io_error)?;
        return Ok(());
    }
    let cfg = Config {
        plan: if a.quick { Plan::quick() } else { Plan::full() },
        xtnl,
        scratch: std::env::temp_dir().join(format!("xtnl-bench-{}", std::process::id())),
        command: format!("xtnl-bench{}", if a.quick { " --quick" } else { "" }),
        progress: true,
    };
    let results = bench::run(&cfg)?;
    let written = bench::write(&results, &a.dir)?;
    writeln!(out, "{}", bench::markdown(&results)).map_err(io_error)?;
    writeln!(
        out,
        "written: {}, {}, {}",
        written.table.display(),
        written.plot.display(),
        written.csv.display()
    )
    .map_err(io_error)?;
    Ok(())
}

/// `xtnl-bench stream`: runs, prints the report, writes stream.md and stream.csv.
fn stream(out: &mut impl Write, a: &Args, xtnl: &std::path::Path) -> Result<()> {
    use bench::stream::{StreamConfig, StreamPlan, run};
    let scratch = std::env::temp_dir().join(format!("xtnl-bench-stream-{}", std::process::id()));
    let cfg = StreamConfig {
        plan: if a.quick {
            StreamPlan::quick()
        } else {
            StreamPlan::full()
        },
        xtnl,
        scratch: &scratch,
        command: format!("xtnl-bench stream{}", if a.quick { " --quick" } else { "" }),
        progress: true,
    };
    let results = run(&cfg);
    let _ = std::fs::remove_dir_all(&scratch);
    let results = results?;
    let md = bench::stream_report::markdown(&results);
    std::fs::create_dir_all(&a.dir).map_err(io_error)?;
    let (table, csv) = (a.dir.join("stream.md"), a.dir.join("stream.csv"));
    std::fs::write(&table, &md).map_err(io_error)?;
    std::fs::write(&csv, bench::stream_report::csv(&results)).map_err(io_error)?;
    writeln!(out, "{md}\nwritten: {}, {}", table.display(), csv.display()).map_err(io_error)?;
    Ok(())
}

fn io_error(e: std::io::Error) -> Error {
    Error::Netlink {
        context: "write output",
        source: e,
    }
}

fn main() {
    // `std::env::args` would panic on an argument that is not UTF-8; refuse it instead.
    let args: Result<Vec<String>> = std::env::args_os()
        .skip(1)
        .map(|a| {
            a.into_string()
                .map_err(|a| Error::InvalidInput(format!("argument is not valid UTF-8: {a:?}")))
        })
        .collect();
    let status = match args.and_then(|args| run(&mut std::io::stdout().lock(), &args)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("xtnl-bench: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            e.exit_status()
        }
    };
    std::process::exit(status);
}
