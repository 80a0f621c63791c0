//! `xtnl` as a drop-in for `/sbin/iptables`: the same command line, output, messages and
//! exit statuses, each command one atomic transaction.

use std::io::Write;

use super::io_error;
use crate::backend::{Backend, BackendChoice};
use crate::error::Result;
use crate::ipt::{exec, parse};
use crate::lock::{LockMode, XtablesLock};
use crate::model::Family;
use crate::nft::Session;

/// Runs one iptables command line (`args` without the program name).
pub fn run(
    out: &mut impl Write,
    args: &[String],
    default_family: Family,
    backend: BackendChoice,
) -> Result<()> {
    let inv = parse::parse(args, default_family)?;
    let mut lock = XtablesLock::from_env(inv.wait);
    if let Some(interval) = inv.wait_interval {
        lock = lock.with_poll_interval(interval);
    }
    if super::resolve_backend(backend, inv.family, inv.verbose) == Backend::Legacy {
        // x_tables: every write takes the lock around its read-modify-replace.
        let legacy = crate::legacy::Legacy::open(inv.family, lock)?;
        let text = crate::legacy::execute(&legacy, &inv)?;
        out.write_all(text.as_bytes()).map_err(io_error)?;
        return out.flush().map_err(io_error);
    }
    // Reads never take the lock; mutations take it around their commit only.
    let mode = if inv.command.mutates() {
        LockMode::Always
    } else {
        LockMode::Never
    };
    let mut session = Session::builder().lock(lock).lock_mode(mode).open()?;
    let text = exec::execute(&mut session, &inv)?;
    out.write_all(text.as_bytes()).map_err(io_error)?;
    out.flush().map_err(io_error)?;
    // A short-lived process: do not make the caller wait for the kernel's reclaim.
    session.close_detached()
}
