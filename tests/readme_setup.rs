//! The README's set-up commands against the crate, no root needed: each `cargo run` there
//! names a binary cargo can pick (with two binaries and no `default-run`, `cargo run
//! --release -- demo` stopped with "could not determine which binary to run"), and .ci/run
//! still runs the block verbatim (it extracts it from README.md rather than copying it).

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of the README's set-up block (the sh block under "## Set-up"), without
/// their comments, as .ci/run reads them.
fn setup_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let after = readme
        .split_once("\n## Set-up")
        .expect("README.md has a '## Set-up' section")
        .1;
    let block = after
        .split_once("```sh\n")
        .expect("the set-up section has an sh block")
        .1
        .split_once("\n```")
        .expect("the sh block ends")
        .0;
    block
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The binary `cargo run ARGS` runs, decided as cargo decides it: `--bin NAME`, else the
/// only binary, else `default-run`; `Err` with cargo's complaint when it cannot decide.
fn binary_cargo_runs(args: &[&str]) -> Result<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let package = meta["packages"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "xtnl"))
        .expect("package xtnl in the metadata");
    let bins: Vec<String> = package["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bin"))
        })
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    let ours = args.split(|a| *a == "--").next().unwrap_or_default();
    if let Some(i) = ours.iter().position(|a| *a == "--bin") {
        let name = ours.get(i + 1).ok_or("--bin without a name")?;
        return bins
            .iter()
            .find(|b| b == name)
            .cloned()
            .ok_or_else(|| format!("no bin target named `{name}`"));
    }
    if let [only] = bins.as_slice() {
        return Ok(only.clone());
    }
    match package["default_run"].as_str() {
        Some(d) if bins.iter().any(|b| b == d) => Ok(d.to_string()),
        Some(d) => Err(format!("default-run names `{d}`, which is no binary")),
        None => Err(format!(
            "`cargo run` could not determine which binary to run. Use the `--bin` option or \
             the `default-run` manifest key. available binaries: {}",
            bins.join(", ")
        )),
    }
}

#[test]
fn cargo_run_in_the_readme_set_up_finds_the_xtnl_binary() {
    let commands = setup_commands();
    let runs: Vec<&String> = commands
        .iter()
        .filter(|c| c.starts_with("cargo run"))
        .collect();
    assert!(
        !runs.is_empty(),
        "the README's set-up block has no `cargo run`: {commands:?}"
    );
    for c in runs {
        let words: Vec<&str> = c.split_whitespace().skip(2).collect();
        match binary_cargo_runs(&words) {
            Ok(bin) => assert_eq!(bin, "xtnl", "`{c}` runs {bin}"),
            Err(e) => panic!("the README's `{c}` fails: {e}"),
        }
    }
}

#[test]
fn ci_runs_the_readme_set_up_block_verbatim() {
    let commands = setup_commands();
    assert!(
        commands.iter().any(|c| c == "bash .ci/run"),
        "the README's set-up block runs the CI script: {commands:?}"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    // .ci/run reads the block out of README.md and evaluates each command as written, and
    // the test command the README names; a copy of the commands would drift.
    for needle in [
        "/^## Set-up/",
        "eval \"$command\"",
        "runs `cargo test",
        "eval \"$test_command\"",
    ] {
        assert!(ci.contains(needle), ".ci/run lost `{needle}`");
    }
    assert!(
        !ci.contains("\ncargo test "),
        ".ci/run runs a test command of its own instead of the README's"
    );
}
