//! `xtnl apply [FILE|-]`: a JSON document of transactions, validated whole before anything
//! is sent, each transaction committed atomically, a JSON result on standard output.

use std::io::{Read, Write};

use super::context::Opened;
use super::io_error;
use xtnl::error::{Error, Result};
use xtnl::json;
use xtnl::lock::LockMode;

/// Reads the document, held to `bounds.max_bytes` when there is one (memory linear in the
/// document either way).
fn read_bounded(mut input: impl Read, what: &str, bounds: json::Bounds) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let limit = bounds.max_bytes.map_or(u64::MAX, |m| m as u64 + 1);
    input
        .by_ref()
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(|e| Error::InvalidInput(format!("cannot read {what}: {e}")))?;
    if let Some(max) = bounds.max_bytes
        && buf.len() > max
    {
        return Err(Error::InvalidInput(format!(
            "{what} is larger than the limit of {max} bytes"
        )));
    }
    Ok(buf)
}

/// Runs `xtnl apply`; returns the exit status (the first failed transaction's).
pub fn run(
    out: &mut impl Write,
    args: &super::args::ApplyArgs,
    family: xtnl::model::Family,
    ctx: &super::context::Ctx,
) -> Result<i32> {
    let source = args.file.as_deref();
    let wait = args.wait.policy()?;
    // A delegated caller is held to the bounds; root's own apply has no fixed cap (a
    // transaction is still held to limits::MAX_TRANSACTION_OPS at its commit).
    let bounds = if ctx.delegated {
        json::Bounds::BOUNDED
    } else {
        json::Bounds::NONE
    };
    let bytes = match source {
        None | Some("-") => read_bounded(std::io::stdin().lock(), "standard input", bounds)?,
        Some(path) => {
            super::privileged::caller_file(path)?;
            let f = std::fs::File::open(path)
                .map_err(|e| Error::InvalidInput(format!("cannot open {path}: {e}")))?;
            read_bounded(f, path, bounds)?
        }
    };
    let parsed = json::parse_bounded(&bytes, bounds);
    drop(bytes); // the typed document is all that is needed from here on
    let doc = match parsed {
        Ok(d) => d,
        Err(e) => {
            let v = serde_json::json!({
                "version": 1, "ok": false, "error": json::error_value(&e), "transactions": []
            });
            writeln!(out, "{v}").map_err(io_error)?;
            return Err(e);
        }
    };
    // One backend for the whole document: the one the host's iptables uses (or --backend),
    // chosen by the run's context, opened once per family it serves (one nf_tables session
    // serves every family).
    // Opened before anything is sent, as a failure to open is no transaction's failure.
    let mut opened: Vec<Opened> = Vec::new();
    for t in &doc.transactions {
        if t.layout == xtnl::nathost::map::Layout::Chains
            && !opened.iter().any(|o| o.serves(t.family))
        {
            let lock = ctx.lock(wait);
            opened.push(ctx.open_chosen_by(family, t.family, false, lock, LockMode::Always)?);
        }
    }
    // The map layout lives in nf_tables whatever the iptables backend.
    let mut map_session: Option<xtnl::nft::Session> = None;
    let (result, status) = json::apply_each(&doc, |t| {
        use xtnl::nathost::map::{Layout, transact_operations};
        if t.layout == Layout::Map {
            if let Some(s) = opened.iter_mut().find_map(Opened::nft) {
                return transact_operations(s, t.family, &t.operations);
            }
            if map_session.is_none() {
                let s = ctx
                    .session()
                    .lock(ctx.lock(wait))
                    .lock_mode(LockMode::Always)
                    .open()?;
                map_session = Some(s);
            }
            return match map_session.as_mut() {
                Some(s) => transact_operations(s, t.family, &t.operations),
                None => Err(Error::InvalidInput("no nf_tables session".into())),
            };
        }
        match opened.iter_mut().find(|o| o.serves(t.family)) {
            Some(o) => o.transact(t.family, &t.operations),
            None => Err(Error::InvalidInput(format!(
                "no backend opened for {}",
                t.family
            ))),
        }
    });
    writeln!(out, "{result}").map_err(io_error)?;
    out.flush().map_err(io_error)?;
    // A short-lived process: do not make the caller wait for the kernel's reclaim.
    for o in opened {
        o.close()?;
    }
    if let Some(s) = map_session {
        s.close_detached()?;
    }
    Ok(status)
}
