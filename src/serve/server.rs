//! The transport of `xtnl serve`: standard input/output or a unix socket (bound here, or
//! passed by systemd), one thread per client, the bounded queue to the engine, and the
//! signal thread.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::engine::{self, Engine, Peer};
use super::request::{self, Request};
use crate::error::{Error, Result};
use crate::nft::Auditor;
use crate::policy::Caller;
use crate::policy::audit::{AuditTarget, LineAuditor};
use crate::privilege::{Elevation, Invoker};

/// Where requests come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// Standard input, responses on standard output; exits 0 at the end of the input.
    Stdio,
    /// A unix stream socket at this path, or the one systemd passes (socket activation),
    /// which wins when present.
    Socket(PathBuf),
}

/// The socket file's mode and owner (ignored for a socket systemd passes: its unit says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketAccess {
    /// The socket file's permission bits (default 0660).
    pub mode: u32,
    /// The socket file's owner uid, if it is to be changed.
    pub owner: Option<u32>,
    /// The socket file's group gid, if it is to be changed (the group that may connect).
    pub group: Option<u32>,
}

impl Default for SocketAccess {
    fn default() -> Self {
        SocketAccess {
            mode: 0o660,
            owner: None,
            group: None,
        }
    }
}

/// Everything `xtnl serve` runs with.
#[derive(Debug, Clone)]
pub struct Options {
    /// Standard input and output, or a unix socket.
    pub listen: Listen,
    /// The socket file's mode and owner.
    pub access: SocketAccess,
    /// The engine's backend, lock wait, policy and default namespace.
    pub engine: engine::Config,
    /// Where audit records go.
    pub audit: AuditTarget,
    /// Who started the service (the stdio caller; a delegated run restricts it).
    pub invoker: Invoker,
    /// The longest request line accepted, in bytes; a longer one is refused.
    pub max_request_bytes: usize,
    /// How many unix-socket clients may be connected at once; more are refused.
    pub max_clients: usize,
    /// How many requests may wait for the engine before clients are slowed down.
    pub max_queue: usize,
    /// Commit the requests that arrive together as one batch (see
    /// [`engine::Engine::execute_group`]).
    pub group_commit: bool,
}

struct Job {
    req: Request,
    peer: Arc<Peer>,
    reply: Sender<Value>,
}

/// State shared with the signal thread.
#[derive(Default)]
struct Shared {
    shutdown: AtomicBool,
    /// Responses produced and not yet written.
    unwritten: AtomicUsize,
    /// Held by the engine while it executes a request.
    executing: Mutex<()>,
}

/// Runs the service until the end of standard input (stdio) or a signal; returns the exit
/// status.
pub fn run(opts: Options) -> Result<i32> {
    if opts.invoker.delegated() && opts.listen != Listen::Stdio {
        return Err(Error::InvalidInput(
            "serve --socket is for a service that root starts (systemd); a privileged run \
             (setuid, file capabilities or sudo) serves only its own caller, with --stdio"
                .into(),
        ));
    }
    if opts.invoker.delegated() && opts.engine.policy.is_none() {
        return Err(Error::PolicyInvalid(
            "a privileged run of serve needs the policy file".into(),
        ));
    }
    // Block the signals before any thread starts, so that every thread inherits the mask
    // and only the signal thread receives them.
    let mut sigs = nix::sys::signal::SigSet::empty();
    sigs.add(nix::sys::signal::Signal::SIGTERM);
    sigs.add(nix::sys::signal::Signal::SIGINT);
    sigs.thread_block().map_err(|e| Error::Netlink {
        context: "block SIGTERM",
        source: e.into(),
    })?;
    let shared = Arc::new(Shared::default());
    {
        let shared = shared.clone();
        std::thread::Builder::new()
            .name("xtnl-signals".into())
            .spawn(move || {
                if sigs.wait().is_ok() {
                    shut_down(&shared);
                }
            })
            .map_err(|e| Error::Netlink {
                context: "spawn the signal thread",
                source: e,
            })?;
    }
    let (tx, rx) = sync_channel::<Job>(opts.max_queue.max(1));
    let engine_thread = {
        let shared = shared.clone();
        let config = opts.engine.clone();
        let group = opts.group_commit;
        std::thread::Builder::new()
            .name("xtnl-engine".into())
            .spawn(move || engine_loop(Engine::new(config), rx, &shared, group))
            .map_err(|e| Error::Netlink {
                context: "spawn the engine thread",
                source: e,
            })?
    };
    match &opts.listen {
        Listen::Stdio => {
            let peer = Arc::new(stdio_peer(&opts));
            let stdin = std::io::stdin().lock();
            serve_client(
                stdin,
                std::io::stdout(),
                &peer,
                &tx,
                &shared,
                opts.max_request_bytes,
            );
        }
        Listen::Socket(path) => {
            let listener = listen(path, &opts.access)?;
            accept_loop(&listener, &opts, &tx, &shared);
        }
    }
    drop(tx);
    let _ = engine_thread.join();
    Ok(0)
}

