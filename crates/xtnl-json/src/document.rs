//! The `xtnl apply` document: transactions of operations, parsed strictly (unknown fields
//! are errors, every error names the path of the offending field) and turned into
//! [`Operation`]s that are all validated before anything reaches the kernel.

use std::collections::BTreeSet;
use std::net::SocketAddr;

use serde::Deserialize;

mod convert;

use convert::*;

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

/// The bounds a document is held to: [`Bounds::BOUNDED`] for delegated callers and the
/// service, [`Bounds::NONE`] for root's own `xtnl apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The largest document, in bytes.
    pub max_bytes: Option<usize>,
    /// The most operations in one transaction.
    pub max_operations: Option<usize>,
}

impl Bounds {
    /// [`MAX_DOCUMENT_BYTES`] and [`MAX_OPERATIONS`].
    pub const BOUNDED: Bounds = Bounds {
        max_bytes: Some(MAX_DOCUMENT_BYTES),
        max_operations: Some(MAX_OPERATIONS),
    };
    /// No fixed cap: the parse is into typed operations (no tree of the whole document), so
    /// its memory is linear in the document; a transaction is still held to
    /// [`crate::limits::MAX_TRANSACTION_OPS`] when it is committed.
    pub const NONE: Bounds = Bounds {
        max_bytes: None,
        max_operations: None,
    };
}

/// Parses and validates a whole document held to [`Bounds::BOUNDED`]; nothing of it is
/// applied when any part is wrong.
pub fn parse(bytes: &[u8]) -> Result<Document> {
    parse_bounded(bytes, Bounds::BOUNDED)
}

/// [`parse`] held to `bounds`.
pub fn parse_bounded(bytes: &[u8], bounds: Bounds) -> Result<Document> {
    if let Some(max) = bounds.max_bytes
        && bytes.len() > max
    {
        return Err(Error::InvalidInput(format!(
            "document of {} bytes is larger than the limit of {max}",
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
    validated(doc, bounds)
}

/// [`parse`] of a document the caller already holds as a JSON value (an `xtnl serve`
/// request's `apply`), without writing it out as text to read it again: the same bound (on
/// the document as compact text, as [`parse`] counts it) and the same checks. A document
/// that is refused is read as text once more, so that its error is [`parse`]'s, line and
/// column included.
pub fn parse_value(doc: &serde_json::Value) -> Result<Document> {
    /// Counts what is written.
    struct Counted(usize);
    impl std::io::Write for Counted {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let as_text = || parse(doc.to_string().as_bytes());
    let mut len = Counted(0);
    if serde_json::to_writer(&mut len, doc).is_err()
        || Bounds::BOUNDED.max_bytes.is_some_and(|max| len.0 > max)
    {
        return as_text();
    }
    match serde_path_to_error::deserialize::<_, DocumentIn>(doc) {
        Ok(d) => validated(d, Bounds::BOUNDED).or_else(|_| as_text()),
        Err(_) => as_text(),
    }
}

/// The checks of a document after it is read, held to `bounds`.
fn validated(doc: DocumentIn, bounds: Bounds) -> Result<Document> {
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
        if let Some(max) = bounds.max_operations
            && t.operations.len() > max
        {
            return Err(invalid(
                &format!("{tpath}.operations"),
                format!(
                    "{} operations in one transaction; the limit is {max}",
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

#[cfg(test)]
mod value_tests {
    /// A document read from a JSON value gives what the same document read as text gives:
    /// the same operations, or the same error word for word (line and column included).
    #[test]
    fn a_value_parses_as_its_text_does() {
        let docs = [
            r#"{"transactions": [{"operations": [{"op": "create_chain", "table": "nat", "chain": "vcld-j"}, {"op": "ensure_rule", "table": "nat", "chain": "PREROUTING", "position": "head", "rule": "-j vcld-j"}]}]}"#,
            r#"{"version": 1, "transactions": [{"family": "ipv6", "operations": [{"op": "delete_rule", "table": "nat", "chain": "PREROUTING", "rule": "-j other"}]}]}"#,
            r#"{"version": 2, "transactions": []}"#,
            r#"{"transactions": [{"operations": [{"op": "no_such_op"}]}]}"#,
            r#"{"transactions": [{"family": "bogus", "operations": []}]}"#,
            r#"{"transactions": [{"operations": [{"op": "create_chain", "table": 7, "chain": "x"}]}]}"#,
            r#"{"transactions": [], "extra": true}"#,
            r#"{"version": 1.0, "transactions": []}"#,
            r#"[]"#,
        ];
        for text in docs {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let from_text = super::parse(v.to_string().as_bytes());
            let from_value = super::parse_value(&v);
            assert_eq!(
                format!("{from_value:?}"),
                format!("{from_text:?}"),
                "{text}"
            );
        }
        // Some were refused, some not: the comparison saw both.
        let oks = docs
            .iter()
            .filter(|t| super::parse_value(&serde_json::from_str(t).unwrap()).is_ok())
            .count();
        assert!(oks >= 2 && oks < docs.len(), "{oks}");
    }
}
