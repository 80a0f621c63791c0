//! The README's library example as a newcomer runs it: examples/readme.rs (tests/docs.rs
//! holds it equal to the README's block) run twice in a fresh network namespace. Before,
//! the README's block failed on a fresh host (`add chain ip nat vcld-5205`: ENOENT), wrote
//! native expressions iptables-nft calls "incompatible", and a second run duplicated the jump
//! and the DNAT. Here the real iptables-nft must read what it left, exactly as it reads the
//! same reservation made by iptables-nft itself, and the second run must change nothing.

mod common;

use std::path::{Path, PathBuf};

use common::{in_netns, kernel_test, nft_ruleset, run, run_ok};

/// The example binary cargo built next to this test (`target/<triple>/release/examples`);
/// `cargo test` builds the examples, `cargo test --test readme_example` needs `--examples`.
fn example_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let release = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<triple>/release/deps");
    let bin = release.join("examples").join("readme");
    let built = std::fs::metadata(&bin).and_then(|m| m.modified());
    let built = built.unwrap_or_else(|e| {
        panic!(
            "{}: {e} (`cargo test` builds the examples; with `--test readme_example` add `--examples`)",
            bin.display()
        )
    });
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/readme.rs");
    let written = std::fs::metadata(&source)
        .and_then(|m| m.modified())
        .expect("examples/readme.rs");
    assert!(
        built >= written,
        "{} is older than examples/readme.rs: build the examples again",
        bin.display()
    );
    bin
}

/// `iptables-nft -t nat -S` and `nft -s list table ip nat` (no handles, no counters' values) in
/// the calling thread's namespace; fails on anything iptables-nft writes to stderr (its
/// "table 'nat' is incompatible, use 'nft' tool").
fn nat_as_the_tools_read_it() -> (String, String) {
    let out = run("iptables-nft", &["-t", "nat", "-S"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "iptables-nft -t nat -S ({}): {stderr}",
        out.status
    );
    // -s: counters without their values. nft lists chains in the order they were made
    // (iptables-nft, told -N first, makes vcld-5205 before PREROUTING): compare the chains,
    // each with its rules, in name order.
    let nft = run_ok("nft", &["-s", "list", "table", "ip", "nat"]);
    let body = nft.trim_end().strip_suffix('}').unwrap_or(&nft);
    let mut chains: Vec<&str> = body
        .split("\n\tchain ")
        .skip(1)
        .map(str::trim_end)
        .collect();
    chains.sort_unstable();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        chains.join("\n"),
    )
}

#[test]
fn the_readme_example_runs_twice_on_a_fresh_host_and_iptables_nft_reads_it() {
    if !kernel_test() {
        return;
    }
    let bin = example_bin().to_string_lossy().into_owned();

    // The same reservation made by iptables-nft itself, in a namespace of its own.
    let by_iptables = in_netns(|| {
        for args in [
            &["-t", "nat", "-N", "vcld-5205"][..],
            &["-t", "nat", "-A", "PREROUTING", "-j", "vcld-5205"],
            &[
                "-t",
                "nat",
                "-A",
                "vcld-5205",
                "-p",
                "tcp",
                "--dport",
                "50443",
                "-j",
                "DNAT",
                "--to-destination",
                "192.0.2.3:3389",
            ],
        ] {
            run_ok("iptables-nft", args);
        }
        nat_as_the_tools_read_it()
    });

    let (first, second, ruleset_first, ruleset_second, by_example) = in_netns(move || {
        assert_eq!(nft_ruleset(), "", "a fresh namespace has no ruleset");
        let first = run_ok(&bin, &[]);
        let ruleset_first = nft_ruleset();
        let second = run_ok(&bin, &[]);
        let ruleset_second = nft_ruleset();
        (
            first,
            second,
            ruleset_first,
            ruleset_second,
            nat_as_the_tools_read_it(),
        )
    });

    assert!(first.starts_with("Changed, "), "first run: {first}");
    assert_eq!(second.trim(), "Unchanged, 0 change(s)", "second run");
    assert_eq!(
        ruleset_first, ruleset_second,
        "the second run changed the ruleset (handles included)"
    );
    assert_eq!(
        by_example, by_iptables,
        "iptables-nft and nft read the example's rules otherwise than iptables-nft's own"
    );
    assert_eq!(
        by_example.0.matches("-A PREROUTING -j vcld-5205").count(),
        1,
        "one jump: {}",
        by_example.0
    );
}

/// The README's former block, the low-level API used on a fresh host: the kernel's ENOENT
/// for `add chain ip nat vcld-5205` now names what is missing (the table; then, with the
/// table there, the base chain the rule goes into), and nothing is changed.
#[test]
fn a_transaction_into_a_missing_table_or_chain_names_it() {
    use xtnl::ErrorKind;
    use xtnl::model::{Action, Family, Rule};
    use xtnl::nft::{ChainSpec, Session, TableRef, Transaction};

    in_netns(|| {
        let mut s = Session::open().expect("netlink socket");
        let nat = TableRef::new(Family::Ipv4, "nat");
        let mut tx = Transaction::new();
        tx.ensure_chain(&nat, ChainSpec::regular("vcld-5205"))
            .insert_rule(
                &nat.chain("PREROUTING"),
                Rule::new().action(Action::Jump("vcld-5205".into())),
            );
        let e = s.commit(&tx).expect_err("no table nat");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(
            e.to_string()
                .contains("(add chain ip nat vcld-5205, whose table ip nat does not exist)"),
            "{e}"
        );
        assert_eq!(nft_ruleset(), "", "nothing changed");

        run_ok("nft", &["add", "table", "ip", "nat"]);
        let e = s.commit(&tx).expect_err("no chain PREROUTING");
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        assert!(
            e.to_string()
                .contains("whose chain ip nat PREROUTING does not exist"),
            "{e}"
        );
        assert_eq!(
            run_ok("nft", &["list", "table", "ip", "nat"])
                .matches("chain")
                .count(),
            0,
            "nothing changed"
        );

        // With the table created first in the same transaction, the chain is what is missing.
        let mut tx = Transaction::new();
        tx.ensure_table(&TableRef::new(Family::Ipv4, "other"))
            .insert_rule(
                &TableRef::new(Family::Ipv4, "other").chain("INPUT"),
                Rule::new().action(Action::Accept),
            );
        let e = s.commit(&tx).expect_err("no chain INPUT");
        assert!(
            e.to_string()
                .contains("whose chain ip other INPUT does not exist"),
            "{e}"
        );
    });
}
