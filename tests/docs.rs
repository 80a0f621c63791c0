//! The documentation against the code it describes (no root needed): every command of `xtnl
//! help` is in docs/cli.md, the error table there gives each error the exit status the code
//! gives it, docs/json.md names every JSON error kind and its example document is one
//! `xtnl apply` accepts, the bounds docs/privileged-helper.md states are `xtnl::limits`'s,
//! the README's library example is examples/readme.rs (which tests/readme_example.rs runs),
//! every relative link of the README and docs/ leads to a file that exists, and the example
//! policy of docs/privileged-helper.md parses and gives its sample denial (here rather than
//! in xtnl-policy's unit tests, so that its package reads no file outside it).

mod common;

use std::path::{Path, PathBuf};

use common::{run_ok, xtnl_bin};
use xtnl::error::{Error, OpFailure};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn doc(name: &str) -> String {
    std::fs::read_to_string(root().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The command phrases of `xtnl help`: the lowercase words that start a line of its command
/// list (two-space indent), up to the first argument.
fn help_commands() -> Vec<String> {
    let help = run_ok(xtnl_bin(), &["help"]);
    let list = help
        .split_once("\ncommands:\n")
        .expect("`xtnl help` has a command list")
        .1;
    let mut commands = Vec::new();
    for line in list.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if indent != 2 || !t.starts_with(|c: char| c.is_ascii_lowercase()) {
            continue;
        }
        let head = t.split("  ").next().unwrap_or_default();
        let words: Vec<&str> = head
            .split_whitespace()
            .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            .collect();
        commands.push(words.join(" "));
    }
    commands
}

#[test]
fn every_command_of_the_help_is_in_cli_md() {
    let commands = help_commands();
    for c in [
        "demo",
        "restore",
        "apply",
        "reservation setup",
        "teardown",
        "help",
    ] {
        assert!(
            commands.iter().any(|x| x == c),
            "help parse lost {c:?}: {commands:?}"
        );
    }
    let cli = doc("docs/cli.md");
    let missing: Vec<&String> = commands.iter().filter(|c| !cli.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "in `xtnl help` but not in docs/cli.md: {missing:?}"
    );
}

fn refused(errno: i32) -> OpFailure {
    OpFailure {
        index: 0,
        op: "add rule ip nat vcld-5205".into(),
        errno,
        ext_ack: None,
    }
}

/// One error of every variant the library has (`ErrorKind` is non-exhaustive, so a new kind
/// comes with a new line here and a new row in the table).
fn samples() -> Vec<Error> {
    let io = || std::io::Error::from_raw_os_error(libc::EIO);
    vec![
        Error::LockBusy {
            path: PathBuf::from("/run/xtables.lock"),
            waited: None,
        },
        Error::LockFile {
            path: PathBuf::from("/run/xtables.lock"),
            source: io(),
        },
        Error::NotFound(refused(libc::ENOENT)),
        Error::AlreadyExists(refused(libc::EEXIST)),
        Error::InUse(refused(libc::EBUSY)),
        Error::NotPermitted {
            context: "sendmsg".into(),
        },
        Error::Unsupported(refused(libc::EOPNOTSUPP)),
        Error::Rejected(refused(libc::EINVAL)),
        Error::GenerationConflict { attempts: 32 },
        Error::Netlink {
            context: "recvmsg",
            source: io(),
        },
        Error::InvalidInput("bad".into()),
        Error::Precondition("Index of insertion too big.".into()),
        Error::NoSuchTable("natt".into()),
        Error::PolicyDenied("denied".into()),
        Error::PolicyInvalid("invalid".into()),
    ]
}

/// The rows of the first markdown table after `heading`: cells of each row, trimmed.
fn table_after(text: &str, heading: &str) -> Vec<Vec<String>> {
    let from = text
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    text[from..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn the_error_table_gives_each_error_its_exit_status() {
    let rows = table_after(&doc("docs/cli.md"), "## Errors and exit statuses");
    assert!(rows.len() >= 9, "{rows:?}");
    for e in samples() {
        let kind = format!("`{:?}`", e.kind());
        let statuses: Vec<&str> = rows
            .iter()
            .filter(|r| r[0].contains(&kind))
            .map(|r| r.last().unwrap().as_str())
            .collect();
        assert!(
            statuses.contains(&e.exit_status().to_string().as_str()),
            "{e:?}: kind {kind} exits {}, the table says {statuses:?}",
            e.exit_status()
        );
    }
}

#[test]
fn json_md_names_every_json_error_kind() {
    let json = doc("docs/json.md");
    for e in samples() {
        let name = xtnl::json::kind_name(e.kind());
        assert!(
            json.contains(&format!("`{name}`")),
            "docs/json.md does not name the error kind {name:?}"
        );
    }
}

#[test]
fn json_md_example_document_is_accepted() {
    let json = doc("docs/json.md");
    let from = json
        .find("Document, version 1")
        .expect("the example document");
    let body = &json[from..];
    let start = body.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + body[start..].find("```").unwrap();
    let d = xtnl::json::parse(&body.as_bytes()[start..end])
        .unwrap_or_else(|e| panic!("docs/json.md's example document: {e}"));
    assert_eq!(d.transactions.len(), 1);
    assert_eq!(d.transactions[0].operations.len(), 12);
}

/// Relative links `[text](path)` and `[text](path#anchor)` of a markdown file.
fn local_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:") {
            out.push(target.split('#').next().unwrap_or_default().to_owned());
        }
    }
    out
}

