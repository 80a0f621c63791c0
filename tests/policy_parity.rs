//! One judgement on both backends: the same command, restore block, JSON `apply` operation
//! or NAT-host operation, run under the same policy from the same state on nf_tables and on
//! x_tables, is allowed or denied the same way (exit status, the denial's policy line and
//! words), leaves both backends in the same state, and writes the same audit records (phase,
//! caller, result, operation count, and each operation's text, up to what only one backend
//! has: nf_tables' rule handles, which x_tables has not, and the rule an x_tables delete
//! removes, which nf_tables names by handle only).
//!
//! Every case runs in a network namespace this test made, from a state restored on both
//! backends by the real iptables-nft-restore and iptables-legacy-restore.

mod common;

use std::path::{Path, PathBuf};

use common::*;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("xtnl-parity-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The state every case starts from, on both backends.
const BASE: &str = "*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:other - [0:0]
:spare - [0:0]
:vcld-1 - [0:0]
:vcld-e - [0:0]
-A PREROUTING -j other
-A PREROUTING -j vcld-1
-A other -j RETURN
-A vcld-1 -p tcp -m tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:22
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:keep - [0:0]
COMMIT
";

/// The NAT host's policy: reservation chains, and jumps to them from PREROUTING.
const NAT_HOST: &str = common::nat_host_policy!(8);

/// Anything in nat, but no rule that jumps (added or deleted), and at most 4 operations.
const NO_JUMPS: &str = r#"max_ops = 4

[[allow]]
table = "nat"
chains = ["*"]
verbs = ["create-table", "flush-table", "create", "delete", "flush", "policy", "add-rule", "delete-rule", "zero"]
"#;

/// Anything in nat.
const ANYTHING: &str = r#"[[allow]]
table = "nat"
chains = ["*"]
verbs = ["create-table", "flush-table", "create", "delete", "flush", "policy", "add-rule", "delete-rule", "zero"]

[[allow]]
table = "nat"
chains = ["*"]
verbs = ["add-rule", "delete-rule"]
jump_to = ["*"]
"#;

/// Chains created and deleted anywhere in nat; PREROUTING may only jump to vcld-*: a rename
/// must not retarget PREROUTING's jump to a chain outside the reservations.
const RETARGET: &str = r#"[[allow]]
table = "nat"
chains = ["*"]
verbs = ["create", "delete"]

[[allow]]
table = "nat"
chains = ["PREROUTING"]
verbs = ["add-rule", "delete-rule"]
jump_to = ["vcld-*"]
"#;

/// The cases: xtnl's arguments, with `{FILE}` standing for a file holding the second field
/// (a restore block or a JSON document).
const CASES: &[(&str, &str)] = &[
    ("-t nat -F vcld-e", ""),
    ("-t nat -F spare", ""),
    ("-t nat -F other", ""),
    ("-t nat -P PREROUTING ACCEPT", ""),
    ("-t filter -P INPUT ACCEPT", ""),
    ("-t nat -E vcld-1 vcld-2", ""),
    ("-t nat -E vcld-1 other3", ""),
    ("-t nat -E vcld-1 x1", ""),
    ("-t nat -E other vcld-o", ""),
    ("-t nat -X vcld-e", ""),
    ("-t nat -X spare", ""),
    ("-t nat -Z", ""),
    ("-t nat -Z vcld-1", ""),
    ("-t nat -D PREROUTING 1", ""),
    ("-t nat -D PREROUTING 2", ""),
    ("-t nat -D PREROUTING -j other", ""),
    ("-t nat -D PREROUTING -j vcld-1", ""),
    ("-t nat -D other -j RETURN", ""),
    ("-t nat -R PREROUTING 1 -j vcld-e", ""),
    ("-t nat -R PREROUTING 2 -j vcld-e", ""),
    ("-t nat -I PREROUTING 2 -j vcld-e", ""),
    ("-t nat -I PREROUTING 3 -j vcld-e", ""),
    ("-t nat -I PREROUTING -j vcld-e", ""),
    (
        "-t nat -A vcld-e -p tcp --dport 1 -j DNAT --to-destination 192.0.2.1",
        "",
    ),
    ("-t nat -N vcld-9", ""),
    ("-t nat -N evil", ""),
    ("-t nat -F", ""),
    ("-t nat -C PREROUTING -j other", ""),
    // Where the three derivations of touches before issue 25 (nf_tables operations, the
    // interpreter's edits, an x_tables table difference) could part: a rule deleted or
    // replaced by number that jumps nowhere, one rule's counters zeroed (`-Z CHAIN N`, a
    // rule replaced by itself on nf_tables), and inside a restore block renames (one of the
    // target of a jump the block adds: nf_tables judged only the kernel's jumps), a policy
    // and a flush by declaration.
    ("-t nat -D vcld-1 1", ""),
    ("-t nat -R other 1 -j vcld-e", ""),
    ("-t nat -Z PREROUTING 2", ""),
    ("-t nat -Z vcld-1 1", ""),
    (
        "restore --noflush {FILE}",
        "*nat\n-E vcld-1 vcld-5\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n-E other other5\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n-A PREROUTING -j vcld-e\n-E vcld-e evil\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n-D PREROUTING -j vcld-1\n-E vcld-1 gone\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n-R PREROUTING 1 -j vcld-e\n-E vcld-e evil2\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n:PREROUTING DROP [0:0]\n:vcld-1 - [0:0]\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n:vcld-a - [0:0]\n:vcld-e - [0:0]\n-A vcld-a -j RETURN\n-I PREROUTING -j vcld-a\nCOMMIT\n",
    ),
    (
        "restore --noflush {FILE}",
        "*nat\n-D PREROUTING -j other\n-A PREROUTING -j vcld-e\nCOMMIT\n",
    ),
    (
        "restore {FILE}",
        "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:vcld-1 - [0:0]\n:vcld-n - [0:0]\n-A PREROUTING -j vcld-1\nCOMMIT\n",
    ),
    (
        "apply {FILE}",
        r#"{"transactions": [{"operations": [{"op": "create_chain", "table": "nat", "chain": "vcld-j"}, {"op": "ensure_rule", "table": "nat", "chain": "PREROUTING", "position": "head", "rule": "-j vcld-j"}]}]}"#,
    ),
    (
        "apply {FILE}",
        r#"{"transactions": [{"operations": [{"op": "delete_rule", "table": "nat", "chain": "PREROUTING", "rule": "-j other"}]}]}"#,
    ),
    (
        "reservation setup vcld-20 --forward eth1:tcp/50450=192.0.2.20:22",
        "",
    ),
    ("teardown vcld-1", ""),
    ("teardown other", ""),
];

/// What a run shows of its judgement.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    code: i32,
    /// The policy's denial line, normalised.
    denial: Vec<String>,
    /// The audit records, normalised.
    audit: Vec<String>,
    /// `iptables -t nat -S` afterwards.
    state: String,
}

