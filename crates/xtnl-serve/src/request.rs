//! One request line of `xtnl serve`: parsed whole (unknown keys are errors, as in `apply`
//! documents) before the engine sees it, and the response objects.
//!
//! A request is a JSON object with an optional `id` (any JSON value, echoed), optional
//! `netns` and `backend`, and exactly one of:
//! - `"ping": {}`;
//! - `"transactions": [...]` (with an optional `"version": 1`): an `xtnl apply` document;
//! - `"operations": [...]` (with an optional `"family"`): one transaction of it;
//! - `"iptables": ["-t", "nat", "-N", "vcld-5205"]`: one iptables command line (add
//!   `"--json"` to a `-S`/`-L` for the JSON listing);
//! - `"list": {"family": "ipv4", "table": "nat", "chain": "vcld-5205"}`: the JSON listing of a
//!   table (or one chain), as `-S --json` prints it;
//! - `"save": {"family": "ipv4", "table": "nat"}`: iptables' tables as JSON (`save --json`);
//!   without `table`, every iptables table of the family;
//! - `"dropin": {"program": ..., "args": [...], ...}`: a whole iptables invocation from xtnl's
//!   thin client, answered with its output bytes and status ([`super::thin`]).

use serde_json::{Map, Value, json};

use crate::backend::BackendChoice;
use crate::error::{Error, Result};
use crate::json::{self, Document};
use crate::model::Family;
use crate::netns::Netns;

/// The version of requests and responses (that of `apply` documents).
pub const VERSION: u32 = 1;

/// What a request asks for.
#[derive(Debug, Clone)]
pub enum Body {
    /// `"ping"`: the service's counters; changes nothing.
    Ping,
    /// `"apply"`: a JSON document of transactions, as `xtnl apply` takes.
    Apply(Document),
    /// `"iptables"`: one iptables command line, as the drop-in takes it (without the program name).
    Iptables(Vec<String>),
    /// `"list"`: a table's (or one chain's) rules, as JSON.
    List {
        /// The table's family.
        family: Family,
        /// The table's name.
        table: String,
        /// Only this chain; `None` for the whole table.
        chain: Option<String>,
    },
    /// `"dropin"`: a whole iptables invocation from xtnl's thin client, answered with its
    /// output bytes and status (see [`super::thin`]).
    Dropin(super::thin::Dropin),
    /// `"save"`: iptables' tables as JSON (what `save --json` prints), one or all of them.
    Save {
        /// The family to save (`ipv4` or `ipv6`).
        family: Family,
        /// Only this table; `None` for every iptables table of the family.
        table: Option<String>,
    },
}

impl Body {
    /// Whether the request can change the ruleset (and so joins a group commit).
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Ping => "ping",
            Body::Apply(_) => "apply",
            Body::Iptables(_) => "iptables",
            Body::List { .. } => "list",
            Body::Save { .. } => "save",
            Body::Dropin(_) => "dropin",
        }
    }
}

/// A parsed request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The caller's `"id"`, repeated in the response (any JSON value).
    pub id: Value,
    /// `"netns"`: the network namespace to act in; `None` for the service's own.
    pub netns: Option<Netns>,
    /// `"backend"`: `nft`, `legacy` or `auto`; `None` for the service's default.
    pub backend: Option<BackendChoice>,
    /// What the request asks for.
    pub body: Body,
}

const BODY_KEYS: [&str; 7] = [
    "ping",
    "transactions",
    "operations",
    "iptables",
    "list",
    "save",
    "dropin",
];

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(format!("invalid request: {}", msg.into()))
}

/// The `id` of a line that may not be a valid request, for its error response.
pub fn id_of(line: &[u8]) -> Value {
    serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null)
}

fn string_field(o: &Map<String, Value>, key: &str) -> Result<Option<String>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(format!("{key} must be a string"))),
    }
}

fn family_field(o: &Map<String, Value>, default: Family) -> Result<Family> {
    match string_field(o, "family")? {
        None => Ok(default),
        Some(f) => f.parse().map_err(|e: Error| bad(e.to_string())),
    }
}

