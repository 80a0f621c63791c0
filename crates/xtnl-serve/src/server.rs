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
use super::limits::{
    Conns, Gate, Large, Line, NoGate, Place, SocketGate, admit, clamp_clients, fd_limit,
    parse_bounded, read_line,
};
use super::request::{self, Request};
use super::thin;
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

/// Bounds on what one caller's connections may hold (see docs/serve.md, "Bounds").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Connections of one uid at once (root's not counted); `None`: an eighth of
    /// `--max-clients`, at least 4.
    pub per_uid: Option<usize>,
    /// How long a connection may wait between requests; `None`: for ever.
    pub idle: Option<Duration>,
    /// How long a started line may take to arrive whole, and a response to be taken.
    pub line: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_uid: None,
            idle: Some(Duration::from_secs(3600)),
            line: Duration::from_secs(30),
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
    /// Per-uid connections and timeouts.
    pub limits: Limits,
}

struct Job {
    req: Request,
    peer: Arc<Peer>,
    /// The request's response; for a drop-in request first [`thin::started`] (or at once a
    /// `fallback` when it waited past its start bound).
    reply: Sender<Value>,
    /// When its line had arrived whole.
    received: Instant,
}

/// Whether `job` is a drop-in request that waited past its start bound (its client has run
/// the command itself by now); if not, tells its client that it starts.
fn too_late(job: &Job) -> bool {
    let request::Body::Dropin(d) = &job.req.body else {
        return false;
    };
    if job.received.elapsed() > d.start_within {
        return true;
    }
    let _ = job.reply.send(thin::started(&job.req.id));
    false
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
    // The stdio caller's auditor first: a delegated run that cannot reach the system log is
    // refused before anything else.
    let stdio = match opts.listen {
        Listen::Stdio => Some(Arc::new(stdio_peer(&opts)?)),
        Listen::Socket(_) => None,
    };
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
            .spawn(move || {
                // Requests are isolated inside; a panic anywhere else in the engine thread
                // would leave a service that answers nobody: die loudly instead, so that
                // systemd (Restart=on-failure) starts a fresh one.
                if let Err(why) = isolate(|| engine_loop(config, rx, &shared, group)) {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "xtnl serve: the engine thread failed ({why}); exiting"
                    );
                    std::process::exit(70);
                }
            })
            .map_err(|e| Error::Netlink {
                context: "spawn the engine thread",
                source: e,
            })?
    };
    match &opts.listen {
        Listen::Stdio => {
            let Some(peer) = stdio else {
                return Err(Error::InvalidInput("no standard input peer".into()));
            };
            let stdin = std::io::stdin().lock();
            serve_client(
                stdin,
                std::io::stdout(),
                &peer,
                &tx,
                &shared,
                opts.max_request_bytes,
                &mut NoGate,
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

/// Runs `f`, turning a panic into an error message (the panic itself is printed on standard
/// error by the default hook).
fn isolate<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into())
    })
}

