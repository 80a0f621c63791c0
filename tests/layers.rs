//! The layer check, for what cargo cannot see. The bottom layers are crates of their own
//! (crates/: xtnl-sys, xtnl-wire, xtnl-core, xtnl-xt, xtnl-transport, xtnl-host, xtnl-ipt,
//! xtnl-nft-json, xtnl-nft-rules, xtnl-nft, xtnl-policy, xtnl-nft-front, xtnl-seam,
//! xtnl-nathost, xtnl-legacy, xtnl-backend, xtnl-json and xtnl-serve), whose dependencies
//! cargo enforces;
//! inside the root package `xtnl`, dependencies between modules point one way, lowest first,
//! as [`LAYERS`] lists them; no two units import each other (directly or round a longer loop),
//! within a layer too; no two files of one module import each other in a loop, in every crate
//! of the workspace and with `mod.rs`/`lib.rs` files included; and every unit of [`LAYERS`]
//! has source.
//!
//! It reads `src/**/*.rs` and `crates/*/src/**/*.rs` as text (comments and string literals
//! blanked out), finds every path that starts with `crate::` (use trees with `{...}` groups
//! included) or climbs out of a file with `super::`, and resolves it to the file and unit it
//! names; a name that a `mod.rs` (or a crate's `lib.rs`) re-exports from a child module
//! (`pub use addr::IpNet;`) resolves to the child's file. A unit is a top-level module of the
//! root package, or a file or folder inside one that sits at another layer than its parent.
//! Needs no root and no kernel.
//!
//! Known violations in files that other branches are rewriting are listed in [`ALLOWED`],
//! [`ALLOWED_CYCLES`] and [`ALLOWED_UNIT_CYCLES`] with their reason; an entry that is no
//! longer needed fails the test too, so the lists only shrink.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The layers of the root package, lowest first (the crates under crates/ are below all of
/// them: cargo keeps those in order). A unit may import units of its own layer or of lower
/// ones. Units are paths under `src/` without `.rs`; a file belongs to the longest unit that
/// is a prefix of its module path.
const LAYERS: &[(&str, &[&str])] = &[
    // The iptables syntax is the xtnl-ipt crate; `ipt` here is src/ipt/mod.rs, which
    // re-exports it (a path through it names the crate, below every layer of this list).
    // The seam (with nf_tables' `ipt::{exec, restore}`) is the xtnl-seam crate, re-exported
    // the same way; the NAT-host operations are the xtnl-nathost crate, the x_tables backend
    // the xtnl-legacy crate; the backend choice, the JSON front and serve are xtnl-backend,
    // xtnl-json and xtnl-serve.
    ("ipt syntax", &["ipt"]),
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
        "crates/xtnl-legacy/src/abi.rs",
        "crates/xtnl-legacy/src/blob.rs",
        "abi.rs checks blob.rs's sizes at compile time, blob.rs uses abi.rs's structs",
    ),
    (
        "crates/xtnl-legacy/src/abi.rs",
        "crates/xtnl-legacy/src/sockopt.rs",
        "abi.rs checks sockopt.rs's sizes at compile time, sockopt.rs uses abi.rs's offsets",
    ),
    (
        "crates/xtnl-legacy/src/sockopt.rs",
        "crates/xtnl-legacy/src/blob.rs",
        "the loop runs through abi.rs, which checks both files' sizes at compile time",
    ),
];

/// Known unit cycles (inside one layer): (unit, unit, reason).
const ALLOWED_UNIT_CYCLES: &[(&str, &str, &str)] = &[];

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
    // `path as alias`: the alias names nothing new to resolve.
    let mut k = *i;
    if ident(b, &mut k).as_deref() == Some("as") && ident(b, &mut k).is_some() {
        *i = k;
    }
    out.push(p);
}

struct Use {
    line: usize,
    target: Vec<String>,
}

/// Every module path the file's code names through `crate::` or `super::`. `root` is the
/// module path of the file's crate root (`[]` for the root package, `[xtnl-wire]` for a
/// crate under crates/), which `crate::` paths start from.
fn uses(root: &[String], module: &[String], src: &str) -> Vec<Use> {
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
            paths(b, &mut i, root, &mut out);
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
    if m.last().is_some_and(|l| l == "mod" || l == "lib") {
        m.pop();
    }
    m
}

