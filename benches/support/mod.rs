//! What every process-level bench needs: the `xtnl` binary to time.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary cargo built for this bench (`CARGO_BIN_EXE_xtnl`, under target/<triple>/release
/// for whatever host builds it). If that file is missing at run time (the bench binary was run
/// on its own after a `cargo clean`, say), runs `cargo build --release --bin xtnl` in
/// `CARGO_MANIFEST_DIR` first, which puts it back at that same path.
pub fn locate_xtnl(bench: &str) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_xtnl"));
    if built.exists() {
        return built;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    eprintln!(
        "{bench} bench: {} missing; running `cargo build --release --bin xtnl`",
        built.display()
    );
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--bin", "xtnl"])
        .current_dir(manifest)
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build --release --bin xtnl failed");
    assert!(
        built.exists(),
        "{} still missing after the build",
        built.display()
    );
    built
}
