//! The `xtnl apply` document: transactions of operations, parsed strictly (unknown fields
//! are errors, every error names the path of the offending field) and turned into
//! [`Operation`]s that are all validated before anything reaches the kernel.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::ipt::IptRule;
use crate::model::{Family, PortRange};
use crate::nathost::{
    Forward, ForwardKey, ForwardProtocol, HostSetup, Operation, Reservation, rule_from_words,
};

/// The largest document `xtnl apply` reads.
pub const MAX_DOCUMENT_BYTES: usize = crate::limits::MAX_JSON_DOCUMENT_BYTES;
/// The most operations one transaction may hold.
pub const MAX_OPERATIONS: usize = crate::limits::MAX_JSON_OPERATIONS;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentIn {
    #[serde(default)]
    version: Option<u32>,
    transactions: Vec<TransactionIn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TransactionIn {
    #[serde(default)]
    family: Option<String>,
    operations: Vec<OperationIn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ForwardIn {
    protocol: String,
    public_port: u32,
    to: String,
    #[serde(default)]
    in_interface: Option<String>,
    #[serde(default)]
    comment: Option<String>,
}

/// A rule: iptables words (what follows `-A CHAIN`) as a string, or [`RuleFields`]. Read
/// as a value first so that errors in the fields name the field (an untagged enum would only
/// say that nothing matched).
type RuleIn = serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFields {
    #[serde(default)]
    protocol: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    destination: Option<String>,
    #[serde(default)]
    in_interface: Option<String>,
    #[serde(default)]
    out_interface: Option<String>,
    #[serde(default)]
    sport: Option<PortIn>,
    #[serde(default)]
    dport: Option<PortIn>,
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    ctstate: Option<Vec<String>>,
    #[serde(default)]
    jump: Option<String>,
    #[serde(default)]
    goto: Option<String>,
    #[serde(default)]
    to_destination: Option<String>,
    #[serde(default)]
    to_source: Option<String>,
    #[serde(default)]
    to_ports: Option<String>,
    #[serde(default)]
    reject_with: Option<String>,
    #[serde(default)]
    log_prefix: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum PortIn {
    Number(u32),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum OperationIn {
    ReservationSetup {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        table: Option<String>,
        chain: String,
        #[serde(default)]
        entry: Option<String>,
        #[serde(default)]
        jump_comment: Option<String>,
        #[serde(default)]
        forwards: Vec<ForwardIn>,
    },
    ForwardAdd {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        table: Option<String>,
        chain: String,
        forward: ForwardIn,
    },
    ForwardRemove {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        table: Option<String>,
        chain: String,
        protocol: String,
        public_port: u32,
        #[serde(default)]
        in_interface: Option<String>,
        #[serde(default)]
        to: Option<String>,
    },
    Teardown {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        table: Option<String>,
        chain: String,
        #[serde(default)]
        entry: Option<String>,
    },
    Sweep {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        table: Option<String>,
        prefix: String,
        keep: Vec<String>,
    },
    HostSetup {
        /// `"chains"` (default) or `"map"`: see [`crate::nathost::map::Layout`].
        #[serde(default)]
        layout: Option<String>,
        #[serde(default)]
        chain: Option<String>,
        public_interface: String,
        private_interface: String,
        private_network: String,
        public_address: String,
        ports: Vec<String>,
        #[serde(default)]
        comment_prefix: Option<String>,
    },
    CreateChain {
        #[serde(default)]
        table: Option<String>,
        chain: String,
    },
    FlushChain {
        #[serde(default)]
        table: Option<String>,
        chain: String,
    },
    DeleteChain {
        #[serde(default)]
        table: Option<String>,
        chain: String,
    },
    EnsureRule {
        #[serde(default)]
        table: Option<String>,
        chain: String,
        rule: RuleIn,
        #[serde(default)]
        position: Option<String>,
    },
    DeleteRule {
        #[serde(default)]
        table: Option<String>,
        chain: String,
        rule: RuleIn,
    },
}

/// A transaction of the document.
#[derive(Debug, Clone)]
pub struct TransactionDoc {
    /// The `"family"` every operation of the transaction is in.
    pub family: Family,
    /// The `"operations"`, in order; they commit together or not at all.
    pub operations: Vec<Operation>,
    /// The layout of its NAT-host operations (one per transaction; `"layout"` on each).
    pub layout: crate::nathost::map::Layout,
}

fn layout_of(o: &OperationIn) -> Option<&str> {
    match o {
        OperationIn::ReservationSetup { layout, .. }
        | OperationIn::ForwardAdd { layout, .. }
        | OperationIn::ForwardRemove { layout, .. }
        | OperationIn::Teardown { layout, .. }
        | OperationIn::Sweep { layout, .. }
        | OperationIn::HostSetup { layout, .. } => layout.as_deref(),
        _ => None,
    }
}

/// A parsed and validated document.
#[derive(Debug, Clone)]
pub struct Document {
    /// The `"transactions"`, in order; each is committed on its own.
    pub transactions: Vec<TransactionDoc>,
}

fn at(path: &str, e: Error) -> Error {
    e.context(format!("invalid document at {path}"))
}

fn invalid(path: &str, message: impl Into<String>) -> Error {
    at(path, Error::InvalidInput(message.into()))
}

/// Parses and validates a whole document; nothing of it is applied when any part is wrong.
pub fn parse(bytes: &[u8]) -> Result<Document> {
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(Error::InvalidInput(format!(
            "document of {} bytes is larger than the limit of {MAX_DOCUMENT_BYTES}",
            bytes.len()
        )));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::InvalidInput(format!(
            "document is not UTF-8 (byte {} is not)",
            e.valid_up_to()
        ))
    })?;
    let de = &mut serde_json::Deserializer::from_str(text);
    let doc: DocumentIn = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = dotted(&e.path().to_string());
        let inner = e.into_inner();
        Error::InvalidInput(format!(
            "invalid document at {path} (line {}, column {}): {}",
            inner.line(),
            inner.column(),
            strip_position(&inner.to_string())
        ))
    })?;
    if let Some(v) = doc.version
        && v != 1
    {
        return Err(invalid(
            ".version",
            format!("version {v} is not supported (1 is)"),
        ));
    }
    let mut transactions = Vec::with_capacity(doc.transactions.len());
    for (ti, t) in doc.transactions.into_iter().enumerate() {
        let tpath = format!(".transactions[{ti}]");
        let family = match t.family.as_deref() {
            None | Some("ipv4" | "ip") => Family::Ipv4,
            Some("ipv6" | "ip6") => Family::Ipv6,
            Some("inet") => Family::Inet,
            Some(f) => {
                return Err(invalid(
                    &format!("{tpath}.family"),
                    format!("family {f:?} is not ipv4, ipv6 or inet"),
                ));
            }
        };
        if family == Family::Inet
            && let Some((oi, o)) = t.operations.iter().enumerate().find(|(_, o)| !inet_op(o))
        {
            return Err(invalid(
                &format!("{tpath}.operations[{oi}]"),
                format!(
                    "{} is for iptables' own tables (families ipv4 and ipv6); family inet takes \
                     create_chain, flush_chain, delete_chain, ensure_rule and delete_rule",
                    o.kind()
                ),
            ));
        }
        if t.operations.len() > MAX_OPERATIONS {
            return Err(invalid(
                &format!("{tpath}.operations"),
                format!(
                    "{} operations in one transaction; the limit is {MAX_OPERATIONS}",
                    t.operations.len()
                ),
            ));
        }
        let mut operations = Vec::with_capacity(t.operations.len());
        let mut layout = None;
        for (oi, o) in t.operations.into_iter().enumerate() {
            let opath = format!("{tpath}.operations[{oi}]");
            let this = crate::nathost::map::Layout::parse(layout_of(&o).unwrap_or("chains"))
                .map_err(|e| at(&format!("{opath}.layout"), e))?;
            if layout.is_some_and(|l| l != this) {
                return Err(invalid(
                    &format!("{opath}.layout"),
                    "the operations of one transaction share one layout; put the others in a \
                     transaction of their own",
                ));
            }
            layout = Some(this);
            let op = convert(family, o, &opath)?;
            op.validate(family).map_err(|e| at(&opath, e))?;
            if this == crate::nathost::map::Layout::Map {
                crate::nathost::map::MapOp::from_operation(&op)
                    .and_then(|m| m.validate(family))
                    .map_err(|e| at(&opath, e))?;
            }
            operations.push(op);
        }
        transactions.push(TransactionDoc {
            family,
            operations,
            layout: layout.unwrap_or_default(),
        });
    }
    Ok(Document { transactions })
}