/// What a `mod.rs` or a crate's `lib.rs` re-exports from its child modules, as (the name
/// under the module, the path it stands for): `pub use addr::{IpNet, PortRange};` in
/// `model/mod.rs` gives `model::IpNet -> model::addr::IpNet`. Only `use` items at the top
/// level of the file whose path starts at a child module (`mod addr;`) or `self::`.
fn reexports(module: &[String], src: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let code = code_only(src);
    let b = code.as_bytes();
    let mut children = BTreeSet::new();
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':');
        match b[i] {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ if depth == 0 && boundary && b[i..].starts_with(b"mod ") => {
                let mut j = i + 4;
                if let Some(name) = ident(b, &mut j)
                    && eat(b, &mut j, b";")
                {
                    children.insert(name);
                }
            }
            _ if depth == 0 && boundary && b[i..].starts_with(b"use ") => {
                let mut j = i + 4;
                eat(b, &mut j, b"self::");
                let mut out = Vec::new();
                paths(b, &mut j, &[], &mut out);
                items.extend(out);
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    items
        .into_iter()
        .filter(|p| p.len() > 1 && children.contains(&p[0]))
        .map(|p| {
            let mut key = module.to_vec();
            key.push(p.last().expect("two segments").clone());
            let mut target = module.to_vec();
            target.extend(p);
            (key, target)
        })
        .collect()
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
    /// The crate under crates/ the file belongs to; `None` in the root package.
    krate: Option<String>,
    module: Vec<String>,
    uses: Vec<Use>,
    reexports: Vec<(Vec<String>, Vec<String>)>,
}

/// The names a crate's `lib.rs` gives its own root (`use crate as ipt;`: xtnl-ipt's files
/// kept the `crate::ipt::` paths they had in the root package).
fn root_aliases(lib_rs: &str) -> Vec<String> {
    let code = code_only(lib_rs);
    let b = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("use crate as ") {
        let mut j = i + p + "use crate as ".len();
        if let Some(name) = ident(b, &mut j)
            && eat(b, &mut j, b";")
        {
            found.push(name);
        }
        i = j;
    }
    found
}

/// `crate::ALIAS::x` in a crate whose root is also named ALIAS is `crate::x`.
fn strip_root_alias(root: &[String], aliases: &[String], target: &mut Vec<String>) {
    if !root.is_empty()
        && target.len() > root.len()
        && target.starts_with(root)
        && aliases.contains(&target[root.len()])
    {
        target.remove(root.len());
    }
}

/// One crate's files: `dir` is its src/, `root` the module path of its crate root.
fn crate_sources(dir: &Path, rel_dir: &str, root: &[String], out: &mut Vec<Source>) {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let aliases = if root.is_empty() {
        Vec::new()
    } else {
        root_aliases(&std::fs::read_to_string(dir.join("lib.rs")).expect("the crate's lib.rs"))
    };
    for p in files {
        let rel = p.strip_prefix(dir).expect("under src").to_path_buf();
        let in_root_package = root.is_empty();
        // The root package's crate roots: lib.rs declares the modules and re-exports the
        // crates under crates/, main.rs and src/bin/ are the binaries' crates.
        if in_root_package
            && (rel == Path::new("lib.rs") || rel == Path::new("main.rs") || rel.starts_with("bin"))
        {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("source file");
        let mut module = root.to_vec();
        module.extend(module_of(&rel));
        let is_parent = rel.ends_with("mod.rs") || rel == Path::new("lib.rs");
        let mut found = uses(root, &module, &text);
        for u in &mut found {
            strip_root_alias(root, &aliases, &mut u.target);
        }
        out.push(Source {
            rel: format!("{rel_dir}/{}", rel.display()),
            krate: root.first().cloned(),
            uses: found,
            reexports: if is_parent {
                reexports(&module, &text)
            } else {
                Vec::new()
            },
            module,
        });
    }
}

/// Every file of the workspace: the root package's `src/` and each `crates/*/src/`.
fn sources() -> Vec<Source> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    crate_sources(&top.join("src"), "src", &[], &mut out);
    let mut crates: Vec<PathBuf> = std::fs::read_dir(top.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    assert!(!crates.is_empty(), "no crates under crates/");
    for c in crates {
        let name = c.file_name().expect("name").to_string_lossy().into_owned();
        crate_sources(
            &c.join("src"),
            &format!("crates/{name}/src"),
            std::slice::from_ref(&name),
            &mut out,
        );
    }
    out
}

/// The file a path names: the longest prefix that is a file's module, after following
/// re-exports of `mod.rs`/`lib.rs` files.
fn resolve<'a>(
    files: &BTreeMap<Vec<String>, &'a Source>,
    reexported: &BTreeMap<Vec<String>, Vec<String>>,
    target: &[String],
    hops: usize,
) -> Option<&'a Source> {
    for n in (1..=target.len()).rev() {
        if hops < 8
            && let Some(to) = reexported.get(&target[..n])
        {
            let mut to = to.clone();
            to.extend_from_slice(&target[n..]);
            return resolve(files, reexported, &to, hops + 1);
        }
        if let Some(s) = files.get(&target[..n]) {
            return Some(s);
        }
    }
    None
}

