//! The layer check: dependencies between xtnl's modules point one way, lowest first, as
//! [`LAYERS`] lists them; and no two files of one module import each other (directly or
//! round a longer loop).
//!
//! It reads `src/**/*.rs` as text (comments and string literals blanked out), finds every path
//! that starts with `crate::` (use trees with `{...}` groups included) or climbs out of a file
//! with `super::`, and resolves it to the unit it names. A unit is a top-level module, or a
//! file or folder inside one that sits at another layer than its parent (iptables-nft's
//! encoding in `ipt/compat.rs` belongs to the nf_tables backend, the iptables interpreter in
//! `ipt/exec.rs` above both backends). Needs no root and no kernel.
//!
//! Known violations in files that other branches are rewriting are listed in [`ALLOWED`] with
//! their reason; an entry that is no longer needed fails the test too, so the list only
//! shrinks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A unit may import units of its own layer or of lower ones.
/// Units are paths under `src/` without `.rs`; a file belongs to the longest unit that is a
/// prefix of its module path.
const LAYERS: &[(&str, &[&str])] = &[
    ("sys", &["sys"]),
    ("wire", &["wire"]),
    ("error", &["error"]),
    ("limits", &["limits"]),
    ("model", &["model"]),
    ("xt", &["xt"]),
    ("transport", &["transport"]),
    ("privilege", &["privilege"]),
    ("lock", &["lock"]),
    ("netns", &["netns"]),
    ("ipt syntax", &["ipt"]),
    (
        "nft",
        &["nft", "ipt/compat", "ipt/ext/native", "ipt/listing"],
    ),
    ("policy", &["policy"]),
    ("seam", &["seam", "engine", "ipt/exec", "ipt/restore"]),
    ("nathost", &["nathost"]),
    ("legacy", &["legacy"]),
    // The one `open` of a backend, above both (the CLI and serve open through it).
    ("backend", &["backend"]),
    ("json", &["json"]),
    ("serve", &["serve"]),
    ("bench", &["bench"]),
    // The binaries' own modules (src/main.rs declares both; tests include scratch.rs too).
    ("cli", &["cli", "scratch"]),
];

/// Known upward imports: (file, unit it imports, reason). Each is owned by a branch that is
/// rewriting the file; the integrator empties this list after the merge.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// Known file cycles: (file, file, reason).
const ALLOWED_CYCLES: &[(&str, &str, &str)] = &[
    ("src/cli/dropin.rs", "src/cli/iptables.rs", CLI),
    ("src/cli/dropin.rs", "src/cli/restore.rs", CLI),
    (
        "src/legacy/abi.rs",
        "src/legacy/blob.rs",
        "abi.rs checks blob.rs's sizes at compile time, blob.rs uses abi.rs's structs",
    ),
    (
        "src/legacy/abi.rs",
        "src/legacy/sockopt.rs",
        "abi.rs checks sockopt.rs's sizes at compile time, sockopt.rs uses abi.rs's offsets",
    ),
    (
        "src/legacy/sockopt.rs",
        "src/legacy/blob.rs",
        "the loop runs through abi.rs, which checks both files' sizes at compile time",
    ),
];

const CLI: &str =
    "the drop-in dispatch runs the iptables and restore commands, which ask it for the tool's name";

