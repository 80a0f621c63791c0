//! (Included with `#[path = "common/serve.rs"] mod serve_support;` next to `mod common;`.)
//! A real `xtnl serve` for tests: started in the calling thread's network namespace, with a
//! private lock and socket path, stopped with SIGTERM when dropped.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{private_lock_path, xtnl_bin};

pub struct Server {
    pub child: Child,
    pub socket: PathBuf,
}

/// A scratch directory under cargo's target tmpdir, traversable by every user (clients run
/// as other uids connect through it).
pub fn scratch_dir(tag: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "xtnl-serve-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

impl Server {
    /// `xtnl [pre...] serve --socket PATH [args...]`, stderr kept (audit lines).
    pub fn start(pre: &[&str], args: &[&str]) -> Server {
        let socket = scratch_dir("sock").join("xtnl.sock");
        let mut cmd = Command::new(xtnl_bin());
        cmd.args(pre)
            .arg("serve")
            .arg("--socket")
            .arg(&socket)
            .args(args)
            .env("XTABLES_LOCKFILE", private_lock_path())
            .env_remove("LISTEN_FDS")
            .env_remove("LISTEN_PID")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("spawn xtnl serve");
        let s = Server { child, socket };
        s.wait_ready();
        s
    }

    pub fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&self.socket).is_err() {
            assert!(
                Instant::now() < deadline,
                "xtnl serve did not start listening"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.socket)
    }

    /// SIGTERM, then its exit status and standard error.
    pub fn stop(mut self) -> (Option<i32>, String) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let out = std::mem::replace(
            &mut self.child,
            Command::new("true").spawn().expect("spawn true"),
        )
        .wait_with_output()
        .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One connection: a request line out, a response line in.
pub struct Client {
    r: BufReader<UnixStream>,
    w: UnixStream,
}

impl Client {
    pub fn connect(path: &std::path::Path) -> Client {
        let w = UnixStream::connect(path).expect("connect to xtnl serve");
        let r = BufReader::new(w.try_clone().unwrap());
        Client { r, w }
    }

    pub fn send_raw(&mut self, line: &[u8]) {
        self.w.write_all(line).unwrap();
        self.w.write_all(b"\n").unwrap();
    }

    /// Bytes with no newline (half a request).
    pub fn send_raw_partial(&mut self, bytes: &[u8]) {
        self.w.write_all(bytes).unwrap();
    }

    pub fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.r.read_line(&mut line).expect("read a response");
        assert!(!line.is_empty(), "xtnl serve closed the connection");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    pub fn call(&mut self, req: &Value) -> Value {
        self.send_raw(req.to_string().as_bytes());
        self.recv()
    }
}
