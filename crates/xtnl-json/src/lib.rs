//! The JSON front for programs: `xtnl apply` documents in, results and listings out. The
//! schema (documented in docs/json.md, version 1) is stable: fields are only ever added.
//!
//! The library re-exports this crate as `xtnl::json`. A document applied to the NAT-host
//! operations' in-memory ruleset (no kernel, no root), with its JSON result:
//!
//! ```
//! use xtnl_core::model::Family;
//! use xtnl_nathost::memory::MemoryRuleset;
//!
//! let doc = xtnl_json::parse(
//!     br#"{"version": 1, "transactions": [{"family": "ipv4", "operations": [
//!         {"op": "reservation_setup", "chain": "vcld-5205", "forwards": [
//!             {"protocol": "tcp", "public_port": 50443, "to": "192.0.2.10:3389"}]}]}]}"#,
//! )?;
//! let mut ruleset = MemoryRuleset::new(Family::Ipv4);
//! let (result, status) = xtnl_json::apply(&mut ruleset, &doc);
//! assert_eq!(status, 0, "{result}");
//! assert_eq!(result["transactions"][0]["status"], "committed");
//! assert_eq!(result["transactions"][0]["operations"][0]["outcome"], "changed");
//! # Ok::<(), xtnl_core::Error>(())
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The old paths: this crate was the root package's `json` module, and its files keep the
// `crate::nathost::...`, `crate::ipt::...` paths they had there (as the crates below did).
#[cfg(test)]
use xtnl_core::OpFailure;
use xtnl_core::{Result, error, limits, model};
use xtnl_nathost as nathost;
use xtnl_seam as seam;

/// iptables' syntax and its `-L` listings under the library's paths (`crate::ipt::parse`,
/// `crate::ipt::listing`, ...).
mod ipt {
    pub(crate) use xtnl_ipt::{IptMatch, IptRule, parse, print};
    pub(crate) use xtnl_nft::ipt::listing;
}

pub mod document;

pub use document::{
    Bounds, Document, MAX_DOCUMENT_BYTES, MAX_OPERATIONS, TransactionDoc, parse, parse_bounded,
    parse_value,
};

use serde_json::{Value, json};

use crate::error::{Error, ErrorKind};
use crate::ipt::listing::{ChainListing, policy_name};
use crate::ipt::{IptRule, print};
use crate::nathost::{OperationResult, Report, RulesetBackend};

/// The name of an error kind in JSON output ([`ErrorKind::name`]).
pub fn kind_name(kind: ErrorKind) -> &'static str {
    kind.name()
}

/// An error as JSON: its kind, exit status and whole message (cause chain included).
pub fn error_value(e: &Error) -> Value {
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    let mut v = json!({
        "kind": kind_name(e.kind()),
        "status": e.exit_status(),
        "message": message,
    });
    if let Some(f) = e.op_failure() {
        v["operation"] = json!(f.op);
        v["errno"] = json!(f.errno);
    }
    v
}

/// The result of one NAT-host command (`--json`).
pub fn report_value(r: &Report) -> Value {
    json!({
        "version": 1,
        "ok": true,
        "outcome": r.outcome.as_str(),
        "changes": r.changes.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        "removed_chains": r.removed_chains,
        "attempts": r.attempts,
    })
}

fn operation_value(index: usize, kind: &str, r: &OperationResult) -> Value {
    json!({
        "index": index,
        "op": kind,
        "outcome": r.outcome.as_str(),
        "changes": r.changes.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        "rule_handles": r.rule_handles,
        "removed_chains": r.removed_chains,
    })
}

/// Applies a parsed document, one atomic commit per transaction, in order; stops at the
/// first transaction that fails (later ones may depend on it) and marks the rest skipped.
/// Returns the result document and the exit status (0, or the failure's).
pub fn apply(backend: &mut impl RulesetBackend, doc: &Document) -> (Value, i32) {
    apply_each(doc, |t| nathost::transact(backend, t.family, &t.operations))
}

/// [`apply`] with the commit of each transaction left to `commit` (a backend per family).
pub fn apply_each(
    doc: &Document,
    mut commit: impl FnMut(&TransactionDoc) -> crate::Result<(Vec<OperationResult>, u32)>,
) -> (Value, i32) {
    let mut out = Vec::with_capacity(doc.transactions.len());
    let mut status = 0;
    for (i, t) in doc.transactions.iter().enumerate() {
        if status != 0 {
            out.push(json!({"index": i, "status": "skipped"}));
            continue;
        }
        match commit(t) {
            Ok((results, attempts)) => out.push(json!({
                "index": i,
                "status": "committed",
                "attempts": attempts,
                "operations": results
                    .iter()
                    .zip(&t.operations)
                    .enumerate()
                    .map(|(j, (r, op))| operation_value(j, op.kind(), r))
                    .collect::<Vec<_>>(),
            })),
            Err(e) => {
                status = e.exit_status();
                out.push(json!({
                    "index": i,
                    "status": "failed",
                    "error": error_value(&e),
                }));
            }
        }
    }
    (
        json!({"version": 1, "ok": status == 0, "transactions": out}),
        status,
    )
}

