//! The objects a command names: tables, chains, rules, sets and maps, elements, and the
//! stateful objects (counter, quota, limit, ct helper, ct timeout, flowtable).

use serde::{Deserialize, Serialize};

use crate::{none, some};

use crate::{Expression, Statement};

/// An nftables address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// IPv4 (`ip`).
    Ip,
    /// IPv6 (`ip6`).
    Ip6,
    /// IPv4 and IPv6 (`inet`).
    Inet,
    /// ARP (`arp`).
    Arp,
    /// Bridge (`bridge`).
    Bridge,
    /// Ingress/egress of a device (`netdev`).
    Netdev,
}

/// One string or a list of them: nft prints a single flag as a string, several as a list,
/// and both forms are kept as they were read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// `"random"`.
    One(String),
    /// `["random", "persistent"]`.
    Many(Vec<String>),
}

/// What a command acts on: `{"table": {...}}`, `{"rule": {...}}`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Object {
    /// A table.
    Table(Table),
    /// A chain.
    Chain(Chain),
    /// A rule.
    Rule(Rule),
    /// A set.
    Set(Set),
    /// A map: a set with `map` (the data type).
    Map(Set),
    /// A meter (a set that a `meter` statement fills), as newer nft lists it.
    Meter(Set),
    /// Elements of a set or map.
    Element(Element),
    /// A named counter.
    Counter(Counter),
    /// A named quota.
    Quota(Quota),
    /// A named limit.
    Limit(Limit),
    /// A ct helper.
    #[serde(rename = "ct helper")]
    CtHelper(CtHelper),
    /// A ct timeout policy.
    #[serde(rename = "ct timeout")]
    CtTimeout(CtTimeout),
    /// A ct expectation.
    #[serde(rename = "ct expectation")]
    CtExpectation(CtExpectation),
    /// A flowtable.
    Flowtable(Flowtable),
    /// The whole ruleset (`{"flush": {"ruleset": null}}`, `{"list": {"ruleset": null}}`).
    Ruleset(()),
    /// Anything else, kept as it was read.
    #[serde(untagged)]
    Other(serde_json::Value),
}

/// `{"table": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// The family.
    pub family: Family,
    /// The name (absent when a command names the table by handle).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// Flags (`dormant`, `owner`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
}

impl Table {
    /// A table of this family and name.
    pub fn new(family: Family, name: &str) -> Self {
        Table {
            family,
            name: Some(name.into()),
            handle: None,
            flags: None,
            comment: None,
        }
    }
}

/// `{"chain": {...}}`; a base chain has `type`, `hook`, `prio` (and `dev` in netdev).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    /// The family.
    pub family: Family,
    /// The table's name.
    pub table: String,
    /// The name (absent when a command names the chain by handle).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The new name (`rename`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub newname: Option<String>,
    /// The chain type (`filter`, `nat`, `route`).
    #[serde(
        default,
        deserialize_with = "some",
        rename = "type",
        skip_serializing_if = "none"
    )]
    pub kind: Option<String>,
    /// The hook (`input`, `prerouting`, `ingress`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub hook: Option<String>,
    /// The priority.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub prio: Option<i32>,
    /// The device(s) of a netdev chain.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dev: Option<OneOrMany>,
    /// The policy (`accept`, `drop`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub policy: Option<String>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
}

impl Chain {
    /// A regular (not base) chain.
    pub fn new(family: Family, table: &str, name: &str) -> Self {
        Chain {
            family,
            table: table.into(),
            name: Some(name.into()),
            handle: None,
            newname: None,
            kind: None,
            hook: None,
            prio: None,
            dev: None,
            policy: None,
            comment: None,
        }
    }
}

/// `{"rule": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The family.
    pub family: Family,
    /// The table's name.
    pub table: String,
    /// The chain's name.
    pub chain: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// Insert/add relative to the rule at this index.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub index: Option<u64>,
    /// Insert/add relative to the rule of this handle (older name of `handle` in commands).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub position: Option<u64>,
    /// The statements (absent in `delete`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub expr: Option<Vec<Statement>>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
}

impl Rule {
    /// A rule of these statements.
    pub fn new(family: Family, table: &str, chain: &str, expr: Vec<Statement>) -> Self {
        Rule {
            family,
            table: table.into(),
            chain: chain.into(),
            handle: None,
            index: None,
            position: None,
            expr: Some(expr),
            comment: None,
        }
    }
}

/// A set's key or a map's data type: `"ipv4_addr"` or a concatenation
/// `["ipv4_addr", "inet_service"]`, or `{"typeof": EXPR}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SetType {
    /// One type name. nft 1.0.6 prints a map's concatenated data type as one string
    /// (`"ipv4_addr . inet_service"`), which is kept as it is.
    Name(String),
    /// A concatenation of type names.
    Concat(Vec<String>),
    /// `{"typeof": EXPR}`.
    Typeof {
        /// The expression whose type is meant.
        #[serde(rename = "typeof")]
        of: Expression,
    },
}