/// An operation's text without what only one backend has: nf_tables' handles, and the rule
/// of a delete (x_tables names the rule removed, nf_tables its handle).
fn op_text(op: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut it = op.split(' ').peekable();
    while let Some(w) = it.next() {
        let number = |n: &str| {
            let n = n.trim_end_matches(':');
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        };
        if w == "handle" && it.peek().is_some_and(|n| number(n)) {
            let n = it.next().unwrap_or_default();
            if matches!(words.last().map(String::as_str), Some("before" | "after")) {
                words.pop();
            }
            if n.ends_with(':')
                && let Some(last) = words.last_mut()
            {
                last.push(':');
            }
            continue;
        }
        words.push(w.to_owned());
    }
    let s = words.join(" ");
    if s.starts_with("delete rule ") {
        return s.split(':').next().unwrap_or(&s).to_owned();
    }
    s
}

fn normalise_ops(text: &str) -> String {
    text.split("; ").map(op_text).collect::<Vec<_>>().join("; ")
}

fn seen(code: i32, stdout: &str, stderr: &str, state: String) -> Seen {
    let mut denial = Vec::new();
    let mut audit = Vec::new();
    // `apply` reports a denial as the transaction's error, in its JSON on standard output.
    let from_json = stdout.split("\"policy ").skip(1).map(|rest| {
        let msg = rest.split('"').next().unwrap_or_default();
        format!("xtnl: policy {msg}")
    });
    let lines: Vec<String> = stderr.lines().map(str::to_owned).chain(from_json).collect();
    for l in &lines {
        let l = l.as_str();
        if let Some(rest) = l.strip_prefix("xtnl: audit: ") {
            // `PHASE id=.. via=.. netns=.. uid=.. ... ops=N: TEXT`: drop id, via and netns.
            let (head, ops) = rest.split_once(": ").unwrap_or((rest, ""));
            let head: Vec<&str> = head
                .split(' ')
                .filter(|w| !(w.starts_with("id=") || w.starts_with("netns=")))
                .collect();
            audit.push(format!("{}: {}", head.join(" "), normalise_ops(ops)));
        } else if l.starts_with("xtnl: policy ") {
            // The operation the denial names: `by operation #i (TEXT)`.
            let l = match l.split_once(" by operation #") {
                Some((a, b)) => match b.split_once(" (") {
                    Some((n, t)) => {
                        format!(
                            "{a} by operation #{n} ({})",
                            op_text(t.trim_end_matches(')'))
                        )
                    }
                    None => l.to_owned(),
                },
                None => l.to_owned(),
            };
            denial.push(l);
        }
    }
    Seen {
        code,
        denial,
        audit,
        state,
    }
}

fn reset(dir: &Path) {
    let base = dir.join("base.rules");
    std::fs::write(&base, BASE).unwrap();
    let b = base.to_str().unwrap();
    run_ok("iptables-nft-restore", &[b]);
    run_ok("iptables-legacy-restore", &[b]);
}

fn state(backend: &str) -> String {
    let tool = if backend == "legacy" {
        "iptables-legacy"
    } else {
        "iptables-nft"
    };
    run_ok(tool, &["-t", "nat", "-S"])
}

