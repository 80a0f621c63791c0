//! The benchmark suite's runner works end to end: `xtnl-bench --quick` (in a namespace of
//! its own, started from a scratch namespace of the test's) writes a markdown report with
//! every tool's figures, a well-formed SVG plot with one line per tool and operation, and a
//! CSV; xtnl fails no set-up or teardown under contention; the runner refuses to run in the
//! initial network namespace. Figures are not asserted (speed is for benches, not tests).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

// The runner is a module of the xtnl-bench binary (src/bin/xtnl-bench), not of the library:
// the test compiles it in to call it directly and to read its operations and tools.
#[allow(dead_code)]
#[path = "../src/bin/xtnl-bench/bench/mod.rs"]
mod bench;

use bench::{Config, Op, Plan, Tool};
use common::scratch; // `crate::scratch`, as the runner names it in xtnl-bench
use common::{in_netns, run, xtnl_bin};

fn bench_bin() -> &'static str {
    env!("CARGO_BIN_EXE_xtnl-bench")
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bench-quick-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `xtnl-bench ARGS --out DIR --xtnl XTNL` in a network namespace of its own; panics
/// with its stderr unless it succeeds.
fn run_bench(args: &'static [&'static str], dir: &Path) -> Output {
    let d = dir.to_str().expect("utf-8 path").to_owned();
    let out = in_netns(move || {
        let mut all = args.to_vec();
        all.extend(["--out", &d, "--xtnl", xtnl_bin()]);
        run(bench_bin(), &all)
    });
    assert!(
        out.status.success(),
        "xtnl-bench {} failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Checks that every tag opened is closed in order (`<x ...>` .. `</x>`, or `<x .../>`).
fn assert_well_formed(svg: &str) -> usize {
    let mut stack: Vec<String> = Vec::new();
    let mut tags = 0;
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let after = &rest[i + 1..];
        let end = after.find('>').expect("unterminated tag");
        let tag = &after[..end];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name.trim(), "mismatched closing tag");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("tag name").to_string();
            stack.push(name);
        }
        tags += 1;
        // Text between tags must not hold a bare '&' or '>' (escaped entities only).
        let text_end = after[end + 1..].find('<').unwrap_or(after.len() - end - 1);
        let text = &after[end + 1..end + 1 + text_end];
        assert!(!text.contains('>'), "unescaped '>' in text {text:?}");
        for (j, _) in text.match_indices('&') {
            let t = &text[j..];
            assert!(
                ["&amp;", "&lt;", "&gt;"].iter().any(|e| t.starts_with(e)),
                "unescaped '&' in text {text:?}"
            );
        }
        rest = &after[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    tags
}

#[test]
fn quick_run_writes_a_full_report_and_a_well_formed_plot() {
    common::require_kernel!();
    let dir = out_dir("cli");
    let out = run_bench(&["--quick"], &dir);
    let md = std::fs::read_to_string(dir.join("results.md")).expect("results.md written");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&md[..200]), "the report is also printed");

    for section in ["## The floor", "## Scaling", "## Contention", "## Targets"] {
        assert!(md.contains(section), "results.md lacks {section}");
    }
    // Every operation's latency table has a row per tool with a figure at both N.
    for op in Op::ALL {
        let table = md
            .split(&format!("### {}\n", op.label()))
            .nth(1)
            .unwrap_or_else(|| panic!("no table for {}", op.label()));
        let header = table.lines().nth(1).expect("table header");
        assert_eq!(header, "| tool | N = 10 | N = 100 | growth |");
        for tool in Tool::ALL {
            if op == Op::List && matches!(tool, Tool::NftRestore | Tool::LegacyRestore) {
                continue;
            }
            let row = table
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", tool.label())))
                .unwrap_or_else(|| panic!("{}: no row for {}", op.label(), tool.label()));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert!(
                cells[2..5]
                    .iter()
                    .all(|c| c.contains(" / ") || c.ends_with('x')),
                "{}: {} has a missing figure: {row}",
                op.label(),
                tool.label()
            );
        }
    }
    // The library sets up and tears down in two kernel round trips each.
    assert!(
        md.contains("set up a reservation 2, tear one down 2"),
        "round trips line missing or not 2 and 2:\n{md}"
    );
    // Contention: every xtnl row shows 0 failures and all cycles done.
    let xtnl_rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| xtnl binary |") || l.starts_with("| xtnl binary (mixed) |"))
        .filter(|l| l.contains("/s |"))
        .collect();
    assert_eq!(xtnl_rows.len(), 3, "P = 1, 4 and the mixed run:\n{md}");
    for row in xtnl_rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (done, total) = cells[4].split_once(" / ").expect("cycles ok / total");
        assert_eq!(done, total, "xtnl cycles failed: {row}");
        assert_eq!(cells[5], "0", "xtnl failures: {row}");
        assert_eq!(cells[6], "0", "xtnl sequences stopped: {row}");
    }
    let legacy_mixed = md
        .lines()
        .find(|l| l.starts_with("| iptables-legacy -w (mixed) |"))
        .expect("mixed legacy row");
    assert_eq!(legacy_mixed.split('|').map(str::trim).nth(5), Some("0"));
    assert!(
        md.contains("| - (quick run) |"),
        "quick runs evaluate no targets"
    );

    // The plot: well-formed, one line per tool in each operation's panel (no list line for
    // the restore tools), plus the bare batch in the flush panel; two points each.
    let svg = std::fs::read_to_string(dir.join("latency.svg")).expect("latency.svg written");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(assert_well_formed(&svg) > 100);
    let lines: Vec<&str> = svg.lines().filter(|l| l.starts_with("<polyline")).collect();
    assert_eq!(lines.len(), 5 * 7 - 2 + 1);
    for l in &lines {
        let points = l
            .split("points=\"")
            .nth(1)
            .and_then(|p| p.split('"').next());
        let n = points.map_or(0, |p| p.split_whitespace().count());
        assert_eq!(n, 2, "a line with a point per N: {l}");
    }
    for tool in Tool::ALL {
        assert!(
            svg.contains(&format!(">{}</text>", tool.label())),
            "legend: {}",
            tool.label()
        );
    }

    let csv = std::fs::read_to_string(dir.join("results.csv")).expect("results.csv written");
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("section,what,tool,n,count,p50_us,p99_us"));
    assert_eq!(
        csv.lines().filter(|l| l.starts_with("scaling,")).count(),
        2 * (5 * 7 - 2)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `xtnl-bench stream --quick`: every path runs the whole stream (a command that fails
/// fails the run), the report has a row per path at each N, the kernel's own cost beside
/// serve's, the targets table, and a CSV line per command of every path.
#[test]
fn stream_quick_run_times_every_path_and_the_kernel() {
    common::require_kernel!();
    let dir = out_dir("stream");
    run_bench(&["stream", "--quick"], &dir);
    let md = std::fs::read_to_string(dir.join("stream.md")).expect("stream.md written");
    let plan = bench::stream::StreamPlan::quick();
    for n in &plan.sizes {
        let section = md
            .split(&format!("## N = {n} reservations in table nat\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no section for N = {n}:\n{md}"));
        for via in bench::stream::Via::ALL {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", via.label())))
                .unwrap_or_else(|| panic!("N = {n}: no row for {}", via.label()));
            // Six kinds of command, the mean, the ratio: every cell a figure.
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 11, "{row}");
            for c in &cells[2..9] {
                assert!(c.parse::<f64>().is_ok_and(|x| x > 0.0), "{row}");
            }
            assert!(cells[9].ends_with('x'), "{row}");
        }
        assert!(section.contains("against the kernel's own cost for the same batches"));
    }
    assert!(md.contains("## Targets (issue 22)"));
    assert!(md.contains("Floors (p50 of"));
    let csv = std::fs::read_to_string(dir.join("stream.csv")).expect("stream.csv written");
    assert_eq!(
        csv.lines().count() - 1,
        plan.sizes.len() * bench::stream::Via::ALL.len() * plan.reservations * 7,
        "a line per command of every path at every N"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runner_refuses_the_initial_namespace_and_bad_arguments() {
    // This test thread never left the namespace the test process started in.
    let scratch = out_dir("refused");
    let cfg = Config {
        plan: Plan::quick(),
        xtnl: PathBuf::from(xtnl_bin()),
        scratch: scratch.clone(),
        command: "test".into(),
        progress: false,
    };
    let err = bench::run(&cfg).expect_err("must refuse the initial namespace");
    assert!(
        err.to_string().contains("initial network namespace"),
        "{err}"
    );
    assert!(
        !scratch.exists(),
        "nothing may be created before the refusal"
    );

    let out = run(bench_bin(), &["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frobnicate"));

    // The privileged binary no longer carries the suite, and says where it went.
    let out = run(xtnl_bin(), &["bench", "--quick"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("xtnl-bench"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = run(xtnl_bin(), &["help"]);
    assert!(!String::from_utf8_lossy(&help.stdout).contains("bench"));
}

#[test]
fn the_cluster_benchmark_runs_every_tool_and_the_floor() {
    // `xtnl-bench cluster` at a small N: every tool restores, syncs and saves kube-proxy's
    // table in a namespace of its own (the runner checks that each save holds 8N + 7 rules),
    // the kernel's floor is measured, and the report names them all with the ratios.
    let dir = out_dir("cluster");
    run_bench(&["cluster", "--services", "60"], &dir);
    let md = std::fs::read_to_string(dir.join("cluster.md")).expect("cluster.md written");
    for tool in [
        "| iptables-nft-restore |",
        "| xtnl restore |",
        "| iptables-legacy-restore |",
        "| xtnl --backend legacy restore |",
        "| kernel, xtnl's batch sent raw |",
        "- N = 60: nf_tables: full ",
    ] {
        assert!(md.contains(tool), "{tool} missing from:\n{md}");
    }
    assert!(md.contains("60 (487)"), "8N + 7 rules: {md}");
    let out = run(bench_bin(), &["cluster", "--services", "0"]);
    assert_eq!(out.status.code(), Some(2), "N = 0 is refused");
}
