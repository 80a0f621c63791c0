//! The `xtnl` command line: argument handling and output. The binary's `main` only calls
//! [`run`] and reports errors with [`report`].

mod apply;
mod args;
mod context;
mod delegated;
mod demo;
mod doctor;
pub mod dropin;
mod dropin_help;
mod iptables;
mod listing;
mod machine;
mod nathost;
mod nathost_map;
mod netns_opt;
mod nft;
mod privileged;
mod restore;
mod restore_input;
mod restore_verbose;
mod saveopts;
mod serve;
mod set_listing;
pub mod thin;
pub mod xml;
mod xml_convert;

use std::io::Write;

use xtnl::backend::{Backend, BackendChoice};
use xtnl::error::{Error, ErrorKind, Result};
use xtnl::model::Family;

pub const USAGE: &str = "\
usage: xtnl [GLOBAL-OPTIONS] COMMAND [ARGS]
       xtnl [GLOBAL-OPTIONS] [-4|-6] [-t TABLE] [-w [SECS]] [-W USECS] IPTABLES-COMMAND ...
                                (as iptables)

global options (before the command; ignored when run setuid, with file capabilities or
through sudo by another user, where the policy is always /etc/xtnl/policy.toml):
  --policy-file FILE            check every change against this policy (default:
                                $XTNL_POLICY, else /etc/xtnl/policy.toml if it exists)
  --audit syslog|stderr|off     where the audit line of each change goes (default:
                                $XTNL_AUDIT, else syslog)

  --backend nft|legacy|auto     (anywhere; default $XTNL_BACKEND, else auto) nf_tables as
                                iptables-nft, x_tables as iptables-legacy, or whichever the
                                host's iptables command is; -v says which and why on stderr
  --netns NAME|PATH             (anywhere) run in that network namespace (`ip netns` names
                                under /run/netns, or a path); the process does not move