/// Edges of `from -> to` with the first line of each, and the pairs of `edges` that lie on a
/// loop (`a -> b` where `b` leads back to `a`).
fn on_a_loop<'a>(
    edges: &BTreeMap<&'a str, BTreeMap<&'a str, usize>>,
) -> Vec<(&'a str, &'a str, usize)> {
    let mut found = Vec::new();
    for (a, outs) in edges {
        for (b, line) in outs {
            let mut stack = vec![*b];
            let mut seen = BTreeSet::new();
            while let Some(n) = stack.pop() {
                if n == *a {
                    found.push((*a, *b, *line));
                    break;
                }
                if seen.insert(n) {
                    stack.extend(edges.get(n).into_iter().flat_map(|m| m.keys().copied()));
                }
            }
        }
    }
    found
}

#[test]
fn every_module_has_a_layer_and_every_unit_has_source() {
    let sources = sources();
    let mut missing = BTreeSet::new();
    for s in sources.iter().filter(|s| s.krate.is_none()) {
        if unit_of(&s.module).is_none() {
            missing.insert(s.module[0].clone());
        }
    }
    let empty: Vec<&str> = LAYERS
        .iter()
        .flat_map(|(_, units)| units.iter().copied())
        .filter(|u| {
            !sources
                .iter()
                .any(|s| s.krate.is_none() && unit_of(&s.module).is_some_and(|(v, _)| v == *u))
        })
        .collect();
    assert!(
        missing.is_empty() && empty.is_empty(),
        "modules with no place in tests/layers.rs LAYERS: {missing:?} (add each where it \
         belongs, lowest first); units of LAYERS with no source file: {empty:?} (remove them)"
    );
}