/// The operations that mean the same in an `inet` table (both address families at once):
/// the generic chain and rule operations. The NAT-host operations are defined on iptables'
/// `ip`/`ip6` tables.
fn inet_op(o: &OperationIn) -> bool {
    matches!(
        o,
        OperationIn::CreateChain { .. }
            | OperationIn::FlushChain { .. }
            | OperationIn::DeleteChain { .. }
            | OperationIn::EnsureRule { .. }
            | OperationIn::DeleteRule { .. }
    )
}

impl OperationIn {
    fn kind(&self) -> &'static str {
        match self {
            OperationIn::ReservationSetup { .. } => "reservation_setup",
            OperationIn::ForwardAdd { .. } => "forward_add",
            OperationIn::ForwardRemove { .. } => "forward_remove",
            OperationIn::Teardown { .. } => "teardown",
            OperationIn::Sweep { .. } => "sweep",
            OperationIn::HostSetup { .. } => "host_setup",
            OperationIn::CreateChain { .. } => "create_chain",
            OperationIn::FlushChain { .. } => "flush_chain",
            OperationIn::DeleteChain { .. } => "delete_chain",
            OperationIn::EnsureRule { .. } => "ensure_rule",
            OperationIn::DeleteRule { .. } => "delete_rule",
        }
    }
}