#[test]
fn every_relative_link_of_the_documentation_leads_to_a_file() {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    assert!(files.len() >= 10, "{files:?}");
    let mut broken = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for link in local_links(&text) {
            if !f.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", f.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:?}");
}

/// What a newcomer needs is in the README, and only that: the two set-up commands, the
/// drop-in, the library, and a link to each page of docs/ the rest moved to.
#[test]
fn the_readme_links_the_pages_of_docs() {
    let readme = doc("README.md");
    for cmd in ["cargo run --release -- demo", "bash .ci/run"] {
        assert!(readme.contains(cmd), "README lost {cmd:?}");
    }
    for page in [
        "cli",
        "drop-in",
        "extensions",
        "backends",
        "json",
        "serve",
        "privileged-helper",
        "sets-and-maps",
        "library",
        "architecture",
        "install",
        "benchmarks",
        "reliability",
    ] {
        let link = format!("](docs/{page}.md)");
        assert!(readme.contains(&link), "README does not link {link}");
    }
}

/// The bounds docs/privileged-helper.md states are the ones `xtnl::limits` enforces.
#[test]
fn the_documented_bounds_are_the_code_s() {
    use xtnl::limits::*;
    let text = doc("docs/privileged-helper.md");
    let from = text
        .find("**Bounded inputs**")
        .expect("the bounds paragraph");
    let para: String = text[from..]
        .split("\n\n")
        .next()
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let thousands = |n: usize| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    for claim in [
        format!("at most {MAX_IPTABLES_CHAIN_LEN} in iptables' tables"),
        format!("comments at most {MAX_IPTABLES_COMMENT_LEN} bytes in iptables' tables"),
        format!(
            "restore files {} MiB and {} MiB per line",
            MAX_RESTORE_BYTES >> 20,
            MAX_RESTORE_LINE >> 20
        ),
        format!(
            "JSON documents {} MiB and {} operations per transaction",
            MAX_JSON_DOCUMENT_BYTES >> 20,
            thousands(MAX_JSON_OPERATIONS)
        ),
        format!(
            "2^{} operations in any transaction",
            MAX_TRANSACTION_OPS.trailing_zeros()
        ),
        format!("policy files {} MiB", MAX_POLICY_BYTES >> 20),
    ] {
        assert!(
            para.contains(&claim),
            "docs/privileged-helper.md: no {claim:?} in {para:?}"
        );
    }
    assert!(MAX_TRANSACTION_OPS.is_power_of_two());
}

/// The README's library example is examples/readme.rs, line for line (that file is compiled
/// by `cargo test` and run twice in a scratch namespace by tests/readme_example.rs).
#[test]
fn the_readme_library_example_is_the_compiled_one() {
    let readme = doc("README.md");
    let from = readme
        .find("## The library in ten lines")
        .expect("the README's library section");
    let fence = from + readme[from..].find("```rust").expect("its code");
    let start = fence + readme[fence..].find('\n').unwrap() + 1;
    let end = start + readme[start..].find("```").unwrap();
    // examples/readme.rs is built by `cargo test` and run by tests/readme_example.rs.
    let compiled: Vec<&str> = include_str!("../examples/readme.rs").lines().collect();
    let shown: Vec<&str> = readme[start..end].lines().collect();
    assert_eq!(
        shown, compiled,
        "README.md's library example differs from the compiled one"
    );
}

