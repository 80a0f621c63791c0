//! decode(encode(x)) == x on a corpus: every rule of the JSON that the real `nft -j list
//! ruleset` printed for the netavark-, firewalld- and kube-proxy-like rulesets
//! (crates/xtnl-nft-json/tests/captures/, captured from nft 1.0.6) that `encode_rule` accepts
//! must decode back to exactly nft's statements; a rule it refuses is refused with a message
//! naming the statement. No root and no kernel needed.

use std::collections::BTreeMap;

use serde_json::Value;
use xtnl_nft_json::Statement;
use xtnl_nft_rules::{DataType, SetView, decode_rule, encode_rule};
use xtnl_wire::expr::Expr;
use xtnl_wire::nftables::nfproto;
use xtnl_wire::set::flags;

fn family(name: &str) -> Option<u8> {
    match name {
        "ip" => Some(nfproto::IPV4),
        "ip6" => Some(nfproto::IPV6),
        "inet" => Some(nfproto::INET),
        _ => None,
    }
}

fn types(v: &Value) -> Option<Vec<DataType>> {
    match v {
        Value::String(s) => Some(vec![DataType::from_name(s)?]),
        Value::Array(a) => a
            .iter()
            .map(|t| t.as_str().and_then(DataType::from_name))
            .collect(),
        _ => None,
    }
}

/// The named sets of the capture as the codec sees them, by (table, name).
fn named_sets(items: &[Value]) -> BTreeMap<(String, String), SetView> {
    let mut out = BTreeMap::new();
    for it in items {
        let (s, is_map) = match (it.get("set"), it.get("map")) {
            (Some(s), _) => (s, false),
            (_, Some(m)) => (m, true),
            _ => continue,
        };
        let Some(key) = types(&s["type"]) else {
            continue;
        };
        let mut f = 0;
        for fl in s["flags"].as_array().into_iter().flatten() {
            f |= match fl.as_str() {
                Some("interval") => flags::INTERVAL,
                Some("timeout") => flags::TIMEOUT,
                Some("dynamic") => flags::EVAL,
                Some("constant") => flags::CONSTANT,
                _ => 0,
            };
        }
        let data = if is_map {
            f |= flags::MAP;
            match s["map"].as_str() {
                Some("verdict") => Some(DataType::Verdict),
                Some(n) => DataType::from_name(n),
                None => None,
            }
        } else {
            None
        };
        let view = SetView {
            name: s["name"].as_str().unwrap().to_owned(),
            key_len: DataType::key_len(&key).unwrap_or(0),
            key_order: key[0].byte_order(),
            data_len: data.map_or(0, |d| d.len()),
            key,
            data,
            flags: f,
            elements: Vec::new(),
        };
        out.insert(
            (s["table"].as_str().unwrap().to_owned(), view.name.clone()),
            view,
        );
    }
    out
}

#[test]
fn accepted_rules_decode_back_to_nft_statements() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../xtnl-nft-json/tests/captures"
    );
    let mut total = (0, 0, 0);
    for file in ["netavark.json", "firewalld.json", "kube.json"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let items = doc["nftables"].as_array().unwrap();
        let named = named_sets(items);
        let (mut rules, mut round, mut refused) = (0, 0, Vec::new());
        for it in items {
            let Some(rule) = it.get("rule") else { continue };
            let Some(fam) = family(rule["family"].as_str().unwrap()) else {
                continue;
            };
            rules += 1;
            let table = rule["table"].as_str().unwrap();
            let stmts: Vec<Statement> = serde_json::from_value(rule["expr"].clone()).unwrap();
            let mut sets: BTreeMap<String, SetView> = named
                .iter()
                .filter(|((t, _), _)| t == table)
                .map(|((_, n), v)| (n.clone(), v.clone()))
                .collect();
            let mut enc = match encode_rule(fam, &stmts, &sets) {
                Ok(e) => e,
                Err(e) => {
                    assert!(!e.message.is_empty());
                    refused.push(format!("{}: {e}", rule["handle"]));
                    continue;
                }
            };
            // The kernel names anonymous sets; stand in for it.
            for e in &mut enc.exprs {
                if let Expr::Lookup(l) = e {
                    if let Some(id) = l.set_id.take() {
                        let a = &enc.anon_sets[id as usize];
                        let mut def = a.def.clone();
                        def.name = format!("__anon{id}");
                        l.set = def.name.clone();
                        let view = SetView::from_def(&def, a.elements.clone());
                        sets.insert(def.name.clone(), view);
                    }
                }
            }
            let back = decode_rule(fam, &enc.exprs, &sets).unwrap_or_else(|e| {
                panic!(
                    "{file} rule {}: encoded but not decoded: {e}",
                    rule["handle"]
                )
            });
            assert_eq!(
                serde_json::to_value(&back).unwrap(),
                rule["expr"],
                "{file} rule {}",
                rule["handle"]
            );
            round += 1;
        }
        eprintln!(
            "{file}: {rules} rules, {round} round-trip, {} refused: {refused:#?}",
            refused.len()
        );
        total = (total.0 + rules, total.1 + round, total.2 + refused.len());
    }
    // The netavark-like corpus alone has 19 rules, all of which must round-trip.
    assert!(total.1 >= 19, "{total:?}");
}
