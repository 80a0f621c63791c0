//! Expressions: the values and packet data that statements compare, look up and write.

use serde::{Deserialize, Serialize};

use crate::{none, some};

use crate::{OneOrMany, Target};

/// An expression: an immediate value, a list, or a typed object `{"payload": {...}}`, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Expression {
    /// A string: an address, a symbolic constant (`"established"`, `"tcp"`), an interface
    /// name, or a set reference `"@NAME"`.
    String(String),
    /// A number.
    Number(u64),
    /// A boolean (`exists` / `missing` of an option or extension header).
    Bool(bool),
    /// A list: the flags of a flag match (`["established", "related"]`), the bits of a
    /// binop, a map element `[KEY, DATA]`.
    List(Vec<Expression>),
    /// A typed object.
    Object(Box<ExprObject>),
}

impl Expression {
    /// `{"payload": {"protocol": PROTOCOL, "field": FIELD}}`.
    pub fn payload(protocol: &str, field: &str) -> Self {
        Expression::Object(Box::new(ExprObject::Payload(Payload {
            protocol: Some(protocol.into()),
            field: Some(field.into()),
            base: None,
            offset: None,
            len: None,
        })))
    }

    /// `{"meta": {"key": KEY}}`.
    pub fn meta(key: &str) -> Self {
        Expression::Object(Box::new(ExprObject::Meta(Key { key: key.into() })))
    }

    /// A string value.
    pub fn string(value: &str) -> Self {
        Expression::String(value.into())
    }
}

/// The typed expressions: `{"NAME": ARGUMENT}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExprObject {
    /// `{"payload": {"protocol", "field"}}` or raw `{"payload": {"base", "offset", "len"}}`.
    Payload(Payload),
    /// `{"exthdr": {"name", "field", "offset"}}`: an IPv6 extension header.
    Exthdr(Exthdr),
    /// `{"tcp option": {"name", "field"}}`.
    #[serde(rename = "tcp option")]
    TcpOption(Exthdr),
    /// `{"ip option": {"name", "field"}}`.
    #[serde(rename = "ip option")]
    IpOption(Exthdr),
    /// `{"sctp chunk": {"name", "field"}}`.
    #[serde(rename = "sctp chunk")]
    SctpChunk(Exthdr),
    /// `{"meta": {"key"}}`.
    Meta(Key),
    /// `{"ct": {"key", "family", "dir"}}`.
    Ct(Ct),
    /// `{"fib": {"result", "flags"}}`.
    Fib(Fib),
    /// `{"rt": {"key", "family"}}`.
    Rt(Rt),
    /// `{"socket": {"key", "level"}}`.
    Socket(Socket),
    /// `{"osf": {"key", "ttl"}}`.
    Osf(Osf),
    /// `{"ipsec": {"key", "dir", "spnum", "family"}}`.
    Ipsec(Ipsec),
    /// `{"numgen": {"mode", "mod", "offset"}}`.
    Numgen(Numgen),
    /// `{"jhash": {"mod", "offset", "expr", "seed"}}`.
    Jhash(Jhash),
    /// `{"symhash": {"mod", "offset"}}`.
    Symhash(Symhash),
    /// `{"prefix": {"addr", "len"}}`.
    Prefix(Prefix),
    /// `{"range": [LOW, HIGH]}`.
    Range(Vec<Expression>),
    /// `{"set": [...]}`: an anonymous set (or a single value in it).
    Set(Expression),
    /// `{"map": {"key", "data"}}`: a map lookup.
    Map(MapLookup),
    /// `{"concat": [...]}`.
    Concat(Vec<Expression>),
    /// `{"elem": {"val", "timeout", "expires", "comment"}}`: an element with properties.
    Elem(Elem),
    /// `{"&": [LEFT, RIGHT]}`.
    #[serde(rename = "&")]
    And(Vec<Expression>),
    /// `{"|": [LEFT, RIGHT]}`.
    #[serde(rename = "|")]
    Or(Vec<Expression>),
    /// `{"^": [LEFT, RIGHT]}`.
    #[serde(rename = "^")]
    Xor(Vec<Expression>),
    /// `{"<<": [LEFT, RIGHT]}`.
    #[serde(rename = "<<")]
    Lshift(Vec<Expression>),
    /// `{">>": [LEFT, RIGHT]}`.
    #[serde(rename = ">>")]
    Rshift(Vec<Expression>),
    /// `{"accept": null}` (as a map's data).
    Accept(()),
    /// `{"drop": null}`.
    Drop(()),
    /// `{"continue": null}`.
    Continue(()),
    /// `{"return": null}`.
    Return(()),
    /// `{"jump": {"target"}}`.
    Jump(Target),
    /// `{"goto": {"target"}}`.
    Goto(Target),
    /// Anything else, kept as it was read.
    #[serde(untagged)]
    Other(serde_json::Value),
}