#[test]
fn lower_layers_do_not_import_higher_ones() {
    let mut report = String::new();
    let mut used_allowances = BTreeSet::new();
    for s in sources().iter().filter(|s| s.krate.is_none()) {
        let Some((from, level)) = unit_of(&s.module) else {
            continue;
        };
        let mut seen = BTreeSet::new();
        for u in &s.uses {
            let Some((to, to_level)) = unit_of(&u.target) else {
                continue; // A crate-root item (`crate::Result`), a crate of crates/ or external.
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

/// Every file by its module path (a `mod.rs` or `lib.rs` by its folder's or crate's), and
/// every name a `mod.rs`/`lib.rs` re-exports from a child.
#[allow(clippy::type_complexity)]
fn index(
    sources: &[Source],
) -> (
    BTreeMap<Vec<String>, &Source>,
    BTreeMap<Vec<String>, Vec<String>>,
) {
    let files = sources.iter().map(|s| (s.module.clone(), s)).collect();
    let reexported = sources
        .iter()
        .flat_map(|s| s.reexports.iter().cloned())
        .collect();
    (files, reexported)
}

#[test]
fn files_of_a_module_do_not_import_each_other_in_a_loop() {
    let sources = sources();
    let (files, reexported) = index(&sources);
    // Edges between files of one top-level module of the root package, or of one crate
    // under crates/ (mod.rs and lib.rs included), with the first line of each.
    let mut edges: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for s in &sources {
        for u in &s.uses {
            if u.target.first() != s.module.first() {
                continue;
            }
            if let Some(t) = resolve(&files, &reexported, &u.target, 0)
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
    for (a, b, line) in on_a_loop(&edges) {
        if allowed(a, b) {
            used.insert((a.min(b).to_string(), a.max(b).to_string()));
            continue;
        }
        let _ = writeln!(
            report,
            "{a}:{line}: imports {b}, which leads back to {a} (a file cycle)"
        );
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

/// Units import each other in one direction only, also when they share a layer (the order
/// check lets a unit import its own layer; a loop there is still a knot).
#[test]
fn units_do_not_import_each_other_in_a_loop() {
    let sources = sources();
    let mut edges: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut first_file: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for s in sources.iter().filter(|s| s.krate.is_none()) {
        let Some((from, _)) = unit_of(&s.module) else {
            continue;
        };
        for u in &s.uses {
            let Some((to, _)) = unit_of(&u.target) else {
                continue;
            };
            if to != from {
                edges.entry(from).or_default().entry(to).or_insert(u.line);
                first_file
                    .entry((from, to))
                    .or_insert_with(|| format!("{}:{}", s.rel, u.line));
            }
        }
    }
    let allowed = |a: &str, b: &str| {
        ALLOWED_UNIT_CYCLES
            .iter()
            .any(|(x, y, _)| (*x == a && *y == b) || (*x == b && *y == a))
    };
    let mut report = String::new();
    let mut used = BTreeSet::new();
    for (a, b, _) in on_a_loop(&edges) {
        if allowed(a, b) {
            used.insert((a.min(b).to_string(), a.max(b).to_string()));
            continue;
        }
        let _ = writeln!(
            report,
            "{}: unit {a} imports unit {b}, which leads back to {a} (a unit cycle)",
            first_file[&(a, b)]
        );
    }
    for (x, y, why) in ALLOWED_UNIT_CYCLES {
        let key = ((*x).min(*y).to_string(), (*x).max(*y).to_string());
        if !used.contains(&key) {
            let _ = writeln!(
                report,
                "ALLOWED_UNIT_CYCLES entry ({x}, {y}: {why}) is no longer needed: remove it"
            );
        }
    }
    assert!(report.is_empty(), "unit cycles:\n{report}");
}

/// The checker itself finds what it is meant to find.
#[test]
fn the_scanner_reads_use_trees_comments_and_strings() {
    let m = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
    let src = "use crate::{a::b, c::{d, e::f}};\n// crate::zz\nlet s = \"crate::yy\";\n\
               let c = '\"'; fn x<'a>(v: &'a u8) {}\nmod tests { use super::*; use super::super::q::r; }\n\
               crate::g::h(1); super::sib::x();\n";
    let found: Vec<(usize, String)> = uses(&[], &m("top/file"), src)
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
    assert_eq!(unit_of(&m("cli/dropin")).map(|u| u.0), Some("cli"));
    assert_eq!(unit_of(&m("ipt/parse")).map(|u| u.0), Some("ipt"));
    assert!(unit_of(&m("ipt/x")).unwrap().1 < unit_of(&m("cli/x")).unwrap().1);
    assert_eq!(
        unit_of(&m("seam/x")),
        None,
        "a crate under crates/, not a unit"
    );
    assert_eq!(
        unit_of(&m("legacy/x")),
        None,
        "a crate under crates/, not a unit"
    );
    assert_eq!(
        unit_of(&m("nathost/x")),
        None,
        "a crate under crates/, not a unit"
    );
    assert_eq!(
        unit_of(&m("transport/x")),
        None,
        "a crate under crates/, not a unit"
    );
    // A crate under crates/: `crate::` starts at the crate, `super::` climbs inside it, an
    // alias is skipped, and a re-export from a child resolves to the child.
    let found: Vec<String> = uses(
        &m("xtnl-x"),
        &m("xtnl-x/a/b"),
        "use crate::c::D as E; use super::f;",
    )
    .into_iter()
    .map(|u| u.target.join("/"))
    .collect();
    assert_eq!(found, ["xtnl-x/c/D", "xtnl-x/a/f"]);
    // A crate's name for its own root (`use crate as old;`) is dropped from its paths.
    let aliases = root_aliases("//! use crate as no;\nuse crate as old;\nuse other as x;\n");
    assert_eq!(aliases, ["old"]);
    let mut t = m("xtnl-x/old/parse/f");
    strip_root_alias(&m("xtnl-x"), &aliases, &mut t);
    assert_eq!(t.join("/"), "xtnl-x/parse/f");
    let mut t = m("old/parse");
    strip_root_alias(&[], &aliases, &mut t);
    assert_eq!(t.join("/"), "old/parse", "the root package has no alias");
    let rex = reexports(
        &m("xtnl-x/a"),
        "mod b;\npub mod c;\npub use b::{B, Bb};\npub use self::c::C;\nuse std::io;\n\
         fn f() { use b::Hidden; }\n",
    );
    let rex: Vec<(String, String)> = rex
        .into_iter()
        .map(|(k, v)| (k.join("/"), v.join("/")))
        .collect();
    let want: Vec<(String, String)> = [
        ("xtnl-x/a/B", "xtnl-x/a/b/B"),
        ("xtnl-x/a/Bb", "xtnl-x/a/b/Bb"),
        ("xtnl-x/a/C", "xtnl-x/a/c/C"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(rex, want);
}
