//! docs/schema/xtnl.schema.json against real output: `xtnl serve` requests and responses of
//! every kind, `xtnl apply` results, the `--json` listings (`-S`, `save`, `list`), the
//! NAT-host commands' reports, and the failure object of a failing `--json` command.
//!
//! The validator below covers the JSON Schema keywords the file uses (type, const, enum,
//! properties, required, additionalProperties, items, minItems, minimum, maximum, oneOf,
//! local $ref). A crate for it would add a dependency tree to Cargo.lock for ~80 lines of
//! test code; the schema test itself checks that the validator refuses wrong documents.

mod common;

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};

use common::{in_netns, private_lock_path, run, xtnl_bin};
use serde_json::{Value, json};

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schema/xtnl.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => panic!("schema type {t:?} not supported by this validator"),
    }
}

/// Errors of `v` against `s` (empty: valid), each with its path.
fn validate(root: &Value, s: &Value, v: &Value, path: &str, errs: &mut Vec<String>) {
    let Some(s) = s.as_object() else { return };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local $ref");
        return validate(root, &root["$defs"][name], v, path, errs);
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_ok(t, v),
            Value::Array(ts) => ts.iter().any(|t| type_ok(t.as_str().unwrap(), v)),
            _ => true,
        };
        if !ok {
            errs.push(format!("{path}: {v} is not of type {t}"));
            return;
        }
    }
    if let Some(c) = s.get("const")
        && c != v
    {
        errs.push(format!("{path}: {v} is not {c}"));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array)
        && !e.contains(v)
    {
        errs.push(format!(
            "{path}: {v} is not one of {}",
            Value::Array(e.clone())
        ));
    }
    if let Some(n) = v.as_f64() {
        if s.get("minimum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n < m)
        {
            errs.push(format!("{path}: {n} is below the minimum"));
        }
        if s.get("maximum")
            .and_then(Value::as_f64)
            .is_some_and(|m| n > m)
        {
            errs.push(format!("{path}: {n} is above the maximum"));
        }
    }
    if let Some(o) = v.as_object() {
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !o.contains_key(r.as_str().unwrap()) {
                errs.push(format!("{path}: {r} is required"));
            }
        }
        let props = s.get("properties").and_then(Value::as_object);
        for (k, val) in o {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => validate(root, ps, val, &format!("{path}.{k}"), errs),
                None if s.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errs.push(format!("{path}: unknown property {k:?}"))
                }
                None => {}
            }
        }
    }
    if let Some(a) = v.as_array() {
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate() {
                validate(root, items, x, &format!("{path}[{i}]"), errs);
            }
        }
        if s.get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| (a.len() as u64) < m)
        {
            errs.push(format!("{path}: fewer than minItems"));
        }
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
        let passing = one
            .iter()
            .filter(|b| {
                let mut e = Vec::new();
                validate(root, b, v, path, &mut e);
                e.is_empty()
            })
            .count();
        if passing != 1 {
            errs.push(format!(
                "{path}: matches {passing} of oneOf's branches, not 1"
            ));
        }
    }
}

fn check(root: &Value, def: &str, v: &Value) {
    let mut errs = Vec::new();
    validate(root, &root["$defs"][def], v, "$", &mut errs);
    assert!(errs.is_empty(), "{def}: {v}\n{}", errs.join("\n"));
}

fn refuses(root: &Value, def: &str, v: &Value) {
    let mut errs = Vec::new();
    validate(root, &root["$defs"][def], v, "$", &mut errs);
    assert!(!errs.is_empty(), "{def} should refuse {v}");
}

fn xtnl_json(args: &[&str], stdin: Option<&str>) -> (Option<i32>, Value) {
    let mut child = Command::new(xtnl_bin())
        .args(args)
        .env("XTABLES_LOCKFILE", private_lock_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("{args:?}: not one JSON document ({e}): {text:?}"));
    (out.status.code(), v)
}