fn check_keys(o: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<()> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(bad(format!(
            "unknown key {k:?} in {what} (allowed: {})",
            allowed.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Parses one line (without its newline).
pub fn parse(line: &[u8]) -> Result<Request> {
    let text = std::str::from_utf8(line)
        .map_err(|e| bad(format!("not UTF-8 (byte {} is not)", e.valid_up_to())))?;
    let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let Value::Object(o) = v else {
        return Err(bad("a request is a JSON object"));
    };
    let id = o.get("id").cloned().unwrap_or(Value::Null);
    let netns = string_field(&o, "netns")?
        .map(|n| Netns::resolve(&n))
        .transpose()?;
    let backend = string_field(&o, "backend")?
        .map(|b| b.parse())
        .transpose()?;
    let present: Vec<&str> = BODY_KEYS
        .iter()
        .copied()
        .filter(|k| o.contains_key(*k))
        .collect();
    let key = match present.as_slice() {
        [k] => *k,
        [] => {
            return Err(bad(format!(
                "no request: one of {} is needed",
                BODY_KEYS.join(", ")
            )));
        }
        many => return Err(bad(format!("more than one request: {}", many.join(", ")))),
    };
    let common = ["id", "netns", "backend", key];
    let body = match key {
        "ping" => {
            check_keys(&o, &common, "a ping")?;
            Body::Ping
        }
        "transactions" => {
            check_keys(&o, &[&common[..], &["version"]].concat(), "a request")?;
            let doc = json!({"version": o.get("version"), "transactions": o["transactions"]});
            Body::Apply(parse_document(&doc)?)
        }
        "operations" => {
            check_keys(&o, &[&common[..], &["family"]].concat(), "a request")?;
            let mut t = json!({"operations": o["operations"]});
            if let Some(f) = o.get("family") {
                t["family"] = f.clone();
            }
            Body::Apply(parse_document(&json!({"transactions": [t]}))?)
        }
        "iptables" => {
            check_keys(&o, &common, "a request")?;
            let args = o["iptables"]
                .as_array()
                .ok_or_else(|| bad("iptables must be an array of strings"))?
                .iter()
                .map(|a| {
                    a.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad("iptables must be an array of strings"))
                })
                .collect::<Result<Vec<_>>>()?;
            if args.is_empty() {
                return Err(bad("iptables is empty: give a command such as [\"-S\"]"));
            }
            Body::Iptables(args)
        }
        "dropin" => {
            check_keys(&o, &common, "a request")?;
            Body::Dropin(super::thin::parse(&o["dropin"])?)
        }
        "list" | "save" => {
            check_keys(&o, &common, "a request")?;
            let Value::Object(a) = &o[key] else {
                return Err(bad(format!("{key} must be an object")));
            };
            if key == "list" {
                check_keys(a, &["family", "table", "chain"], "list")?;
                Body::List {
                    family: family_field(a, Family::Ipv4)?,
                    table: string_field(a, "table")?.unwrap_or_else(|| "filter".into()),
                    chain: string_field(a, "chain")?,
                }
            } else {
                check_keys(a, &["family", "table"], "save")?;
                Body::Save {
                    family: family_field(a, Family::Ipv4)?,
                    table: string_field(a, "table")?,
                }
            }
        }
        _ => return Err(bad("unreachable request kind")),
    };
    Ok(Request {
        id,
        netns,
        backend,
        body,
    })
}

fn parse_document(doc: &Value) -> Result<Document> {
    let mut doc = doc.clone();
    if let Some(o) = doc.as_object_mut() {
        o.retain(|_, v| !v.is_null());
    }
    json::parse_value(&doc)
}

/// A response: `fields` with the request's `id`, `version` and `ok` first.
pub fn response(id: &Value, ok: bool, fields: Value) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), id.clone());
    o.insert("version".into(), json!(VERSION));
    o.insert("ok".into(), json!(ok));
    if let Value::Object(f) = fields {
        for (k, v) in f {
            if k != "version" && k != "ok" {
                o.insert(k, v);
            }
        }
    }
    Value::Object(o)
}

/// The response to a request that failed as a whole, with `apply`'s error object.
pub fn error_response(id: &Value, e: &Error) -> Value {
    response(id, false, json!({"error": json::error_value(e)}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_bad_ones_say_why() {
        let r = parse(br#"{"id": 7, "ping": {}}"#).unwrap();
        assert_eq!(r.id, json!(7));
        assert!(matches!(r.body, Body::Ping));
        let r = parse(br#"{"id":"a","netns":"blue","iptables":["-t","nat","-S"]}"#).unwrap();
        assert_eq!(
            r.netns.unwrap().path,
            std::path::Path::new("/run/netns/blue")
        );
        let r = parse(br#"{"operations":[{"op":"teardown","chain":"vcld-1"}],"family":"ipv6"}"#)
            .unwrap();
        match r.body {
            Body::Apply(d) => assert_eq!(d.transactions[0].family, Family::Ipv6),
            other => panic!("{other:?}"),
        }
        for (line, want) in [
            (&b"{"[..], "not JSON"),
            (b"[1]", "a JSON object"),
            (b"{\"id\":1}", "no request"),
            (b"{\"ping\":{},\"save\":{}}", "more than one"),
            (b"{\"ping\":{},\"x\":1}", "unknown key \"x\""),
            (b"{\"iptables\":[]}", "iptables is empty"),
            (b"{\"iptables\":[1]}", "array of strings"),
            (b"{\"netns\":\"..\",\"ping\":{}}", "not a namespace name"),
            (b"{\"list\":{\"family\":\"ipx\"}}", "unknown table family"),
            (
                b"{\"operations\":[{\"op\":\"teardown\"}]}",
                "missing field `chain`",
            ),
        ] {
            let e = parse(line).unwrap_err().to_string();
            assert!(e.contains(want), "{}: {e}", String::from_utf8_lossy(line));
        }
        assert_eq!(id_of(br#"{"id":[1,2],"x":1}"#), json!([1, 2]));
        assert_eq!(id_of(b"{"), Value::Null);
    }
}
