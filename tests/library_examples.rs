//! docs/library.md's programs (examples/library_transaction.rs and
//! examples/library_nathost.rs), docs/library-examples.md's and docs/sets-and-maps.md's
//! (examples/doc_*.rs; tests/docs.rs holds them equal to the pages' blocks) run as a reader
//! runs them: as root, in a fresh network namespace, with a private xtables lock.
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

/// docs/nft-json.md's program commits an nft JSON document in-process and lists it back:
/// what it prints is what `nft -j list table inet demo` prints, and nft sees what it made.
#[test]
fn the_nft_json_program_commits_and_lists_as_nft_does() {
    if !kernel_test() {
        return;
    }
    let bin = example_bin("doc_nft_json");
    in_netns(move || {
        let (ok, out) = run_example(&bin);
        assert!(ok, "{out}");
        assert_eq!(out, run_ok("nft", &["-j", "list", "table", "inet", "demo"]));
        let text = nft_ruleset();
        assert!(
            text.contains("type filter hook input priority filter; policy accept;"),
            "{text}"
        );
        assert!(text.contains("elements = { 192.0.2.0/24 }"), "{text}");
    });
}

#[test]
fn the_front_pages_programs_run_on_a_fresh_host() {
    if !kernel_test() {
        return;
    }
    let bins: Vec<PathBuf> = [
        "doc_transaction",
        "doc_iptables",
        "doc_nathost",
        "doc_listing",
        "doc_map_layout",
    ]
    .iter()
    .map(|n| example_bin(n))
    .collect();
    // Each in a namespace of its own: status, then its output and nat as iptables-nft reads it.
    let mut runs = Vec::new();
    for bin in bins {
        let (ok, out) = in_netns({
            let bin = bin.clone();
            move || {
                if bin.ends_with("doc_listing") {
                    // Something to list, written by iptables-nft.
                    run_ok(
                        "iptables-nft",
                        &[
                            "-t",
                            "nat",
                            "-A",
                            "PREROUTING",
                            "-p",
                            "udp",
                            "--dport",
                            "53",
                            "-j",
                            "ACCEPT",
                        ],
                    );
                }
                let r = run_example(&bin);
                // The transaction program writes native rules, which only nft reads.
                let read = if bin.ends_with("doc_transaction") {
                    run_ok("nft", &["list", "table", "ip", "nat"])
                } else if bin.ends_with("doc_map_layout") {
                    run_ok("nft", &["list", "table", "ip", "xtnl_nat"])
                } else {
                    run_ok("iptables-nft", &["-t", "nat", "-S"])
                };
                (r.0, format!("{}\n--- table nat:\n{read}", r.1))
            }
        });
        runs.push((bin, ok, out));
    }
    for (bin, ok, out) in &runs {
        assert!(ok, "{}: {out}", bin.display());
        let name = bin.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let want: &[&str] = match name {
            "doc_transaction" => &[
                "add table ip nat and chain ip nat PREROUTING",
                "add chain ip nat vcld-5205",
                "add rule ip nat vcld-5205",
                "type nat hook prerouting priority dstnat; policy accept;",
                "dnat to 192.0.2.3:3389",
                "return",
            ],
            "doc_iptables" => {
                &["-A PREROUTING -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080"]
            }
            "doc_nathost" => &["-P PREROUTING ACCEPT"],
            "doc_map_layout" => &["50443", "192.0.2.3", "3389", "vcld-7"],
            "doc_listing" => &[
                "-A PREROUTING -p udp -m udp --dport 53 -j ACCEPT",
                "(exact: true)",
                ":PREROUTING ACCEPT [0:0]",
            ],
            _ => &[],
        };
        for w in want {
            assert!(out.contains(w), "{name}: {w:?} not in:\n{out}");
        }
        if name == "doc_nathost" {
            assert!(!out.contains("vcld-5205"), "not torn down: {out}");
        }
    }
}
