//! The JSON interface: `xtnl apply` documents (round trips, idempotency, transactions that
//! see each other's changes, failures that apply nothing of their transaction, schema errors
//! with the path of the offending field) and the `--json` listings, checked against
//! iptables-nft's own listing.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{in_netns, nft_ruleset, private_lock_path, run_ok, xtnl_bin};
use serde_json::Value;

fn apply(doc: &str) -> (Output, Value) {
    let lock = private_lock_path();
    let mut child = Command::new(xtnl_bin())
        .arg("apply")
        .env("XTABLES_LOCKFILE", &lock)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn xtnl apply");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(doc.as_bytes())
        .expect("write document");
    let out = child.wait_with_output().expect("xtnl apply");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("result is not JSON ({e}): {out:?}"));
    (out, v)
}

fn outcomes(v: &Value, t: usize) -> Vec<String> {
    v["transactions"][t]["operations"]
        .as_array()
        .map(|ops| {
            ops.iter()
                .map(|o| o["outcome"].as_str().unwrap_or("?").to_string())
                .collect()
        })
        .unwrap_or_default()
}

const DOC: &str = r#"{
  "version": 1,
  "transactions": [
    {
      "operations": [
        {"op": "reservation_setup", "chain": "vcld-1",
         "jump_comment": "jump to vcld-1",
         "forwards": [{"protocol": "tcp", "public_port": 50443, "to": "192.0.2.10:3389",
                       "in_interface": "eth1", "comment": "rdp"}]},
        {"op": "forward_add", "chain": "vcld-1",
         "forward": {"protocol": "udp", "public_port": 50053, "to": "192.0.2.10:53"}},
        {"op": "create_chain", "table": "filter", "chain": "agent"},
        {"op": "ensure_rule", "table": "filter", "chain": "agent",
         "rule": "-s 198.51.100.0/24 -p tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT"},
        {"op": "ensure_rule", "table": "filter", "chain": "agent", "position": "head",
         "rule": {"protocol": "udp", "dport": 53, "ctstate": ["NEW"], "jump": "ACCEPT"}},
        {"op": "ensure_rule", "table": "filter", "chain": "INPUT", "rule": "-j agent"}
      ]
    },
    {
      "operations": [
        {"op": "forward_remove", "chain": "vcld-1", "protocol": "udp", "public_port": 50053}
      ]
    }
  ]
}"#;

