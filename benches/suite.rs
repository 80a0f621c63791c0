//! The benchmark suite as a `cargo bench` target: runs the `xtnl-bench` binary (the same
//! runner operators use, src/bin/xtnl-bench) with the results written to `benches/results/`
//! (the full plan) or under cargo's target tmp dir (`-- --quick`, and runs without cargo's
//! `--bench` argument, e.g. `cargo test --benches`, which take the quick plan).
//!
//! Run as root: xtnl-bench creates its own network namespace first and touches netfilter
//! only there. Nothing is asserted: targets are printed with PASS/FAIL beside them.

mod support;

use std::path::Path;
use std::process::Command;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick") || !args.iter().any(|a| a == "--bench");
    let out = if quick {
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("suite-quick")
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/results")
    };
    let xtnl = support::locate_xtnl("suite");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtnl-bench"));
    if quick {
        cmd.arg("--quick");
    }
    cmd.arg("--out").arg(&out).arg("--xtnl").arg(&xtnl);
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("suite: cannot run xtnl-bench: {e}"));
    assert!(
        status.success(),
        "suite: xtnl-bench failed ({status}); it needs root and touches netfilter only in its \
         own namespace"
    );
}
