//! `xtnl restore [--noflush] [-w [secs]] [-W usecs] [-4|-6] [FILE]` and
//! `xtnl save [-t table] [-4|-6]`: iptables-restore/save formats.

use std::io::{Read, Write};
use std::time::Duration;

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
    mut family: Family,
    backend: BackendChoice,
) -> Result<()> {
    let (mut noflush, mut interval, mut file) = (false, None, None);
    let mut wait = WaitPolicy::default_for_command()?;
    let mut verbose = false;
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-n" | "--noflush" => noflush = true,
            "-v" | "--verbose" => verbose = true,
            "-4" | "--ipv4" => family = Family::Ipv4,
            "-6" | "--ipv6" => family = Family::Ipv6,
            "-w" | "--wait" => {
                wait = match it.peek() {
                    Some(s) if s.parse::<u64>().is_ok() => {
                        let secs: u64 = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                        if secs == 0 {
                            WaitPolicy::FailFast
                        } else {
                            WaitPolicy::Timeout(Duration::from_secs(secs))
                        }
                    }
                    _ => WaitPolicy::Forever,
                }
            }
            "-W" | "--wait-interval" => {
                let v = it.next().ok_or_else(|| bad("-W needs microseconds"))?;
                interval =
                    Some(Duration::from_micros(v.parse().map_err(|_| {
                        bad(format!("wait interval not numeric: {v:?}"))
                    })?));
            }
            f if !f.starts_with('-') && file.is_none() => file = Some(f.to_string()),
            other => return Err(bad(format!("unknown restore option {other:?}"))),
        }
    }
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
    let blocks = restore::parse_file(&text, family)?;
    let mut lock = XtablesLock::from_env(wait);
    if let Some(i) = interval {
        lock = lock.with_poll_interval(i);
    }
    if super::resolve_backend(backend, family, verbose) == Backend::Legacy {
        let legacy = crate::legacy::Legacy::open(family, lock)?;
        crate::legacy::restore(&legacy, &blocks, noflush)?;
        return out.flush().map_err(io_error);
    }
    let mut session = Session::builder().lock(lock).open()?;
    restore::apply(&mut session, &blocks, family, noflush)?;
    out.flush().map_err(io_error)?;
    session.close_detached()
}

pub fn run_save(
    out: &mut impl Write,
    args: &[String],
    mut family: Family,
    backend: BackendChoice,
) -> Result<()> {
    let mut table = None;
    let mut verbose = false;
    let mut as_json = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => as_json = true,
            "-t" | "--table" => {
                table = Some(it.next().ok_or_else(|| bad("-t needs a table"))?.clone())
            }
            "-4" | "--ipv4" => family = Family::Ipv4,
            "-6" | "--ipv6" => family = Family::Ipv6,
            "-v" | "--verbose" => verbose = true,
            other => return Err(bad(format!("unknown save option {other:?}"))),
        }
    }
    if super::resolve_backend(backend, family, verbose) == Backend::Legacy {
        let legacy =
            crate::legacy::Legacy::open(family, XtablesLock::from_env(WaitPolicy::FailFast))?;
        let text = crate::legacy::save(&legacy, table.as_deref())?;
        return out.write_all(text.as_bytes()).map_err(io_error);
    }
    let mut session = Session::open()?;
    if as_json {
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
    let text = restore::save(&mut session, family, table.as_deref())?;
    out.write_all(text.as_bytes()).map_err(io_error)?;
    Ok(())
}
