//! `xtnl apply [FILE|-]`: a JSON document of transactions, validated whole before anything
//! is sent, each transaction committed atomically, a JSON result on standard output.

use std::io::{Read, Write};

use super::io_error;
use xtnl::backend::Backend;
use xtnl::error::{Error, Result};
use xtnl::json;
use xtnl::lock::{LockMode, WaitPolicy};

fn read_bounded(mut input: impl Read, what: &str) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    input
        .by_ref()
        .take(json::MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::InvalidInput(format!("cannot read {what}: {e}")))?;
    if buf.len() > json::MAX_DOCUMENT_BYTES {
        return Err(Error::InvalidInput(format!(
            "{what} is larger than the limit of {} bytes",
            json::MAX_DOCUMENT_BYTES
        )));
    }
    Ok(buf)
}

/// Runs `xtnl apply`; returns the exit status (the first failed transaction's).
pub fn run(
    out: &mut impl Write,
    args: &[String],
    family: xtnl::model::Family,
    ctx: &super::context::Ctx,
) -> Result<i32> {
    let mut source: Option<&str> = None;
    let mut wait = WaitPolicy::default_for_command()?;
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-w" | "--wait" => {
                wait = match it.peek().and_then(|s| s.parse::<u64>().ok()) {
                    Some(secs) => {
                        it.next();
                        WaitPolicy::Timeout(std::time::Duration::from_secs(secs))
                    }
                    None => WaitPolicy::Forever,
                };
            }
            o if o.starts_with('-') && o != "-" => {
                return Err(Error::InvalidInput(format!("unknown apply option {o:?}")));
            }
            f if source.is_none() => source = Some(f),
            f => return Err(Error::InvalidInput(format!("unexpected argument {f:?}"))),
        }
    }
    let bytes = match source {
        None | Some("-") => read_bounded(std::io::stdin().lock(), "standard input")?,
        Some(path) => {
            super::privileged::caller_file(path)?;
            let f = std::fs::File::open(path)
                .map_err(|e| Error::InvalidInput(format!("cannot open {path}: {e}")))?;
            read_bounded(f, path)?
        }
    };
    let doc = match json::parse(&bytes) {
        Ok(d) => d,
        Err(e) => {
            let v = serde_json::json!({
                "version": 1, "ok": false, "error": json::error_value(&e), "transactions": []
            });
            writeln!(out, "{v}").map_err(io_error)?;
            return Err(e);
        }
    };
    // One backend for the whole document: the one the host's iptables uses (or --backend).
    let (result, status) = match ctx.backend(family, false) {
        Backend::Nft => {
            let mut session = ctx
                .session()
                .lock(ctx.lock(wait))
                .lock_mode(LockMode::Always)
                .open()?;
            let (result, status) = json::apply_each(&doc, |t| match t.layout {
                xtnl::nathost::map::Layout::Map => {
                    xtnl::nathost::map::transact_operations(&mut session, t.family, &t.operations)
                }
                xtnl::nathost::map::Layout::Chains => {
                    xtnl::nathost::transact(&mut session, t.family, &t.operations)
                }
            });
            writeln!(out, "{result}").map_err(io_error)?;
            out.flush().map_err(io_error)?;
            session.close_detached()?;
            return Ok(status);
        }
        Backend::Legacy => {
            let mut by_family = std::collections::BTreeMap::new();
            for t in &doc.transactions {
                if let std::collections::btree_map::Entry::Vacant(e) = by_family.entry(t.family) {
                    e.insert(ctx.legacy(t.family, ctx.lock(wait))?);
                }
            }
            // The map layout lives in nf_tables whatever the iptables backend.
            let mut map_session = None;
            json::apply_each(&doc, |t| match by_family.get_mut(&t.family) {
                _ if t.layout == xtnl::nathost::map::Layout::Map => {
                    if map_session.is_none() {
                        map_session = Some(
                            ctx.session()
                                .lock(ctx.lock(wait))
                                .lock_mode(LockMode::Always)
                                .open()?,
                        );
                    }
                    match map_session.as_mut() {
                        Some(s) => {
                            xtnl::nathost::map::transact_operations(s, t.family, &t.operations)
                        }
                        None => Err(Error::InvalidInput("no nf_tables session".into())),
                    }
                }
                Some(legacy) => xtnl::nathost::transact(legacy, t.family, &t.operations),
                None => Err(Error::InvalidInput(
                    "no x_tables handle for this family".into(),
                )),
            })
        }
    };
    writeln!(out, "{result}").map_err(io_error)?;
    out.flush().map_err(io_error)?;
    Ok(status)
}
