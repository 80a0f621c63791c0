//! The benchmark suite as a `cargo bench` target: the same runner as `xtnl bench`
//! (`xtnl::bench`), with the results written to `benches/results/` (the full plan) or under
//! cargo's target tmp dir (`-- --quick`, and runs without cargo's `--bench` argument, e.g.
//! `cargo test --benches`, which take the quick plan).
//!
//! Run as root: it creates its own network namespace first and touches netfilter only there.
//! Nothing is asserted: targets are printed with PASS/FAIL beside them.

mod support;

use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    // Before anything else: the main thread, which starts every worker and process, moves
    // to a fresh network namespace; the runner refuses to go on in the initial one.
    if let Err(e) = xtnl::bench::enter_scratch_namespace() {
        panic!("suite: {e}; it needs root and touches netfilter only in its own namespace");
    }
    let out = if quick {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("suite-quick")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/results")
    };
    let cfg = xtnl::bench::Config {
        plan: if quick {
            xtnl::bench::Plan::quick()
        } else {
            xtnl::bench::Plan::full()
        },
        xtnl: support::locate_xtnl("suite"),
        scratch: std::env::temp_dir().join(format!("xtnl-suite-{}", std::process::id())),
        command: format!(
            "cargo bench --bench suite{}",
            if quick { " -- --quick" } else { "" }
        ),
        progress: true,
    };
    let results = xtnl::bench::run(&cfg).unwrap_or_else(|e| panic!("suite: {e}"));
    let written = xtnl::bench::write(&results, &out).unwrap_or_else(|e| panic!("suite: {e}"));
    println!("{}", xtnl::bench::markdown(&results));
    println!(
        "written: {}, {}, {}",
        written.table.display(),
        written.plot.display(),
        written.csv.display()
    );
}