fn shut_down(shared: &Shared) {
    shared.shutdown.store(true, Ordering::SeqCst);
    // The request in flight finishes (the engine holds this while executing) ...
    let held = shared.executing.lock();
    // ... and its response is written, for a while at most (a client that does not read).
    let deadline = Instant::now() + Duration::from_secs(5);
    while shared.unwritten.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    // (Responses are flushed as they are written; standard output's lock may be held by the
    // thread that writes them, so it is not taken here.)
    drop(held);
    std::process::exit(0);
}

/// The most requests committed as one group.
const MAX_GROUP: usize = 64;

fn engine_loop(mut engine: Engine, rx: Receiver<Job>, shared: &Shared, group: bool) {
    while let Ok(job) = rx.recv() {
        // Whatever else is waiting joins this round (group commit).
        let mut jobs = vec![job];
        while group && jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let guard = shared.executing.lock();
        let mut i = 0;
        while i < jobs.len() {
            let key = engine.group_key(&jobs[i].req, &jobs[i].peer);
            let mut end = i + 1;
            if key.is_some() {
                while end < jobs.len() && engine.group_key(&jobs[end].req, &jobs[end].peer) == key {
                    end += 1;
                }
            }
            let values = if shared.shutdown.load(Ordering::SeqCst) {
                let e =
                    Error::InvalidInput("the service is shutting down; nothing was done".into());
                jobs[i..end]
                    .iter()
                    .map(|j| request::error_response(&j.req.id, &e))
                    .collect()
            } else if end - i > 1 {
                let reqs: Vec<&Request> = jobs[i..end].iter().map(|j| &j.req).collect();
                engine.execute_group(&reqs, &jobs[i].peer)
            } else {
                vec![engine.execute(&jobs[i].req, &jobs[i].peer)]
            };
            for (j, v) in jobs[i..end].iter().zip(values) {
                shared.unwritten.fetch_add(1, Ordering::SeqCst);
                if j.reply.send(v).is_err() {
                    shared.unwritten.fetch_sub(1, Ordering::SeqCst);
                }
            }
            i = end;
        }
        drop(guard);
    }
}

fn auditor(opts: &Options, invoker: Invoker) -> Option<Arc<dyn Auditor>> {
    (opts.audit != AuditTarget::Off)
        .then(|| Arc::new(LineAuditor::new(invoker, opts.audit)) as Arc<dyn Auditor>)
}

fn stdio_peer(opts: &Options) -> Peer {
    let inv = opts.invoker;
    Peer {
        caller: Caller::of_uid(inv.uid, None),
        restricted: inv.delegated() || opts.engine.policy.is_some(),
        auditor: auditor(opts, inv),
    }
}

/// A socket peer: its uid and gid from `SO_PEERCRED` (the kernel's, not the caller's word).
fn socket_peer(stream: &UnixStream, opts: &Options) -> Result<Peer> {
    let cred = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| Error::Netlink {
            context: "SO_PEERCRED",
            source: e.into(),
        })?;
    let uid = cred.uid();
    let invoker = Invoker {
        uid,
        euid: nix::unistd::geteuid().as_raw(),
        elevation: Elevation::Socket,
    };
    let root = uid == 0 || uid == invoker.euid;
    if opts.engine.policy.is_none() && !root {
        return Err(Error::PolicyDenied(format!(
            "uid {uid}: this service has no policy file, so only root may use it"
        )));
    }
    Ok(Peer {
        caller: Caller::of_uid(uid, Some(cred.gid())),
        restricted: opts.engine.policy.is_some(),
        auditor: auditor(opts, invoker),
    })
}

fn io_err(context: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Netlink { context, source }
}

