//! decode_rule on captured kernel bytes, without root: tests/captures/kernel.json holds, for
//! each rule of the netavark-like and probe rulesets, the expressions and the sets it looks up
//! (definitions and elements, as netlink attributes) as the kernel listed them (parsed by
//! xtnl's reader and written back with `emit`: a typed expression's attributes in xtnl's
//! order, a raw one's byte for byte), next to the
//! rule's statements as nft 1.0.6 listed them (`nft -j list ruleset`). Written by the root
//! test `kernel_captures_are_what_nft_lists` (tests/nft_rules.rs) with
//! `XTNL_WRITE_CAPTURES=1`, which checks in every run that nft still lists each rule so.

use std::collections::BTreeMap;

use serde_json::Value;
use xtnl_nft_json::Statement;
use xtnl_nft_rules::{SetView, decode_rule, encode_rule};
use xtnl_wire::attr::Attrs;
use xtnl_wire::expr::Expr;
use xtnl_wire::set::{ElemListRepr, SetDefRepr};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The rule's expressions: each capture is one `NFTA_LIST_ELEM` body.
fn exprs(rule: &Value) -> Vec<Expr> {
    rule["exprs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Expr::parse(&unhex(h.as_str().unwrap())).unwrap())
        .collect()
}

fn sets(rule: &Value) -> BTreeMap<String, SetView> {
    let fam = rule["family"].as_u64().unwrap() as u8;
    let mut out = BTreeMap::new();
    for s in rule["sets"].as_array().unwrap() {
        let def = SetDefRepr::parse(fam, &unhex(s["def"].as_str().unwrap())).unwrap();
        let elems = ElemListRepr::parse(fam, &unhex(s["elements"].as_str().unwrap())).unwrap();
        let anon = def.flags & xtnl_wire::set::flags::ANONYMOUS != 0;
        let view = SetView::from_def(&def, if anon { elems.elements } else { Vec::new() });
        out.insert(def.name.clone(), view);
    }
    out
}

fn captures() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/captures/kernel.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn captured_kernel_rules_decode_as_nft_lists_them() {
    let rules = captures();
    assert!(rules.len() >= 19 + 72, "{} rules captured", rules.len());
    for r in &rules {
        let fam = r["family"].as_u64().unwrap() as u8;
        let got = decode_rule(fam, &exprs(r), &sets(r))
            .unwrap_or_else(|e| panic!("{} {}: {e}", r["table"], r["chain"]));
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            r["nft"],
            "{} {}",
            r["table"],
            r["chain"]
        );
    }
    // The captured bytes really are attributes (not re-encoded by this test).
    let first = unhex(rules[0]["exprs"][0].as_str().unwrap());
    assert!(Attrs::new(&first).all(|a| a.is_ok()));
}

#[test]
fn nft_statements_encode_to_the_captured_expressions() {
    // A rule whose listing nft cannot turn back into the same expressions (it drops a
    // dependency the rule spelled out) is compared in tests/nft_rules.rs against what nft
    // makes of its own listing; here every captured rule must encode to its captured
    // expressions except those.
    let (mut equal, mut other) = (0, Vec::new());
    for r in captures() {
        let fam = r["family"].as_u64().unwrap() as u8;
        let stmts: Vec<Statement> = serde_json::from_value(r["nft"].clone()).unwrap();
        let sets = sets(&r);
        let mut enc = encode_rule(fam, &stmts, &sets).unwrap();
        let mut kernel = exprs(&r);
        for e in kernel.iter_mut().chain(enc.exprs.iter_mut()) {
            if let Expr::Lookup(l) = e {
                if l.set.starts_with("__") {
                    l.set = "anonymous".into();
                    l.set_id = None;
                }
            }
        }
        if kernel == enc.exprs {
            equal += 1;
        } else {
            other.push(format!("{} {}: {}", r["table"], r["chain"], r["nft"]));
        }
    }
    // Seven rules whose listing drops a dependency the rule spelled out, so that nft itself
    // makes other expressions of the listing (tests/nft_rules.rs compares those with what
    // nft makes of its listing): `meta l4proto icmp icmp type echo-request` (netavark, inet:
    // nft's own encoding adds `meta nfproto ipv4`), `meta nfproto ipv4 reject with tcp reset`
    // (t7, inet), `meta l4proto tcp ip saddr ... tcp dport 22` (e1, inet: the order of the
    // dependencies differs), `ip protocol tcp tcp dport 22` and `ip protocol udp meta l4proto
    // udp udp dport 53` (e2, ip), `ip6 nexthdr tcp tcp dport 22` and `ip6 nexthdr ipv6-icmp
    // icmpv6 type echo-request` (e3, ip6).
    let expected = [
        ("\"netavark\"", "echo-request"),
        ("\"t7\"", "tcp reset"),
        ("\"e1\"", "192.0.2.1"),
        ("\"e2\"", "\"right\":22"),
        ("\"e2\"", "\"right\":53"),
        ("\"e3\"", "\"right\":22"),
        ("\"e3\"", "echo-request"),
    ];
    assert_eq!(other.len(), expected.len(), "{}", other.join("\n"));
    for (o, (table, what)) in other.iter().zip(expected) {
        assert!(o.starts_with(table) && o.contains(what), "{o}");
    }
    assert_eq!(equal + expected.len(), captures().len());
}
