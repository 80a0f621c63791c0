//! The nft rule codec (crates/xtnl-nft-rules) against the real nft, differentially: rulesets
//! written by `nft -f` in a scratch namespace; for every rule, the kernel's expressions (read
//! by xtnl's reader) decoded with `decode_rule` must equal that rule's statements in `nft -j
//! list ruleset` (as `serde_json::Value`), and `encode_rule` of nft's statements must give
//! the expressions the kernel holds for nft's rule (anonymous sets compared by content).
//! A rule the codec refuses must be refused with a `RuleError`, never translated wrongly; the
//! netavark-like ruleset (issue 26's "done when") must translate fully both ways.

mod common;

use std::collections::BTreeMap;

use common::{in_netns, run_ok};
use serde_json::Value;
use xtnl::model::Family;
use xtnl::nft::{Session, TableRef};
use xtnl::wire::expr::Expr;
use xtnl_nft_json::Statement;
use xtnl_nft_rules::{SetView, decode_rule, encode_rule};

fn session() -> Session {
    Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .expect("open netlink session")
}

fn ruleset_path(name: &str) -> String {
    let top = env!("CARGO_MANIFEST_DIR");
    for dir in [
        "crates/xtnl-nft-json/tests/rulesets",
        "crates/xtnl-nft-rules/tests/rulesets",
    ] {
        let p = format!("{top}/{dir}/{name}");
        if std::path::Path::new(&p).exists() {
            return p;
        }
    }
    panic!("no ruleset {name}")
}

/// Writes a ruleset: an nft file with `nft -f`, a shell script (iptables-nft commands) with
/// `sh`.
fn apply(file: &str) {
    if file.ends_with(".sh") {
        run_ok("sh", &["-e", &ruleset_path(file)]);
    } else {
        run_ok("nft", &["-f", &ruleset_path(file)]);
    }
}

/// One rule as nft lists it and as the kernel holds it.
struct Listed {
    family: u8,
    table: String,
    chain: String,
    handle: u64,
    nft_expr: Value,
    exprs: Vec<Expr>,
    sets: BTreeMap<String, SetView>,
}

fn family_of(name: &str) -> Option<Family> {
    match name {
        "ip" => Some(Family::Ipv4),
        "ip6" => Some(Family::Ipv6),
        "inet" => Some(Family::Inet),
        _ => None,
    }
}

/// Applies `file` with nft and reads back every rule of the ip, ip6 and inet tables. With
/// `reapply`, the ruleset is then rebuilt from nft's own JSON listing of it with `nft -j -f`
/// (when nft can: see docs/nft-json.md), so that each rule's expressions are what nft makes
/// of the JSON statements listed for it (a listing can leave out a dependency the original
/// rule spelled out, as `meta nfproto ipv4` before `reject with tcp reset` in an inet table).
fn load(file: &str, reapply: bool) -> Vec<Listed> {
    run_ok("nft", &["flush", "ruleset"]);
    apply(file);
    let mut text = run_ok("nft", &["-j", "list", "ruleset"]);
    if reapply {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("xtnl-nft-rules-{}-{file}.json", std::process::id()));
        std::fs::write(&path, &text).unwrap();
        run_ok("nft", &["flush", "ruleset"]);
        let ok = std::process::Command::new("nft")
            .args(["-j", "-f", path.to_str().unwrap()])
            .output()
            .unwrap()
            .status
            .success();
        let _ = std::fs::remove_file(&path);
        if !ok {
            eprintln!("{file}: nft cannot re-apply its own JSON; comparing with the original");
            run_ok("nft", &["flush", "ruleset"]);
            apply(file);
        }
        text = run_ok("nft", &["-j", "list", "ruleset"]);
    }
    let json: Value = serde_json::from_str(&text).unwrap();
    let mut s = session();
    let mut out = Vec::new();
    for item in json["nftables"].as_array().unwrap() {
        let Some(rule) = item.get("rule") else {
            continue;
        };
        let Some(fam) = family_of(rule["family"].as_str().unwrap()) else {
            continue;
        };
        let table = TableRef::new(fam, rule["table"].as_str().unwrap());
        let handle = rule["handle"].as_u64().unwrap();
        let (raw, sets) = s
            .read(|r| {
                let raw = r.raw_rules(&table, None)?;
                let rule = raw
                    .into_iter()
                    .find(|x| x.handle == handle)
                    .expect("rule by handle");
                let mut sets = BTreeMap::new();
                for def in r.sets(&table)? {
                    sets.insert(def.name.clone(), SetView::from_def(&def, Vec::new()));
                }
                for e in &rule.exprs {
                    if let Expr::Lookup(l) = e {
                        let def = r.set(&table, &l.set)?.expect("the set a rule looks up");
                        let elems = if def.flags & xtnl::wire::set::flags::ANONYMOUS != 0 {
                            r.elements(&table, &l.set)?
                        } else {
                            Vec::new()
                        };
                        sets.insert(l.set.clone(), SetView::from_def(&def, elems));
                    }
                }
                Ok((rule, sets))
            })
            .unwrap();
        out.push(Listed {
            family: fam.nfproto(),
            table: table.name.clone(),
            chain: rule["chain"].as_str().unwrap().to_owned(),
            handle,
            nft_expr: rule["expr"].clone(),
            exprs: raw.exprs,
            sets,
        });
    }
    out
}

