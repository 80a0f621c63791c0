//! `xtnl-bench stream`: the NAT-host agent's command stream back to back (issue 22). Per
//! reservation the VCL cycle `-N vcld-X`, `-I PREROUTING -m comment --comment ... -j vcld-X`,
//! two `-I vcld-X ... -j DNAT`, `-D PREROUTING ...`, `-F vcld-X`, `-X vcld-X`; R reservations
//! with no pause between commands, on a nat table already holding N reservations. Each path
//! runs in a network namespace of its own, populated the same way:
//!
//! - iptables-nft, one process per command;
//! - xtnl invoked under the name `iptables` (a symlink in a scratch directory), one process
//!   per command;
//! - xtnl under the name `iptables` as a thin client of `xtnl serve --socket`, one process
//!   per command, each forwarding its command to the service (cli/thin.rs);
//! - `xtnl serve --stdio`, one JSON line per command (one process for the whole stream);
//! - the library in this process (one session), recording the bytes of every batch it sends;
//! - the kernel: those batches sent raw on a kept socket (one `send` each, ACKs drained), in
//!   a fourth namespace populated identically (same handles, same generation ids), so that
//!   each command's kernel cost, waits included, is measured without any library around it.
//!
//! Beside them, the spawn floor (`/bin/true`, `xtnl -V`) and a GETGEN round trip.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::floor;
use super::process::{must, p, settle, spawn, spawn_env};
use super::spec;
use xtnl::error::{Error, Result};
use xtnl::ipt::{exec, parse};
use xtnl::model::Family;
use xtnl::transport::NlSocket;

/// What to run.
#[derive(Debug, Clone)]
pub struct StreamPlan {
    pub quick: bool,
    /// Reservations already in table nat (N).
    pub sizes: Vec<usize>,
    /// Reservations set up and torn down back to back (R).
    pub reservations: usize,
    /// Samples of each spawn floor.
    pub spawns: usize,
}

impl StreamPlan {
    /// N = 10, 500, 2,000; R = 20.
    pub fn full() -> StreamPlan {
        StreamPlan {
            quick: false,
            sizes: vec![10, 500, 2_000],
            reservations: 20,
            spawns: 60,
        }
    }

    /// A smoke run: N = 10, 100; R = 4.
    pub fn quick() -> StreamPlan {
        StreamPlan {
            quick: true,
            sizes: vec![10, 100],
            reservations: 4,
            spawns: 10,
        }
    }
}

/// The ways the stream is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Via {
    IptablesNft,
    XtnlProcess,
    Thin,
    Serve,
    Library,
    Kernel,
}

impl Via {
    pub const ALL: [Via; 6] = [
        Via::IptablesNft,
        Via::XtnlProcess,
        Via::Thin,
        Via::Serve,
        Via::Library,
        Via::Kernel,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Via::IptablesNft => "iptables-nft, a process per command",
            Via::XtnlProcess => "xtnl as `iptables`, a process per command",
            Via::Thin => "xtnl as `iptables` via serve (thin client), a process per command",
            Via::Serve => "xtnl serve --stdio, a JSON line per command",
            Via::Library => "xtnl library, one session",
            Via::Kernel => "kernel: the library's batches raw on a kept socket",
        }
    }
}

/// The commands of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cmd {
    NewChain,
    Jump,
    Dnat,
    DeleteJump,
    Flush,
    DeleteChain,
}

impl Cmd {
    pub const ALL: [Cmd; 6] = [
        Cmd::NewChain,
        Cmd::Jump,
        Cmd::Dnat,
        Cmd::DeleteJump,
        Cmd::Flush,
        Cmd::DeleteChain,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Cmd::NewChain => "-N",
            Cmd::Jump => "-I jump+comment",
            Cmd::Dnat => "-I DNAT",
            Cmd::DeleteJump => "-D jump",
            Cmd::Flush => "-F",
            Cmd::DeleteChain => "-X",
        }
    }
}

