//! One test per shape family, on JSON captured from `nft -j list ruleset` (nft 1.0.6) or
//! taken from libnftables-json(5) where this machine's kernel lacks the feature (flowtable,
//! queue, fwd): each parses into the typed variant named, with no part left untyped, and
//! serializes back to the same JSON value.

use serde_json::{Value, json};
use xtnl_nft_json::*;

/// Parses `value` as `T`, checks it serializes back unchanged, and returns it.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(value: Value) -> T {
    let parsed: T = serde_json::from_value(value.clone()).expect("parses");
    assert_eq!(serde_json::to_value(&parsed).expect("serializes"), value);
    parsed
}

/// A document of these items, which must be fully typed.
fn typed_doc(items: Value) -> Document {
    let doc: Document = round_trip(json!({ "nftables": items }));
    assert_eq!(doc.unknowns(), vec![], "untyped parts");
    doc
}

fn rule(expr: Value) -> Vec<Statement> {
    let doc = typed_doc(
        json!([{"rule": {"family": "inet", "table": "t", "chain": "c", "handle": 4, "expr": expr}}]),
    );
    match doc.nftables.into_iter().next() {
        Some(Item::Object(Object::Rule(Rule { expr: Some(e), .. }))) => e,
        other => panic!("not a rule: {other:?}"),
    }
}

