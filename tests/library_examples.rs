//! docs/library.md's programs (examples/library_transaction.rs and
//! examples/library_nathost.rs; tests/docs.rs holds them equal to the page's blocks) run as a
//! reader runs them: as root, in a fresh network namespace, with a private xtables lock.
//! Before, the page's first block failed on a fresh host (`add chain ip nat vcld-5205`:
//! ENOENT); it now asks the transaction for table nat and PREROUTING.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{in_netns, kernel_test, nft_ruleset, private_lock_path, run_ok};

/// An example binary cargo built next to this test (`target/<triple>/<profile>/examples`);
/// `cargo test` builds the examples, `cargo test --test library_examples` needs `--examples`.
fn example_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<triple>/<profile>/deps");
    let bin = profile.join("examples").join(name);
    let built = std::fs::metadata(&bin).and_then(|m| m.modified());
    let built = built.unwrap_or_else(|e| {
        panic!(
            "{}: {e} (`cargo test` builds the examples; with `--test library_examples` add `--examples`)",
            bin.display()
        )
    });
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    let written = std::fs::metadata(&source)
        .and_then(|m| m.modified())
        .expect("the example's source");
    assert!(
        built >= written,
        "{} is older than its source: build the examples again",
        bin.display()
    );
    bin
}

/// Runs the example in the calling thread's namespace; its status, stdout and stderr.
fn run_example(bin: &Path) -> (bool, String) {
    let out = Command::new(bin)
        .env("XTABLES_LOCKFILE", private_lock_path())
        .output()
        .expect("run the example");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn the_transaction_program_runs_on_a_fresh_host() {
    if !kernel_test() {
        return;
    }
    let bin = example_bin("library_transaction");
    let (ok, out, nat) = in_netns(move || {
        assert_eq!(nft_ruleset(), "", "a fresh namespace has no ruleset");
        let (ok, out) = run_example(&bin);
        let nat = if ok {
            run_ok("nft", &["list", "table", "ip", "nat"])
        } else {
            String::new()
        };
        (ok, out, nat)
    });
    assert!(ok, "the program failed on a fresh host: {out}");
    for want in [
        "type nat hook prerouting priority dstnat; policy accept;",
        "jump vcld-5205",
        "chain vcld-5205",
        "iifname \"eth1\" tcp dport 50443",
        "dnat to 192.0.2.3:3389",
        "return",
    ] {
        assert!(nat.contains(want), "{want:?} not in:\n{nat}");
    }
}

#[test]
fn the_nathost_program_runs_on_a_fresh_host_and_again() {
    if !kernel_test() {
        return;
    }
    let bin = example_bin("library_nathost");
    let (runs, nat) = in_netns(move || {
        let runs = [run_example(&bin), run_example(&bin)];
        (runs, run_ok("nft", &["list", "table", "ip", "nat"]))
    });
    for (ok, out) in &runs {
        assert!(ok, "{out}");
    }
    // Torn down: the chain and the jump are gone, iptables-nft's PREROUTING stays.
    assert!(!nat.contains("vcld-5205"), "{nat}");
    assert!(nat.contains("chain PREROUTING"), "{nat}");
}