/// Binds the socket (or takes systemd's), replacing a stale socket file but never a live
/// service's or a file that is not a socket; then sets its mode and owner.
fn listen(path: &Path, access: &SocketAccess) -> Result<UnixListener> {
    if let Some(l) = crate::sys::systemd_listener().map_err(io_err("socket activation"))? {
        return Ok(l);
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(Error::InvalidInput(format!(
                "{} exists and is not a socket; not replacing it",
                path.display()
            )));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(Error::InvalidInput(format!(
                "{} is in use: another xtnl serve is listening there",
                path.display()
            )));
        }
        std::fs::remove_file(path).map_err(io_err("remove the stale socket"))?;
    }
    let l = UnixListener::bind(path)
        .map_err(|e| Error::InvalidInput(format!("cannot listen on {}: {e}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(access.mode))
        .map_err(io_err("chmod the socket"))?;
    if access.owner.is_some() || access.group.is_some() {
        nix::unistd::chown(
            path,
            access.owner.map(nix::unistd::Uid::from_raw),
            access.group.map(nix::unistd::Gid::from_raw),
        )
        .map_err(|e| io_err("chown the socket")(e.into()))?;
    }
    Ok(l)
}

fn accept_loop(
    listener: &UnixListener,
    opts: &Options,
    tx: &SyncSender<Job>,
    shared: &Arc<Shared>,
) {
    let clients = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        if clients.load(Ordering::SeqCst) >= opts.max_clients {
            let e = Error::InvalidInput(format!(
                "too many clients (the limit is {}); try again later",
                opts.max_clients
            ));
            let _ = writeln!(stream, "{}", request::error_response(&Value::Null, &e));
            continue;
        }
        // A caller that may not use the service gets the reason as the answer to each of its
        // requests (rather than a connection closed under its first write).
        let peer = socket_peer(&stream, opts).map(Arc::new);
        let Ok(reader) = stream.try_clone() else {
            continue;
        };
        clients.fetch_add(1, Ordering::SeqCst);
        let (tx, shared, count) = (tx.clone(), shared.clone(), clients.clone());
        let max = opts.max_request_bytes;
        let spawned = std::thread::Builder::new()
            .name("xtnl-client".into())
            .spawn(move || {
                match peer {
                    Ok(peer) => {
                        serve_client(BufReader::new(reader), stream, &peer, &tx, &shared, max)
                    }
                    Err(e) => refuse_client(BufReader::new(reader), stream, &e, max),
                }
                count.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            clients.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A line read with a bound: its bytes, or how long it was when it passed the bound.
enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// Reads up to the next newline (dropped), at most `max` bytes kept; `None` at the end.
fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(match (any, too_long) {
                (false, _) => None,
                (true, true) => Some(Line::TooLong),
                (true, false) => Some(Line::Text(line)),
            });
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            }));
        }
    }
}

/// Answers every request of a client that may not use the service with `why`.
fn refuse_client(mut input: impl BufRead, mut output: impl Write, why: &Error, max: usize) {
    while let Ok(Some(line)) = read_line(&mut input, max) {
        let id = match &line {
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => request::id_of(t),
            Line::TooLong => Value::Null,
        };
        let v = request::error_response(&id, why);
        if writeln!(output, "{v}")
            .and_then(|()| output.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Serves one client until the end of its input: a response line for every request line.
fn serve_client(
    mut input: impl BufRead,
    mut output: impl Write,
    peer: &Arc<Peer>,
    tx: &SyncSender<Job>,
    shared: &Shared,
    max: usize,
) {
    let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Value>();
    loop {
        let line = match read_line(&mut input, max) {
            Ok(Some(l)) => l,
            Ok(None) | Err(_) => return,
        };
        let (v, counted) = match line {
            Line::TooLong => (
                request::error_response(
                    &Value::Null,
                    &Error::InvalidInput(format!(
                        "invalid request: longer than the limit of {max} bytes; nothing was done"
                    )),
                ),
                false,
            ),
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => match request::parse(&t) {
                Err(e) => (request::error_response(&request::id_of(&t), &e), false),
                Ok(req) => {
                    let job = Job {
                        req,
                        peer: peer.clone(),
                        reply: reply_tx.clone(),
                    };
                    if tx.send(job).is_err() {
                        return;
                    }
                    match reply_rx.recv() {
                        Ok(v) => (v, true),
                        Err(_) => return,
                    }
                }
            },
        };
        let written = writeln!(output, "{v}").and_then(|()| output.flush());
        if counted {
            shared.unwritten.fetch_sub(1, Ordering::SeqCst);
        }
        if written.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_the_rest_of_a_long_one_is_skipped() {
        let data = b"abc\n0123456789ABC\nxy\nlast";
        let mut r = std::io::BufReader::with_capacity(4, &data[..]);
        let mut got = Vec::new();
        while let Some(l) = read_line(&mut r, 8).unwrap() {
            got.push(match l {
                Line::Text(t) => String::from_utf8(t).unwrap(),
                Line::TooLong => "<long>".into(),
            });
        }
        assert_eq!(got, ["abc", "<long>", "xy", "last"]);
    }
}