/// Comments, string and character literals replaced by blanks (newlines kept, so byte
/// offsets and line numbers stay).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let start = i;
            let mut j = i + if rest[0] == b'b' { 2 } else { 1 };
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j >= b.len() || b[j] != b'"' {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            j = (j + close.len()).min(b.len());
            blank(&mut out, start, j);
            i = j;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let j = (j + 1).min(b.len());
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let ch_len = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(4)]).ok())
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(3)]).ok())
                    .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(2)]).ok())
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                (rest.get(1 + ch_len) == Some(&b'\'')).then_some(i + 2 + ch_len)
            };
            match end {
                Some(e) => {
                    blank(&mut out, i, e);
                    i = e;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Reads an identifier at `*i` (after blanks).
fn ident(b: &[u8], i: &mut usize) -> Option<String> {
    while *i < b.len() && b[*i].is_ascii_whitespace() {
        *i += 1;
    }
    let start = *i;
    while *i < b.len() && is_ident(b[*i]) {
        *i += 1;
    }
    (*i > start).then(|| String::from_utf8_lossy(&b[start..*i]).into_owned())
}

fn eat(b: &[u8], i: &mut usize, s: &[u8]) -> bool {
    let mut j = *i;
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    if b[j..].starts_with(s) {
        *i = j + s.len();
        true
    } else {
        false
    }
}

/// The paths of a use tree or path expression at `*i` (right after `crate::` or the
/// `super::`s), each prefixed with `base`.
fn paths(b: &[u8], i: &mut usize, base: &[String], out: &mut Vec<Vec<String>>) {
    if eat(b, i, b"{") {
        loop {
            if eat(b, i, b"}") {
                return;
            }
            paths(b, i, base, out);
            if !eat(b, i, b",") {
                eat(b, i, b"}");
                return;
            }
        }
    }
    let mut p = base.to_vec();
    while let Some(seg) = ident(b, i) {
        if seg == "self" {
            break;
        }
        p.push(seg);
        if !eat(b, i, b"::") {
            break;
        }
        let mut k = *i;
        if eat(b, &mut k, b"{") {
            paths(b, i, &p, out);
            return;
        }
        if eat(b, &mut k, b"*") || eat(b, &mut k, b"<") {
            break;
        }
    }
    out.push(p);
}

struct Use {
    line: usize,
    target: Vec<String>,
}

/// Every module path the file's code names through `crate::` or `super::`.
fn uses(module: &[String], src: &str) -> Vec<Use> {
    let code = code_only(src);
    let b = code.as_bytes();
    let mut found = Vec::new();
    // Inline modules (`mod tests { ... }`): (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let boundary = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':');
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'{' {
            depth += 1;
            i += 1;
        } else if c == b'}' {
            if inline.last().is_some_and(|(_, d)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
        } else if boundary && b[i..].starts_with(b"mod ") {
            let mut j = i + 4;
            match ident(b, &mut j) {
                Some(name) if eat(b, &mut j, b"{") => {
                    depth += 1;
                    inline.push((name, depth));
                    i = j;
                }
                _ => i += 4,
            }
        } else if boundary && (b[i..].starts_with(b"crate::") || b[i..].starts_with(b"$crate::")) {
            i += if c == b'$' { 8 } else { 7 };
            let mut out = Vec::new();
            paths(b, &mut i, &[], &mut out);
            found.extend(out.into_iter().map(|target| Use { line, target }));
        } else if boundary && b[i..].starts_with(b"super::") {
            let mut here: Vec<String> = module.to_vec();
            here.extend(inline.iter().map(|(n, _)| n.clone()));
            while b[i..].starts_with(b"super::") {
                here.pop();
                i += 7;
            }
            let mut out = Vec::new();
            paths(b, &mut i, &here, &mut out);
            found.extend(out.into_iter().map(|target| Use { line, target }));
        } else {
            i += 1;
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// A file's module path: `src/ipt/parse.rs` is `[ipt, parse]`, `src/ipt/mod.rs` is `[ipt]`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if m.last().is_some_and(|l| l == "mod") {
        m.pop();
    }
    m
}

/// The unit a module path belongs to and its layer's index.
fn unit_of(path: &[String]) -> Option<(&'static str, usize)> {
    let joined = path.join("/");
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(level, (_, units))| units.iter().map(move |u| (*u, level)))
        .filter(|(u, _)| joined == *u || joined.starts_with(&format!("{u}/")))
        .max_by_key(|(u, _)| u.len())
}

struct Source {
    rel: String,
    module: Vec<String>,
    uses: Vec<Use>,
}

fn sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&src).expect("under src").to_path_buf();
            // The crate roots: lib.rs declares the modules, main.rs is the binary's crate.
            if rel == Path::new("lib.rs") || rel == Path::new("main.rs") || rel.starts_with("bin") {
                return None;
            }
            let text = std::fs::read_to_string(&p).expect("source file");
            let module = module_of(&rel);
            Some(Source {
                rel: format!("src/{}", rel.display()),
                uses: uses(&module, &text),
                module,
            })
        })
        .collect()
}

#[test]
fn every_module_has_a_layer() {
    let mut missing = BTreeSet::new();
    for s in sources() {
        if unit_of(&s.module).is_none() {
            missing.insert(s.module[0].clone());
        }
    }
    assert!(
        missing.is_empty(),
        "modules with no place in tests/layers.rs LAYERS: {missing:?}; add each where it \
         belongs (lowest first)"
    );
}