/// `{"payload": {...}}`: a header field by protocol and name, or raw bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Payload {
    /// The header (`ip`, `tcp`, `th`, `ether`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub protocol: Option<String>,
    /// The field (`saddr`, `dport`, ...).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub field: Option<String>,
    /// Raw: `ll`, `nh`, `th`, `ih`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub base: Option<String>,
    /// Raw: the offset in bits.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub offset: Option<u64>,
    /// Raw: the length in bits.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub len: Option<u64>,
}

/// An extension header, TCP or IP option or SCTP chunk: by name, and a field or offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exthdr {
    /// The header or option (`dst`, `maxseg`, `rr`).
    pub name: String,
    /// Its field (`size`); absent for an existence check.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub field: Option<String>,
    /// The offset (routing headers).
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub offset: Option<u64>,
}

/// `{"key": KEY}`: a meta key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Key {
    /// `mark`, `iifname`, `l4proto`, ...
    pub key: String,
}

/// `{"ct": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ct {
    /// `state`, `mark`, `status`, `saddr`, ...
    pub key: String,
    /// `ip` or `ip6` for addresses.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
    /// `original` or `reply`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dir: Option<String>,
}

/// `{"fib": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fib {
    /// `oif`, `oifname`, `type`.
    pub result: String,
    /// `saddr`, `daddr`, `mark`, `iif`, `oif`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub flags: Option<OneOrMany>,
}

/// `{"rt": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rt {
    /// `classid`, `nexthop`, `mtu`, `ipsec`.
    pub key: String,
    /// `ip` or `ip6` for `nexthop`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
}

/// `{"socket": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Socket {
    /// `transparent`, `mark`, `wildcard`, `cgroupv2`.
    pub key: String,
    /// The cgroup level.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub level: Option<u64>,
}

/// `{"osf": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Osf {
    /// `name` or `version`.
    pub key: String,
    /// `loose` or `skip`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub ttl: Option<String>,
}

/// `{"ipsec": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ipsec {
    /// `reqid`, `spi`, `saddr`, `daddr`.
    pub key: String,
    /// `ip` or `ip6` for addresses.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub family: Option<String>,
    /// `in` or `out`.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub dir: Option<String>,
    /// The policy number.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub spnum: Option<u64>,
}

/// `{"numgen": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Numgen {
    /// `inc` or `random`.
    pub mode: String,
    /// The modulus.
    #[serde(rename = "mod")]
    pub modulus: u64,
    /// Added to the result.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub offset: Option<u64>,
}

/// `{"jhash": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jhash {
    /// The modulus.
    #[serde(rename = "mod")]
    pub modulus: u64,
    /// Added to the result.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub offset: Option<u64>,
    /// What is hashed.
    pub expr: Expression,
    /// The seed.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub seed: Option<u64>,
}

/// `{"symhash": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Symhash {
    /// The modulus.
    #[serde(rename = "mod")]
    pub modulus: u64,
    /// Added to the result.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub offset: Option<u64>,
}

/// `{"prefix": {"addr", "len"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prefix {
    /// The address.
    pub addr: Expression,
    /// The prefix length.
    pub len: u64,
}

/// `{"map": {"key", "data"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapLookup {
    /// What is looked up.
    pub key: Expression,
    /// The map: `{"set": [[KEY, DATA], ...]}` or `"@NAME"`.
    pub data: Expression,
}

/// `{"elem": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Elem {
    /// The value.
    pub val: Expression,
    /// The timeout, in seconds.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub timeout: Option<u64>,
    /// Seconds left before it expires.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub expires: Option<u64>,
    /// The comment.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub comment: Option<String>,
    /// A counter of the element.
    #[serde(default, deserialize_with = "some", skip_serializing_if = "none")]
    pub counter: Option<crate::CounterStmt>,
}
