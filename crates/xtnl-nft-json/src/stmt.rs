//! Rule statements: what a rule's `expr` array holds.

use serde::{Deserialize, Serialize};

use crate::{none, some};

use crate::{Expression, OneOrMany};

/// One statement of a rule: `{"match": {...}}`, `{"accept": null}`, `{"counter": ...}`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statement {
    /// `{"match": {"op", "left", "right"}}`.
    Match(Match),
    /// `{"accept": null}`.
    Accept(()),
    /// `{"drop": null}`.
    Drop(()),
    /// `{"continue": null}`.
    Continue(()),
    /// `{"return": null}`.
    Return(()),
    /// `{"jump": {"target": CHAIN}}`.
    Jump(Target),
    /// `{"goto": {"target": CHAIN}}`.
    Goto(Target),
    /// `{"queue": {...}}`.
    Queue(Option<Queue>),
    /// `{"vmap": {"key", "data"}}`: a verdict map lookup.
    Vmap(Vmap),
    /// `{"counter": {"packets", "bytes"}}`, or `{"counter": NAME}` for a named counter.
    Counter(Option<CounterStmt>),
    /// `{"mangle": {"key", "value"}}`: payload, meta, ct (`ct mark set`), exthdr and tcp
    /// option writes.
    Mangle(Mangle),
    /// `{"quota": {...}}` or `{"quota": NAME}`.
    Quota(QuotaStmt),
    /// `{"limit": {...}}` or `{"limit": NAME}`.
    Limit(LimitStmt),
    /// `{"log": {...}}` (`null`: a plain `log`).
    Log(Option<Log>),
    /// `{"snat": {...}}`.
    Snat(Option<Nat>),
    /// `{"dnat": {...}}`.
    Dnat(Option<Nat>),
    /// `{"masquerade": {...}}`.
    Masquerade(Option<Nat>),
    /// `{"redirect": {...}}`.
    Redirect(Option<Nat>),
    /// `{"reject": {...}}` (`null`: the family's default).
    Reject(Option<Reject>),
    /// `{"set": {"op", "elem", "set"}}`: add or update an element of a set from the packet.
    Set(SetStmt),
    /// `{"map": {"op", "elem", "data", "map"}}`: the same for a map.
    Map(MapStmt),
    /// `{"ct helper": NAME}`: assigns a ct helper object.
    #[serde(rename = "ct helper")]
    CtHelper(String),
    /// `{"ct timeout": NAME}`: assigns a ct timeout object.
    #[serde(rename = "ct timeout")]
    CtTimeout(String),
    /// `{"ct expectation": NAME}`: assigns a ct expectation object.
    #[serde(rename = "ct expectation")]
    CtExpectation(String),
    /// `{"ct count": {"val", "inv"}}`: a connection limit.
    #[serde(rename = "ct count")]
    CtCount(CtCount),
    /// `{"meter": {"name", "key", "stmt"}}`.
    Meter(Meter),
    /// `{"last": {"used"}}` (`null`: never matched, or stateless output).
    Last(Option<Last>),
    /// `{"secmark": NAME}`: assigns a secmark object.
    Secmark(String),
    /// `{"notrack": null}`.
    Notrack(()),
    /// `{"dup": {"addr", "dev"}}`.
    Dup(Dup),
    /// `{"fwd": {"dev", "family", "addr"}}`.
    Fwd(Fwd),
    /// `{"tproxy": {"family", "addr", "port"}}`.
    Tproxy(Tproxy),
    /// `{"synproxy": {...}}` or `{"synproxy": NAME}`.
    Synproxy(SynproxyStmt),
    /// `{"flow": {"op": "add", "flowtable": "@NAME"}}`: offload to a flowtable.
    Flow(Flow),
    /// `{"xt": {"type", "name"}}`: an x_tables match or target that iptables-nft wrote (nft
    /// prints only its name; its payload is not in the JSON).
    Xt(Xt),
    /// Anything else, kept as it was read.
    #[serde(untagged)]
    Other(serde_json::Value),
}

/// `{"match": {"op": OP, "left": EXPR, "right": EXPR}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// `==`, `!=`, `<`, `>`, `<=`, `>=`, `in` (flags, sets).
    pub op: String,
    /// What is read from the packet.
    pub left: Expression,
    /// What it is compared with.
    pub right: Expression,
}

/// The chain of a jump or goto.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The chain's name.
    pub target: String,
}

/// `{"queue": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Queue {
    /// The queue number, or a range or map of them.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub num: Option<Expression>,
    /// `bypass`, `fanout`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
}

/// `{"vmap": {"key": EXPR, "data": EXPR}}`: `data` is `{"set": [[KEY, VERDICT], ...]}` or a
/// named map `"@NAME"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vmap {
    /// What is looked up.
    pub key: Expression,
    /// The map.
    pub data: Expression,
}

/// A counter statement's argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CounterStmt {
    /// `"NAME"`: a named counter.
    Named(String),
    /// An anonymous counter's values.
    Anonymous(CounterValues),
}

/// `{"mangle": {"key": EXPR, "value": EXPR}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mangle {
    /// What is written (payload, meta, ct, exthdr, tcp option).
    pub key: Expression,
    /// The value written.
    pub value: Expression,
}

/// A quota statement's argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QuotaStmt {
    /// `"NAME"`: a named quota.
    Named(String),
    /// An anonymous quota.
    Anonymous(QuotaValues),
}

