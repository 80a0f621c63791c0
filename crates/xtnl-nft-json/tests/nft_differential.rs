//! Differential proof against the real nft: rulesets written by `nft -f` and by iptables-nft
//! in scratch network namespaces, listed with `nft -j list ruleset`, parsed into the types,
//! serialized again and compared as JSON values (equal), with no part left untyped; then the
//! re-serialized document applied with `nft -j -f` to a fresh namespace, which must do what
//! nft's own document does there, and give the same `nft list ruleset` as the original where
//! nft can re-apply its own JSON.
//!
//! Every namespace is a child `unshare -n`, so nothing touches the host's ruleset.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use xtnl_nft_json::Document;

/// The rulesets: (file under tests/rulesets, whether nft 1.0.6 re-applies its own JSON of it).
/// kube.nft: nft lists verdict maps before the chains their elements jump to, so its own JSON
/// fails to apply ("No such file or directory"); concat_data.nft: see the file's comment.
/// iptables.sh: nft refuses its `xt` statements ("unsupported xtables compat expression").
const RULESETS: &[(&str, bool)] = &[
    ("netavark.nft", true),
    ("firewalld.nft", true),
    ("kube.nft", false),
    ("concat_data.nft", false),
    ("iptables.sh", false),
];

fn rulesets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rulesets")
}

/// Whether this process may create network namespaces; without, the test says so and
/// returns, or fails under `XTNL_REQUIRE_KERNEL_TESTS=1` (CI).
fn kernel_test() -> bool {
    let ok = Command::new("unshare")
        .args(["-n", "true"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var_os("XTNL_REQUIRE_KERNEL_TESTS").is_none(),
            "XTNL_REQUIRE_KERNEL_TESTS is set but `unshare -n` fails: run as root"
        );
        eprintln!("test needs root (unshare -n): not run");
    }
    ok
}

/// Runs a shell script in a new network namespace of its own.
fn in_netns(script: &str) -> Output {
    let out = Command::new("unshare")
        .args(["-n", "sh", "-ec", script])
        .current_dir(rulesets_dir())
        .output();
    match out {
        Ok(out) => out,
        Err(e) => panic!("cannot run unshare: {e}"),
    }
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("nft prints UTF-8")
}

/// A listing without the time left of timed elements (`expires 1m58s992ms`), which differs
/// between two listings made moments apart.
fn untimed(listing: &[u8]) -> String {
    let text = String::from_utf8_lossy(listing);
    let mut out = Vec::new();
    let mut words = text.split(' ');
    while let Some(word) = words.next() {
        if word == "expires" {
            words.next();
            continue;
        }
        out.push(word);
    }
    out.join(" ")
}

fn write_script(name: &str) -> String {
    if name.ends_with(".sh") {
        format!("sh -e {name}")
    } else {
        format!("nft -f {name}")
    }
}

fn scratch_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("xtnl-nft-json-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write scratch file");
    path
}

#[test]
fn nft_json_round_trips_through_the_types() {
    if !kernel_test() {
        return;
    }
    let mut reapplied = 0;
    for &(name, reapplies) in RULESETS {
        let write = write_script(name);
        let original_text = ok(
            in_netns(&format!("{write}; nft list ruleset")),
            &format!("{name}: writing it"),
        );
        let listed = ok(
            in_netns(&format!("{write} >/dev/null; nft -j list ruleset")),
            &format!("{name}: nft -j list ruleset"),
        );
        let theirs: Value = serde_json::from_str(&listed).expect("nft prints JSON");
        let doc: Document = serde_json::from_str(&listed)
            .unwrap_or_else(|e| panic!("{name}: does not parse into the types: {e}"));
        let unknown = doc.unknowns();
        assert!(
            unknown.is_empty(),
            "{name}: parts not typed:\n{}",
            unknown
                .iter()
                .map(|u| u.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
        let ours_text = doc.to_json().expect("serializes");
        let ours: Value = serde_json::from_str(&ours_text).expect("our JSON parses");
        assert_eq!(
            ours, theirs,
            "{name}: re-serialized JSON differs from nft's"
        );
        assert!(ours_text.len() > 300, "{name}: ruleset unexpectedly small");

        // The re-serialized document, and nft's own, applied to fresh namespaces.
        let ours_file = scratch_file(&format!("{name}.ours.json"), &ours_text);
        let theirs_file = scratch_file(&format!("{name}.theirs.json"), &listed);
        let apply =
            |file: &Path| in_netns(&format!("nft -j -f {} && nft list ruleset", file.display()));
        let (by_ours, by_theirs) = (apply(&ours_file), apply(&theirs_file));
        let _ = std::fs::remove_file(&ours_file);
        let _ = std::fs::remove_file(&theirs_file);
        assert_eq!(
            by_ours.status.success(),
            by_theirs.status.success(),
            "{name}: nft -j -f took one document and not the other: ours {:?} / theirs {:?}",
            String::from_utf8_lossy(&by_ours.stderr),
            String::from_utf8_lossy(&by_theirs.stderr)
        );
        assert_eq!(
            untimed(&by_ours.stdout),
            untimed(&by_theirs.stdout),
            "{name}: listings differ"
        );
        assert_eq!(
            String::from_utf8_lossy(&by_ours.stderr),
            String::from_utf8_lossy(&by_theirs.stderr),
            "{name}: errors differ"
        );
        assert_eq!(
            by_ours.status.success(),
            reapplies,
            "{name}: nft -j -f {} (stderr {:?}): update RULESETS",
            if reapplies { "failed" } else { "now succeeds" },
            String::from_utf8_lossy(&by_ours.stderr)
        );
        if reapplies {
            assert_eq!(
                untimed(&by_ours.stdout),
                untimed(original_text.as_bytes()),
                "{name}: rebuilt ruleset differs"
            );
            reapplied += 1;
        }
    }
    assert!(reapplied >= 2);
}

/// A document of commands (add, create, insert, flush, delete of tables, chains, sets, maps,
/// elements, named objects and rules), written by hand from libnftables-json(5): it parses
/// with no part untyped and re-serializes equal; nft applies the re-serialized document and
/// the result lists exactly as the same ruleset written in nft's own syntax (commands.nft).
#[test]
fn commands_apply_as_nft_syntax_does() {
    if !kernel_test() {
        return;
    }
    let text = std::fs::read_to_string(rulesets_dir().join("commands.json")).expect("read");
    let doc = Document::from_json(&text).expect("commands.json parses");
    assert!(doc.unknowns().is_empty(), "{:?}", doc.unknowns());
    assert!(
        doc.nftables
            .iter()
            .any(|i| matches!(i, xtnl_nft_json::Item::Insert(_)))
            && doc
                .nftables
                .iter()
                .any(|i| matches!(i, xtnl_nft_json::Item::Delete(_)))
    );
    let ours_text = doc.to_json().expect("serializes");
    let theirs: Value = serde_json::from_str(&text).expect("JSON");
    let ours: Value = serde_json::from_str(&ours_text).expect("JSON");
    assert_eq!(ours, theirs);
    let file = scratch_file("commands.ours.json", &ours_text);
    let by_json = ok(
        in_netns(&format!("nft -j -f {} && nft list ruleset", file.display())),
        "nft -j -f commands",
    );
    let _ = std::fs::remove_file(&file);
    let by_text = ok(
        in_netns("nft -f commands.nft && nft list ruleset"),
        "nft -f commands.nft",
    );
    assert_eq!(by_json, by_text);
    assert!(by_json.contains("udp dport 53 counter name \"hits\" accept"));
}
