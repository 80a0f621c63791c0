//! `xtnl restore [--noflush] [-w [secs]] [-W usecs] [-4|-6] [FILE]` and
//! `xtnl save [-t table] [-4|-6]`: iptables-restore/save formats.

use std::io::{Read, Write};

use super::io_error;
use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::ipt::restore;
use crate::lock::{WaitPolicy, XtablesLock};
use crate::model::Family;
use crate::nft::Session;

/// Restore files are read whole before anything is sent; this bounds the memory that takes.
const MAX_INPUT: u64 = crate::limits::MAX_RESTORE_BYTES;

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

pub fn run_restore(
    out: &mut impl Write,
    args: &[String],
    family: Family,
    backend: BackendChoice,
) -> Result<()> {
    let opts = super::saveopts::parse_restore(args, family)?;
    let (family, file, verbose) = (opts.family, opts.file.clone(), opts.verbose);
    if let Some(path) = &file {
        super::privileged::caller_file(path)?;
    }
    let mut text = Vec::new();
    let read = match &file {
        Some(path) => {
            std::fs::File::open(path).and_then(|f| f.take(MAX_INPUT + 1).read_to_end(&mut text))
        }
        None => std::io::stdin().take(MAX_INPUT + 1).read_to_end(&mut text),
    };
    read.map_err(|e| {
        bad(format!(
            "cannot read {}: {e}",
            file.as_deref().unwrap_or("standard input")
        ))
    })?;
    if text.len() as u64 > MAX_INPUT {
        return Err(bad(format!("input larger than {} MiB", MAX_INPUT >> 20)));
    }
    let text = String::from_utf8(text).map_err(|e| {
        bad(format!(
            "input is not UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let mut blocks = restore::parse_file_opts(&text, family, opts.counters)?;
    // `-T TABLE`: only that table's blocks.
    if let Some(t) = &opts.table {
        blocks.retain(|b| b.table == *t);
    }
    // `--test`: the whole file parsed (every line checked), nothing sent.
    if opts.test {
        return out.flush().map_err(io_error);
    }
    let mut lock = XtablesLock::from_env(opts.wait);
    if let Some(i) = opts.interval {
        lock = lock.with_poll_interval(i);
    }
    if super::resolve_backend(backend, family, verbose) == Backend::Legacy {
        let legacy = crate::legacy::Legacy::open(family, lock)?;
        crate::legacy::restore(&legacy, &blocks, opts.noflush)?;
        return out.flush().map_err(io_error);
    }
    let mut session = Session::builder().lock(lock).open()?;
    restore::apply(&mut session, &blocks, family, opts.noflush)?;
    out.flush().map_err(io_error)?;
    session.close_detached()
}

pub fn run_save(
    out: &mut impl Write,
    args: &[String],
    family: Family,
    backend: BackendChoice,
) -> Result<()> {
    let opts = super::saveopts::parse_save(args, family)?;
    let family = opts.family;
    let table = opts.table.clone();
    if let Some(path) = &opts.file {
        super::privileged::caller_file(path)?;
    }
    let legacy = super::resolve_backend(backend, family, opts.verbose) == Backend::Legacy;
    let bodies: Vec<(String, String)> = if legacy {
        let legacy =
            crate::legacy::Legacy::open(family, XtablesLock::from_env(WaitPolicy::FailFast))?;
        crate::legacy::save_bodies(&legacy, table.as_deref(), opts.counters)?
    } else {
        let mut session = Session::open()?;
        if opts.json {
            let mut tables = Vec::new();
            for name in restore::saved_tables(&mut session, family, table.as_deref())? {
                let t = crate::nft::TableRef::new(family, &name);
                let chains = crate::ipt::listing::chains(&mut session, &t, None)?;
                tables.push(crate::json::table_value(&name, &chains));
            }
            let v = crate::json::listing_value(family, tables);
            writeln!(out, "{v}").map_err(io_error)?;
            return Ok(());
        }
        let mut bodies = Vec::new();
        for name in restore::saved_tables(&mut session, family, table.as_deref())? {
            let t = crate::nft::TableRef::new(family, &name);
            let body = crate::ipt::listing::save_table_counters(&mut session, &t, opts.counters)?;
            bodies.push((name, body));
        }
        bodies
    };
    let generated_by = super::dropin::save_generated_by(legacy);
    let (text, lost) = super::saveopts::assemble(&bodies, generated_by.as_deref());
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