fn dotted(path: &str) -> String {
    if path.starts_with('.') {
        path.to_string()
    } else {
        format!(".{path}")
    }
}

/// serde_json appends " at line L column C"; the path message says it already.
fn strip_position(s: &str) -> &str {
    s.rfind(" at line ").map_or(s, |i| &s[..i])
}

fn port(v: u32, path: &str) -> Result<u16> {
    match v {
        1..=65535 => Ok(v as u16),
        _ => Err(invalid(path, format!("port {v} is out of range (1-65535)"))),
    }
}

fn forward(f: ForwardIn, path: &str) -> Result<Forward> {
    let protocol =
        ForwardProtocol::parse(&f.protocol).map_err(|e| at(&format!("{path}.protocol"), e))?;
    let public_port = port(f.public_port, &format!("{path}.public_port"))?;
    let to: SocketAddr = f.to.parse().map_err(|_| {
        invalid(
            &format!("{path}.to"),
            format!(
                "{:?} is not ADDR:PORT (an IPv6 address goes in brackets)",
                f.to
            ),
        )
    })?;
    let fwd = Forward {
        protocol,
        public_port,
        to,
        in_interface: f.in_interface,
        comment: f.comment,
    };
    fwd.validate().map_err(|e| at(path, e))?;
    Ok(fwd)
}

fn table_or(t: Option<String>, default: &str) -> String {
    t.unwrap_or_else(|| default.to_string())
}

fn rule(family: Family, table: &str, r: RuleIn, path: &str) -> Result<IptRule> {
    let words = match r {
        serde_json::Value::String(text) => {
            crate::ipt::parse::split_words(&text).map_err(|e| at(path, e))?
        }
        fields @ serde_json::Value::Object(_) => {
            let f: RuleFields = serde_path_to_error::deserialize(fields).map_err(|e| {
                let inner = dotted(&e.path().to_string());
                let field = if inner == "." { String::new() } else { inner };
                Error::InvalidInput(format!(
                    "invalid document at {path}{field}: {}",
                    e.into_inner()
                ))
            })?;
            fields_to_words(f, path)?
        }
        _ => {
            return Err(invalid(
                path,
                "a rule is a string of iptables words or an object of rule fields",
            ));
        }
    };
    rule_from_words(family, table, &words).map_err(|e| at(path, e))
}

/// `OPTION VALUE`, when there is a value.
fn option_words(w: &mut Vec<String>, option: &str, value: Option<String>) {
    if let Some(v) = value {
        w.push(option.into());
        w.push(v);
    }
}

impl PortIn {
    fn into_word(self) -> String {
        match self {
            PortIn::Number(n) => n.to_string(),
            PortIn::Text(t) => t,
        }
    }
}

fn fields_to_words(f: RuleFields, path: &str) -> Result<Vec<String>> {
    let mut w: Vec<String> = Vec::new();
    option_words(&mut w, "-s", f.source);
    option_words(&mut w, "-d", f.destination);
    option_words(&mut w, "-i", f.in_interface);
    option_words(&mut w, "-o", f.out_interface);
    option_words(&mut w, "-p", f.protocol);
    option_words(&mut w, "--sport", f.sport.map(PortIn::into_word));
    option_words(&mut w, "--dport", f.dport.map(PortIn::into_word));
    if let Some(c) = f.comment {
        w.extend(["-m".into(), "comment".into(), "--comment".into(), c]);
    }
    if let Some(states) = f.ctstate {
        w.extend([
            "-m".into(),
            "conntrack".into(),
            "--ctstate".into(),
            states.join(","),
        ]);
    }
    match (f.jump, f.goto) {
        (Some(_), Some(_)) => {
            return Err(invalid(path, "a rule has jump or goto, not both"));
        }
        (Some(j), None) => w.extend(["-j".into(), j]),
        (None, Some(g)) => w.extend(["-g".into(), g]),
        (None, None) => {}
    }
    option_words(&mut w, "--to-destination", f.to_destination);
    option_words(&mut w, "--to-source", f.to_source);
    option_words(&mut w, "--to-ports", f.to_ports);
    option_words(&mut w, "--reject-with", f.reject_with);
    option_words(&mut w, "--log-prefix", f.log_prefix);
    Ok(w)
}

