//! xtnl(8)'s ENVIRONMENT section names every environment variable xtnl reads (no root
//! needed): each is a `NAME_ENV: &str = "..."` constant in src/ or a workspace crate's
//! src/ (crates/*/src: the backend choice, serve and the host crate read them; XTNL_LOCK_WAIT
//! was missing from the page).

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("read source");
            out.push((path.display().to_string(), text));
        }
    }
}

#[test]
fn the_man_page_environment_names_every_variable_xtnl_reads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates")).expect("read crates") {
        let src = krate.expect("entry").path().join("src");
        if src.is_dir() {
            sources(&src, &mut files);
        }
    }
    let mut vars = Vec::new();
    for (path, text) in &files {
        // The test harness's switch (src/scratch.rs, shared with tests/common) is not
        // something xtnl reads.
        if path.ends_with("scratch.rs") {
            continue;
        }
        for line in text.lines() {
            if let Some((_, rest)) = line.split_once("_ENV: &str = \"")
                && let Some((name, _)) = rest.split_once('"')
            {
                vars.push((name.to_string(), path.clone()));
            }
        }
    }
    assert!(
        vars.iter().any(|(v, _)| v == "XTNL_BACKEND"),
        "the scan finds the constants: {vars:?}"
    );
    let page = std::fs::read_to_string(root.join("docs/man/xtnl.8")).expect("xtnl.8");
    let env = page
        .split_once(".SH ENVIRONMENT")
        .expect("an ENVIRONMENT section")
        .1
        .split("\n.SH ")
        .next()
        .unwrap_or_default();
    let missing: Vec<String> = vars
        .iter()
        .filter(|(v, _)| !env.contains(&format!(".B {v}\n")))
        .map(|(v, p)| format!("{v} ({p})"))
        .collect();
    assert!(missing.is_empty(), "xtnl(8) ENVIRONMENT lacks: {missing:?}");
}
