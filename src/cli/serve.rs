//! `xtnl serve`: the command line of the long-lived helper (see [`xtnl::serve`]).

use std::io::Write;
use std::sync::Arc;

use super::io_error;
use super::privileged::{Globals, audit_for, policy_for};
use xtnl::backend::BackendChoice;
use xtnl::error::{Error, Result};
use xtnl::lock::WaitPolicy;
use xtnl::netns::Netns;
use xtnl::privilege::invoker;
use xtnl::serve::{self, Listen, Options, SocketAccess, engine};

pub const USAGE: &str = "\
usage: xtnl [GLOBAL-OPTIONS] serve --stdio | --socket PATH [OPTIONS]

Keeps its nf_tables sessions open and takes requests as JSON lines (one response line per
request, in order; see docs/serve.md and docs/schema/):
  --stdio                   requests on standard input, responses on standard output; exits 0
                            at the end of the input (`ssh host xtnl serve --stdio`); the only
                            mode of a privileged run (sudo, setuid, capabilities)
  --socket PATH             a unix socket; with systemd socket activation (LISTEN_FDS) the
                            socket systemd passes. Each request runs under the policy entries
                            for the caller's uid and groups (SO_PEERCRED), audited with its uid
  --socket-mode OCTAL       the socket file's mode (default 0660)
  --socket-owner USER|UID   the socket file's owner
  --socket-group GROUP|GID  the socket file's group
  -w, --wait SECS           wait at most SECS for the xtables lock (default: as long as it takes)
  --max-request-bytes N     the longest request line (default and most: 16 MiB and a little)
  --max-clients N           connections at once (default 256; lowered to what the file
                            descriptor limit allows); root has 16 more of its own
  --max-clients-per-uid N   connections of one uid at once (default: an eighth of
                            --max-clients, at least 4)
  --idle-timeout SECS       close a connection idle this long between requests (default 3600)
  --line-timeout SECS       a started request line must arrive whole, and a response be
                            taken, within SECS (default 30)
  --queue N                 requests waiting for the engine, all clients together (default 1024)
  --no-group-commit         commit each request alone (default: the one-transaction requests
                            of one caller identity that arrive together are one batch; if it
                            fails, each is committed alone, so a bad request fails by itself)
global options (before or after `serve`): --netns NAME|PATH (the namespace of requests that
name none), --backend, --policy-file, --audit";

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
    out: &mut impl Write,
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
            "--help" | "-h" => {
                writeln!(out, "{USAGE}").map_err(io_error)?;
                return Ok(0);
            }
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
