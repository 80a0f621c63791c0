//! Installing and operating xtnl as a system tool (issue 17): the man pages agree with
//! `xtnl help` and render, the shell completions load and offer xtnl's commands, the example
//! policy is a valid policy, and the Debian package built by `packaging/build-deb` installs,
//! works (doctor, demo, a reservation through the `iptables` alternative) and leaves the
//! machine as it found it (`packaging/test-deb`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run_env, run_ok, xtnl_bin};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn man_page(name: &str) -> PathBuf {
    root().join("docs/man").join(name)
}

/// The roff source as plain words: requests' names, font escapes and quotes dropped, `\-`
/// made `-`, whitespace collapsed.
fn man_words(name: &str) -> String {
    let src = std::fs::read_to_string(man_page(name)).unwrap();
    let mut out = String::new();
    for line in src.lines() {
        if line.starts_with(".\\\"") {
            continue;
        }
        let body = if line.starts_with('.') {
            line.split_once(' ').map_or("", |(_, rest)| rest)
        } else {
            line
        };
        let plain = body
            .replace("\\-", "-")
            .replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "")
            .replace("\\fP", "")
            .replace("\\&", "")
            .replace("\\(dq", "\"")
            .replace('"', "");
        out.push(' ');
        out.push_str(&plain);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ") + " "
}