fn convert(family: Family, o: OperationIn, path: &str) -> Result<Operation> {
    Ok(match o {
        OperationIn::ReservationSetup {
            table,
            chain,
            entry,
            jump_comment,
            forwards,
            ..
        } => {
            let mut r = Reservation::new(chain);
            r.family = family;
            r.table = table_or(table, "nat");
            if let Some(e) = entry {
                r.entry = e;
            }
            r.jump_comment = jump_comment;
            r.forwards = forwards
                .into_iter()
                .enumerate()
                .map(|(i, f)| forward(f, &format!("{path}.forwards[{i}]")))
                .collect::<Result<_>>()?;
            Operation::ReservationSetup(r)
        }
        OperationIn::ForwardAdd {
            table,
            chain,
            forward: f,
            ..
        } => Operation::ForwardAdd {
            table: table_or(table, "nat"),
            chain,
            forward: forward(f, &format!("{path}.forward"))?,
        },
        OperationIn::ForwardRemove {
            table,
            chain,
            protocol,
            public_port,
            in_interface,
            to,
            ..
        } => Operation::ForwardRemove {
            table: table_or(table, "nat"),
            chain,
            key: ForwardKey {
                protocol: ForwardProtocol::parse(&protocol)
                    .map_err(|e| at(&format!("{path}.protocol"), e))?,
                public_port: port(public_port, &format!("{path}.public_port"))?,
                in_interface,
            },
            to: to
                .map(|t| {
                    t.parse().map_err(|_| {
                        invalid(&format!("{path}.to"), format!("{t:?} is not ADDR:PORT"))
                    })
                })
                .transpose()?,
        },
        OperationIn::Teardown {
            table,
            chain,
            entry,
            ..
        } => Operation::Teardown {
            table: table_or(table, "nat"),
            chain,
            entry: entry.unwrap_or_else(|| "PREROUTING".into()),
        },
        OperationIn::Sweep {
            table,
            prefix,
            keep,
            ..
        } => Operation::Sweep {
            table: table_or(table, "nat"),
            prefix,
            keep: keep.into_iter().collect::<BTreeSet<_>>(),
        },
        OperationIn::HostSetup {
            chain,
            public_interface,
            private_interface,
            private_network,
            public_address,
            ports,
            comment_prefix,
            ..
        } => Operation::HostSetup(HostSetup {
            family,
            chain: chain.unwrap_or_else(|| "xtnl-nat_host".into()),
            public_interface,
            private_interface,
            private_network: private_network
                .parse()
                .map_err(|e| at(&format!("{path}.private_network"), e))?,
            public_address: public_address.parse().map_err(|_| {
                invalid(
                    &format!("{path}.public_address"),
                    format!("{public_address:?} is not an IP address"),
                )
            })?,
            port_ranges: ports
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let pp = format!("{path}.ports[{i}]");
                    let n = |s: &str| {
                        s.parse::<u32>()
                            .map_err(|_| invalid(&pp, format!("{p:?} is not PORT or FIRST:LAST")))
                            .and_then(|v| port(v, &pp))
                    };
                    match p.split_once(':') {
                        Some((a, b)) => PortRange::new(n(a)?, n(b)?).map_err(|e| at(&pp, e)),
                        None => Ok(PortRange::single(n(p)?)),
                    }
                })
                .collect::<Result<_>>()?,
            comment_prefix: comment_prefix.unwrap_or_else(|| "xtnl: ".into()),
        }),
        OperationIn::CreateChain { table, chain } => Operation::CreateChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::FlushChain { table, chain } => Operation::FlushChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::DeleteChain { table, chain } => Operation::DeleteChain {
            table: table_or(table, "filter"),
            chain,
        },
        OperationIn::EnsureRule {
            table,
            chain,
            rule: r,
            position,
        } => {
            let table = table_or(table, "filter");
            let at_head = match position.as_deref() {
                None | Some("append") => false,
                Some("head") => true,
                Some(p) => {
                    return Err(invalid(
                        &format!("{path}.position"),
                        format!("position {p:?} is not \"append\" or \"head\""),
                    ));
                }
            };
            Operation::EnsureRule {
                rule: rule(family, &table, r, &format!("{path}.rule"))?,
                table,
                chain,
                at_head,
            }
        }
        OperationIn::DeleteRule {
            table,
            chain,
            rule: r,
        } => {
            let table = table_or(table, "filter");
            Operation::DeleteRule {
                rule: rule(family, &table, r, &format!("{path}.rule"))?,
                table,
                chain,
            }
        }
    })
}