#[test]
fn requests_responses_results_and_listings_match_the_schema() {
    let root = schema();
    in_netns(move || {
        let requests = [
            json!({"id": 1, "ping": {}}),
            json!({"id": "a", "operations": [{"op": "reservation_setup", "chain": "vcld-1",
                "forwards": [{"protocol": "tcp", "public_port": 50443, "to": "192.0.2.3:3389"}]}]}),
            json!({"id": [2], "transactions": [{"family": "ipv4", "operations": [
                {"op": "forward_add", "chain": "nosuch", "forward":
                    {"protocol": "tcp", "public_port": 1, "to": "192.0.2.1:2"}}]}]}),
            json!({"id": 3, "iptables": ["-t", "nat", "-N", "vcld-2"]}),
            json!({"id": 4, "iptables": ["-t", "nat", "-S", "--json"]}),
            json!({"id": 5, "list": {"family": "ipv4", "table": "nat"}}),
            json!({"id": 6, "save": {"table": "nat"}}),
            json!({"id": 7, "netns": "no-such-ns-xtnl", "list": {"table": "nat"}}),
            json!({"id": 8, "iptables": ["-t", "nat", "-X", "nosuch"]}),
        ];
        // The thin client's request (docs/serve.md): its `started` line, then its response.
        let lock = private_lock_path();
        let ns = std::fs::metadata("/proc/thread-self/ns/net").unwrap();
        let dropin = json!({"id": 9, "dropin": {"program": "iptables",
            "args": ["-t", "nat", "-X", "nosuch"],
            "netns": format!("{}:{}", ns.dev(), ns.ino()),
            "env": {"XTABLES_LOCKFILE": lock.to_str().unwrap(),
                "XTNL_LOCK_WAIT": std::env::var("XTNL_LOCK_WAIT").ok().filter(|v| !v.is_empty())},
            "start_within_ms": 1000}});
        check(&root, "request", &dropin);
        let mut input = String::new();
        for r in &requests {
            check(&root, "request", r);
            input.push_str(&format!("{r}\n"));
        }
        input.push_str(&format!("{dropin}\n"));
        input.push_str("not json\n");
        let mut child = Command::new(xtnl_bin())
            .args(["--audit", "off", "serve", "--stdio"])
            .env("XTABLES_LOCKFILE", &lock)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), requests.len() + 3);
        let n = requests.len();
        check(&root, "dropin_started", &lines[n]);
        assert_eq!(
            lines[n + 1]["stderr"],
            "iptables: No chain/target/match by that name.\n",
            "{}",
            lines[n + 1]
        );
        assert_eq!(lines[n + 1]["status"], 1);
        for (i, l) in lines.iter().enumerate() {
            if i != n {
                check(&root, "response", l);
            }
        }
        assert_eq!(
            lines[2]["ok"], false,
            "the failing transaction is a kind of response too"
        );
        // Each kind of body is what the other documents describe.
        check(&root, "apply_result", &lines[1]);
        check(&root, "listing", &lines[4]);

        let (code, v) = xtnl_json(
            &["apply"],
            Some(r#"{"transactions": [{"operations": [{"op": "teardown", "chain": "vcld-1"}]}]}"#),
        );
        assert_eq!(code, Some(0));
        check(&root, "apply_result", &v);
        check(
            &root,
            "document",
            &json!({"version": 1, "transactions": [{"operations": [{"op": "teardown", "chain": "vcld-1"}]}]}),
        );
        let (_, v) = xtnl_json(&["-t", "nat", "-S", "--json"], None);
        check(&root, "listing", &v);
        let (_, v) = xtnl_json(&["save", "--json"], None);
        check(&root, "listing", &v);
        let (_, v) = xtnl_json(&["list", "--json"], None);
        check(&root, "nft_listing", &v);
        assert!(!v["tables"].as_array().unwrap().is_empty());
        let (code, v) = xtnl_json(&["-6", "reservation", "setup", "vcld-6", "--json"], None);
        assert_eq!(code, Some(0), "{v}");
        check(&root, "nathost_report", &v);
        // Failing --json commands answer in JSON on standard output too.
        for args in [
            &["forward", "add", "nosuch", "tcp/1=192.0.2.1:2", "--json"][..],
            &["-t", "nat", "-S", "nosuch", "--json"][..],
            &["save", "--json", "-t", "no-such-table", "--bogus"][..],
        ] {
            let (code, v) = xtnl_json(args, None);
            assert_ne!(code, Some(0), "{args:?}");
            check(&root, "failure", &v);
        }
        let out = run(xtnl_bin(), &["list", "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Usage: xtnl list [OPTIONS] [FAMILY] [TABLE] [CHAIN]"),
            "{help}"
        );

        // The validator can fail: wrong documents are refused.
        let mut bad = lines[0].clone();
        bad["ok"] = json!("yes");
        refuses(&root, "response", &bad);
        let mut bad = lines[0].clone();
        bad["surprise"] = json!(1);
        refuses(&root, "response", &bad);
        refuses(&root, "request", &json!({"ping": {}, "save": {}}));
        refuses(&root, "request", &json!({"iptables": []}));
        refuses(
            &root,
            "listing",
            &json!({"version": 2, "family": "ip", "tables": []}),
        );
    });
}