/// The rust blocks of a page (fenced with `rust` or `rust,no_run`), each the text between its
/// fences.
fn rust_blocks(page: &str) -> Vec<&str> {
    page.split("```rust")
        .skip(1)
        .map(|b| {
            let body = &b[b.find('\n').map_or(b.len(), |i| i + 1)..];
            body.split("```").next().unwrap_or_default()
        })
        .collect()
}

/// docs/library-examples.md (the crate's front page in rustdoc, where its blocks are compiled
/// with `no_run`) shows four programs of examples/, line for line; tests/library_examples.rs
/// runs them in fresh namespaces.
#[test]
fn the_library_examples_pages_programs_are_the_compiled_ones() {
    let page = doc("docs/library-examples.md");
    let shown = rust_blocks(&page);
    let compiled = [
        include_str!("../examples/doc_transaction.rs"),
        include_str!("../examples/doc_iptables.rs"),
        include_str!("../examples/doc_nathost.rs"),
        include_str!("../examples/doc_listing.rs"),
    ];
    assert_eq!(
        shown.len(),
        compiled.len(),
        "docs/library-examples.md's rust blocks"
    );
    for (s, c) in shown.iter().zip(compiled) {
        assert_eq!(
            s.lines().collect::<Vec<_>>(),
            c.lines().collect::<Vec<_>>(),
            "a block of docs/library-examples.md differs from its example"
        );
    }
}

/// docs/nft-json.md's program is examples/doc_nft_json.rs, line for line (run by
/// tests/library_examples.rs).
#[test]
fn the_nft_json_pages_program_is_the_compiled_one() {
    let page = doc("docs/nft-json.md");
    let shown = rust_blocks(&page);
    assert_eq!(shown.len(), 1, "docs/nft-json.md's rust blocks");
    assert_eq!(
        shown[0].lines().collect::<Vec<_>>(),
        include_str!("../examples/doc_nft_json.rs")
            .lines()
            .collect::<Vec<_>>(),
        "docs/nft-json.md's block differs from examples/doc_nft_json.rs"
    );
}

/// docs/sets-and-maps.md's program is examples/doc_map_layout.rs (run by
/// tests/library_examples.rs), and no other page of docs/ or the README has a rust block that
/// is not one of the compiled programs checked here.
#[test]
fn every_rust_block_of_the_docs_is_a_compiled_program() {
    let page = doc("docs/sets-and-maps.md");
    let shown = rust_blocks(&page);
    assert_eq!(shown.len(), 1, "docs/sets-and-maps.md's rust blocks");
    assert_eq!(
        shown[0].lines().collect::<Vec<_>>(),
        include_str!("../examples/doc_map_layout.rs")
            .lines()
            .collect::<Vec<_>>(),
        "docs/sets-and-maps.md's block differs from examples/doc_map_layout.rs"
    );
    // The pages whose blocks are checked against examples/ (here and above).
    let checked = [
        "README.md",
        "docs/library.md",
        "docs/library-examples.md",
        "docs/sets-and-maps.md",
        "docs/nft-json.md",
    ];
    let mut pages = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let path = e.expect("docs/ entry").path();
        if path.extension().is_some_and(|x| x == "md") {
            pages.push(path);
        }
    }
    for path in pages {
        let rel = path.strip_prefix(root()).expect("under the root");
        let rel = rel.to_string_lossy();
        let text = std::fs::read_to_string(&path).expect("a page");
        if !rust_blocks(&text).is_empty() {
            assert!(
                checked.contains(&rel.as_ref()),
                "{rel} has a rust block that no test compiles and runs"
            );
        }
    }
}