fn engine_loop(config: engine::Config, rx: Receiver<Job>, shared: &Shared, group: bool) {
    let mut engine = Engine::new(config.clone());
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
            let values = if end - i == 1 && too_late(&jobs[i]) {
                vec![request::response(
                    &jobs[i].req.id,
                    false,
                    thin::fallback_body("the service could not start it in time; nothing was done"),
                )]
            } else if shared.shutdown.load(Ordering::SeqCst) {
                let e =
                    Error::InvalidInput("the service is shutting down; nothing was done".into());
                jobs[i..end]
                    .iter()
                    .map(|j| request::error_response(&j.req.id, &e))
                    .collect()
            } else {
                // A panic (a bug) fails these requests, not the service: the engine, whose
                // sessions may be in any state, is replaced, and the rest are served.
                let run = isolate(|| {
                    if end - i > 1 {
                        let reqs: Vec<&Request> = jobs[i..end].iter().map(|j| &j.req).collect();
                        engine.execute_group(&reqs, &jobs[i].peer)
                    } else {
                        vec![engine.execute(&jobs[i].req, &jobs[i].peer)]
                    }
                });
                match run {
                    Ok(values) => values,
                    Err(why) => {
                        let _ = writeln!(
                            std::io::stderr().lock(),
                            "xtnl serve: the engine failed ({why}); its sessions are reopened \
                             and the service goes on"
                        );
                        engine = Engine::new(config.clone());
                        let e = Error::InvalidInput(format!(
                            "internal error: the service failed on this request ({why}); it \
                             is as the kernel holds it now (list it to see)"
                        ));
                        jobs[i..end]
                            .iter()
                            .map(|j| request::error_response(&j.req.id, &e))
                            .collect()
                    }
                }
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

/// The auditor of a caller's requests; in a delegated run connected to the system log now
/// (or the run is refused: see [`LineAuditor::opened`]).
fn auditor(opts: &Options, invoker: Invoker) -> Result<Option<Arc<dyn Auditor>>> {
    if opts.audit == AuditTarget::Off {
        return Ok(None);
    }
    let a = LineAuditor::new(invoker, opts.audit).opened()?;
    Ok(Some(Arc::new(a) as Arc<dyn Auditor>))
}

fn stdio_peer(opts: &Options) -> Result<Peer> {
    let inv = opts.invoker;
    Ok(Peer {
        caller: Caller::of_uid(inv.uid, None),
        restricted: inv.delegated() || opts.engine.policy.is_some(),
        auditor: auditor(opts, inv)?,
    })
}

/// A socket peer: its uid and gid from `SO_PEERCRED` (the kernel's, not the caller's word),
/// looked up when it connects. `Err`: a caller that may not use the service at all (no policy
/// and not root, or a policy with no entry for its uid or groups), answered from the small
/// pool of [`refuse_client`] without reading its requests' contents.
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
    let caller = Caller::of_uid(uid, Some(cred.gid()));
    match &opts.engine.policy {
        None if !root => {
            return Err(Error::PolicyDenied(format!(
                "uid {uid}: this service has no policy file, so only root may use it"
            )));
        }
        Some(p) if !root && !p.names(&caller) => {
            return Err(Error::PolicyDenied(format!(
                "uid {uid}: policy {} has no entry for this uid or its groups, so it may not \
                 use this service",
                p.path.display()
            )));
        }
        _ => {}
    }
    Ok(Peer {
        caller,
        restricted: opts.engine.policy.is_some(),
        auditor: auditor(opts, invoker)?,
    })
}

fn io_err(context: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Netlink { context, source }
}

/// Binds the socket (or takes systemd's), replacing a stale socket file but never a live
/// service's or a file that is not a socket; then sets its mode and owner. The socket file is
/// created under umask 0177 (owner only) whatever the process's umask, so that it is never
/// open to others between the bind and the chmod.
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
    let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    nix::sys::stat::umask(old);
    let l = bound
        .map_err(|e| Error::InvalidInput(format!("cannot listen on {}: {e}", path.display())))?;
    if access.owner.is_some() || access.group.is_some() {
        nix::unistd::chown(
            path,
            access.owner.map(nix::unistd::Uid::from_raw),
            access.group.map(nix::unistd::Gid::from_raw),
        )
        .map_err(|e| io_err("chown the socket")(e.into()))?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(access.mode))
        .map_err(io_err("chmod the socket"))?;
    Ok(l)
}

fn accept_loop(
    listener: &UnixListener,
    opts: &Options,
    tx: &SyncSender<Job>,
    shared: &Arc<Shared>,
) {
    let max_clients = clamp_clients(opts.max_clients, fd_limit());
    if max_clients < opts.max_clients {
        let _ = writeln!(
            std::io::stderr().lock(),
            "xtnl serve: serving at most {max_clients} clients, not {}: each takes two file \
             descriptors and the limit (RLIMIT_NOFILE) is {}",
            opts.max_clients,
            fd_limit().unwrap_or(0)
        );
    }
    let per_uid = opts
        .limits
        .per_uid
        .unwrap_or((max_clients / 8).max(4))
        .max(1);
    let conns = Arc::new(Mutex::new(Conns::default()));
    let large = Arc::new(Large::default());
    let mut failures = 0u32;
    for stream in listener.incoming() {
        let mut stream = match stream {
            Ok(s) => {
                failures = 0;
                s
            }
            Err(_) => {
                // EMFILE, ENFILE, ENOMEM...: wait for a client to leave rather than spin.
                failures = failures.saturating_add(1);
                std::thread::sleep(Duration::from_millis(10 * u64::from(failures.min(10))));
                continue;
            }
        };
        let limits = &opts.limits;
        let peer = socket_peer(&stream, opts).map(Arc::new);
        let place = match &peer {
            Err(_) => Place::Refused,
            Ok(p) if p.caller.uid == 0 || p.caller.uid == opts.invoker.euid => Place::Root,
            Ok(p) => Place::Uid(p.caller.uid),
        };
        let slot = match admit(&conns, place, max_clients, per_uid) {
            Ok(slot) => slot,
            Err(why) => {
                let e = match peer {
                    Err(e) => e,
                    Ok(_) => Error::InvalidInput(why),
                };
                let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
                let _ = write_line(&mut stream, &request::error_response(&Value::Null, &e));
                continue;
            }
        };
        let _ = stream.set_write_timeout(Some(match place {
            Place::Refused => super::REFUSED_TIMEOUT,
            _ => limits.line,
        }));
        let Ok(reader) = stream.try_clone() else {
            continue;
        };
        let mut gate = SocketGate {
            stream: reader.try_clone().ok(),
            idle: limits.idle,
            line: limits.line,
            deadline: None,
            large: large.clone(),
            uid: match place {
                Place::Uid(u) => Some(u),
                _ => None,
            },
            holds: false,
            fixed: false,
        };
        if let Place::Refused = place {
            gate.idle = Some(super::REFUSED_TIMEOUT);
            gate.line = super::REFUSED_TIMEOUT;
            // The connection's whole life.
            gate.deadline = Some(Instant::now() + super::REFUSED_TIMEOUT);
            gate.fixed = true;
        }
        let (tx, shared) = (tx.clone(), shared.clone());
        let max = opts.max_request_bytes;
        let _ = std::thread::Builder::new()
            .name("xtnl-client".into())
            .spawn(move || {
                let _slot = slot;
                match peer {
                    Ok(peer) => serve_client(
                        BufReader::new(reader),
                        stream,
                        &peer,
                        &tx,
                        &shared,
                        max,
                        &mut gate,
                    ),
                    Err(e) => refuse_client(BufReader::new(reader), stream, &e, &mut gate),
                }
            });
        // (A thread that could not be spawned dropped its closure, and with it the slot.)
    }
}

