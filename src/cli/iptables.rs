//! `xtnl` as a drop-in for `/sbin/iptables`: the same command line, output, messages and
//! exit statuses, each command one atomic transaction.

use std::io::Write;

use super::context::Ctx;
use super::io_error;
use xtnl::error::Result;
use xtnl::ipt::parse;
use xtnl::lock::{LockMode, WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nft::Session;

/// Parses one iptables command line: the invocation and whether `--json` asked for the JSON
/// listing. `dropin`: under an iptables name, where `-6` (ip6tables: `-4`) is a parameter
/// problem, as in iptables; xtnl's own name switches the family with them.
fn prepare(
    args: &[String],
    default_family: Family,
    dropin: bool,
) -> Result<(parse::Invocation, bool)> {
    // `--json` (not an iptables option) turns a listing into the JSON listing.
    let as_json = args.iter().any(|a| a == "--json");
    let args: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
    if dropin && xtnl::ipt::args::family_flag(&args).is_some_and(|f| f != default_family) {
        return Err(xtnl::Error::InvalidInput(String::new()));
    }
    Ok((parse::parse(&args, default_family)?, as_json))
}

/// nf_tables: reads never take the lock; mutations take it around their commit only.
/// x_tables: every write takes it around its read-modify-replace.
fn lock_mode(inv: &parse::Invocation) -> LockMode {
    if inv.command.mutates() {
        LockMode::Always
    } else {
        LockMode::Never
    }
}

fn with_interval(lock: XtablesLock, inv: &parse::Invocation) -> XtablesLock {
    match inv.wait_interval {
        Some(interval) => lock.with_poll_interval(interval),
        None => lock,
    }
}

/// Runs one iptables command line (`args` without the program name).
pub(super) fn run(
    out: &mut impl Write,
    args: &[String],
    default_family: Family,
    ctx: &Ctx,
) -> Result<()> {
    let (inv, as_json) = prepare(args, default_family, super::dropin::active())?;
    if as_json {
        xtnl::json::listed_chain(&inv)?;
        let lock = ctx.lock(inv.wait);
        let mut backend = ctx.open(inv.family, inv.verbose, lock, LockMode::Never)?;
        let v = xtnl::json::invocation_listing(backend.lister(), &inv)?;
        writeln!(out, "{v}").map_err(io_error)?;
        return Ok(());
    }
    let lock = with_interval(ctx.lock(inv.wait), &inv);
    // One call opens the backend, runs the command and closes it (a short-lived process:
    // without waiting for the kernel's reclaim).
    let text = ctx
        .call(inv.family, inv.verbose, lock, lock_mode(&inv))
        .execute(&inv)?;
    let text = one_rule(text, &inv);
    out.write_all(text.as_bytes()).map_err(io_error)?;
    out.flush().map_err(io_error)
}

/// Runs one command line of the drop-in (under an iptables name, nf_tables) on a long-lived
/// service's session, as [`run`] runs it in its own process: the same parse, the same lock
/// (`lock` makes it for the invocation's wait) taken as the process would take it, the same
/// output. The session keeps its own lock for its other requests.
pub(super) fn run_on_session(
    out: &mut impl Write,
    args: &[String],
    default_family: Family,
    session: &mut Session,
    lock: &dyn Fn(WaitPolicy) -> XtablesLock,
) -> Result<()> {
    let (inv, as_json) = prepare(args, default_family, true)?;
    if as_json {
        let v = xtnl::json::invocation_listing(session, &inv)?;
        return writeln!(out, "{v}").map_err(io_error);
    }
    let mine = (lock_mode(&inv) == LockMode::Always).then(|| with_interval(lock(inv.wait), &inv));
    let kept = session.replace_lock(mine);
    let result = xtnl::ipt::exec::execute(session, &inv);
    session.replace_lock(kept);
    let text = one_rule(result?, &inv);
    out.write_all(text.as_bytes()).map_err(io_error)
}

/// `-S CHAIN N` and `-L CHAIN N` print that one rule (nothing past the last one).
fn one_rule(text: String, inv: &parse::Invocation) -> String {
    let one = match (&inv.command, inv.rule_number) {
        (parse::Command::ListRules(_), Some(n)) => {
            xtnl::ipt::args::nth_rule_of_list_rules(&text, n)
        }
        (parse::Command::List(_), Some(n)) => xtnl::ipt::args::nth_rule_of_list(&text, n),
        _ => return text,
    };
    // the warnings of the rules rendered but not printed go, as iptables prints only rule N
    xtnl::ipt::messages::keep_printed_warnings(&one);
    one
}