/// The cycle of reservation `id`: (kind, iptables arguments).
pub fn cycle(id: usize) -> Vec<(Cmd, Vec<String>)> {
    let c = spec::chain(id);
    let nat = |w: &[&str]| {
        let mut a = spec::words(&["-t", "nat"]);
        a.extend(spec::words(w));
        a
    };
    let mut jump = nat(&["-I", "PREROUTING"]);
    jump.extend(spec::jump_words(&c));
    let mut delete = nat(&["-D", "PREROUTING"]);
    delete.extend(spec::jump_words(&c));
    let mut v = vec![(Cmd::NewChain, nat(&["-N", &c])), (Cmd::Jump, jump)];
    for (port, to) in spec::forwards(id) {
        let mut a = nat(&["-I", &c]);
        a.extend(spec::dnat_words(port, &to));
        v.push((Cmd::Dnat, a));
    }
    v.push((Cmd::DeleteJump, delete));
    v.push((Cmd::Flush, nat(&["-F", &c])));
    v.push((Cmd::DeleteChain, nat(&["-X", &c])));
    v
}

/// The whole stream: R cycles, reservations numbered past the populated ones.
fn stream(n: usize, r: usize) -> Vec<(Cmd, Vec<String>)> {
    (0..r).flat_map(|k| cycle(n + 100_000 + k)).collect()
}

/// Everything a stream run measured.
#[derive(Debug, Clone, Default)]
pub struct StreamResults {
    pub command: String,
    pub plan: Option<StreamPlan>,
    /// Every command's time, in stream order, per (path, N).
    pub times: BTreeMap<(Via, usize), Vec<(Cmd, Duration)>>,
    pub spawn_true: Vec<Duration>,
    pub spawn_xtnl: Vec<Duration>,
    pub getgen: Vec<Duration>,
    /// A request line's round trip through `/bin/cat` (the pipe floor of `serve --stdio`).
    pub pipe: Vec<Duration>,
    /// A connect to `xtnl serve --socket` and a `ping` through it (the thin client's floor
    /// beside its process start), sampled before each thin-client run.
    pub socket_ping: Vec<Duration>,
    pub load: (String, String),
    pub kernel: String,
    pub elapsed: Duration,
}

/// How to run.
pub struct StreamConfig<'a> {
    pub plan: StreamPlan,
    pub xtnl: &'a Path,
    pub scratch: &'a Path,
    pub command: String,
    pub progress: bool,
}

/// Runs `f` on a thread that moved into a fresh network namespace (the processes it
/// starts inherit it); refuses the initial namespace.
fn in_fresh_netns<T: Send>(f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::scratch::enter_new()?;
            crate::scratch::refuse_initial()?;
            f()
        })
        .join()
        .map_err(|_| Error::Precondition("xtnl bench: a stream thread panicked".into()))?
    })
}

fn populate(n: usize, lock: &Path) -> Result<()> {
    must(
        p("iptables-nft-restore"),
        &spec::words(&["--noflush"]),
        Some(&spec::populate_file(0, n)),
        lock,
    )?;
    settle()
}

fn failed(path: Via, args: &[String], why: &str) -> Error {
    Error::Precondition(format!(
        "xtnl bench stream: `iptables {}` failed through {}: {why}",
        args.join(" "),
        path.label()
    ))
}

/// One command per process: `program` (iptables-nft or the `iptables` symlink to xtnl).
fn by_process(
    path: Via,
    program: &Path,
    cmds: &[(Cmd, Vec<String>)],
    lock: &Path,
) -> Result<Vec<(Cmd, Duration)>> {
    let mut out = Vec::with_capacity(cmds.len());
    for (cmd, args) in cmds {
        let e = spawn(program, args, None, lock)?;
        if !e.ok {
            return Err(failed(path, args, &e.error_line()));
        }
        out.push((*cmd, e.took));
    }
    Ok(out)
}