/// What `xtnl help` names: command phrases (the words that start a line of the usage, up
/// to the first argument) and every option.
fn help_items() -> (Vec<String>, Vec<String>) {
    let help = run_ok(xtnl_bin(), &["help"]);
    let mut commands = Vec::new();
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if indent > 2 || !t.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        // The command and its arguments end where the description column starts.
        let head = t.split("  ").next().unwrap_or_default();
        let first = head.split_whitespace().next().unwrap_or_default();
        // Prose lines of the help: "usage: ...", "global options (...", "through sudo ...",
        // "commands:", "them; 5 denied ...".
        if first.ends_with([':', ';']) || ["global", "through"].contains(&first) {
            continue;
        }
        let words: Vec<&str> = head
            .split_whitespace()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        commands.push(words.join(" "));
    }
    let mut options: Vec<String> = help
        .split(|c: char| c.is_whitespace() || "[]|(),".contains(c))
        .filter(|w| {
            (w.starts_with("--")
                && w.len() > 2
                && w[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-'))
                || (w.len() == 2
                    && w.starts_with('-')
                    && w[1..].chars().all(|c| c.is_ascii_alphanumeric()))
        })
        .map(str::to_owned)
        .collect();
    options.sort();
    options.dedup();
    (commands, options)
}

#[test]
fn every_command_and_option_of_the_help_is_in_the_man_page() {
    let (commands, options) = help_items();
    // The parse of the help found what it should (so the test cannot pass on nothing).
    for c in [
        "demo",
        "doctor",
        "apply",
        "reservation setup",
        "forward add",
        "host setup",
    ] {
        assert!(
            commands.iter().any(|x| x == c),
            "help parse lost {c:?}: {commands:?}"
        );
    }
    for o in [
        "--policy-file",
        "--backend",
        "--noflush",
        "-w",
        "--json",
        "--public-address",
    ] {
        assert!(
            options.iter().any(|x| x == o),
            "help parse lost {o:?}: {options:?}"
        );
    }
    let man = man_words("xtnl.8");
    let missing: Vec<&String> = commands
        .iter()
        .filter(|c| !man.contains(&format!(" {c} ")) && !man.contains(&format!(" {c}\n")))
        .chain(options.iter().filter(|o| {
            !man.split(|c: char| c.is_whitespace() || "[]|(),;".contains(c))
                .any(|w| w == o.as_str())
        }))
        .collect();
    assert!(
        missing.is_empty(),
        "in `xtnl help` but not in docs/man/xtnl.8: {missing:?}"
    );
}

#[test]
fn man_pages_render_without_warnings() {
    for (page, must) in [
        (
            "xtnl.8",
            ["NAME", "EXIT STATUS", "ENVIRONMENT", "FILES"].as_slice(),
        ),
        ("xtnl-policy.5", ["NAME", "FORMAT", "jump_to"].as_slice()),
        ("xtnl-apply.5", ["NAME", "DOCUMENT", "RESULT"].as_slice()),
    ] {
        let path = man_page(page);
        let out = run_env(
            "man",
            &["--warnings", "-E", "UTF-8", "-l", path.to_str().unwrap()],
            &[("MANWIDTH", "80"), ("MAN_KEEP_FORMATTING", "")],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "man {page}: {stderr}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        for m in must {
            assert!(text.contains(m), "man {page} lacks {m}:\n{text}");
        }
    }
}

fn bash(script: &str) -> (bool, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(root())
        .output()
        .expect("bash");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `_xtnl`'s offers for a command line (the last word is the one being completed).
fn bash_complete(words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let (ok, out) = bash(&format!(
        "source completions/xtnl.bash; COMP_WORDS=({}); COMP_CWORD={}; _xtnl; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1
    ));
    assert!(ok, "{out}");
    out.lines().map(str::to_owned).collect()
}

#[test]
fn bash_completion_loads_and_offers_the_commands_of_the_help() {
    let (ok, out) = bash("source completions/xtnl.bash; complete -p xtnl xtnl6");
    assert!(ok, "{out}");
    assert!(out.contains("complete -F _xtnl xtnl"), "{out}");
    let offered = bash_complete(&["xtnl", ""]);
    let (commands, _) = help_items();
    for c in &commands {
        let first = c.split(' ').next().unwrap();
        assert!(
            offered.iter().any(|o| o == first),
            "{first} not offered: {offered:?}"
        );
    }
    assert_eq!(bash_complete(&["xtnl", "res"]), ["restore", "reservation"]);
    assert_eq!(bash_complete(&["xtnl", "reservation", "se"]), ["setup"]);
    assert_eq!(
        bash_complete(&["xtnl", "-t", "nat", "-A", "PREROUTING", "-j", "DN"]),
        ["DNAT"]
    );
    assert_eq!(
        bash_complete(&["xtnl", "--backend", "nft", "-t", "m"]),
        ["mangle"]
    );
    assert!(bash_complete(&["xtnl", "-t", "nat", "--to-d"]).contains(&"--to-destination".into()));
    // The iptables-name file registers nothing while iptables is not xtnl (as on this
    // machine: iptables-nft); packaging/test-deb checks the other case.
    let (ok, out) = bash("source completions/xtnl-iptables.bash; complete -p iptables");
    assert!(
        !ok,
        "registered for iptables although it is not xtnl: {out}"
    );
}

#[test]
fn zsh_and_fish_completions_load_and_offer_the_commands() {
    let out = Command::new("zsh")
        .args(["-fc", "fpath=($PWD/completions $fpath); autoload -Uz compinit; compinit -u -D; print -r -- $_comps[xtnl] $_comps[xtnl6]"])
        .current_dir(root())
        .output()
        .expect("zsh (.ci/run installs it)");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "_xtnl _xtnl",
        "{out:?}"
    );
    let out = Command::new("zsh")
        .args(["-n", "completions/_xtnl"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new("fish")
        .args(["-c", "source completions/xtnl.fish; complete -C'xtnl '; complete -C'xtnl -t n'; complete -C'xtnl -j MASQ'"])
        .current_dir(root())
        .output()
        .expect("fish (.ci/run installs it)");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let (commands, _) = help_items();
    for c in &commands {
        let first = c.split(' ').next().unwrap();
        assert!(
            text.lines().any(|l| l.split('\t').next() == Some(first)),
            "fish does not offer {first}: {text}"
        );
    }
    assert!(text.lines().any(|l| l == "nat"), "{text}");
    assert!(text.lines().any(|l| l == "MASQUERADE"), "{text}");
}

#[test]
fn the_example_policy_is_a_valid_policy() {
    let p = xtnl::policy::load_file(&root().join("docs/examples/policy.toml")).unwrap();
    assert_eq!(p.allow.len(), 6);
    assert_eq!(p.max_ops.map(|(n, _)| n), Some(4096));
}

/// Builds the package from the test's binary, then installs, uses and removes it with
/// `packaging/test-deb` (which checks that the host's iptables is never switched and that
/// the alternatives are as before afterwards). CI also runs the whole script with its own
/// `cargo build` (.ci/run).
#[test]
fn the_debian_package_installs_works_and_leaves_no_trace() {
    common::require_kernel!();
    let out_dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("deb-{}", std::process::id()));
    let build = Command::new(root().join("packaging/build-deb"))
        .args(["--binary", xtnl_bin(), "--out", out_dir.to_str().unwrap()])
        .output()
        .expect("run packaging/build-deb");
    assert!(
        build.status.success(),
        "build-deb: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    let deb = String::from_utf8_lossy(&build.stdout)
        .lines()
        .last()
        .unwrap()
        .to_owned();
    assert!(deb.ends_with(".deb") && Path::new(&deb).exists(), "{deb}");
    let test = Command::new(root().join("packaging/test-deb"))
        .arg(&deb)
        .output()
        .expect("run packaging/test-deb");
    let stderr = String::from_utf8_lossy(&test.stderr);
    assert!(test.status.success(), "test-deb failed:\n{stderr}");
    assert!(String::from_utf8_lossy(&test.stdout).contains("test-deb: ok"));
    let _ = std::fs::remove_dir_all(&out_dir);
}
