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

/// A small deterministic generator (no dependency): xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Mutates one expression's numbers and bytes: what a kernel (or a rule written by another
/// tool) could hand the decoder.
fn mutate(e: &mut Expr, rng: &mut Rng) {
    let bytes = |b: &mut Vec<u8>, rng: &mut Rng| match rng.below(4) {
        0 => b.truncate(rng.below(b.len() + 1)),
        1 => b.push(rng.next() as u8),
        2 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = rng.next() as u8;
        }
        _ => b.clear(),
    };
    match e {
        Expr::Payload(p) => match rng.below(3) {
            0 => p.offset = rng.below(64) as u32,
            1 => p.len = rng.below(20) as u32,
            _ => p.dreg = rng.below(24) as u32,
        },
        Expr::Cmp(c) => {
            if rng.below(2) == 0 {
                bytes(&mut c.data, rng)
            } else {
                c.sreg = rng.below(24) as u32
            }
        }
        Expr::Bitwise(b) => match rng.below(3) {
            0 => bytes(&mut b.mask, rng),
            1 => bytes(&mut b.xor, rng),
            _ => b.sreg = rng.below(24) as u32,
        },
        Expr::Immediate(i) => i.dreg = rng.below(24) as u32,
        Expr::Lookup(l) => match rng.below(3) {
            0 => l.sreg = rng.below(24) as u32,
            1 => l.dreg = Some(rng.below(24) as u32),
            _ => l.set = "nonexistent".into(),
        },
        Expr::Meta(m) => m.key = xtnl_wire::expr::MetaKey(rng.below(40) as u32),
        Expr::Ct(c) => c.key = rng.below(30) as u32,
        Expr::Nat(n) => n.reg_addr_max = Some(rng.below(24) as u32),
        Expr::Other(o) => bytes(&mut o.data, rng),
        _ => {}
    }
}

/// decode_rule never panics on mutated expressions (the kernel's, or another tool's): each
/// mutation decodes or is refused with a message. Starts from the encodings of nft's
/// captured rules; 200 mutations of each.
#[test]
fn mutated_expressions_decode_or_are_refused_without_panicking() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../xtnl-nft-json/tests/captures"
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut tried, mut refused) = (0, 0);
    for file in ["netavark.json", "firewalld.json", "kube.json"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let items = doc["nftables"].as_array().unwrap();
        let named = named_sets(items);
        for it in items {
            let Some(rule) = it.get("rule") else { continue };
            let Some(fam) = family(rule["family"].as_str().unwrap()) else {
                continue;
            };
            let table = rule["table"].as_str().unwrap();
            let stmts: Vec<Statement> = serde_json::from_value(rule["expr"].clone()).unwrap();
            let mut sets: BTreeMap<String, SetView> = named
                .iter()
                .filter(|((t, _), _)| t == table)
                .map(|((_, n), v)| (n.clone(), v.clone()))
                .collect();
            let Ok(mut enc) = encode_rule(fam, &stmts, &sets) else {
                continue;
            };
            for e in &mut enc.exprs {
                if let Expr::Lookup(l) = e {
                    if let Some(id) = l.set_id.take() {
                        let a = &enc.anon_sets[id as usize];
                        let mut def = a.def.clone();
                        def.name = format!("__anon{id}");
                        l.set = def.name.clone();
                        sets.insert(
                            def.name.clone(),
                            SetView::from_def(&def, a.elements.clone()),
                        );
                    }
                }
            }
            for _ in 0..200 {
                let mut exprs = enc.exprs.clone();
                for _ in 0..=rng.below(3) {
                    match rng.below(4) {
                        0 if !exprs.is_empty() => {
                            let i = rng.below(exprs.len());
                            exprs.remove(i);
                        }
                        1 if exprs.len() > 1 => {
                            let (i, j) = (rng.below(exprs.len()), rng.below(exprs.len()));
                            exprs.swap(i, j);
                        }
                        _ if !exprs.is_empty() => {
                            let i = rng.below(exprs.len());
                            mutate(&mut exprs[i], &mut rng);
                        }
                        _ => {}
                    }
                }
                tried += 1;
                if let Err(e) = decode_rule(fam, &exprs, &sets) {
                    assert!(!e.message.is_empty());
                    refused += 1;
                }
            }
        }
    }
    eprintln!("{tried} mutated rules: {refused} refused, the others decoded");
    assert!(tried > 5000 && refused > 0, "{tried} {refused}");
}

/// Every node of a JSON value, by path, so one can be replaced.
fn node_mut<'a>(v: &'a mut Value, pick: &mut usize) -> Option<&'a mut Value> {
    if *pick == 0 {
        return Some(v);
    }
    *pick -= 1;
    match v {
        Value::Array(a) => a.iter_mut().find_map(|x| node_mut(x, pick)),
        Value::Object(o) => o.values_mut().find_map(|x| node_mut(x, pick)),
        _ => None,
    }
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// encode_rule never panics on mutated statements (a document is the caller's input): each
/// mutation of a node of nft's captured statements (to 0, a huge number, a short or odd
/// string, an empty list or object, null) that still parses is encoded or refused with a
/// message.
#[test]
fn mutated_statements_encode_or_are_refused_without_panicking() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../xtnl-nft-json/tests/captures"
    );
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let replacements = [
        serde_json::json!(0),
        serde_json::json!(u64::MAX),
        serde_json::json!(65536),
        serde_json::json!(""),
        serde_json::json!("x*"),
        serde_json::json!("@nope"),
        serde_json::json!("255.255.255.255"),
        serde_json::json!([]),
        serde_json::json!({}),
        serde_json::json!({"prefix": {"addr": "192.0.2.0", "len": 99}}),
        serde_json::json!({"range": [9, 1]}),
        Value::Null,
    ];
    let (mut tried, mut refused) = (0, 0);
    for file in ["netavark.json", "firewalld.json", "kube.json"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let items = doc["nftables"].as_array().unwrap();
        let named = named_sets(items);
        for it in items {
            let Some(rule) = it.get("rule") else { continue };
            let Some(fam) = family(rule["family"].as_str().unwrap()) else {
                continue;
            };
            let table = rule["table"].as_str().unwrap();
            let sets: BTreeMap<String, SetView> = named
                .iter()
                .filter(|((t, _), _)| t == table)
                .map(|((_, n), v)| (n.clone(), v.clone()))
                .collect();
            let n = count(&rule["expr"]);
            for _ in 0..100 {
                let mut expr = rule["expr"].clone();
                let mut pick = 1 + rng.below(n - 1);
                if let Some(node) = node_mut(&mut expr, &mut pick) {
                    *node = replacements[rng.below(replacements.len())].clone();
                }
                let Ok(stmts) = serde_json::from_value::<Vec<Statement>>(expr) else {
                    continue;
                };
                tried += 1;
                if let Err(e) = encode_rule(fam, &stmts, &sets) {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
            }
        }
    }
    eprintln!("{tried} mutated rules: {refused} refused, the others encoded");
    assert!(tried > 3000 && refused > 0, "{tried} {refused}");
}
