//! `xtnl restore [--noflush] [-w [secs]] [-W usecs] [-4|-6] [FILE]` and
//! `xtnl save [-t table] [-4|-6]`: iptables-restore/save formats.

use std::io::{BufRead, Read, Write};

use super::context::{Ctx, Opened};
use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::ipt::restore;
use xtnl::lock::{LockMode, WaitPolicy};
use xtnl::model::Family;

/// Restore files are parsed whole before anything is sent; this bounds the input.
const MAX_INPUT: u64 = xtnl::limits::MAX_RESTORE_BYTES;

/// Reads and parses a restore file line by line, enforcing the bounds as it goes: the input
/// size ([`MAX_INPUT`]), the line length ([`xtnl::limits::MAX_RESTORE_LINE`]), and the
/// number of operations (the policy's `max_ops`, else the transaction limit), so that an
/// input that would be refused anyway is refused before it is held in memory. Memory is the
/// current line plus the parsed commands (see docs/privileged-helper.md for the figures),
/// and the text itself (its lines, each without its line end): a plan made anew (nf_tables'
/// generation moved under it) parses it again, while the first plan frees each parsed line
/// as it goes.
fn read_restore(
    mut input: impl std::io::BufRead,
    name: &str,
    family: Family,
    counters: bool,
    enforcement: &xtnl::seam::Enforcement,
) -> Result<(Vec<restore::Block>, String)> {
    let policy = enforcement.policy.clone();
    let max_line = xtnl::limits::MAX_RESTORE_LINE;
    let mut parser = restore::Parser::new(family).with_counters(counters);
    let mut buf = Vec::new();
    let mut total: u64 = 0;
    let mut text = String::new();
    loop {
        buf.clear();
        let n = (&mut input)
            .take(max_line as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| bad(format!("cannot read {name}: {e}")))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > MAX_INPUT {
            return Err(bad(format!("input larger than {} MiB", MAX_INPUT >> 20)));
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if n > max_line {
            return Err(bad(format!(
                "line {}: longer than {} MiB",
                parser.line_number() + 1,
                max_line >> 20
            )));
        }
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
        let line = std::str::from_utf8(&buf).map_err(|e| {
            bad(format!(
                "input is not UTF-8 (byte {})",
                total - n as u64 + e.valid_up_to() as u64
            ))
        })?;
        parser.line(line)?;
        text.push_str(line);
        text.push('\n');
        let changes = parser.changes();
        if let Some(p) = &policy {
            // Every changing line is at least one operation: past max_ops the transaction
            // will be denied, so it is denied now, before reading further.
            if let Err(e) = p.check_size(changes) {
                let e = match e {
                    Error::PolicyDenied(m) => Error::PolicyDenied(format!(
                        "{m} or more (refused at line {} of {name}, before reading the rest)",
                        parser.line_number()
                    )),
                    other => other,
                };
                // Audited like any denial: nothing was sent.
                if let Some(a) = &enforcement.auditor {
                    let what = format!(
                        "restore from {name}: {changes} or more operations by line {}",
                        parser.line_number()
                    );
                    a.record(
                        changes,
                        &mut std::iter::once(what),
                        xtnl::nft::AuditOutcome::Denied(&e),
                    );
                }
                return Err(e);
            }
        }
        if changes > xtnl::limits::MAX_TRANSACTION_OPS {
            return Err(bad(format!(
                "line {}: more than {} operations; at most that many fit in one transaction",
                parser.line_number(),
                xtnl::limits::MAX_TRANSACTION_OPS
            )));
        }
    }
    Ok((parser.finish()?, text))
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

pub(super) fn run_restore(
    out: &mut impl Write,
    args: &[String],
    family: Family,
    ctx: &Ctx,
) -> Result<()> {
    let opts = super::saveopts::parse_restore(args, family)?;
    let (family, file, verbose) = (opts.family, opts.file.clone(), opts.verbose);
    if let Some(path) = &file {
        super::privileged::caller_file(path)?;
    }
    let name = file.as_deref().unwrap_or("standard input");
    let (mut blocks, text) = match &file {
        Some(path) => {
            let f =
                std::fs::File::open(path).map_err(|e| bad(format!("cannot read {name}: {e}")))?;
            read_restore(
                std::io::BufReader::new(f),
                name,
                family,
                opts.counters,
                &ctx.enforcement,
            )?
        }
        None => read_restore(
            std::io::stdin().lock(),
            name,
            family,
            opts.counters,
            &ctx.enforcement,
        )?,
    };
    // `-T TABLE`: only that table's blocks.
    if let Some(t) = &opts.table {
        blocks.retain(|b| b.table == *t);
    }
    // `--test`: the whole file parsed (every line checked), nothing sent. iptables-legacy-
    // restore -t -v still prints what it would do (it reads the kernel); -nft prints nothing.
    if opts.test {
        let opened = match verbose && !opts.noflush {
            true => ctx.open_if(xtnl::ipt::Flavour::Legacy, family, verbose)?,
            false => None,
        };
        if let Some(mut opened) = opened {
            let text = verbose_text(&mut opened, &blocks, family)?;
            out.write_all(text.as_bytes()).map_err(io_error)?;
        }
        return out.flush().map_err(io_error);
    }
    let mut lock = ctx.lock(opts.wait);
    if let Some(i) = opts.interval {
        lock = lock.with_poll_interval(i);
    }
    let (counters, only) = (opts.counters, opts.table.clone());
    let mut reparse = || {
        let mut blocks = restore::parse_file_opts(&text, family, counters)?;
        if let Some(t) = &only {
            blocks.retain(|b| b.table == *t);
        }
        Ok(blocks)
    };
    // `-v`: the tables as they are, before anything is changed.
    let mut say = |opened: &mut Opened, blocks: &[restore::Block]| {
        let text = verbose_text(opened, blocks, family)?;
        out.write_all(text.as_bytes()).map_err(io_error)
    };
    let first: Option<&mut xtnl::backend::First<'_>> =
        (verbose && !opts.noflush).then_some(&mut say);
    // One call opens the backend, applies the blocks and closes it.
    ctx.call(family, verbose, lock, LockMode::Always).restore(
        blocks,
        &mut reparse,
        opts.noflush,
        first,
    )?;
    out.flush().map_err(io_error)
}

pub(super) fn run_save(
    out: &mut impl Write,
    args: &[String],
    family: Family,
    ctx: &Ctx,
) -> Result<()> {
    let opts = super::saveopts::parse_save(args, family)?;
    let family = opts.family;
    let table = opts.table.clone();
    if let Some(path) = &opts.file {
        super::privileged::caller_file(path)?;
    }
    let lock = ctx.lock(WaitPolicy::FailFast);
    let mut opened = ctx.open(family, opts.verbose, lock, LockMode::Never)?;
    if opts.json {
        // The JSON listing of the tables iptables-save would print, on either backend.
        let v = xtnl::json::saved_listing(opened.lister(), family, table.as_deref())?;
        writeln!(out, "{v}").map_err(io_error)?;
        return Ok(());
    }
    let legacy = opened.flavour() == xtnl::ipt::Flavour::Legacy;
    let lister = opened.lister();
    let mut bodies = Vec::new();
    for name in lister.saved_tables(family, table.as_deref())? {
        let body = lister.save_body(family, &name, opts.counters)?;
        bodies.push((name, body));
    }
    let generated_by = super::dropin::save_generated_by(legacy);
    let (text, lost) = super::saveopts::assemble(bodies, generated_by.as_deref());
    match &opts.file {
        Some(path) => std::fs::write(path, text.as_bytes())
            .map_err(|e| bad(format!("cannot write {path}: {e}")))?,
        None => out.write_all(text.as_bytes()).map_err(io_error)?,
    }
    if !lost.is_empty() {
        out.flush().map_err(io_error)?;
        return Err(super::saveopts::lost_error(&lost));
    }
    Ok(())
}

/// `-v`'s lines: the user chains come from the tables as the kernel holds them (a table
/// that is not there has none), named as the backend's iptables-restore names them.
fn verbose_text(opened: &mut Opened, blocks: &[restore::Block], family: Family) -> Result<String> {
    let flavour = opened.flavour();
    let mut err = None;
    let text = super::restore_verbose::text(blocks, family, flavour, |t| {
        match opened.chain_names(family, t) {
            Ok(names) => names,
            Err(e) => {
                err.get_or_insert(e);
                Vec::new()
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(text),
    }
}
