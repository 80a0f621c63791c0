//! The `xtnl serve` row of the contention table: one service for all workers, each worker
//! one connection sending the NAT-host requests of its cycles.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::spec::{self, worker_chain};
use xtnl::error::{Error, Result};

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Precondition(format!("xtnl bench: serve: {what}: {e}"))
}

/// A running `xtnl serve --socket`, stopped (SIGTERM) when dropped.
pub(super) struct Service {
    child: Child,
    socket: PathBuf,
}

impl Service {
    pub(super) fn start(xtnl: &Path, socket: &Path, lock: &Path) -> Result<Service> {
        let _ = std::fs::remove_file(socket);
        let child = Command::new(xtnl)
            .args(["--audit", "off", "serve", "--socket"])
            .arg(socket)
            .env("XTABLES_LOCKFILE", lock)
            .env_remove("LISTEN_FDS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| failed("start", e))?;
        let s = Service {
            child,
            socket: socket.to_owned(),
        };
        let t = Instant::now();
        while UnixStream::connect(&s.socket).is_err() {
            if t.elapsed() > Duration::from_secs(20) {
                return Err(failed("start", "the socket never accepted a connection"));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(s)
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A worker's connection.
pub(super) struct Conn {
    r: BufReader<UnixStream>,
    w: UnixStream,
}

pub(super) fn connect(socket: &Path) -> Result<Conn> {
    let w = UnixStream::connect(socket).map_err(|e| failed("connect", e))?;
    let r = BufReader::new(w.try_clone().map_err(|e| failed("connect", e))?);
    Ok(Conn { r, w })
}

/// One set-up (the reservation's forwards, as `xtnl reservation setup` makes them) or one
/// teardown; `Err(message)` when the service answered with an error.
pub(super) fn step(c: &mut Conn, w: usize, setup: bool) -> Result<std::result::Result<(), String>> {
    let chain = worker_chain(w);
    let op = if setup {
        let forwards: Vec<Value> = spec::forwards(2_000_000 + w)
            .iter()
            .map(|(port, to)| {
                json!({"protocol": "tcp", "public_port": port, "to": to, "in_interface": "eth1"})
            })
            .collect();
        json!({"op": "reservation_setup", "chain": chain,
               "jump_comment": spec::jump_comment(&chain), "forwards": forwards})
    } else {
        json!({"op": "teardown", "chain": chain})
    };
    writeln!(c.w, "{}", json!({"operations": [op]})).map_err(|e| failed("send", e))?;
    let mut line = String::new();
    c.r.read_line(&mut line).map_err(|e| failed("receive", e))?;
    let v: Value = serde_json::from_str(&line).map_err(|e| failed("response", e))?;
    Ok(if v["ok"] == true {
        Ok(())
    } else {
        Err(v["error"]["message"]
            .as_str()
            .or_else(|| v["transactions"][0]["error"]["message"].as_str())
            .unwrap_or("failed")
            .to_owned())
    })
}
