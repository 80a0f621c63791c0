//! `xtnl serve`: the command line of the long-lived helper (see [`xtnl::serve`]).

use std::sync::Arc;

use super::privileged::{Globals, audit_for, policy_for};
use xtnl::backend::BackendChoice;
use xtnl::error::{Error, Result};
use xtnl::lock::WaitPolicy;
use xtnl::netns::Netns;
use xtnl::privilege::invoker;
use xtnl::serve::{self, Listen, Options, SocketAccess, engine};

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

fn number(v: Option<&String>, what: &str, max: usize) -> Result<usize> {
    let v = v.ok_or_else(|| bad(format!("{what} needs a number")))?;
    match v.parse::<usize>() {
        Ok(n) if n >= 1 && n <= max => Ok(n),
        _ => Err(bad(format!("{what} {v:?}: expected 1 to {max}"))),
    }
}

fn uid_of(v: &str) -> Result<u32> {
    if let Ok(n) = v.parse() {
        return Ok(n);
    }
    match xtnl::policy::accounts::uid_by_name(v) {
        Some(uid) => Ok(uid),
        None => Err(bad(format!("--socket-owner {v:?}: no such user"))),
    }
}

fn gid_of(v: &str) -> Result<u32> {
    if let Ok(n) = v.parse() {
        return Ok(n);
    }
    match xtnl::policy::accounts::group_by_name(v) {
        Some(gid) => Ok(gid),
        None => Err(bad(format!("--socket-group {v:?}: no such group"))),
    }
}

/// Runs `xtnl serve ARGS`.
pub fn run(
    args: &[String],
    globals: &Globals,
    backend: BackendChoice,
    netns: Option<Netns>,
) -> Result<i32> {
    let mut listen = None;
    let mut access = SocketAccess::default();
    let mut wait = WaitPolicy::Forever;
    let mut max_request_bytes = serve::MAX_REQUEST_BYTES;
    let mut max_clients = serve::MAX_CLIENTS;
    let mut max_queue = serve::MAX_QUEUE;
    let mut group_commit = true;
    let mut limits = serve::Limits::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--stdio" if listen.is_none() => listen = Some(Listen::Stdio),
            "--socket" if listen.is_none() => {
                let p = it.next().ok_or_else(|| bad("--socket needs a path"))?;
                listen = Some(Listen::Socket(p.into()));
            }
            "--stdio" | "--socket" => return Err(bad("give one of --stdio and --socket PATH")),
            "--socket-mode" => {
                let v = it.next().ok_or_else(|| bad("--socket-mode needs a mode"))?;
                access.mode = u32::from_str_radix(v, 8)
                    .ok()
                    .filter(|m| *m <= 0o777)
                    .ok_or_else(|| {
                        bad(format!(
                            "--socket-mode {v:?}: expected an octal mode such as 0660"
                        ))
                    })?;
            }
            "--socket-owner" => {
                let v = it
                    .next()
                    .ok_or_else(|| bad("--socket-owner needs a user"))?;
                access.owner = Some(uid_of(v)?);
            }
            "--socket-group" => {
                let v = it
                    .next()
                    .ok_or_else(|| bad("--socket-group needs a group"))?;
                access.group = Some(gid_of(v)?);
            }
            "-w" | "--wait" => {
                let secs = number(it.next(), "--wait", 86_400)?;
                wait = WaitPolicy::Timeout(std::time::Duration::from_secs(secs as u64));
            }
            "--max-request-bytes" => {
                max_request_bytes =
                    number(it.next(), "--max-request-bytes", serve::MAX_REQUEST_BYTES)?;
            }
            "--max-clients" => max_clients = number(it.next(), "--max-clients", 65_536)?,
            "--no-group-commit" => group_commit = false,
            "--max-clients-per-uid" => {
                limits.per_uid = Some(number(it.next(), "--max-clients-per-uid", 65_536)?);
            }
            "--idle-timeout" => {
                let secs = number(it.next(), "--idle-timeout", 86_400)?;
                limits.idle = Some(std::time::Duration::from_secs(secs as u64));
            }
            "--line-timeout" => {
                let secs = number(it.next(), "--line-timeout", 3_600)?.max(1);
                limits.line = std::time::Duration::from_secs(secs as u64);
            }
            "--queue" => max_queue = number(it.next(), "--queue", 1 << 20)?,
            other => {
                return Err(bad(format!(
                    "unknown serve option {other:?} (see `xtnl serve --help`)"
                )));
            }
        }
    }
    let listen = listen.ok_or_else(|| bad("serve needs --stdio or --socket PATH"))?;
    // Forwarded iptables invocations (the drop-in's thin client) run on the drop-in's own
    // interpreter.
    serve::thin::set_runner(super::thin::run_forwarded);
    let who = invoker();
    // The whole policy: each request is checked against the entries for its caller.
    let policy = policy_for(globals, &who)?.map(Arc::new);
    let opts = Options {
        listen,
        access,
        engine: engine::Config {
            backend,
            wait,
            policy,
            default_netns: netns,
            no_follow: who.delegated(),
        },
        audit: audit_for(globals, &who)?,
        invoker: who,
        max_request_bytes,
        max_clients,
        max_queue,
        group_commit,
        limits,
    };
    serve::run(opts)
}