fn run_case(dir: &Path, policy: &Path, backend: &str, args: &str, file: &str) -> Seen {
    let path = dir.join("input");
    std::fs::write(&path, file).unwrap();
    let args = args.replace("{FILE}", path.to_str().unwrap());
    let mut all = vec![
        "--policy-file",
        policy.to_str().unwrap(),
        "--audit",
        "stderr",
        "--backend",
        backend,
    ];
    all.extend(args.split(' '));
    let lock = private_lock_path();
    let out = run_env(
        xtnl_bin(),
        &all,
        &[("XTABLES_LOCKFILE", lock.to_str().unwrap())],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    seen(
        out.status.code().unwrap_or(-1),
        &stdout,
        &stderr,
        state(backend),
    )
}

#[test]
fn both_backends_judge_and_audit_every_case_the_same() {
    common::require_kernel!();
    in_netns(|| {
        let dir = scratch("cases");
        let mut judged = 0;
        let mut denied = 0;
        for (name, text) in [
            ("nat-host", NAT_HOST),
            ("no-jumps", NO_JUMPS),
            ("anything", ANYTHING),
            ("retarget", RETARGET),
        ] {
            let policy = dir.join(format!("{name}.toml"));
            std::fs::write(&policy, text).unwrap();
            for (args, file) in CASES {
                reset(&dir);
                let before = state("nft");
                assert_eq!(before, state("legacy"), "the base state differs");
                let nft = run_case(&dir, &policy, "nft", args, file);
                let legacy = run_case(&dir, &policy, "legacy", args, file);
                assert_eq!(nft, legacy, "{name}: {args} {file}");
                assert!(
                    nft.code == 0 || nft.code == 5,
                    "{name}: {args}: not a judgement: {nft:?}"
                );
                // The judgement is real: a denial leaves the state alone and says so.
                if nft.code == 5 {
                    denied += 1;
                    assert_eq!(nft.state, before, "{name}: {args}");
                    assert!(!nft.denial.is_empty(), "{name}: {args}: {nft:?}");
                    assert!(
                        nft.audit.iter().any(|a| a.contains("result=denied")),
                        "{name}: {args}: {nft:?}"
                    );
                }
                // A rename is judged with the jumps it retargets, on both backends.
                if name == "retarget" && args.starts_with("-t nat -E ") {
                    let says = match args.rsplit(' ').next() {
                        Some("vcld-2") => None,
                        Some("vcld-o") => {
                            Some("delete-rule in ip nat PREROUTING (a rule jumping to other)")
                        }
                        Some("x1") => Some("add-rule in ip nat PREROUTING (a rule jumping to x1)"),
                        _ => Some("add-rule in ip nat PREROUTING (a rule jumping to other3)"),
                    };
                    assert_eq!(
                        nft.code,
                        if says.is_some() { 5 } else { 0 },
                        "{args}: {nft:?}"
                    );
                    if let Some(says) = says {
                        assert!(
                            nft.denial
                                .iter()
                                .any(|d| d.contains(&format!("denied: {says}"))),
                            "{args}: {nft:?}"
                        );
                    }
                }
                // A jump added, then its target renamed, in one block: the rename is judged
                // with the jump the block added (nf_tables judged only the kernel's).
                if name == "retarget" && file.contains("-E vcld-e evil\n") {
                    assert_eq!(nft.code, 5, "{file}: {nft:?}");
                    assert!(
                        nft.denial.iter().any(|d| d.contains(
                            "denied: add-rule in ip nat PREROUTING (a rule jumping to evil)"
                        )),
                        "{file}: {nft:?}"
                    );
                }
                judged += 1;
            }
        }
        // Each policy denies some cases and allows others.
        assert!(denied > 10 && denied < judged - 10, "{denied} of {judged}");
        std::fs::remove_dir_all(&dir).unwrap();
    });
}

#[test]
fn the_normalisation_keeps_what_both_backends_say() {
    assert_eq!(
        op_text("delete rule ip nat PREROUTING handle 7"),
        "delete rule ip nat PREROUTING"
    );
    assert_eq!(
        op_text("delete rule ip nat PREROUTING: -t nat -D PREROUTING -j other"),
        "delete rule ip nat PREROUTING"
    );
    assert_eq!(
        op_text("replace rule ip nat PREROUTING handle 7: -t nat -R PREROUTING -j vcld-e"),
        "replace rule ip nat PREROUTING: -t nat -R PREROUTING -j vcld-e"
    );
    assert_eq!(
        op_text("insert rule ip nat PREROUTING before handle 5: -t nat -I PREROUTING -j x"),
        "insert rule ip nat PREROUTING: -t nat -I PREROUTING -j x"
    );
    // Everything else is kept as it is.
    assert_eq!(
        op_text("add rule ip nat vcld-e: -t nat -A vcld-e -j RETURN"),
        "add rule ip nat vcld-e: -t nat -A vcld-e -j RETURN"
    );
}
