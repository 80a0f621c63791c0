use std::io::Write;

use super::io_error;
use crate::error::Result;
use crate::model::Family;
use crate::nft::{Session, TableRef, TableSnapshot};

/// `xtnl list [FAMILY [TABLE [CHAIN]]]`: read-only; never takes the xtables lock.
pub fn run(out: &mut impl Write, args: &[String]) -> Result<()> {
    let family: Option<Family> = args.first().map(|f| f.parse()).transpose()?;
    let mut s = Session::open()?;
    let mut tables: Vec<TableRef> = s
        .list_tables()?
        .into_iter()
        .map(|t| t.table)
        .filter(|t| family.is_none_or(|f| t.family == f))
        .collect();
    if let Some(name) = args.get(1) {
        tables.retain(|t| &t.name == name);
    }
    for t in &tables {
        let snap = s.snapshot(t)?;
        let sets = super::set_listing::read_sets(&mut s, t)?;
        print_table_with(out, t, &snap, args.get(2).map(String::as_str), &sets)?;
    }
    Ok(())
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
                crate::nft::Policy::Accept => "accept",
                crate::nft::Policy::Drop => "drop",
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
            writeln!(out, "\t\t{} # handle {}", r.rule, r.handle).map_err(io_error)?;
        }
        writeln!(out, "\t}}").map_err(io_error)?;
    }
    writeln!(out, "}}").map_err(io_error)
}