/// `{"set": {...}}` or `{"map": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Set {
    /// The family.
    pub family: Family,
    /// The name (absent when a command names the set by handle).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The key type.
    #[serde(
        default,
        deserialize_with = "some",
        rename = "type",
        skip_serializing_if = "none"
    )]
    pub key: Option<SetType>,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
    /// The data type of a map.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub map: Option<SetType>,
    /// `performance` or `memory`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub policy: Option<String>,
    /// The maximum number of elements.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub size: Option<u64>,
    /// Flags (`constant`, `interval`, `timeout`, `dynamic`): nft lists them as a list and
    /// reads a single one as a string too.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
    /// The default timeout of elements, in seconds.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub timeout: Option<u64>,
    /// The garbage collection interval, in seconds.
    #[serde(default, rename = "gc-interval", skip_serializing_if = "none")]
    pub gc_interval: Option<u64>,
    /// Whether adjacent intervals merge.
    #[serde(default, rename = "auto-merge", skip_serializing_if = "none")]
    pub auto_merge: Option<bool>,
    /// The elements: values, `{"prefix"}`, `{"range"}`, `{"elem"}`, and for a map
    /// `[KEY, DATA]` pairs.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub elem: Option<Vec<Expression>>,
    /// Statements attached to every element (`counter`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub stmt: Option<Vec<Statement>>,
}

/// `{"element": {...}}`: elements to add to or delete from a set or map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Element {
    /// The family.
    pub family: Family,
    /// The table's name.
    pub table: String,
    /// The set's or map's name.
    pub name: String,
    /// The elements, as in [`Set::elem`].
    pub elem: Vec<Expression>,
}

/// `{"counter": {...}}`: a named counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counter {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
    /// Packets counted.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub packets: Option<u64>,
    /// Bytes counted.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub bytes: Option<u64>,
}

/// `{"quota": {...}}`: a named quota.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
    /// The quota, in bytes.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub bytes: Option<u64>,
    /// Bytes used so far.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub used: Option<u64>,
    /// Matches once over the quota (`over`) instead of until.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub inv: Option<bool>,
}

/// `{"limit": {...}}`: a named limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
    /// The rate.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub rate: Option<u64>,
    /// The time unit (`second`, `minute`, `hour`, `day`, `week`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub per: Option<String>,
    /// Matches over the rate (`over`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub inv: Option<bool>,
    /// The rate's unit when it is bytes (`bytes`, `kbytes`, `mbytes`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub rate_unit: Option<String>,
    /// The burst.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub burst: Option<u64>,
    /// The burst's unit when it is bytes.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub burst_unit: Option<String>,
    /// `pkts` or `bytes`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub unit: Option<String>,
}

/// `{"ct helper": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CtHelper {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The kernel helper (`ftp`, `sip`, ...).
    #[serde(
        default,
        deserialize_with = "some",
        rename = "type",
        skip_serializing_if = "none"
    )]
    pub kind: Option<String>,
    /// The layer 4 protocol (`tcp`, `udp`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub protocol: Option<String>,
    /// The layer 3 protocol (`ip`, `ip6`, `inet`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub l3proto: Option<String>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
}

/// `{"ct timeout": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CtTimeout {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The layer 4 protocol.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub protocol: Option<String>,
    /// The layer 3 protocol.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub l3proto: Option<String>,
    /// Timeouts by connection state, in seconds (as nft lists them).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub policy: Option<std::collections::BTreeMap<String, u64>>,
    /// One connection state whose timeout is set (input, with `value`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub state: Option<String>,
    /// The timeout of `state`, in seconds.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub value: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
}

/// `{"ct expectation": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CtExpectation {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The layer 3 protocol.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub l3proto: Option<String>,
    /// The layer 4 protocol.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub protocol: Option<String>,
    /// The expected destination port.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dport: Option<u64>,
    /// The expectation's timeout, in milliseconds.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub timeout: Option<u64>,
    /// The maximum number of expectations.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub size: Option<u64>,
}

/// `{"flowtable": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flowtable {
    /// The family.
    pub family: Family,
    /// The name.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub name: Option<String>,
    /// The table's name.
    pub table: String,
    /// The kernel's handle.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub handle: Option<u64>,
    /// The hook (`ingress`).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub hook: Option<String>,
    /// The priority.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub prio: Option<i32>,
    /// The device(s).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dev: Option<OneOrMany>,
}