#[test]
fn a_document_applies_atomically_per_transaction_and_again_changes_nothing() {
    in_netns(|| {
        let (out, v) = apply(DOC);
        assert_eq!(out.status.code(), Some(0), "{v}");
        assert_eq!(v["ok"], true);
        assert_eq!(v["transactions"][0]["status"], "committed");
        // The forward_add saw the chain the set-up before it created, in the same commit.
        assert_eq!(
            outcomes(&v, 0),
            [
                "changed", "changed", "changed", "changed", "changed", "changed"
            ]
        );
        assert_eq!(outcomes(&v, 1), ["changed"]);
        // Handles of added rules are the kernel's: each appears in nft's listing.
        let nft = nft_ruleset();
        let handles = v["transactions"][0]["operations"][3]["rule_handles"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(handles.len(), 1, "{v}");
        let h = handles[0].as_u64().unwrap_or(0);
        assert!(
            nft.lines()
                .any(|l| l.contains("dport 22") && l.ends_with(&format!("# handle {h}"))),
            "handle {h} not on the ssh rule:\n{nft}"
        );
        let filter = run_ok("iptables-nft", &["-S"]);
        assert!(filter.contains("-A agent -p udp -m udp --dport 53 -m conntrack --ctstate NEW -j ACCEPT\n-A agent -s 198.51.100.0/24 -p tcp -m tcp --dport 22 -m comment --comment \"ssh in\" -j ACCEPT"), "{filter}");
        assert!(filter.contains("-A INPUT -j agent"), "{filter}");
        let nat = run_ok("iptables-nft", &["-t", "nat", "-S"]);
        assert!(nat.contains("-A vcld-1 -i eth1 -p tcp -m comment --comment rdp -m tcp --dport 50443 -j DNAT --to-destination 192.0.2.10:3389"), "{nat}");
        assert!(!nat.contains("50053"), "{nat}");

        let before = nft_ruleset();
        let (out, v) = apply(DOC);
        assert_eq!(out.status.code(), Some(0), "{v}");
        assert_eq!(
            outcomes(&v, 0),
            [
                "unchanged",
                "changed",
                "unchanged",
                "unchanged",
                "unchanged",
                "unchanged"
            ],
            "only the removed forward comes back"
        );
        assert_eq!(outcomes(&v, 1), ["changed"]);
        let after = nft_ruleset();
        // Same rules; only handles moved for the forward removed and added again.
        let strip = |s: &str| -> Vec<String> {
            s.lines()
                .map(|l| l.split(" # handle").next().unwrap_or(l).to_string())
                .collect()
        };
        assert_eq!(strip(&after), strip(&before));
    });
}

#[test]
fn a_failing_transaction_applies_nothing_of_itself_and_skips_the_rest() {
    in_netns(|| {
        run_ok("iptables-nft", &["-N", "busy"]);
        run_ok("iptables-nft", &["-A", "INPUT", "-j", "busy"]);
        let doc = r#"{"transactions": [
            {"operations": [{"op": "create_chain", "chain": "first"}]},
            {"operations": [{"op": "create_chain", "chain": "second"},
                            {"op": "delete_chain", "chain": "busy"}]},
            {"operations": [{"op": "create_chain", "chain": "third"}]}
        ]}"#;
        let (out, v) = apply(doc);
        assert_eq!(out.status.code(), Some(1), "{v}");
        assert_eq!(v["ok"], false);
        assert_eq!(v["transactions"][0]["status"], "committed");
        assert_eq!(v["transactions"][1]["status"], "failed");
        assert_eq!(v["transactions"][1]["error"]["kind"], "in_use", "{v}");
        assert_eq!(v["transactions"][2]["status"], "skipped");
        let listed = run_ok("iptables-nft", &["-S"]);
        assert!(listed.contains("-N first"), "{listed}");
        assert!(!listed.contains("-N second"), "{listed}");
        assert!(!listed.contains("-N third"), "{listed}");
        assert!(listed.contains("-N busy"), "{listed}");
    });
}