#[test]
fn objects() {
    let doc = typed_doc(json!([
        {"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
        {"table": {"family": "inet", "name": "netavark", "handle": 1}},
        {"chain": {"family": "inet", "table": "netavark", "name": "input", "handle": 1, "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}},
        {"chain": {"family": "inet", "table": "netavark", "name": "nv_forward", "handle": 3}},
        {"set": {"family": "inet", "name": "podman_subnets", "table": "netavark", "type": "ipv4_addr", "handle": 7, "flags": ["interval"], "elem": [{"prefix": {"addr": "192.0.2.0", "len": 24}}]}},
        {"set": {"family": "ip", "name": "nodeport-ips", "table": "kube-proxy", "type": "ipv4_addr", "handle": 10, "size": 65535, "flags": ["timeout"], "timeout": 3600}},
        {"map": {"family": "inet", "name": "port_fwd", "table": "netavark", "type": ["inet_proto", "inet_service"], "handle": 9, "map": "ipv4_addr . inet_service", "elem": [[{"concat": ["tcp", 8080]}, {"concat": ["192.0.2.10", 80]}]]}},
        {"map": {"family": "ip", "name": "no-endpoint-services", "table": "kube-proxy", "type": ["ipv4_addr", "inet_proto", "inet_service"], "handle": 12, "map": "verdict", "elem": [[{"elem": {"val": {"concat": ["198.51.100.11", "tcp", 80]}, "comment": "ns2/svc2:p80"}}, {"goto": {"target": "reject-chain"}}]]}},
        {"ct helper": {"family": "inet", "name": "helper-ftp-tcp", "table": "firewalld", "handle": 6, "type": "ftp", "protocol": "tcp", "l3proto": "inet"}},
        {"counter": {"family": "inet", "name": "cnt1", "table": "firewalld", "handle": 7, "packets": 0, "bytes": 0}},
        {"quota": {"family": "inet", "name": "q1", "table": "firewalld", "handle": 8, "bytes": 104857600, "used": 0, "inv": true}},
        {"limit": {"family": "inet", "name": "lim1", "table": "firewalld", "handle": 9, "rate": 400, "per": "minute", "burst": 5}},
        {"flowtable": {"family": "inet", "name": "ft", "table": "t", "handle": 2, "hook": "ingress", "prio": 0, "dev": ["eth0", "eth1"]}},
        {"ct timeout": {"family": "inet", "name": "agressive-tcp", "table": "t", "handle": 3, "protocol": "tcp", "l3proto": "inet", "policy": {"established": 100, "close": 4}}},
        {"ct expectation": {"family": "inet", "name": "e", "table": "t", "protocol": "tcp", "dport": 22, "timeout": 3000, "size": 12, "l3proto": "ip"}}
    ]));
    let kinds: Vec<&str> = doc
        .nftables
        .iter()
        .map(|i| match i {
            Item::Metainfo(_) => "metainfo",
            Item::Object(Object::Table(_)) => "table",
            Item::Object(Object::Chain(_)) => "chain",
            Item::Object(Object::Set(_)) => "set",
            Item::Object(Object::Map(_)) => "map",
            Item::Object(Object::CtHelper(_)) => "ct helper",
            Item::Object(Object::Counter(_)) => "counter",
            Item::Object(Object::Quota(_)) => "quota",
            Item::Object(Object::Limit(_)) => "limit",
            Item::Object(Object::Flowtable(_)) => "flowtable",
            Item::Object(Object::CtTimeout(_)) => "ct timeout",
            Item::Object(Object::CtExpectation(_)) => "ct expectation",
            _ => "?",
        })
        .collect();
    assert!(!kinds.contains(&"?"), "{kinds:?}");
    let Item::Object(Object::Map(map)) = &doc.nftables[6] else {
        panic!()
    };
    assert_eq!(
        map.key,
        Some(SetType::Concat(vec![
            "inet_proto".into(),
            "inet_service".into()
        ]))
    );
    assert_eq!(
        map.map,
        Some(SetType::Name("ipv4_addr . inet_service".into()))
    );
}

#[test]
fn commands() {
    let doc = typed_doc(json!([
        {"add": {"table": {"family": "inet", "name": "c"}}},
        {"create": {"chain": {"family": "inet", "table": "c", "name": "in", "type": "filter", "hook": "input", "prio": 0, "policy": "accept"}}},
        {"insert": {"rule": {"family": "inet", "table": "c", "chain": "in", "position": 3, "expr": [{"accept": null}]}}},
        {"replace": {"rule": {"family": "inet", "table": "c", "chain": "in", "handle": 3, "expr": [{"drop": null}]}}},
        {"delete": {"rule": {"family": "inet", "table": "c", "chain": "in", "handle": 3}}},
        {"destroy": {"table": {"family": "ip", "handle": 9}}},
        {"flush": {"ruleset": null}},
        {"flush": {"set": {"family": "inet", "table": "c", "name": "s"}}},
        {"reset": {"counter": {"family": "inet", "table": "c", "name": "hits"}}},
        {"list": {"ruleset": null}},
        {"rename": {"chain": {"family": "inet", "table": "c", "name": "old", "newname": "new"}}},
        {"add": {"element": {"family": "inet", "table": "c", "name": "s", "elem": [{"range": ["198.51.100.1", "198.51.100.9"]}]}}},
        {"add": {"set": {"family": "inet", "table": "c", "name": "s2", "type": "ipv4_addr", "flags": "interval"}}}
    ]));
    assert!(matches!(doc.nftables[0], Item::Add(Object::Table(_))));
    assert!(matches!(
        doc.nftables[2],
        Item::Insert(Object::Rule(Rule {
            position: Some(3),
            ..
        }))
    ));
    assert!(matches!(
        doc.nftables[5],
        Item::Destroy(Object::Table(Table {
            name: None,
            handle: Some(9),
            ..
        }))
    ));
    assert!(matches!(doc.nftables[6], Item::Flush(Object::Ruleset(()))));
    assert!(matches!(doc.nftables[10], Item::Rename(Object::Chain(_))));
    let Item::Add(Object::Set(set)) = &doc.nftables[12] else {
        panic!("{:?}", doc.nftables[12])
    };
    assert_eq!(set.flags, Some(OneOrMany::One("interval".into())));
}

#[test]
fn verdicts_and_maps() {
    let s = rule(json!([
        {"vmap": {"key": {"ct": {"key": "state"}}, "data": {"set": [["invalid", {"drop": null}], ["established", {"accept": null}]]}}},
        {"vmap": {"key": {"concat": [{"payload": {"protocol": "ip", "field": "daddr"}}, {"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "data": "@service-ips"}},
        {"vmap": {"key": {"numgen": {"mode": "random", "mod": 2, "offset": 0}}, "data": {"set": [[0, {"goto": {"target": "endpoint-A"}}], [1, {"jump": {"target": "endpoint-B"}}]]}}},
        {"jump": {"target": "nv_forward"}}, {"goto": {"target": "x"}},
        {"accept": null}, {"drop": null}, {"continue": null}, {"return": null},
        {"queue": {"num": 3, "flags": ["bypass", "fanout"]}}, {"queue": {"num": {"range": [1, 3]}}}
    ]));
    assert!(matches!(s[0], Statement::Vmap(_)));
    assert!(matches!(&s[3], Statement::Jump(Target { target }) if target == "nv_forward"));
    assert!(matches!(s[7], Statement::Continue(())));
    assert!(matches!(
        &s[9],
        Statement::Queue(Some(Queue {
            flags: Some(OneOrMany::Many(_)),
            ..
        }))
    ));
}

#[test]
fn nat() {
    let s = rule(json!([
        {"dnat": {"family": "ip", "addr": {"map": {"key": {"concat": [{"meta": {"key": "l4proto"}}, {"payload": {"protocol": "th", "field": "dport"}}]}, "data": "@port_fwd"}}}},
        {"snat": {"family": "ip", "addr": {"range": ["203.0.113.1", "203.0.113.10"]}, "port": {"range": [1000, 2000]}, "flags": "fully-random"}},
        {"masquerade": {"flags": ["random", "persistent"]}},
        {"masquerade": null},
        {"redirect": {"port": 8080}},
        {"dnat": {"addr": "192.0.2.20", "port": 8080}},
        {"tproxy": {"addr": "192.0.2.1", "port": 50080}}
    ]));
    let Statement::Snat(Some(snat)) = &s[1] else {
        panic!("{:?}", s[1])
    };
    assert_eq!(snat.flags, Some(OneOrMany::One("fully-random".into())));
    assert!(matches!(s[3], Statement::Masquerade(None)));
    assert!(matches!(s[6], Statement::Tproxy(_)));
}

#[test]
fn other_statements() {
    let s = rule(json!([
        {"counter": {"packets": 0, "bytes": 0}}, {"counter": "cnt1"}, {"counter": null},
        {"limit": {"rate": 10, "burst": 5, "per": "minute", "inv": true}}, {"limit": "lim1"},
        {"quota": "q1"}, {"quota": {"val": 100, "val_unit": "mbytes", "used": 0, "used_unit": "bytes", "inv": true}},
        {"log": {"prefix": "dropped: ", "flags": "all"}}, {"log": {"group": 2, "snaplen": 64}}, {"log": null},
        {"reject": {"type": "icmpx", "expr": "admin-prohibited"}}, {"reject": {"type": "tcp reset"}}, {"reject": null},
        {"mangle": {"key": {"ct": {"key": "mark"}}, "value": {"meta": {"key": "mark"}}}},
        {"mangle": {"key": {"tcp option": {"name": "maxseg", "field": "size"}}, "value": {"rt": {"key": "mtu"}}}},
        {"set": {"op": "add", "elem": {"elem": {"val": {"payload": {"protocol": "ip", "field": "saddr"}}, "timeout": 10}}, "set": "@nodeport-ips"}},
        {"set": {"op": "update", "elem": {"payload": {"protocol": "ip", "field": "saddr"}}, "set": "@s", "stmt": [{"counter": null}]}},
        {"map": {"op": "add", "elem": {"payload": {"protocol": "ip", "field": "saddr"}}, "data": 1, "map": "@m"}},
        {"ct helper": "helper-ftp-tcp"}, {"ct timeout": "agressive-tcp"}, {"ct expectation": "e"},
        {"ct count": {"val": 20, "inv": true}}, {"notrack": null},
        {"dup": {"addr": "192.0.2.2"}}, {"dup": {"addr": "192.0.2.2", "dev": "eth0"}},
        {"fwd": {"dev": "lo"}}, {"fwd": {"dev": "eth0", "family": "ip", "addr": "192.0.2.1"}},
        {"synproxy": {"mss": 1460, "wscale": 7, "flags": ["timestamp", "sack-perm"]}},
        {"flow": {"op": "add", "flowtable": "@ft"}},
        {"meter": {"name": "m", "key": {"payload": {"protocol": "ip", "field": "saddr"}}, "stmt": {"limit": {"rate": 1, "per": "second"}}, "size": 65535}},
        {"last": {"used": 3000}}, {"last": null}, {"secmark": "sm"},
        {"xt": {"type": "match", "name": "conntrack"}}, {"xt": {"type": "target", "name": "MASQUERADE"}}
    ]));
    assert!(matches!(&s[1], Statement::Counter(Some(CounterStmt::Named(n))) if n == "cnt1"));
    assert!(matches!(s[2], Statement::Counter(None)));
    assert!(matches!(s[6], Statement::Quota(QuotaStmt::Anonymous(_))));
    assert!(matches!(s[9], Statement::Log(None)));
    assert!(matches!(s[15], Statement::Set(_)));
    assert!(matches!(s[21], Statement::CtCount(_)));
    assert!(matches!(s[29], Statement::Meter(_)));
    assert!(matches!(s[30], Statement::Last(Some(Last { used: 3000 }))));
    assert!(matches!(s[32], Statement::Secmark(_)));
    assert!(
        matches!(&s[34], Statement::Xt(Xt { kind, name }) if kind == "target" && name == "MASQUERADE")
    );
}

#[test]
fn expressions() {
    let s = rule(json!([
        {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": {"set": [22, 80, {"range": [8000, 8100]}]}}},
        {"match": {"op": "in", "left": {"ct": {"key": "state"}}, "right": ["established", "related"]}},
        {"match": {"op": "==", "left": {"&": [{"payload": {"protocol": "tcp", "field": "flags"}}, ["fin", "syn"]]}, "right": "syn"}},
        {"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": {"prefix": {"addr": "192.0.2.0", "len": 24}}}},
        {"match": {"op": "==", "left": {"payload": {"base": "nh", "offset": 96, "len": 32}}, "right": 3221225993u64}},
        {"match": {"op": "==", "left": {"fib": {"result": "type", "flags": ["daddr"]}}, "right": "local"}},
        {"match": {"op": "==", "left": {"rt": {"key": "nexthop", "family": "ip"}}, "right": "192.0.2.1"}},
        {"match": {"op": "==", "left": {"socket": {"key": "transparent"}}, "right": 1}},
        {"match": {"op": "==", "left": {"osf": {"key": "name", "ttl": "loose"}}, "right": "Linux"}},
        {"match": {"op": "==", "left": {"ipsec": {"key": "reqid", "dir": "in", "spnum": 0}}, "right": 1}},
        {"match": {"op": "==", "left": {"exthdr": {"name": "dst"}}, "right": true}},
        {"match": {"op": "==", "left": {"tcp option": {"name": "sack-perm"}}, "right": true}},
        {"match": {"op": "==", "left": {"ip option": {"name": "rr"}}, "right": false}},
        {"match": {"op": "==", "left": {"ct": {"key": "saddr", "family": "ip", "dir": "original"}}, "right": "192.0.2.1"}},
        {"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"jhash": {"mod": 8, "seed": 57005, "expr": {"concat": [{"payload": {"protocol": "ip", "field": "saddr"}}, {"payload": {"protocol": "ip", "field": "daddr"}}]}}}}},
        {"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"symhash": {"mod": 2}}}},
        {"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"|": [{"meta": {"key": "mark"}}, 16384]}}},
        {"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"^": [{"meta": {"key": "mark"}}, 16384]}}},
        {"mangle": {"key": {"ct": {"key": "mark"}}, "value": {"<<": [{"ct": {"key": "mark"}}, 1]}}},
        {"mangle": {"key": {"ct": {"key": "mark"}}, "value": {">>": [{"ct": {"key": "mark"}}, 1]}}},
        {"mangle": {"key": {"meta": {"key": "mark"}}, "value": {"numgen": {"mode": "inc", "mod": 4, "offset": 1}}}}
    ]));
    let Statement::Match(m) = &s[0] else { panic!() };
    assert_eq!(m.left, Expression::payload("tcp", "dport"));
    let Expression::Object(set) = &m.right else {
        panic!()
    };
    assert!(matches!(**set, ExprObject::Set(Expression::List(ref v)) if v.len() == 3));
    let Statement::Match(m) = &s[4] else { panic!() };
    assert_eq!(m.right, Expression::Number(3221225993));
}

/// A shape not typed here is kept whole, round-trips, and is named with its place.
#[test]
fn unknown_shapes_are_kept_and_named() {
    let value = json!({"nftables": [
        {"table": {"family": "inet", "name": "t", "flags": "dormant"}},
        {"rule": {"family": "inet", "table": "t", "chain": "c", "expr": [
            {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": {"future": {"x": 1}}}},
            {"brand new statement": {"a": [1, 2]}},
            {"counter": {"packets": 0, "bytes": 0, "extra": true}},
            {"accept": null}
        ]}},
        {"tunnel": {"family": "inet", "name": "x"}},
        {"chain": {"family": "inet", "table": "t", "name": "c", "unknown-key": 1}},
        {"table": {"family": "decnet", "name": "t"}},
        "not even an object"
    ]});
    let doc: Document = round_trip(value);
    let found: Vec<String> = doc.unknowns().iter().map(|u| u.path.clone()).collect();
    assert_eq!(
        found,
        [
            "nftables[1].rule.expr[0].match.right",
            "nftables[1].rule.expr[1]",
            "nftables[1].rule.expr[2]",
            "nftables[2]",
            "nftables[3]",
            "nftables[4]",
            "nftables[5]",
        ]
    );
    let message = doc.unknowns()[1].to_string();
    assert_eq!(
        message,
        r#"nftables[1].rule.expr[1]: not understood: {"brand new statement":{"a":[1,2]}}"#
    );
}

/// Input that is not a document is an error naming the problem; a document whose items are
/// not understood parses, and every such item is named.
#[test]
fn bad_input() {
    let err = |text: &str| Document::from_json(text).expect_err(text).to_string();
    assert!(err(r#"{"nftables": [], "extra": 1}"#).contains("unknown field `extra`"));
    assert!(err(r#"{"nftable": []}"#).contains("unknown field `nftable`"));
    assert!(err(r#"{"nftables": 5}"#).contains("invalid type: integer `5`, expected a sequence"));
    assert!(err(r#"{"nftables": [}"#).contains("line 1 column 15"));
    assert!(err("").contains("EOF"));
    let doc =
        Document::from_json(r#"{"nftables": [{"add": 5}, {"add": {"rule": {"family": "inet"}}}]}"#)
            .expect("items not understood still parse");
    let named: Vec<String> = doc.unknowns().iter().map(|u| u.to_string()).collect();
    assert_eq!(
        named,
        [
            r#"nftables[0].add: not understood: 5"#,
            r#"nftables[1].add: not understood: {"rule":{"family":"inet"}}"#,
        ]
    );
}
