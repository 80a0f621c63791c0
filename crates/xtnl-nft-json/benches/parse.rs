//! What the types cost over untyped JSON: a document with a 100,000-element interval set, a
//! 100,000-element concatenated map and 10,000 rules (the shapes of the netavark and
//! kube-proxy rulesets in tests/rulesets/), parsed and serialized as `Document` and, in the
//! same run, as `serde_json::Value` (the floor any typed reading of the JSON pays).
//!
//! `cargo bench -p xtnl-nft-json --bench parse` (rounds: `XTNL_BENCH_ROUNDS`, default 5;
//! medians).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use xtnl_nft_json::Document;

fn document() -> String {
    let mut items = vec![
        json!({"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}}),
        json!({"table": {"family": "inet", "name": "netavark", "handle": 1}}),
        json!({"chain": {"family": "inet", "table": "netavark", "name": "input", "handle": 1, "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}}),
    ];
    let prefixes: Vec<Value> = (0..100_000u32)
        .map(|i| json!({"prefix": {"addr": format!("10.{}.{}.0", i >> 8 & 255, i & 255), "len": 24}}))
        .collect();
    items.push(json!({"set": {"family": "inet", "name": "subnets", "table": "netavark", "type": "ipv4_addr", "handle": 2, "flags": ["interval"], "elem": prefixes}}));
    let pairs: Vec<Value> = (0..100_000u32)
        .map(|i| json!([{"concat": ["tcp", 1024 + i % 60000]}, {"concat": [format!("192.0.2.{}", i % 250), 80]}]))
        .collect();
    items.push(json!({"map": {"family": "inet", "name": "port_fwd", "table": "netavark", "type": ["inet_proto", "inet_service"], "handle": 3, "map": "ipv4_addr . inet_service", "elem": pairs}}));
    for i in 0..10_000u32 {
        items.push(json!({"rule": {"family": "inet", "table": "netavark", "chain": "input", "handle": 10 + i, "expr": [
            {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": {"prefix": {"addr": "192.0.2.0", "len": 24}}}},
            {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": {"set": [22, 80, {"range": [8000, 8100]}]}}},
            {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": "new"}},
            {"counter": {"packets": 0, "bytes": 0}},
            {"jump": {"target": "nv_forward"}}
        ]}}));
    }
    json!({"nftables": items}).to_string()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("XTNL_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let text = document();
    let (mut parse_doc, mut parse_value, mut write_doc, mut write_value) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let value: Value = serde_json::from_str(&text).expect("JSON");
        parse_value.push(t.elapsed());
        let t = Instant::now();
        let doc = Document::from_json(&text).expect("document");
        parse_doc.push(t.elapsed());
        assert!(doc.unknowns().is_empty());
        let t = Instant::now();
        let out_value = value.to_string();
        write_value.push(t.elapsed());
        let t = Instant::now();
        let out_doc = doc.to_json().expect("serializes");
        write_doc.push(t.elapsed());
        assert_eq!(out_doc.len(), out_value.len());
    }
    let (pd, pv, wd, wv) = (
        median(parse_doc),
        median(parse_value),
        median(write_doc),
        median(write_value),
    );
    println!(
        "document: {:.1} MiB, 200,000 elements, 10,000 rules; {rounds} rounds, medians",
        text.len() as f64 / 1048576.0
    );
    println!(
        "parse:     Document {:>8.1} ms  Value {:>8.1} ms  ratio {:.2}",
        pd.as_secs_f64() * 1e3,
        pv.as_secs_f64() * 1e3,
        pd.as_secs_f64() / pv.as_secs_f64()
    );
    println!(
        "serialize: Document {:>8.1} ms  Value {:>8.1} ms  ratio {:.2}",
        wd.as_secs_f64() * 1e3,
        wv.as_secs_f64() * 1e3,
        wd.as_secs_f64() / wv.as_secs_f64()
    );
}