#[test]
fn invalid_documents_are_refused_whole_naming_the_field() {
    in_netns(|| {
        run_ok("iptables-nft", &["-N", "present"]);
        let before = nft_ruleset();
        let valid_first = r#"{"op": "create_chain", "chain": "would-be"}"#;
        let cases: &[(&str, &str)] = &[
            (
                r#"{"transactions": [{"operations": [{"op": "teardown", "chain": "x", "bogus": 1}]}]}"#,
                "bogus",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "explode"}]}]}"#,
                "explode",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "forward_add", "chain": "v", "forward": {"protocol": "tcp", "public_port": 65536, "to": "192.0.2.1:22"}}]}]}"#,
                ".transactions[1].operations[0].forward.public_port",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "forward_add", "chain": "v", "forward": {"protocol": "tcp", "public_port": 0, "to": "192.0.2.1:22"}}]}]}"#,
                "port 0",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "forward_add", "chain": "v", "forward": {"protocol": "tcp", "public_port": 22, "to": "192.0.2.1"}}]}]}"#,
                ".transactions[1].operations[0].forward.to",
            ),
            (
                r#"{"transactions": [{"family": "inet6", "operations": []}]}"#,
                ".transactions[1].family",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "ensure_rule", "chain": "present", "rule": "-j DNAT --to-destination 192.0.2.1"}]}]}"#,
                ".transactions[1].operations[0]: invalid input: the DNAT target is only valid in the nat table",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "ensure_rule", "chain": "present", "rule": "-p tcp --dport 99999 -j ACCEPT"}]}]}"#,
                "99999",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "ensure_rule", "chain": "present", "rule": {"jump": "ACCEPT", "colour": "red"}}]}]}"#,
                ".transactions[1].operations[0].rule.colour: unknown field `colour`",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "create_chain", "chain": "a-chain-name-longer-than-28-bytes"}]}]}"#,
                ".transactions[1].operations[0]",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "sweep", "prefix": "", "keep": []}]}]}"#,
                "prefix",
            ),
            (
                r#"{"transactions": [{"operations": [{"op": "teardown", "chain": "PREROUTING"}]}]}"#,
                "built-in",
            ),
            (r#"{"version": 2, "transactions": []}"#, ".version"),
            (
                r#"{"transactions": [{"operations": [{"op": "teardown", "chain": 5}]}]}"#,
                ".transactions[1].operations[0]",
            ),
            (r#"{"transactions": "#, "line 1"),
            (r#"[]"#, "invalid document"),
        ];
        for (doc, needle) in cases {
            // A valid transaction before the broken one: nothing of the document applies.
            let doc = doc.replacen(
                r#"{"transactions": ["#,
                &format!(r#"{{"transactions": [{{"operations": [{valid_first}]}}, "#),
                1,
            );
            let (out, v) = apply(&doc);
            assert_eq!(out.status.code(), Some(2), "{doc}: {v}");
            assert_eq!(v["ok"], false);
            assert_eq!(v["error"]["kind"], "invalid_input", "{doc}: {v}");
            let message = v["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(needle),
                "{doc}: message {message:?} lacks {needle:?}"
            );
            assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
        }
        assert_eq!(
            nft_ruleset(),
            before,
            "an invalid document changed the kernel"
        );
        // Not UTF-8.
        let (out, v) = apply("{\"transactions\": [\u{0}]}");
        assert_eq!(out.status.code(), Some(2), "{v}");
    });
}

#[test]
fn json_listings_say_what_iptables_lists() {
    in_netns(|| {
        let (out, v) = apply(DOC);
        assert_eq!(out.status.code(), Some(0), "{v}");
        run_ok("iptables-nft", &["-P", "FORWARD", "DROP"]);
        for (table, args) in [
            ("nat", vec!["-t", "nat", "-S", "--json"]),
            ("filter", vec!["-S", "--json"]),
        ] {
            let text = run_ok(xtnl_bin(), &args);
            let v: Value = serde_json::from_str(&text).expect("listing is JSON");
            assert_eq!(v["version"], 1);
            assert_eq!(v["tables"][0]["table"], table);
            let mut lines = Vec::new();
            for c in v["tables"][0]["chains"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                let name = c["name"].as_str().unwrap_or_default().to_string();
                match c["policy"].as_str() {
                    Some(p) => lines.push(format!("-P {name} {p}")),
                    None => lines.push(format!("-N {name}")),
                }
                let _ = &c["references"];
            }
            for c in v["tables"][0]["chains"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                for r in c["rules"].as_array().cloned().unwrap_or_default() {
                    assert_eq!(r["expressible"], true);
                    lines.push(r["line"].as_str().unwrap_or_default().to_string());
                }
            }
            let oracle = if table == "nat" {
                run_ok("iptables-nft", &["-t", "nat", "-S"])
            } else {
                run_ok("iptables-nft", &["-S"])
            };
            assert_eq!(lines.join("\n") + "\n", oracle, "JSON listing of {table}");
        }
        let text = run_ok(xtnl_bin(), &["save", "--json"]);
        let v: Value = serde_json::from_str(&text).expect("save --json is JSON");
        let names: Vec<&str> = v["tables"]
            .as_array()
            .map(|t| t.iter().filter_map(|x| x["table"].as_str()).collect())
            .unwrap_or_default();
        // iptables-nft-save's order: filter before nat.
        assert_eq!(names, ["filter", "nat"]);
        let jump = &v["tables"][1]["chains"][0]["rules"][0];
        assert_eq!(jump["target"], "vcld-1");
        assert_eq!(jump["comment"], "jump to vcld-1");
    });
}