/// A limit statement's argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LimitStmt {
    /// `"NAME"`: a named limit.
    Named(String),
    /// An anonymous limit.
    Anonymous(LimitValues),
}

/// `{"log": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Log {
    /// The prefix.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub prefix: Option<String>,
    /// The nflog group.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub group: Option<u64>,
    /// Bytes of the packet copied to nflog.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub snaplen: Option<u64>,
    /// Packets queued in the kernel before nflog sends them.
    #[serde(default, rename = "queue-threshold", skip_serializing_if = "none")]
    pub queue_threshold: Option<u64>,
    /// The syslog level (`emerg` ... `debug`, `audit`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub level: Option<String>,
    /// `tcp sequence`, `tcp options`, `ip options`, `skuid`, `ether`, `all`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
}

/// The argument of snat, dnat, masquerade and redirect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nat {
    /// `ip` or `ip6` (in inet tables).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
    /// The address: a value, a range, a prefix or a map.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub addr: Option<Expression>,
    /// The port: a value, a range or a map.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub port: Option<Expression>,
    /// `random`, `fully-random`, `persistent`, `netmap`, `prefix`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
    /// Type flags (`interval`, `prefix`, newer nft).
    #[serde(default, skip_serializing_if = "none", rename = "type_flags")]
    pub type_flags: Option<OneOrMany>,
}

/// `{"reject": {"type", "expr"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reject {
    /// `tcp reset`, `icmp`, `icmpv6`, `icmpx`.
    #[serde(
        default,
        deserialize_with = "some",
        rename = "type",
        skip_serializing_if = "none"
    )]
    pub kind: Option<String>,
    /// The ICMP code (`port-unreachable`, `admin-prohibited`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub expr: Option<Expression>,
}

/// `{"set": {"op", "elem", "set"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetStmt {
    /// `add`, `update`, `delete`.
    pub op: String,
    /// The element built from the packet (with `{"elem": {"timeout"}}` when timed).
    pub elem: Expression,
    /// The set, `@NAME`.
    pub set: String,
    /// Statements attached to the element (`counter`, `limit`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub stmt: Option<Vec<Statement>>,
}

/// `{"map": {"op", "elem", "data", "map"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapStmt {
    /// `add`, `update`, `delete`.
    pub op: String,
    /// The key built from the packet.
    pub elem: Expression,
    /// The data stored.
    pub data: Expression,
    /// The map, `@NAME`.
    pub map: String,
    /// Statements attached to the element.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub stmt: Option<Vec<Statement>>,
}

/// `{"dup": {"addr", "dev"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dup {
    /// The address to send the copy to (a device name in netdev).
    pub addr: Expression,
    /// The device.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dev: Option<Expression>,
}

/// `{"fwd": {"dev", "family", "addr"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fwd {
    /// The device.
    pub dev: Expression,
    /// `ip` or `ip6`, with `addr`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
    /// The next hop.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub addr: Option<Expression>,
}

/// `{"tproxy": {"family", "addr", "port"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tproxy {
    /// `ip` or `ip6` (in inet tables).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
    /// The local address.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub addr: Option<Expression>,
    /// The local port.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub port: Option<Expression>,
}

/// A synproxy statement's argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SynproxyStmt {
    /// `"NAME"`: a named synproxy object.
    Named(String),
    /// Anonymous synproxy settings.
    Anonymous(SynproxyValues),
}

/// `{"flow": {"op": "add", "flowtable": "@NAME"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// `add`.
    pub op: String,
    /// The flowtable, `@NAME`.
    pub flowtable: String,
}

/// `{"xt": {"type", "name"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Xt {
    /// `match`, `target` or `watcher`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The extension's name (`conntrack`, `MASQUERADE`).
    pub name: String,
}

/// The values of an anonymous counter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterValues {
    /// Packets counted.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub packets: Option<u64>,
    /// Bytes counted.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub bytes: Option<u64>,
}

/// An anonymous quota.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaValues {
    /// The quota.
    pub val: u64,
    /// Its unit (`bytes`, `kbytes`, `mbytes`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub val_unit: Option<String>,
    /// Used so far.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub used: Option<u64>,
    /// Its unit.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub used_unit: Option<String>,
    /// `over`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub inv: Option<bool>,
}

/// An anonymous limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitValues {
    /// The rate.
    pub rate: u64,
    /// The rate's unit when it is bytes.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub rate_unit: Option<String>,
    /// The burst.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub burst: Option<u64>,
    /// The burst's unit when it is bytes.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub burst_unit: Option<String>,
    /// The time unit.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub per: Option<String>,
    /// `over`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub inv: Option<bool>,
}

/// Anonymous synproxy settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynproxyValues {
    /// The MSS.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub mss: Option<u64>,
    /// The window scale.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub wscale: Option<u64>,
    /// `timestamp`, `sack-perm`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
}

/// `{"ct count": {"val", "inv"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CtCount {
    /// The connection count threshold.
    pub val: u64,
    /// Matches over the threshold.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub inv: Option<bool>,
}

/// `{"meter": {"name", "key", "stmt", "size"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meter {
    /// The key.
    pub key: Expression,
    /// The statement applied per key.
    pub stmt: Box<Statement>,
    /// The maximum number of keys.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub size: Option<u64>,
    /// The meter's name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
}

/// `{"last": {"used": MS}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Last {
    /// Milliseconds since the rule last matched.
    pub used: u64,
}
