//! `xtnl restore [--noflush] [-w [secs]] [-W usecs] [-4|-6] [FILE]` and
//! `xtnl save [-t table] [-4|-6]`: iptables-restore/save formats.

use std::io::Write;

use super::context::{Ctx, Opened};
use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::ipt::restore;
use xtnl::lock::{LockMode, WaitPolicy};
use xtnl::model::Family;

use super::restore_input::{Lines, Packer, Source, Streamed, rereadable, scan};

/// Reads and parses a restore file line by line, enforcing the bounds as it goes: the input
/// size and the line length ([`Lines`]), and the number of operations (the policy's
/// `max_ops`, else the transaction limit), so that an input that would be refused anyway is
/// refused before it is held in memory. Memory is the current line plus the parsed commands
/// (see docs/privileged-helper.md for the figures); the first plan frees each parsed line
/// as it goes, and a plan made anew (the table or the generation moved under it) reads the
/// input again ([`Source`]): piped input is kept in `keep` for it (its lines, compressed).
/// Returns the digest of the lines read.
fn read_restore(
    input: impl std::io::BufRead,
    name: &str,
    family: Family,
    counters: bool,
    enforcement: &xtnl::seam::Enforcement,
    mut keep: Option<&mut Packer>,
) -> Result<(Vec<restore::Block>, super::restore_input::Digest)> {
    let policy = enforcement.policy.clone();
    let mut parser = restore::Parser::new(family).with_counters(counters);
    let mut lines = Lines::new(input, name);
    while let Some(line) = lines.next_line()? {
        parser.line(line)?;
        if let Some(text) = keep.as_deref_mut() {
            text.line(line);
        }
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
    Ok((parser.finish()?, lines.digest))
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
    let input = match &file {
        Some(path) => {
            Some(std::fs::File::open(path).map_err(|e| bad(format!("cannot read {name}: {e}")))?)
        }
        // Standard input redirected from a file can be read again too.
        None => {
            use std::os::fd::AsFd;
            std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(std::fs::File::from)
        }
    };
    // One table's block on x_tables outside a policy (kube-proxy's input) is parsed line by
    // line as it is planned, never held whole: a first look at the input (no parse) tells
    // whether it is one. Any other restore parses the input as it reads it, so that a
    // policy's bound refuses it before the rest is read.
    let may_stream = !opts.test
        && !verbose
        && opts.table.is_none()
        && ctx.enforcement.policy.is_none()
        && ctx.backend(family, verbose) == xtnl::backend::Backend::Legacy;
    let read = |input: &mut dyn std::io::BufRead, keep: Option<&mut Packer>| {
        read_restore(input, name, family, opts.counters, &ctx.enforcement, keep)
    };
    // A regular file is read again for a plan made anew; piped input is kept, compressed.
    let (source, look, parsed) = match input.map(rereadable) {
        Some(Ok((f, start))) => {
            let (look, parsed, digest) = if may_stream {
                let look = scan(std::io::BufReader::new(&f), name, false);
                let digest = look.digest;
                (Some(look), None, digest)
            } else {
                let (blocks, digest) = read(&mut std::io::BufReader::new(&f), None)?;
                (None, Some(blocks), digest)
            };
            let source = Source::File {
                file: f,
                start,
                digest,
            };
            (source, look, parsed)
        }
        other => {
            let mut input: Box<dyn std::io::BufRead> = match other {
                // A named pipe or a device.
                Some(Err(f)) if file.is_some() => Box::new(std::io::BufReader::new(f)),
                _ => Box::new(std::io::stdin().lock()),
            };
            if may_stream {
                let mut look = scan(input, name, true);
                (
                    Source::Packed(look.text.take().unwrap_or_default()),
                    Some(look),
                    None,
                )
            } else {
                let mut text = Packer::default();
                let (blocks, digest) = read(&mut input, Some(&mut text))?;
                (Source::Packed(text.finish(digest)), None, Some(blocks))
            }
        }
    };
    let mut lock = ctx.lock(opts.wait);
    if let Some(i) = opts.interval {
        lock = lock.with_poll_interval(i);
    }
    let streamed = match look.as_ref().map(|l| (l, &l.first)) {
        Some((l, Some((line, table))))
            if l.error.is_none()
                && l.tables == 1
                && xtnl::model::validate_name("table", table).is_ok() =>
        {
            Some((*line, table.clone()))
        }
        _ => None,
    };
    if let Some((line, table)) = streamed {
        let opened = ctx.open(family, verbose, lock, LockMode::Always)?;
        if let Opened::Legacy(legacy) = &opened {
            let mut src = Streamed::new(&source, name, family, opts.counters)?;
            xtnl::legacy::restore_streamed(legacy, &table, line, &mut src, opts.noflush)?;
        }
        opened.close()?;
        return out.flush().map_err(io_error);
    }
    let reread = |source: &Source| {
        let (blocks, digest) = read(&mut source.reader(name)?, None)?;
        source.check(digest, name)?;
        Ok::<_, Error>(blocks)
    };
    if let Some(e) = look.and_then(|l| l.error) {
        // Reading failed at some line: a parse error on a line before it is named first,
        // as when the input is parsed as it is read.
        let mut parser = restore::Parser::new(family).with_counters(opts.counters);
        let mut lines = Lines::new(source.reader(name)?, name);
        while let Some(l) = lines.next_line()? {
            parser.line(l)?;
        }
        return Err(e);
    }
    let mut blocks = match parsed {
        Some(b) => b,
        None => reread(&source)?,
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
    let only = opts.table.clone();
    let mut reparse = || {
        let mut blocks = reread(&source)?;
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