commands:
  demo                          set up and tear down a NAT reservation in a scratch network
                                namespace, printing each step and its time
  list [FAMILY [TABLE [CHAIN]]] print tables, chains and rules (FAMILY: ip, ip6, inet)
  restore [--noflush] [-w [SECS]] [-4|-6] [FILE]
                                apply an iptables-restore file (standard input without FILE);
                                all of it is one atomic transaction
  save [-t TABLE] [-4|-6] [--json]
                                print iptables' tables in iptables-save format (or JSON)
  apply [FILE|-] [-w [SECS]]    apply a JSON document of transactions (xtnl-apply(5));
                                prints a JSON result
  serve --stdio | --socket PATH  take JSON-lines requests (apply documents, listings, NAT-host
                                operations, iptables command lines) on standard input or a
                                unix socket, one response line each; see `xtnl serve --help`
{DOCTOR}
{NATHOST}
{NFT}
  version                       print the version (also -V, --version)
  help                          print this help (also -h, --help; COMMAND --help prints
                                that command's)

Exit status: 0 ok, 1 kernel refused (not found, exists, in use), 2 bad arguments,
3 unknown table, 4 resource problem (lock busy, permission, netlink), as iptables uses
them; 5 denied by the policy, 6 policy file missing (privileged run), unsafe or invalid.";

/// Runs the command line; returns the exit status for a successful run. `program` is the
/// name the binary was invoked as (`xtnl6` or `ip6tables` default to IPv6).
pub fn run(program: &str, args: &[String]) -> Result<i32> {
    let json = machine::wants_json(args);
    let result = run_all(program, args);
    machine::finish(json, result)
}

fn run_all(program: &str, args: &[String]) -> Result<i32> {
    let (args, netns) = netns_opt::take(args)?;
    let args = machine::hoist(args);
    // A delegated run sheds what its caller handed it before anything else happens (and
    // before `--netns` starts a thread: the environment reset needs a single thread).
    delegated::enter(command_word(dropin::identify(program).as_ref(), &args)?.as_deref())?;
    let is_serve = privileged::split_globals(&args)
        .is_ok_and(|(_, rest)| rest.first().is_some_and(|c| c == "serve"));
    if !is_serve {
        netns_opt::set_requested(netns.as_ref());
        // A delegated run enters only a namespace its policy names, whatever the command
        // (`doctor` and listings included): judged here, before the namespace is touched.
        let who = xtnl::privilege::invoker();
        if netns.is_some() && who.delegated() {
            let (plain, _) = take_backend(&args)?;
            let (globals, _) = privileged::split_globals(&plain)?;
            netns_opt::scope_policy(privileged::policy_for(&globals, &who)?, &who)?;
        }
    }
    match netns {
        Some(ns) if !is_serve => ns.run_in(|| run_here(program, &args, None)),
        netns => run_here(program, &args, netns),
    }
}

/// The command a delegated run is asked for: under an iptables name the tool's (`-` for the
/// iptables commands, `save`, `restore`), else the first word after the global options.
fn command_word(identity: Option<&dropin::Identity>, args: &[String]) -> Result<Option<String>> {
    if let Some(id) = identity {
        return Ok(Some(
            match id.tool {
                dropin::Tool::Iptables => "-",
                dropin::Tool::Save => "save",
                dropin::Tool::Restore => "restore",
            }
            .to_string(),
        ));
    }
    let (args, _) = take_backend(args)?;
    let (_, rest) = privileged::split_globals(&args)?;
    Ok(rest.first().cloned())
}

fn run_here(program: &str, args: &[String], netns: Option<xtnl::netns::Netns>) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    let identity = dropin::identify(program);
    let v6 = program.ends_with('6') || program.starts_with("ip6tables");
    let family = if v6 {
        xtnl::model::Family::Ipv6
    } else {
        xtnl::model::Family::Ipv4
    };
    let (args, backend) = take_backend(args)?;
    let (globals, args) = privileged::split_globals(&args)?;
    let first = args.first().map(String::as_str);
    let usage = USAGE
        .replace("{DOCTOR}", doctor::USAGE)
        .replace("{NFT}", nft::USAGE)
        .replace(
            "{NATHOST}",
            &format!("{}\n{}", nathost::USAGE, nathost_map::USAGE),
        );
    // xtnl's own commands go through clap (help, usage errors); the iptables command line
    // (a first word with a dash, or an iptables name) never does.
    let own = match first {
        // `bench` left the binary (issue 14): answered below with where it went.
        Some(f) if identity.is_none() && !f.starts_with('-') && f != "bench" && f != "nft" => {
            match args::parse(args) {
                Ok(cli) => Some(cli.command),
                Err(e) => return usage_error(&mut out, &e, machine::wants_json(args)),
            }
        }
        _ => None,
    };
    match &own {
        // Read-only; runs before the policy set-up below, which it diagnoses.
        Some(args::Command::Doctor) => return doctor::run(&mut out, &[]),
        Some(args::Command::Help { command }) if !command.is_empty() => {
            let text = args::help_of(command).ok_or_else(|| {
                Error::InvalidInput(format!("help: no command {:?}", command.join(" ")))
            })?;
            write!(out, "{text}").map_err(io_error)?;
            return Ok(0);
        }
        _ => {}
    }
    let identity_only =
        identity.is_some() && (dropin::wants_version(args) || dropin::wants_help(args));
    let enforcement = if !identity_only
        && !matches!(
            first,
            Some("version" | "--version" | "-V" | "help" | "--help" | "-h")
        ) {
        privileged::install(&globals)?
    } else {
        xtnl::seam::Enforcement::none()
    };
    // A name that spells the backend (`iptables-legacy`) chooses it.
    let backend = identity.as_ref().and_then(|i| i.backend).unwrap_or(backend);
    let backend = privileged::restrict_backend(backend, family)?;
    let ctx = context::Ctx {
        choice: backend,
        enforcement,
        delegated: xtnl::privilege::invoker().delegated(),
    };
    if let Some(id) = &identity {
        return dropin::run(&mut out, id, args, &ctx);
    }
    // nft's JSON subset (issue 26): nft's own argument grammar, nft's exit status 1.
    if first == Some("nft") {
        return Ok(nft::run(&mut out, &args[1..], &ctx).unwrap_or_else(|e| nft::report(&e)));
    }
    // The commands that take clap's typed values.
    match &own {
        Some(args::Command::List(l)) => return listing::run(&mut out, l).map(|()| 0),
        Some(args::Command::Apply(a)) => return apply::run(&mut out, a, family, &ctx),
        _ => {}
    }
    let result = match first {
        Some("demo") => demo::run(&mut out, &ctx),
        Some("restore") => restore::run_restore(&mut out, &args[1..], family, &ctx),
        Some("save") => restore::run_save(&mut out, &args[1..], family, &ctx),
        Some("version" | "--version" | "-V") => {
            writeln!(out, "xtnl {}", env!("CARGO_PKG_VERSION")).map_err(io_error)
        }
        Some("help" | "--help" | "-h") => writeln!(out, "{usage}").map_err(io_error),
        Some("serve") => return serve::run(&args[1..], &globals, ctx.choice, netns),
        // The benchmark suite left the privileged binary (issue 14): say where it went.
        Some("bench") => Err(Error::InvalidInput(
            "the benchmark suite is not part of xtnl: run xtnl-bench [--quick] [--out DIR] \
             (cargo build --release --bin xtnl-bench)"
                .into(),
        )),
        Some("reservation" | "forward" | "teardown" | "sweep" | "host" | "migrate") => {
            nathost::run(&mut out, args, &ctx)
        }
        Some(a) if a.starts_with('-') => iptables::run(&mut out, args, family, &ctx),
        // Unreachable: clap refused any other word above.
        Some(other) => Err(Error::InvalidInput(format!("unknown command {other:?}"))),
        None => Err(Error::InvalidInput("no command given".into())),
    };
    result.map(|()| 0)
}

