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
    // `--json` (not an iptables option) turns a listing into the JSON listing.
    let as_json = args.iter().any(|a| a == "--json");
    let args: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
    // Under an iptables name `-6` (ip6tables: `-4`) is a parameter problem, as in iptables;
    // xtnl's own name switches the family with them.
    if super::dropin::active()
        && crate::ipt::args::family_flag(&args).is_some_and(|f| f != default_family)
    {
        return Err(crate::Error::InvalidInput(String::new()));
    }
    let inv = parse::parse(&args, default_family)?;
    if as_json {
        let chain = match &inv.command {
            parse::Command::ListRules(c) | parse::Command::List(c) => c.clone(),
            _ => {
                return Err(crate::Error::InvalidInput(
                    "--json applies to listings (-S, -L) only".into(),
                ));
            }
        };
        let chains = if super::resolve_backend(backend, inv.family, inv.verbose) == Backend::Legacy
        {
            let legacy = crate::legacy::Legacy::open(inv.family, XtablesLock::from_env(inv.wait))?;
            crate::legacy::listings(&legacy, &inv.table, chain.as_deref())?
        } else {
            let mut session = Session::builder().lock_mode(LockMode::Never).open()?;
            let t = crate::nft::TableRef::new(inv.family, &inv.table);
            crate::ipt::listing::chains(&mut session, &t, chain.as_deref())
                .map_err(|e| crate::ipt::messages::kernel_words(e, inv.family, false))?
        };
        let v = crate::json::listing_value(
            inv.family,
            vec![crate::json::table_value(&inv.table, &chains)],
        );
        writeln!(out, "{v}").map_err(io_error)?;
        return Ok(());
    }
    let mut lock = XtablesLock::from_env(inv.wait);
    if let Some(interval) = inv.wait_interval {
        lock = lock.with_poll_interval(interval);
    }
    if super::resolve_backend(backend, inv.family, inv.verbose) == Backend::Legacy {
        // x_tables: every write takes the lock around its read-modify-replace.
        let legacy = crate::legacy::Legacy::open(inv.family, lock)?;
        let text = one_rule(crate::legacy::execute(&legacy, &inv)?, &inv);
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
    let text = one_rule(exec::execute(&mut session, &inv)?, &inv);
    out.write_all(text.as_bytes()).map_err(io_error)?;
    out.flush().map_err(io_error)?;
    // A short-lived process: do not make the caller wait for the kernel's reclaim.
    session.close_detached()
}

/// `-S CHAIN N` and `-L CHAIN N` print that one rule (nothing past the last one).
fn one_rule(text: String, inv: &parse::Invocation) -> String {
    match (&inv.command, inv.rule_number) {
        (parse::Command::ListRules(_), Some(n)) => {
            crate::ipt::args::nth_rule_of_list_rules(&text, n)
        }
        (parse::Command::List(_), Some(n)) => crate::ipt::args::nth_rule_of_list(&text, n),
        _ => text,
    }
}
