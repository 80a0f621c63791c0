//! `xtnl` as a drop-in for `/sbin/iptables`: the same command line, output, messages and
//! exit statuses, each command one atomic transaction.

use std::io::Write;

use super::context::Ctx;
use super::io_error;
use xtnl::error::Result;
use xtnl::ipt::parse;
use xtnl::lock::LockMode;
use xtnl::model::Family;

/// Runs one iptables command line (`args` without the program name).
pub(super) fn run(
    out: &mut impl Write,
    args: &[String],
    default_family: Family,
    ctx: &Ctx,
) -> Result<()> {
    // `--json` (not an iptables option) turns a listing into the JSON listing.
    let as_json = args.iter().any(|a| a == "--json");
    let args: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
    // Under an iptables name `-6` (ip6tables: `-4`) is a parameter problem, as in iptables;
    // xtnl's own name switches the family with them.
    if super::dropin::active()
        && xtnl::ipt::args::family_flag(&args).is_some_and(|f| f != default_family)
    {
        return Err(xtnl::Error::InvalidInput(String::new()));
    }
    let inv = parse::parse(&args, default_family)?;
    if as_json {
        xtnl::json::listed_chain(&inv)?;
        let lock = ctx.lock(inv.wait);
        let mut backend = ctx.open(inv.family, inv.verbose, lock, LockMode::Never)?;
        let v = xtnl::json::invocation_listing(backend.lister(), &inv)?;
        writeln!(out, "{v}").map_err(io_error)?;
        return Ok(());
    }
    let mut lock = ctx.lock(inv.wait);
    if let Some(interval) = inv.wait_interval {
        lock = lock.with_poll_interval(interval);
    }
    // nf_tables: reads never take the lock; mutations take it around their commit only.
    // x_tables: every write takes it around its read-modify-replace.
    let mode = if inv.command.mutates() {
        LockMode::Always
    } else {
        LockMode::Never
    };
    let mut backend = ctx.open(inv.family, inv.verbose, lock, mode)?;
    let text = backend.execute(&inv)?;
    let text = one_rule(text, &inv);
    out.write_all(text.as_bytes()).map_err(io_error)?;
    out.flush().map_err(io_error)?;
    // A short-lived process: do not make the caller wait for the kernel's reclaim.
    backend.close()
}

/// `-S CHAIN N` and `-L CHAIN N` print that one rule (nothing past the last one).
fn one_rule(text: String, inv: &parse::Invocation) -> String {
    match (&inv.command, inv.rule_number) {
        (parse::Command::ListRules(_), Some(n)) => {
            xtnl::ipt::args::nth_rule_of_list_rules(&text, n)
        }
        (parse::Command::List(_), Some(n)) => xtnl::ipt::args::nth_rule_of_list(&text, n),
        _ => text,
    }
}