/// Decodes every rule: (equal, refused, wrong) with the details of each wrong one.
fn decode_all(rules: &[Listed]) -> (usize, Vec<String>, Vec<String>) {
    let (mut equal, mut refused, mut wrong) = (0, Vec::new(), Vec::new());
    for r in rules {
        let whr = format!("{} {} handle {}", r.table, r.chain, r.handle);
        match decode_rule(r.family, &r.exprs, &r.sets) {
            Ok(stmts) => {
                let mine = serde_json::to_value(&stmts).unwrap();
                if mine == r.nft_expr {
                    equal += 1;
                } else {
                    wrong.push(format!("{whr}:\n  nft:  {}\n  xtnl: {mine}", r.nft_expr));
                }
            }
            Err(e) => refused.push(format!("{whr}: {e}")),
        }
    }
    (equal, refused, wrong)
}

fn check_decoding(file: &str, must_be_complete: bool) {
    in_netns({
        let file = file.to_owned();
        move || {
            let rules = load(&file, false);
            assert!(!rules.is_empty(), "{file}: no rules listed");
            let (equal, refused, wrong) = decode_all(&rules);
            eprintln!(
                "{file}: {} rules: {equal} decoded as nft lists them, {} refused, {} wrong",
                rules.len(),
                refused.len(),
                wrong.len()
            );
            for r in &refused {
                eprintln!("  refused: {r}");
            }
            assert!(
                wrong.is_empty(),
                "{file}: decoded differently from nft:\n{}",
                wrong.join("\n")
            );
            if must_be_complete {
                assert!(
                    refused.is_empty(),
                    "{file}: refused:\n{}",
                    refused.join("\n")
                );
            }
        }
    })
}

/// The elements of a set, comparable whatever their order.
fn elem_keys(elems: &[xtnl::wire::set::ElemRepr]) -> Vec<String> {
    let mut v: Vec<String> = elems
        .iter()
        .map(|e| format!("{:?} {:?} {:?} {}", e.key, e.key_end, e.data, e.flags))
        .collect();
    v.sort();
    v
}

/// Encodes every rule from nft's statements: (equal, refused, wrong).
fn encode_all(rules: &[Listed]) -> (usize, Vec<String>, Vec<String>) {
    let (mut equal, mut refused, mut wrong) = (0, Vec::new(), Vec::new());
    for r in rules {
        let whr = format!("{} {} handle {}", r.table, r.chain, r.handle);
        let stmts: Vec<Statement> = serde_json::from_value(r.nft_expr.clone()).unwrap();
        let enc = match encode_rule(r.family, &stmts, &r.sets) {
            Ok(e) => e,
            Err(e) => {
                refused.push(format!("{whr}: {e}"));
                continue;
            }
        };
        // Anonymous sets: the kernel names them (__set0); compare them by content.
        let mut kernel = r.exprs.clone();
        let mut mine = enc.exprs.clone();
        let mut diffs = Vec::new();
        let mut anon_k = Vec::new();
        for e in &mut kernel {
            if let Expr::Lookup(l) = e {
                if let Some(s) = r.sets.get(&l.set).filter(|s| s.is_anonymous()) {
                    anon_k.push((s.flags, s.key.clone(), elem_keys(&s.elements)));
                    l.set = "anonymous".into();
                    l.set_id = None;
                }
            }
        }
        let mut anon_m = Vec::new();
        for e in &mut mine {
            if let Expr::Lookup(l) = e {
                if let Some(id) = l.set_id {
                    let a = &enc.anon_sets[id as usize];
                    anon_m.push((
                        a.def.flags,
                        xtnl_nft_rules::DataType::unpack(a.def.key_type),
                        elem_keys(&a.elements),
                    ));
                    l.set = "anonymous".into();
                    l.set_id = None;
                }
            }
        }
        if kernel != mine {
            diffs.push(format!("  kernel: {kernel:?}\n  xtnl:   {mine:?}"));
        }
        if anon_k != anon_m {
            diffs.push(format!(
                "  kernel sets: {anon_k:?}\n  xtnl sets:   {anon_m:?}"
            ));
        }
        if diffs.is_empty() {
            equal += 1;
        } else {
            wrong.push(format!("{whr}:\n{}", diffs.join("\n")));
        }
    }
    (equal, refused, wrong)
}

fn check_encoding(file: &str, must_be_complete: bool) {
    in_netns({
        let file = file.to_owned();
        move || {
            let rules = load(&file, true);
            let (equal, refused, wrong) = encode_all(&rules);
            eprintln!(
                "{file}: {} rules: {equal} encoded as nft encodes them, {} refused, {} wrong",
                rules.len(),
                refused.len(),
                wrong.len()
            );
            for r in &refused {
                eprintln!("  refused: {r}");
            }
            assert!(
                wrong.is_empty(),
                "{file}: encoded differently from nft:\n{}",
                wrong.join("\n")
            );
            if must_be_complete {
                assert!(
                    refused.is_empty(),
                    "{file}: refused:\n{}",
                    refused.join("\n")
                );
            }
        }
    })
}

#[test]
fn netavark_rules_encode_as_nft_encodes_them() {
    check_encoding("netavark.nft", true);
}

#[test]
fn probe_rules_encode_as_nft_encodes_them() {
    check_encoding("probe.nft", true);
}

#[test]
fn firewalld_and_kube_rules_encode_as_nft_encodes_them_or_are_refused() {
    check_encoding("firewalld.nft", false);
    check_encoding("kube.nft", false);
}

#[test]
fn netavark_rules_decode_as_nft_lists_them() {
    check_decoding("netavark.nft", true);
}

#[test]
fn probe_rules_decode_as_nft_lists_them() {
    check_decoding("probe.nft", true);
}

/// Rules written by iptables-nft (native expressions and x_tables compat matches and
/// targets) decode as nft lists them, `{"xt": ...}` included.
#[test]
fn iptables_nft_rules_decode_as_nft_lists_them() {
    check_decoding("iptables.sh", true);
}

#[test]
fn firewalld_and_kube_rules_decode_as_nft_lists_them_or_are_refused() {
    check_decoding("firewalld.nft", false);
    check_decoding("kube.nft", false);
}