/// Answers a line clap did not accept: its help on standard output (status 0), or its error
/// naming the bad word on standard error (status 2; with `--json` also the JSON error object
/// on standard output, as every `--json` command answers a failure).
fn usage_error(out: &mut impl Write, e: &clap::Error, json: bool) -> Result<i32> {
    use clap::error::ErrorKind as K;
    if matches!(e.kind(), K::DisplayHelp | K::DisplayVersion) {
        write!(out, "{}", e.render()).map_err(io_error)?;
        return Ok(0);
    }
    let text = e.render().to_string();
    let _ = write!(std::io::stderr().lock(), "{text}");
    if json {
        let first = text.lines().next().unwrap_or_default();
        let err = Error::InvalidInput(first.trim_start_matches("error: ").to_string());
        let v =
            serde_json::json!({"version": 1, "ok": false, "error": xtnl::json::error_value(&err)});
        writeln!(out, "{v}").map_err(io_error)?;
    }
    Ok(2)
}

/// Removes `--backend X` / `--backend=X` (anywhere on the line) and returns the choice,
/// defaulting to `$XTNL_BACKEND`, then `auto`.
fn take_backend(args: &[String]) -> Result<(Vec<String>, BackendChoice)> {
    let mut rest = Vec::with_capacity(args.len());
    let mut choice = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--backend" {
            let v = it
                .next()
                .ok_or_else(|| Error::InvalidInput("--backend needs nft, legacy or auto".into()))?;
            choice = Some(v.parse()?);
        } else if let Some(v) = a.strip_prefix("--backend=") {
            choice = Some(v.parse()?);
        } else {
            rest.push(a.clone());
        }
    }
    let choice = match choice {
        Some(c) => c,
        None => BackendChoice::from_env()?,
    };
    Ok((rest, choice))
}