/// Answers every request of a client that may not use the service with `why`, reading at
/// most [`super::REFUSED_LINE`] bytes of each line (the rest is dropped unread) until the
/// gate's deadline.
fn refuse_client(
    mut input: impl BufRead,
    mut output: impl Write,
    why: &Error,
    gate: &mut dyn Gate,
) {
    while let Ok(Some(line)) = read_line(&mut input, super::REFUSED_LINE, gate) {
        let id = match &line {
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => request::id_of(t),
            Line::TooLong | Line::Busy => Value::Null,
        };
        let v = request::error_response(&id, why);
        if write_line(&mut output, &v).is_err() {
            return;
        }
    }
}

/// Writes a response line in one `write` (a socket is unbuffered: `writeln!` of a JSON value
/// would send each of its tokens in a write of its own, and wake the client for each).
fn write_line(output: &mut impl Write, v: &Value) -> std::io::Result<()> {
    let mut line = v.to_string();
    line.push('\n');
    output.write_all(line.as_bytes())?;
    output.flush()
}

/// Serves one client until the end of its input: a response line for every request line.
fn serve_client(
    mut input: impl BufRead,
    mut output: impl Write,
    peer: &Arc<Peer>,
    tx: &SyncSender<Job>,
    shared: &Shared,
    max: usize,
    gate: &mut dyn Gate,
) {
    let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Value>();
    loop {
        let line = match read_line(&mut input, max, gate) {
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
            Line::Busy => (
                request::error_response(
                    &Value::Null,
                    &Error::InvalidInput(format!(
                        "the service is busy: a request longer than {} bytes needs one of {} \
                         places for long requests (one per uid), and none is free; nothing was \
                         done, try again",
                        super::SMALL_LINE,
                        super::LARGE_LINES
                    )),
                ),
                false,
            ),
            Line::Text(t) if t.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(t) => match parse_bounded(&t) {
                Err(v) => (v, false),
                Ok(req) => {
                    drop(t);
                    let job = Job {
                        req,
                        peer: peer.clone(),
                        reply: reply_tx.clone(),
                        received: Instant::now(),
                    };
                    if tx.send(job).is_err() {
                        return;
                    }
                    let mut reply = reply_rx.recv();
                    // A drop-in request's "started" line goes out at once; its response follows.
                    while let Ok(v) = &reply
                        && thin::is_started(v)
                    {
                        if write_line(&mut output, v).is_err() {
                            return;
                        }
                        reply = reply_rx.recv();
                    }
                    match reply {
                        Ok(v) => (v, true),
                        Err(_) => return,
                    }
                }
            },
        };
        gate.line_done();
        let written = write_line(&mut output, &v);
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
    fn a_panic_in_the_engine_is_an_error_response() {
        assert_eq!(isolate(|| 7), Ok(7));
        let e = isolate(|| -> u8 { panic!("engine bug {}", 42) }).unwrap_err();
        assert!(e.contains("engine bug 42"), "{e}");
    }
}