#[test]
fn lower_layers_do_not_import_higher_ones() {
    let mut report = String::new();
    let mut used_allowances = BTreeSet::new();
    for s in sources() {
        let Some((from, level)) = unit_of(&s.module) else {
            continue;
        };
        let mut seen = BTreeSet::new();
        for u in &s.uses {
            let Some((to, to_level)) = unit_of(&u.target) else {
                continue; // A crate-root item (`crate::Result`) or an external path.
            };
            if to_level <= level || !seen.insert((to, u.line)) {
                continue;
            }
            if let Some(k) = ALLOWED.iter().position(|(f, t, _)| *f == s.rel && *t == to) {
                used_allowances.insert(k);
                continue;
            }
            let _ = writeln!(
                report,
                "{}:{}: {from} ({}) imports {} ({}), a higher layer",
                s.rel,
                u.line,
                LAYERS[level].0,
                u.target.join("::"),
                LAYERS[to_level].0,
            );
        }
    }
    for (k, (f, t, why)) in ALLOWED.iter().enumerate() {
        if !used_allowances.contains(&k) {
            let _ = writeln!(
                report,
                "ALLOWED entry ({f}, {t}: {why}) is no longer needed: remove it from \
                 tests/layers.rs"
            );
        }
    }
    assert!(
        report.is_empty(),
        "layer order broken (tests/layers.rs LAYERS, lowest first):\n{report}"
    );
}

#[test]
fn files_of_a_module_do_not_import_each_other_in_a_loop() {
    let sources = sources();
    let files: BTreeMap<Vec<String>, &Source> = sources
        .iter()
        .filter(|s| !s.rel.ends_with("/mod.rs"))
        .map(|s| (s.module.clone(), s))
        .collect();
    // Edges between leaf files of one top-level module, with the first line of each.
    let mut edges: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for s in files.values() {
        for u in &s.uses {
            if u.target.first() != s.module.first() {
                continue;
            }
            let target = (1..=u.target.len())
                .rev()
                .find_map(|n| files.get(&u.target[..n]));
            if let Some(t) = target
                && t.rel != s.rel
            {
                edges
                    .entry(s.rel.as_str())
                    .or_default()
                    .entry(t.rel.as_str())
                    .or_insert(u.line);
            }
        }
    }
    let allowed = |a: &str, b: &str| {
        ALLOWED_CYCLES
            .iter()
            .any(|(x, y, _)| (*x == a && *y == b) || (*x == b && *y == a))
    };
    let mut report = String::new();
    let mut used = BTreeSet::new();
    for (a, outs) in &edges {
        for (b, line) in outs {
            // a -> b; is there a way back from b to a?
            let mut stack = vec![*b];
            let mut seen = BTreeSet::new();
            let mut back = false;
            while let Some(n) = stack.pop() {
                if n == *a {
                    back = true;
                    break;
                }
                if seen.insert(n) {
                    stack.extend(edges.get(n).into_iter().flat_map(|m| m.keys().copied()));
                }
            }
            if !back {
                continue;
            }
            if allowed(a, b) {
                used.insert((a.min(b).to_string(), a.max(b).to_string()));
                continue;
            }
            let _ = writeln!(
                report,
                "{a}:{line}: imports {b}, which leads back to {a} (a file cycle)"
            );
        }
    }
    for (x, y, why) in ALLOWED_CYCLES {
        let key = ((*x).min(*y).to_string(), (*x).max(*y).to_string());
        if !used.contains(&key) {
            let _ = writeln!(
                report,
                "ALLOWED_CYCLES entry ({x}, {y}: {why}) is no longer needed: remove it"
            );
        }
    }
    assert!(report.is_empty(), "file cycles inside a module:\n{report}");
}

/// The checker itself finds what it is meant to find.
#[test]
fn the_scanner_reads_use_trees_comments_and_strings() {
    let m = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
    let src = "use crate::{a::b, c::{d, e::f}};\n// crate::zz\nlet s = \"crate::yy\";\n\
               let c = '\"'; fn x<'a>(v: &'a u8) {}\nmod tests { use super::*; use super::super::q::r; }\n\
               crate::g::h(1); super::sib::x();\n";
    let found: Vec<(usize, String)> = uses(&m("top/file"), src)
        .into_iter()
        .map(|u| (u.line, u.target.join("/")))
        .collect();
    let want: Vec<(usize, String)> = [
        (1, "a/b"),
        (1, "c/d"),
        (1, "c/e/f"),
        (5, "top/file"),
        (5, "top/q/r"),
        (6, "g/h"),
        (6, "top/sib/x"),
    ]
    .into_iter()
    .map(|(l, p)| (l, p.to_string()))
    .collect();
    assert_eq!(found, want);
    assert_eq!(unit_of(&m("ipt/compat/x")).map(|u| u.0), Some("ipt/compat"));
    assert_eq!(unit_of(&m("ipt/parse")).map(|u| u.0), Some("ipt"));
    assert!(unit_of(&m("wire/x")).unwrap().1 < unit_of(&m("nft/x")).unwrap().1);
}