/// Resolves the backend for a command and, with `-v`, says which and why on stderr (stdout
/// stays exactly what iptables prints).
pub(crate) fn resolve_backend(choice: BackendChoice, family: Family, verbose: bool) -> Backend {
    let (backend, why) = choice.resolve(family);
    // Under an iptables name stderr stays what iptables prints.
    if verbose && !dropin::active() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "xtnl: backend {} ({why})",
            backend.as_str()
        );
    }
    backend
}

/// A failed write of output. A closed pipe (the reader is gone: `xtnl save | head -1`) ends
/// the process at once, silently and by SIGPIPE, as iptables and other Unix tools end.
pub(crate) fn io_error(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        xtnl::error::exit_on_closed_output();
    }
    Error::Netlink {
        context: "write output",
        source: e,
    }
}

/// Prints an error as the program named `program` would: iptables' shapes under its names
/// (see [`dropin::report`]), xtnl's otherwise.
pub fn report_as(program: &str, err: &Error) -> i32 {
    match dropin::identify(program) {
        Some(id) => dropin::report(&id, err),
        None => report(err),
    }
}

/// Prints an error with its whole cause chain and what to do next; returns the exit status.
pub fn report(err: &Error) -> i32 {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "xtnl: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        let _ = writeln!(e, "  caused by: {s}");
        source = s.source();
    }
    if let Some(hint) = hint(err) {
        let _ = writeln!(e, "{hint}");
    }
    err.exit_status()
}

fn hint(err: &Error) -> Option<&'static str> {
    Some(match err.kind() {
        ErrorKind::LockBusy if lock_waited(err) => {
            "Another app is currently holding the xtables lock. Stopped waiting (see -w)."
        }
        ErrorKind::LockBusy => {
            "Another app is currently holding the xtables lock. Perhaps you want to use the -w option?"
        }
        ErrorKind::NotPermitted => {
            "hint: run as root, or give the binary CAP_NET_ADMIN (setcap cap_net_admin+ep)"
        }
        ErrorKind::NotFound if matches!(err.innermost(), Error::NoSuchTable(_)) => {
            "Perhaps iptables or your kernel needs to be upgraded."
        }
        ErrorKind::NotFound => "hint: check the names with `xtnl list`",
        ErrorKind::InUse => {
            "hint: the chain is still referenced or not empty: remove the rules that jump to it and flush it first"
        }
        ErrorKind::Unsupported => {
            "hint: the kernel lacks a module for this (nf_tables, nft_nat, nft_masq...); try `modprobe`"
        }
        ErrorKind::GenerationConflict => {
            "hint: the ruleset changed during every attempt; retry, or find the process that rewrites it constantly"
        }
        ErrorKind::InvalidInput => "Try `xtnl help' for more information.",
        ErrorKind::InvalidArgument if refused_rule(err) => {
            "hint: the kernel refused the rule itself; most often a target in a chain whose hook \
             does not allow it (DNAT and REDIRECT: PREROUTING and OUTPUT; SNAT: POSTROUTING and \
             INPUT; MASQUERADE: POSTROUTING), also through a jump from another chain"
        }
        ErrorKind::PolicyDenied => {
            "hint: the policy does not allow this change; nothing was changed (ask the operator to extend the policy)"
        }
        ErrorKind::PolicyInvalid => {
            "hint: the policy must be valid TOML with known keys, and in a privileged run /etc/xtnl/policy.toml owned by root and writable only by root"
        }
        _ => return None,
    })
}

fn lock_waited(err: &Error) -> bool {
    matches!(
        err.innermost(),
        Error::LockBusy {
            waited: Some(_),
            ..
        }
    )
}

/// Whether the kernel answered EINVAL to a rule (its expressions, not the chain it names).
fn refused_rule(err: &Error) -> bool {
    err.op_failure()
        .is_some_and(|f| f.errno == libc::EINVAL && f.is_rule_op())
}
