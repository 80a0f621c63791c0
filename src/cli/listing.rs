use std::io::Write;

use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::ipt::listing::nft_words;
use xtnl::model::Family;
use xtnl::nft::{Session, TableRef, TableSnapshot};

/// `xtnl list [FAMILY [TABLE [CHAIN]]]`: read-only; never takes the xtables lock. A table or
/// chain that was named and does not exist is an error (status 1), as `nft list` has it.
pub fn run(out: &mut impl Write, args: &super::args::ListArgs) -> Result<()> {
    let json = args.json;
    let family: Option<Family> = args.family.as_deref().map(str::parse).transpose()?;
    let mut s = Session::open()?;
    let mut tables: Vec<TableRef> = s
        .list_tables()?
        .into_iter()
        .map(|t| t.table)
        .filter(|t| family.is_none_or(|f| t.family == f))
        .collect();
    if let Some(name) = &args.table {
        tables.retain(|t| &t.name == name);
        if tables.is_empty() {
            return Err(missing(format!("list table {} {name}", fam(family))));
        }
    }
    let only = args.chain.as_deref();
    let mut docs = Vec::new();
    for t in &tables {
        let snap = s.snapshot(t)?;
        if let Some(c) = only
            && !snap.chains.iter().any(|x| x.chain.name == c)
        {
            return Err(missing(format!("list chain {t} {c}")));
        }
        let sets = super::set_listing::read_sets(&mut s, t)?;
        if json {
            let mut doc = table_json(t, &snap, only);
            doc["sets"] = super::set_listing::sets_json(&sets);
            docs.push(doc);
        } else {
            print_table_with(out, t, &snap, only, &sets)?;
        }
    }
    if json {
        let v = serde_json::json!({"version": 1, "tables": docs});
        writeln!(out, "{v}").map_err(io_error)?;
    }
    Ok(())
}

fn fam(f: Option<Family>) -> &'static str {
    f.map_or("", |f| f.as_str())
}

/// nft's answer to a table or chain that is not there: ENOENT, exit status 1.
fn missing(op: String) -> Error {
    Error::NotFound(xtnl::OpFailure {
        index: 0,
        op,
        errno: libc::ENOENT,
        ext_ack: None,
    })
}

/// `list --json`: a table's chains (hook, type, priority and policy for base chains) and
/// rules as `nft` writes them, with their handles.
fn table_json(t: &TableRef, snap: &TableSnapshot, only: Option<&str>) -> serde_json::Value {
    let chains: Vec<serde_json::Value> = snap
        .chains
        .iter()
        .filter(|c| only.is_none_or(|n| n == c.chain.name))
        .map(|c| {
            let base = c.base.as_ref().map(|b| {
                serde_json::json!({
                    "type": b.chain_type.as_str(),
                    "hook": b.hook.as_str(),
                    "priority": b.priority,
                    "policy": match b.policy {
                        xtnl::model::ChainPolicy::Accept => "accept",
                        xtnl::model::ChainPolicy::Drop => "drop",
                    },
                })
            });
            let rules: Vec<serde_json::Value> = snap
                .rules_of(&c.chain.name)
                .map(|r| {
                    serde_json::json!({
                        "handle": r.handle,
                        "rule": nft_words::rule_words(&r.rule, t.family),
                        "expr": nft_words::rule_json(&r.rule, t.family),
                    })
                })
                .collect();
            serde_json::json!({"name": c.chain.name, "base": base, "rules": rules})
        })
        .collect();
    serde_json::json!({"family": t.family.as_str(), "table": t.name, "chains": chains})
}

/// Prints a table the way `nft -a list table` lays it out.
pub fn print_table(
    out: &mut impl Write,
    t: &TableRef,
    snap: &TableSnapshot,
    only_chain: Option<&str>,
) -> Result<()> {
    print_table_with(out, t, snap, only_chain, &[])
}

/// [`print_table`] with the table's named sets and maps first, as nft lists them.
pub fn print_table_with(
    out: &mut impl Write,
    t: &TableRef,
    snap: &TableSnapshot,
    only_chain: Option<&str>,
    sets: &[super::set_listing::SetListing],
) -> Result<()> {
    writeln!(out, "table {t} {{").map_err(io_error)?;
    if only_chain.is_none() {
        super::set_listing::print_sets(out, sets)?;
    }
    for c in &snap.chains {
        if only_chain.is_some_and(|n| n != c.chain.name) {
            continue;
        }
        writeln!(out, "\tchain {} {{", c.chain.name).map_err(io_error)?;
        if let Some(b) = &c.base {
            let policy = match b.policy {
                xtnl::model::ChainPolicy::Accept => "accept",
                xtnl::model::ChainPolicy::Drop => "drop",
            };
            writeln!(
                out,
                "\t\ttype {} hook {} priority {}; policy {policy};",
                b.chain_type.as_str(),
                b.hook.as_str(),
                b.priority
            )
            .map_err(io_error)?;
        }
        for r in snap.rules_of(&c.chain.name) {
            let words = nft_words::rule_words(&r.rule, t.family);
            writeln!(out, "\t\t{words} # handle {}", r.handle).map_err(io_error)?;
        }
        writeln!(out, "\t}}").map_err(io_error)?;
    }
    writeln!(out, "}}").map_err(io_error)
}