/// The stream through xtnl under the name `iptables` as a thin client of one `xtnl serve
/// --socket` in the same namespace: a process per command, each one connect and one request.
/// Fails unless the service counted every command (none ran in its own process).
fn by_thin(
    xtnl: &Path,
    as_iptables: &Path,
    cmds: &[(Cmd, Vec<String>)],
    lock: &Path,
    dir: &Path,
    pings: &mut Vec<Duration>,
) -> Result<Vec<(Cmd, Duration)>> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).map_err(|e| super::io("create the socket dir", e))?;
    // The thin client trusts a socket only in a directory only root may change.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| super::io("chmod the socket dir", e))?;
    let sock = dir.join("xtnl.sock");
    let _ = std::fs::remove_file(&sock);
    // No audit records: a socket service must reach the system log to write them, and a
    // benchmark host may have none (docs/serve.md, "Bounds"; `--stdio` as root does not
    // audit where no log is reachable).
    let mut child = Command::new(xtnl)
        .args(["--audit", "off", "serve", "--socket"])
        .arg(&sock)
        .env("XTABLES_LOCKFILE", lock)
        .env(xtnl::backend::BACKEND_ENV, "nft")
        .env_remove("LISTEN_FDS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| super::io("start xtnl serve --socket", e))?;
    let result = (|| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            if Instant::now() > deadline {
                return Err(Error::Precondition(
                    "xtnl bench: xtnl serve --socket did not listen".into(),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let env = [(xtnl::serve::thin::SOCKET_ENV, sock.as_path())];
        // Untimed: the service opens its session on the first request.
        spawn_env(
            as_iptables,
            &spec::words(&["-t", "nat", "-S"]),
            None,
            lock,
            &env,
        )?;
        for _ in 0..20 {
            let t = Instant::now();
            served(&sock)?;
            pings.push(t.elapsed());
        }
        let before = served(&sock)?;
        let mut out = Vec::with_capacity(cmds.len());
        for (cmd, args) in cmds {
            let e = spawn_env(as_iptables, args, None, lock, &env)?;
            if !e.ok {
                return Err(failed(Via::Thin, args, &e.error_line()));
            }
            out.push((*cmd, e.took));
        }
        let n = served(&sock)? - before - 1;
        if n != cmds.len() as u64 {
            return Err(Error::Precondition(format!(
                "xtnl bench stream: the service served {n} of {} commands",
                cmds.len()
            )));
        }
        Ok(out)
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Requests a service has executed (its `ping` counts itself).
fn served(sock: &Path) -> Result<u64> {
    let mut s = std::os::unix::net::UnixStream::connect(sock)
        .map_err(|e| super::io("connect to xtnl serve", e))?;
    s.write_all(b"{\"ping\":{}}\n")
        .map_err(|e| super::io("write to xtnl serve", e))?;
    let mut line = String::new();
    BufReader::new(s)
        .read_line(&mut line)
        .map_err(|e| super::io("read from xtnl serve", e))?;
    let v: serde_json::Value = serde_json::from_str(&line)
        .map_err(|e| Error::Precondition(format!("xtnl bench: ping answered {line:?}: {e}")))?;
    v["server"]["requests"]
        .as_u64()
        .ok_or_else(|| Error::Precondition(format!("xtnl bench: ping answered {line:?}")))
}

/// The stream through one `xtnl serve --stdio`: a request line, its response line, timed.
fn by_serve(xtnl: &Path, cmds: &[(Cmd, Vec<String>)], lock: &Path) -> Result<Vec<(Cmd, Duration)>> {
    let mut child = Command::new(xtnl)
        .args(["serve", "--stdio"])
        .env("XTABLES_LOCKFILE", lock)
        .env(xtnl::backend::BACKEND_ENV, "nft")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| super::io("start xtnl serve --stdio", e))?;
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::Precondition(
            "xtnl bench: serve without pipes".into(),
        ));
    };
    let mut output = BufReader::new(output);
    let mut ask = |args: &[String]| -> Result<(Duration, serde_json::Value)> {
        let line = serde_json::json!({ "iptables": args }).to_string();
        let start = Instant::now();
        input
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| input.flush())
            .map_err(|e| super::io("write to xtnl serve", e))?;
        let mut reply = String::new();
        output
            .read_line(&mut reply)
            .map_err(|e| super::io("read from xtnl serve", e))?;
        let took = start.elapsed();
        let v: serde_json::Value = serde_json::from_str(&reply).map_err(|e| {
            Error::Precondition(format!("xtnl bench: serve answered {reply:?}: {e}"))
        })?;
        Ok((took, v))
    };
    // Untimed: the service opens its session on the first request.
    ask(&spec::words(&["-t", "nat", "-S", "vcld-0"]))?;
    let mut out = Vec::with_capacity(cmds.len());
    for (cmd, args) in cmds {
        let (took, v) = ask(args)?;
        if v["ok"] != serde_json::Value::Bool(true) {
            return Err(failed(Via::Serve, args, &v["error"]["message"].to_string()));
        }
        out.push((*cmd, took));
    }
    drop(input);
    let _ = child.wait();
    Ok(out)
}

/// Batches (datagrams that open with NFNL_MSG_BATCH_BEGIN) among `sent`.
fn batches(sent: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    const BATCH_BEGIN: u16 = 0x10;
    sent.into_iter()
        .filter(|d| d.len() >= 6 && u16::from_ne_bytes([d[4], d[5]]) == BATCH_BEGIN)
        .collect()
}

/// The stream through the library in this thread: one session, every batch recorded.
type Recorded = Vec<Vec<Vec<u8>>>;
fn by_library(cmds: &[(Cmd, Vec<String>)]) -> Result<(Vec<(Cmd, Duration)>, Recorded)> {
    let mut session = xtnl::nft::Session::open()?;
    session.socket().record_sends();
    let mut out = Vec::with_capacity(cmds.len());
    let mut sent = Vec::with_capacity(cmds.len());
    for (cmd, args) in cmds {
        let inv = parse::parse(args, Family::Ipv4)?;
        let start = Instant::now();
        exec::execute(&mut session, &inv)
            .map_err(|e| failed(Via::Library, args, &e.to_string()))?;
        out.push((*cmd, start.elapsed()));
        sent.push(batches(session.socket().take_recorded()));
    }
    Ok((out, sent))
}

/// The recorded batches, each command's sent raw in one `send` per batch on a kept socket.
fn by_kernel(cmds: &[(Cmd, Vec<String>)], sent: &Recorded) -> Result<Vec<(Cmd, Duration)>> {
    let mut sock = NlSocket::open()?;
    sock.size_buffers(1 << 20, 1 << 20)?;
    let mut out = Vec::with_capacity(cmds.len());
    for ((cmd, args), batches) in cmds.iter().zip(sent) {
        let start = Instant::now();
        for b in batches {
            floor::send_batch(&mut sock, b)
                .map_err(|e| failed(Via::Kernel, args, &e.to_string()))?;
        }
        out.push((*cmd, start.elapsed()));
    }
    Ok(out)
}

/// Round trips of a JSON line through `/bin/cat`: what a pipe to a process and back costs.
fn pipe_floor(n: usize) -> Result<Vec<Duration>> {
    let mut child = Command::new("/bin/cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| super::io("start /bin/cat", e))?;
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(Error::Precondition("xtnl bench: cat without pipes".into()));
    };
    let mut output = BufReader::new(output);
    let line = format!("{}\n", serde_json::json!({ "iptables": cycle(1)[1].1 }));
    let times = samples(n, || {
        let start = Instant::now();
        input
            .write_all(line.as_bytes())
            .and_then(|()| input.flush())
            .map_err(|e| super::io("write to cat", e))?;
        let mut back = String::new();
        output
            .read_line(&mut back)
            .map_err(|e| super::io("read from cat", e))?;
        Ok(start.elapsed())
    });
    drop(input);
    let _ = child.wait();
    times
}

fn samples(n: usize, mut f: impl FnMut() -> Result<Duration>) -> Result<Vec<Duration>> {
    (0..n).map(|_| f()).collect()
}

/// Runs the plan (from a thread in a scratch namespace: every run makes its own below it).
pub fn run(cfg: &StreamConfig<'_>) -> Result<StreamResults> {
    let start = Instant::now();
    std::fs::create_dir_all(cfg.scratch).map_err(|e| super::io("create scratch dir", e))?;
    let lock = cfg.scratch.join("xtables.lock");
    let bin = cfg.scratch.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| super::io("create scratch bin dir", e))?;
    let as_iptables = bin.join("iptables");
    let thin_dir = cfg.scratch.join("thin");
    let _ = std::fs::remove_file(&as_iptables);
    let xtnl = std::fs::canonicalize(cfg.xtnl).map_err(|e| super::io("find the xtnl binary", e))?;
    std::os::unix::fs::symlink(&xtnl, &as_iptables)
        .map_err(|e| super::io("symlink iptables -> xtnl", e))?;
    let mut r = StreamResults {
        command: cfg.command.clone(),
        plan: Some(cfg.plan.clone()),
        load: (super::loadavg(), String::new()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        ..StreamResults::default()
    };
    let progress = |m: String| {
        if cfg.progress {
            eprintln!("xtnl bench stream: {m}");
        }
    };
    let version = spec::words(&["-V"]);
    r.spawn_true = samples(cfg.plan.spawns, || {
        Ok(spawn(p("/bin/true"), &[], None, &lock)?.took)
    })?;
    r.spawn_xtnl = samples(cfg.plan.spawns, || {
        Ok(must(&xtnl, &version, None, &lock)?.took)
    })?;
    r.getgen = in_fresh_netns(|| {
        let mut sock = NlSocket::open()?;
        samples(cfg.plan.spawns, || {
            let (bytes, seq) = floor::getgen_bytes(&mut sock);
            let t = Instant::now();
            floor::getgen(&mut sock, &bytes, seq)?;
            Ok(t.elapsed())
        })
    })?;
    r.pipe = pipe_floor(cfg.plan.spawns)?;
    for &n in &cfg.plan.sizes {
        let cmds = stream(n, cfg.plan.reservations);
        let lock = &lock;
        let mut pings = Vec::new();
        for path in [Via::IptablesNft, Via::XtnlProcess, Via::Thin, Via::Serve] {
            progress(format!("N = {n}: {}", path.label()));
            let times = in_fresh_netns(|| {
                populate(n, lock)?;
                match path {
                    Via::IptablesNft => by_process(path, p("iptables-nft"), &cmds, lock),
                    Via::XtnlProcess => by_process(path, &as_iptables, &cmds, lock),
                    Via::Thin => by_thin(&xtnl, &as_iptables, &cmds, lock, &thin_dir, &mut pings),
                    _ => by_serve(&xtnl, &cmds, lock),
                }
            })?;
            r.times.insert((path, n), times);
        }
        r.socket_ping.append(&mut pings);
        progress(format!("N = {n}: {} and the kernel", Via::Library.label()));
        let (times, sent) = in_fresh_netns(|| {
            populate(n, lock)?;
            by_library(&cmds)
        })?;
        r.times.insert((Via::Library, n), times);
        let times = in_fresh_netns(|| {
            populate(n, lock)?;
            by_kernel(&cmds, &sent)
        })?;
        r.times.insert((Via::Kernel, n), times);
    }
    r.load.1 = super::loadavg();
    r.elapsed = start.elapsed();
    Ok(r)
}
