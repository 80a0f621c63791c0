//! `xtnl bench [--quick] [--out DIR]`: the benchmark suite for operators. It moves itself
//! into a network namespace of its own before anything else, so it never touches the
//! host's ruleset; it needs root (to create the namespace) and the tools it compares.

use std::io::Write;
use std::path::PathBuf;

use super::io_error;
use crate::bench::{self, Config, Plan};
use crate::error::{Error, Result};

pub const USAGE: &str =
    "  bench [--quick] [--out DIR]   time xtnl against iptables-nft, iptables-legacy, nft and the
                                restore tools in a network namespace of its own; writes
                                results.md, latency.svg and results.csv to DIR
                                (default ./xtnl-bench); --quick: a smoke run of seconds";

pub fn run(out: &mut impl Write, args: &[String]) -> Result<()> {
    let mut quick = false;
    let mut dir = PathBuf::from("xtnl-bench");
    let mut a = args.iter();
    while let Some(w) = a.next() {
        match w.as_str() {
            "--quick" => quick = true,
            "--out" => {
                dir = a
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| Error::InvalidInput("option --out needs a value".into()))?
            }
            o => {
                return Err(Error::InvalidInput(format!(
                    "bench: unknown argument {o:?}; usage: xtnl bench [--quick] [--out DIR]"
                )));
            }
        }
    }
    let xtnl = std::env::current_exe().map_err(|e| Error::Netlink {
        context: "find the running xtnl binary",
        source: e,
    })?;
    // Before anything else: this thread, and every thread and process it starts, moves to
    // a fresh network namespace; the runner refuses to go on in the initial one.
    bench::enter_scratch_namespace()?;
    let cfg = Config {
        plan: if quick { Plan::quick() } else { Plan::full() },
        xtnl,
        scratch: std::env::temp_dir().join(format!("xtnl-bench-{}", std::process::id())),
        command: format!("xtnl bench{}", if quick { " --quick" } else { "" }),
        progress: true,
    };
    let results = bench::run(&cfg)?;
    let written = bench::write(&results, &dir)?;
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
