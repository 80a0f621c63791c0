//! Nothing is lost, whatever the input: JSON that nft printed (tests/captures/, from
//! `nft -j list ruleset` of the rulesets in tests/rulesets/), mutated at every node (a key
//! removed, renamed, its value made `null` or a number, an array element removed), either
//! fails to parse or parses into a document that serializes back to exactly the mutated
//! JSON. A mutation the types cannot represent must land in an `Other` variant, never be
//! dropped or normalized.

use serde_json::Value;
use xtnl_nft_json::Document;

/// Every mutation of `value`: each a copy with one change at one place.
fn mutations(value: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let mut removed = map.clone();
                removed.remove(key);
                out.push(Value::Object(removed));
                let mut renamed = map.clone();
                let v = renamed.remove(key).unwrap_or(Value::Null);
                renamed.insert(format!("{key}_x"), v);
                out.push(Value::Object(renamed));
                for replacement in [
                    Value::Null,
                    Value::from(7),
                    Value::from(-7),
                    Value::from("x"),
                ] {
                    let mut changed = map.clone();
                    changed.insert(key.clone(), replacement);
                    out.push(Value::Object(changed));
                }
                for m in mutations(inner) {
                    let mut changed = map.clone();
                    changed.insert(key.clone(), m);
                    out.push(Value::Object(changed));
                }
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                let mut removed = items.clone();
                removed.remove(i);
                out.push(Value::Array(removed));
                for m in mutations(inner) {
                    let mut changed = items.clone();
                    changed[i] = m;
                    out.push(Value::Array(changed));
                }
            }
        }
        _ => {}
    }
    out
}

#[test]
fn every_mutation_round_trips_or_fails() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/captures");
    let (mut parsed, mut refused) = (0usize, 0usize);
    for name in ["netavark.json", "firewalld.json", "kube.json"] {
        let text = std::fs::read_to_string(dir.join(name)).expect("capture");
        let original: Value = serde_json::from_str(&text).expect("JSON");
        let Value::Object(top) = &original else {
            panic!("{name}: not an object")
        };
        let Some(Value::Array(items)) = top.get("nftables") else {
            panic!("{name}: no nftables")
        };
        // Mutate each item on its own (a document of one item), which keeps the count
        // linear in the size of the capture.
        for item in items {
            for m in mutations(item).into_iter().chain([item.clone()]) {
                let doc = serde_json::json!({ "nftables": [m] });
                match serde_json::from_value::<Document>(doc.clone()) {
                    Ok(d) => {
                        let back = serde_json::to_value(&d).expect("serializes");
                        assert_eq!(back, doc, "{name}: mutation not kept as it was");
                        parsed += 1;
                    }
                    Err(_) => refused += 1,
                }
            }
        }
    }
    eprintln!("mutations: {parsed} parsed and round-tripped, {refused} refused");
    assert!(parsed > 1000);
}