fn rule_value(chain: &str, handle: u64, rule: &IptRule) -> Value {
    let counters = rule.counters.unwrap_or_default();
    let comment = rule.matches.iter().find_map(|m| match m {
        crate::ipt::IptMatch::Comment(c) => Some(c.clone()),
        _ => None,
    });
    json!({
        "handle": handle,
        "spec": print::rule_spec(rule).trim_start(),
        "line": rule.is_expressible().then(|| print::append_line(chain, rule, false)),
        "expressible": rule.is_expressible(),
        "target": rule.jump_target(),
        "comment": comment,
        "packets": counters.packets,
        "bytes": counters.bytes,
    })
}

/// The `--json` listing of tables: `{"version": 1, "family": .., "tables": [..]}`.
pub fn listing_value(family: crate::model::Family, tables: Vec<Value>) -> Value {
    json!({"version": 1, "family": family.as_str(), "tables": tables})
}

/// The chain an iptables listing (`-S`/`-L [CHAIN]`) names, `None` for the whole table;
/// another command is refused, as `--json` applies to listings only (checked before a
/// backend is opened).
pub fn listed_chain(inv: &crate::ipt::parse::Invocation) -> crate::error::Result<Option<&str>> {
    use crate::ipt::parse::Command;
    match &inv.command {
        Command::ListRules(c) | Command::List(c) => Ok(c.as_deref()),
        _ => Err(Error::InvalidInput(
            "--json applies to listings (-S, -L) only".into(),
        )),
    }
}

/// The JSON listing an iptables listing (`-S`/`-L [CHAIN]`) with `--json` prints, read
/// through whichever backend `lister` is; another command is refused ([`listed_chain`]).
pub fn invocation_listing(
    lister: &mut dyn crate::seam::ListTables,
    inv: &crate::ipt::parse::Invocation,
) -> crate::error::Result<Value> {
    let chain = listed_chain(inv)?;
    let chains = lister.listings(inv.family, &inv.table, chain)?;
    Ok(listing_value(
        inv.family,
        vec![table_value(&inv.table, &chains)],
    ))
}

/// The JSON listing of the tables iptables-save would print (only `table` when given),
/// read through whichever backend `lister` is.
pub fn saved_listing(
    lister: &mut dyn crate::seam::ListTables,
    family: crate::model::Family,
    table: Option<&str>,
) -> crate::error::Result<Value> {
    let mut tables = Vec::new();
    for name in lister.saved_tables(family, table)? {
        let chains = lister.listings(family, &name, None)?;
        tables.push(table_value(&name, &chains));
    }
    Ok(listing_value(family, tables))
}

/// A table's chains and rules as JSON (an element of the listing's `tables`).
pub fn table_value(table: &str, chains: &[ChainListing]) -> Value {
    json!({
        "table": table,
        "chains": chains.iter().map(|c| json!({
            "name": c.name,
            "builtin": c.policy.is_some(),
            "policy": c.policy.map(policy_name),
            // A built-in chain's policy counters (`:INPUT DROP [p:b]`); null for user chains.
            "policy_packets": c.policy.map(|_| c.policy_counters.unwrap_or_default().packets),
            "policy_bytes": c.policy.map(|_| c.policy_counters.unwrap_or_default().bytes),
            "references": c.references,
            "rules": c.rules.iter().map(|(h, r)| rule_value(&c.name, *h, r)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal found before sending is not reported as the kernel's.
    #[test]
    fn a_precondition_is_not_a_kernel_refusal() {
        let e = Error::Precondition("no rule in INPUT equals the given one".into())
            .context("iptables: Bad rule (does a matching rule exist in that chain?).");
        let v = error_value(&e);
        assert_eq!(v["kind"], "precondition_failed", "{v}");
        assert_eq!(v["status"], 1, "{v}");
        let kernel = Error::Rejected(crate::OpFailure {
            index: 0,
            op: "add rule".into(),
            errno: libc::EINVAL,
            ext_ack: None,
        });
        assert_eq!(error_value(&kernel)["kind"], "rejected_by_kernel");
    }
}
