//! `iptables-restore` over nf_tables: applying a parsed restore file (its syntax is
//! [`super::restore_file`], re-exported here), and the tables `save` lists.
//!
//! The whole file is parsed before anything is sent, so a syntax error (reported with its
//! line) changes nothing. Every block `*table` .. `COMMIT` is then planned against the table
//! as read, and all blocks are committed as one batch: each block is atomic, and so is the
//! file (iptables-restore commits block by block).

#![deny(missing_docs)]

use super::exec::Planner;
use crate::error::{Error, Result};
use crate::model::Family;
use crate::nft::{Session, TableRef, Transaction};

pub use super::restore_file::{Block, Line, Parser, parse_file, parse_file_opts};

/// Applies parsed blocks in one transaction. Returns the number of operations committed.
pub fn apply(
    session: &mut Session,
    blocks: &[Block],
    family: Family,
    noflush: bool,
) -> Result<usize> {
    apply_from(session, family, noflush, || {
        Ok(blocks.iter().map(Src::Borrowed).collect())
    })
}

/// [`apply`] of blocks handed over: each parsed line is freed once it is planned, so that
/// the parsed file and the plan are not held at once (the parse is some 6 times the text,
/// the plan's operations and the batch some 9). `reparse` gives the same blocks again when
/// the generation moved under the plan and it must be made anew (rare: the caller keeps
/// the text, 1 time itself, instead of the parse).
pub fn apply_owned(
    session: &mut Session,
    blocks: Vec<Block>,
    reparse: &mut dyn FnMut() -> Result<Vec<Block>>,
    family: Family,
    noflush: bool,
) -> Result<usize> {
    let mut first = Some(blocks);
    apply_from(session, family, noflush, || {
        let blocks = match first.take() {
            Some(b) => b,
            None => reparse()?,
        };
        Ok(blocks.into_iter().map(Src::Owned).collect())
    })
}

/// A block to plan: borrowed (kept by the caller), or owned (its lines freed as planned).
enum Src<'a> {
    Borrowed(&'a Block),
    Owned(Block),
}

fn apply_from<'a>(
    session: &mut Session,
    family: Family,
    noflush: bool,
    mut blocks: impl FnMut() -> Result<Vec<Src<'a>>>,
) -> Result<usize> {
    // The line each planned operation comes from, in batch order: a kernel refusal names
    // its line (the batch's sequence number -> operation -> line).
    let mut line_of_op: Vec<u32> = Vec::new();
    // Under a policy (a delegated run) a table is reset in place, chain by chain, and judged
    // so, as on x_tables, instead of deleted and made again (which would need `delete-table`).
    let drop_tables = !session.has_guard();
    let committed = session.transact(|r| {
        let mut planners: Vec<(String, Planner)> = Vec::new();
        let mut lines: Vec<Vec<u32>> = Vec::new();
        for src in blocks()? {
            let (table, table_line) = match &src {
                Src::Borrowed(b) => (b.table.as_str(), b.line),
                Src::Owned(b) => (b.table.as_str(), b.line),
            };
            let idx = match planners.iter().position(|(t, _)| t == table) {
                Some(i) => i,
                None => {
                    let p = Planner::new(r, &TableRef::new(family, table))
                        .map_err(|e| e.context(format!("line {table_line} failed")))?;
                    planners.push((table.to_string(), p));
                    lines.push(Vec::new());
                    planners.len() - 1
                }
            };
            let (_, p) = &mut planners[idx];
            p.drop_on_reset = drop_tables;
            let marks = &mut lines[idx];
            let mark = |count, n: usize| marks.resize(count, u32::try_from(n).unwrap_or(u32::MAX));
            match src {
                Src::Borrowed(b) => p.restore_block(r, b, noflush, mark)?,
                Src::Owned(b) => p.restore_lines(r, b.line, b.lines, noflush, mark)?,
            }
        }
        let mut tx = Transaction::new();
        line_of_op.clear();
        for ((_, p), l) in planners.into_iter().zip(lines) {
            line_of_op.extend(l);
            tx.append(p.into_ops());
        }
        Ok((tx, ()))
    });
    match committed {
        Ok(c) => Ok(c.ops),
        Err(e) => match e.op_failure().map(|f| f.index) {
            Some(i) if !matches!(e, Error::Context { .. }) && i < line_of_op.len() => {
                let n = line_of_op[i];
                Err(e.context(format!("line {n} failed")))
            }
            _ => Err(e),
        },
    }
}

/// The iptables tables `save` prints, in iptables-nft-save 1.8.9's order (its
/// `enum nft_table_type`: mangle, security, raw, filter, nat).
const SAVE_ORDER: [&str; 5] = ["mangle", "security", "raw", "filter", "nat"];

/// The tables `save` prints: the one asked for, or iptables' tables that exist, in
/// iptables-save's order.
pub fn saved_tables(
    session: &mut Session,
    family: Family,
    table: Option<&str>,
) -> Result<Vec<String>> {
    if let Some(t) = table {
        return Ok(vec![t.to_string()]);
    }
    let existing: Vec<String> = session
        .list_tables()?
        .into_iter()
        .filter(|t| t.table.family == family)
        .map(|t| t.table.name)
        .collect();
    Ok(SAVE_ORDER
        .iter()
        .filter(|t| existing.iter().any(|e| e == *t))
        .map(|t| t.to_string())
        .collect())
}
