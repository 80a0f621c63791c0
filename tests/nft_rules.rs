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
/// `sh`; `xtnl:FILE.sh` runs the script's commands with xtnl's own iptables front instead
/// (installed as `iptables` and `ip6tables`, nf_tables backend, a private xtables lock).
fn apply(file: &str) {
    if let Some(script) = file.strip_prefix("xtnl:") {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("nft-rules-xtnl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["iptables", "ip6tables"] {
            let link = dir.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(common::xtnl_bin(), &link).unwrap();
        }
        let lock = common::private_lock_path();
        let text = std::fs::read_to_string(ruleset_path(script)).unwrap();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        {
            let mut words = line.split_whitespace();
            let prog = match words.next() {
                Some("iptables-nft") => dir.join("iptables"),
                Some("ip6tables-nft") => dir.join("ip6tables"),
                other => panic!("{script}: unexpected command {other:?}"),
            };
            let args: Vec<&str> = words.collect();
            let out = std::process::Command::new(&prog)
                .args(&args)
                .env("XTNL_BACKEND", "nft")
                .env("XTABLES_LOCKFILE", &lock)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        return;
    }
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
    let mut applied: Option<String> = None;
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
        if ok {
            // The statements stay the ones nft re-applied (its listing of the rebuilt
            // ruleset may drop more); the expressions are the rebuilt ruleset's.
            applied = Some(text.clone());
        } else {
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
    if let Some(applied) = applied {
        // Each rule's statements as nft re-applied them, by place: table, chain, position.
        let json: Value = serde_json::from_str(&applied).unwrap();
        let mut by_place: BTreeMap<(String, String, String), Vec<Value>> = BTreeMap::new();
        for item in json["nftables"].as_array().unwrap() {
            if let Some(rule) = item.get("rule") {
                let k = (
                    rule["family"].as_str().unwrap().to_owned(),
                    rule["table"].as_str().unwrap().to_owned(),
                    rule["chain"].as_str().unwrap().to_owned(),
                );
                by_place.entry(k).or_default().push(rule["expr"].clone());
            }
        }
        let mut seen: BTreeMap<(String, String, String), usize> = BTreeMap::new();
        for r in &mut out {
            let fam = match r.family {
                2 => "ip",
                10 => "ip6",
                _ => "inet",
            };
            let k = (fam.to_owned(), r.table.clone(), r.chain.clone());
            let n = seen.entry(k.clone()).or_default();
            r.nft_expr = by_place[&k][*n].clone();
            *n += 1;
        }
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
    check_encoding("kube.nft", true);
    check_encoding("concat_data.nft", true);
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

/// The same rules written by xtnl's own iptables front (its compat expressions) decode as
/// nft lists them.
#[test]
fn xtnl_iptables_rules_decode_as_nft_lists_them() {
    check_decoding("xtnl:iptables.sh", true);
}

#[test]
fn firewalld_and_kube_rules_decode_as_nft_lists_them_or_are_refused() {
    check_decoding("firewalld.nft", false);
    // Every rule of the kube-like ruleset translates.
    check_decoding("kube.nft", true);
    check_decoding("concat_data.nft", true);
}

/// Every named set and map of the ruleset's ip, ip6 and inet tables: its elements as the
/// kernel holds them decoded must equal its `"elem"` in `nft -j list ruleset`, and nft's
/// `"elem"` encoded must equal the kernel's elements. Returns (sets, equal both ways).
fn check_set_elements() -> (usize, usize, Vec<String>) {
    let json: Value = serde_json::from_str(&run_ok("nft", &["-j", "list", "ruleset"])).unwrap();
    let mut s = session();
    let (mut sets, mut equal, mut bad) = (0, 0, Vec::new());
    for item in json["nftables"].as_array().unwrap() {
        let Some(obj) = item.get("set").or_else(|| item.get("map")) else {
            continue;
        };
        let Some(fam) = family_of(obj["family"].as_str().unwrap()) else {
            continue;
        };
        let table = TableRef::new(fam, obj["table"].as_str().unwrap());
        let name = obj["name"].as_str().unwrap().to_owned();
        let (def, elems) = s
            .read(|r| {
                let def = r.set(&table, &name)?.expect("the set nft lists");
                let elems = r.elements(&table, &name)?;
                Ok((def, elems))
            })
            .unwrap();
        sets += 1;
        let view = SetView::from_def(&def, Vec::new());
        let nft_elem = obj.get("elem").cloned().unwrap_or(Value::Array(Vec::new()));
        let whr = format!("{} set {name}", table.name);
        match xtnl_nft_rules::decode_elements(&view, &elems) {
            Ok(mine) => {
                let mine = serde_json::to_value(&mine).unwrap();
                if mine != nft_elem {
                    bad.push(format!(
                        "{whr}: decoded\n  nft:  {nft_elem}\n  xtnl: {mine}"
                    ));
                    continue;
                }
            }
            Err(e) => {
                bad.push(format!("{whr}: decoding refused: {e}"));
                continue;
            }
        }
        let nft_list: Vec<xtnl_nft_json::Expression> =
            serde_json::from_value(nft_elem.clone()).unwrap();
        match xtnl_nft_rules::encode_elements(&view, &nft_list) {
            Ok(enc) => {
                // Counters and expiry are the kernel's; compare keys, data, flags, timeouts
                // and comments.
                let strip = |v: &[xtnl::wire::set::ElemRepr]| {
                    let mut v: Vec<String> = v
                        .iter()
                        .map(|e| {
                            format!(
                                "{:?} {:?} {:?} {} {:?} {:?}",
                                e.key,
                                e.key_end,
                                e.data,
                                e.flags,
                                e.timeout_ms,
                                e.comment()
                            )
                        })
                        .collect();
                    v.sort();
                    v
                };
                if strip(&enc) != strip(&elems) {
                    bad.push(format!(
                        "{whr}: encoded\n  kernel: {:?}\n  xtnl:   {:?}",
                        strip(&elems),
                        strip(&enc)
                    ));
                    continue;
                }
            }
            Err(e) => {
                bad.push(format!("{whr}: encoding refused: {e}"));
                continue;
            }
        }
        equal += 1;
    }
    (sets, equal, bad)
}

#[test]
fn set_and_map_elements_translate_as_nft_lists_them() {
    in_netns(|| {
        let mut all_bad = Vec::new();
        for file in [
            "netavark.nft",
            "probe.nft",
            "kube.nft",
            "firewalld.nft",
            "concat_data.nft",
        ] {
            run_ok("nft", &["flush", "ruleset"]);
            apply(file);
            let (sets, equal, bad) = check_set_elements();
            eprintln!("{file}: {sets} named sets and maps, {equal} translated both ways");
            for b in &bad {
                eprintln!("  {b}");
            }
            assert!(sets > 0, "{file}: no named sets");
            all_bad.extend(bad);
        }
        assert!(all_bad.is_empty(), "{}", all_bad.join("\n"));
    })
}

/// Bytes as lowercase hex.
fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The kernel's side of each rule (its expressions, and the sets it looks up with their
/// elements, as netlink attributes) next to nft's listing of it: what
/// crates/xtnl-nft-rules/tests/captures/kernel.json holds, for the no-root test
/// `captured_kernel_rules_decode_as_nft_lists_them` there.
fn capture(rules: &[Listed], sets_of: &mut dyn FnMut(&Listed) -> Vec<Value>) -> Vec<Value> {
    use xtnl::wire::attr::AttrWriter;
    rules
        .iter()
        .map(|r| {
            let exprs: Vec<String> = r
                .exprs
                .iter()
                .map(|e| {
                    let (mut b, mut of) = (Vec::new(), false);
                    e.emit(&mut AttrWriter::new(&mut b, &mut of));
                    hex(&b)
                })
                .collect();
            serde_json::json!({
                "family": r.family,
                "table": r.table,
                "chain": r.chain,
                "exprs": exprs,
                "sets": sets_of(r),
                "nft": r.nft_expr,
            })
        })
        .collect()
}

/// Writes the capture when `XTNL_WRITE_CAPTURES=1` (from this kernel and nft), and in every
/// run checks that nft still lists each captured rule as the capture says.
#[test]
fn kernel_captures_are_what_nft_lists() {
    in_netns(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/crates/xtnl-nft-rules/tests/captures/kernel.json"
        );
        let mut out = Vec::new();
        for file in ["netavark.nft", "probe.nft"] {
            let rules = load(file, false);
            let mut s = session();
            let mut sets_of = |r: &Listed| -> Vec<Value> {
                use xtnl::wire::attr::AttrWriter;
                let fam = Family::from_nfproto(r.family).unwrap();
                let table = TableRef::new(fam, r.table.clone());
                let mut v = Vec::new();
                for e in &r.exprs {
                    let Expr::Lookup(l) = e else { continue };
                    let (def, elems) = s
                        .read(|rd| {
                            Ok((
                                rd.set(&table, &l.set)?.unwrap(),
                                rd.elements(&table, &l.set)?,
                            ))
                        })
                        .unwrap();
                    let (mut d, mut of) = (Vec::new(), false);
                    def.emit(&mut AttrWriter::new(&mut d, &mut of));
                    let list = xtnl::wire::set::ElemListRepr {
                        family: r.family,
                        table: r.table.clone(),
                        set: l.set.clone(),
                        set_id: None,
                        elements: elems,
                    };
                    let mut el = Vec::new();
                    list.emit(&mut AttrWriter::new(&mut el, &mut of));
                    v.push(serde_json::json!({"def": hex(&d), "elements": hex(&el)}));
                }
                v
            };
            out.extend(capture(&rules, &mut sets_of));
        }
        let text = serde_json::to_string_pretty(&out).unwrap() + "\n";
        if std::env::var_os("XTNL_WRITE_CAPTURES").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let committed: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(committed.len(), out.len(), "rules captured");
        for (c, o) in committed.iter().zip(&out) {
            assert_eq!(
                c["nft"], o["nft"],
                "nft lists {} {} otherwise now",
                c["table"], c["chain"]
            );
        }
    })
}
