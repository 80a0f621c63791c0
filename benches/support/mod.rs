//! What every process-level bench needs: the `xtnl` binary to time.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The binary cargo built for this bench (`CARGO_BIN_EXE_xtnl`). If that file is missing at
/// run time (the bench binary was run on its own after a `cargo clean`, say), runs `cargo
/// build --release --bin xtnl` in `CARGO_MANIFEST_DIR` first and uses the release binary.
pub fn locate_xtnl(bench: &str) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_xtnl"));
    if built.exists() {
        return built;
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let release = manifest.join("target/x86_64-unknown-linux-gnu/release/xtnl");
    if !release.exists() {
        eprintln!(
            "{bench} bench: {} missing; running `cargo build --release --bin xtnl`",
            release.display()
        );
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--release", "--bin", "xtnl"])
            .current_dir(manifest)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build --release --bin xtnl failed");
    }
    release
}