/// docs/library.md's two programs are examples/library_transaction.rs and
/// examples/library_nathost.rs, line for line (compiled by `cargo test`, run in fresh
/// namespaces by tests/library_examples.rs): its blocks can no longer rot unseen.
#[test]
fn the_library_pages_programs_are_the_compiled_ones() {
    let page = doc("docs/library.md");
    let shown: Vec<&str> = page
        .split("```rust\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or_default())
        .collect();
    let compiled = [
        include_str!("../examples/library_transaction.rs"),
        include_str!("../examples/library_nathost.rs"),
    ];
    assert_eq!(shown.len(), compiled.len(), "docs/library.md's rust blocks");
    for (s, c) in shown.iter().zip(compiled) {
        assert_eq!(
            s.lines().collect::<Vec<_>>(),
            c.lines().collect::<Vec<_>>(),
            "a block of docs/library.md differs from its example"
        );
    }
    assert!(
        !page.contains("no_run"),
        "docs/library.md has a block that is not run"
    );
}

/// docs/library.md's Cargo.toml for a NAT-host-only build is this package at its version
/// without its default features, and the feature it leaves out is the registry's (forwarded
/// to xtnl-ipt, on by default, required by the binaries).
#[test]
fn the_nat_host_only_dependency_line_turns_off_the_registry() {
    let page = doc("docs/library.md");
    let from = page
        .find("## A build with only the NAT-host operations")
        .expect("library.md's NAT-host-only section");
    let fence = from + page[from..].find("```toml\n").expect("its Cargo.toml");
    let body = &page[fence + "```toml\n".len()..];
    let body = &body[..body.find("```").expect("closed")];
    let shown: toml::Table = toml::from_str(body).expect("the block is TOML");
    let dep = &shown["dependencies"]["xtnl"];
    assert_eq!(dep["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    assert_eq!(dep["default-features"].as_bool(), Some(false));
    let manifest: toml::Table = toml::from_str(&doc("Cargo.toml")).expect("Cargo.toml");
    let features = &manifest["features"];
    assert_eq!(features["default"].as_array().map(Vec::len), Some(1));
    assert_eq!(features["default"][0].as_str(), Some("extensions"));
    assert_eq!(
        features["extensions"][0].as_str(),
        Some("xtnl-ipt/extensions")
    );
    let bins = manifest["bin"].as_array().expect("[[bin]]");
    assert!(!bins.is_empty());
    for b in bins {
        assert_eq!(
            b["required-features"][0].as_str(),
            Some("extensions"),
            "{b:?}"
        );
    }
}

/// A rule that jumps to `target` (nf_tables expressions, as the policy reads them).
fn jump_rule(target: &str) -> xtnl::nft::EncodedRule {
    use xtnl::wire::expr::{Expr, Immediate, ImmediateData, Verdict};
    xtnl::nft::EncodedRule {
        exprs: vec![Expr::Immediate(Immediate {
            dreg: 0,
            data: ImmediateData::Verdict(Verdict::Jump(target.into())),
        })],
        userdata: None,
        compat: None,
        sets: Vec::new(),
    }
}

#[test]
fn the_documented_example_policy_parses_and_gives_its_sample_denial() {
    use xtnl::model::Family;
    use xtnl::nft::{Op, RulePosition, TableRef, Transaction};
    use xtnl::policy::Policy;

    let readme = doc("docs/privileged-helper.md");
    let start = readme
        .find("```toml\n# /etc/xtnl/policy.toml")
        .expect("docs/privileged-helper.md has the example policy");
    let body = &readme[start + "```toml\n".len()..];
    let end = body.find("```").expect("the example's end");
    let p = Policy::parse(&body[..end], Path::new("/etc/xtnl/policy.toml")).expect("parses");
    assert_eq!(p.allow.len(), 6);
    // The documented sample denial names this line.
    assert_eq!(p.allow[1].line, 12);
    assert!(readme.contains("policy /etc/xtnl/policy.toml:12 allows add-rule, delete-rule in ip nat chains PREROUTING only (rules must jump to vcld-*); denied: add-rule in ip nat PREROUTING (a rule jumping to foo)"));
    let mut tx = Transaction::new();
    tx.push(Op::AddEncodedRule {
        chain: TableRef::new(Family::Ipv4, "nat").chain("PREROUTING"),
        rule: jump_rule("foo"),
        position: RulePosition::Head,
    });
    let checked = p
        .check_size(tx.len())
        .and_then(|()| p.check(&xtnl::policy::touches(&tx)));
    let m = match checked {
        Err(Error::PolicyDenied(m)) => m,
        other => panic!("expected a denial, got {other:?}"),
    };
    assert!(readme.contains(&m), "{m}");
}
