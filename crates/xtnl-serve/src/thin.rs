//! Drop-in requests: a whole iptables invocation forwarded by xtnl's thin client (xtnl run
//! under an iptables name while a service listens on the well-known socket, see
//! docs/serve.md, "The drop-in as a thin client"), answered with the bytes the process would
//! have printed on its standard output and error and its exit status.
//!
//! The request carries what the process's behaviour depends on beyond its arguments: the
//! identity of its network namespace and the environment variables that steer the xtables
//! lock. The service serves it only when all of them are its own, and otherwise answers
//! `fallback` (nothing done): the client then runs the command itself, so an agent sees the
//! same behaviour either way. The service never opens a path the client names.
//!
//! The interpreter is the binary's (the drop-in's parsing, output and iptables' error words
//! live in the command line): `xtnl serve` registers it with [`set_runner`].

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::lock::{WaitPolicy, XtablesLock};
use crate::netns::Netns;
use crate::nft::Session;

/// The socket the thin client looks for, unless [`SOCKET_ENV`] names another (undelegated
/// runs only): where `dist/systemd/xtnl.socket` listens.
pub const DEFAULT_SOCKET: &str = "/run/xtnl/xtnl.sock";
/// Names the service's socket for the thin client (ignored in a delegated run, where the
/// thin client is never used).
pub const SOCKET_ENV: &str = "XTNL_SERVE_SOCKET";
/// Set to anything but `0` or the empty string: xtnl under an iptables name never forwards
/// to a service and runs every command itself.
pub const OFF_ENV: &str = "XTNL_NO_SERVE";
/// How long after its arrival the service may still start a drop-in request; later, it
/// answers `fallback` without doing anything (the client has given up on it by then).
pub const START_WITHIN: Duration = Duration::from_millis(1000);
/// How long the client waits for the service to start its request: [`START_WITHIN`] and a
/// margin for the "started" line to come back. Past it the client runs the command itself.
pub const CLIENT_WAIT: Duration = Duration::from_millis(2000);
/// The environment a drop-in process's behaviour depends on (the lock file and the default
/// lock wait): the service serves a request only when the client's values are its own.
pub const COMPARED_ENV: [&str; 2] = ["XTABLES_LOCKFILE", crate::lock::WAIT_ENV];

/// A forwarded invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropin {
    /// The program name (`iptables`, `ip6tables-nft`, ...).
    pub program: String,
    /// Its arguments, without the program name.
    pub args: Vec<String>,
    /// The client's network namespace: `(st_dev, st_ino)` of its `/proc/self/ns/net`.
    pub netns: (u64, u64),
    /// The client's values of [`COMPARED_ENV`] (`None`: unset or empty).
    pub env: BTreeMap<String, Option<String>>,
    /// How long after its arrival the request may still be started.
    pub start_within: Duration,
}

/// What the interpreter made of a [`Dropin`]: the process's output and status, or a reason
/// to let the client run it itself (nothing was done).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DropinOutput {
    /// The exit status.
    pub status: i32,
    /// Standard output, byte for byte.
    pub stdout: String,
    /// Standard error, byte for byte.
    pub stderr: String,
    /// `Some(why)`: not served, nothing done; the client runs the command itself.
    pub fallback: Option<String>,
    /// The session failed at the socket level: the engine opens a fresh one.
    pub broken: bool,
}

/// The interpreter: runs one invocation on the engine's session; its mutating commits take
/// the lock `lock` makes for the wait the invocation asks for (the service's lock file, as
/// the client's own: see [`mismatch`]).
pub type Runner = fn(&mut Session, &Dropin, &dyn Fn(WaitPolicy) -> XtablesLock) -> DropinOutput;

static RUNNER: OnceLock<Runner> = OnceLock::new();

/// Registers the drop-in interpreter (once; later calls are ignored).
pub fn set_runner(runner: Runner) {
    let _ = RUNNER.set(runner);
}

/// The registered interpreter.
pub fn runner() -> Option<Runner> {
    RUNNER.get().copied()
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(format!("invalid request: dropin: {}", msg.into()))
}

/// The identity of a network namespace file: `(st_dev, st_ino)`.
pub fn netns_id(path: &Path) -> std::io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// This process's values of [`COMPARED_ENV`].
pub fn compared_env() -> BTreeMap<String, Option<String>> {
    COMPARED_ENV
        .iter()
        .map(|k| {
            let v = std::env::var(k).ok().filter(|v| !v.is_empty());
            ((*k).to_owned(), v)
        })
        .collect()
}

/// The request line's body (`"dropin": {...}`).
pub fn to_value(d: &Dropin) -> Value {
    json!({
        "program": d.program,
        "args": d.args,
        "netns": format!("{}:{}", d.netns.0, d.netns.1),
        "env": d.env,
        "start_within_ms": d.start_within.as_millis() as u64,
    })
}

/// Parses the body of a `dropin` request.
pub fn parse(v: &Value) -> Result<Dropin> {
    let Value::Object(o) = v else {
        return Err(bad("must be an object"));
    };
    const KEYS: [&str; 5] = ["program", "args", "netns", "env", "start_within_ms"];
    if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(bad(format!("unknown key {k:?}")));
    }
    let program = o
        .get("program")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("program must be a string"))?
        .to_owned();
    let args = o
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("args must be an array of strings"))?
        .iter()
        .map(|a| {
            a.as_str()
                .map(str::to_owned)
                .ok_or_else(|| bad("args must be an array of strings"))
        })
        .collect::<Result<Vec<_>>>()?;
    let netns = o
        .get("netns")
        .and_then(Value::as_str)
        .and_then(|s| s.split_once(':'))
        .and_then(|(d, i)| Some((d.parse().ok()?, i.parse().ok()?)))
        .ok_or_else(|| bad("netns must be \"DEV:INO\""))?;
    let env = match o.get("env") {
        None => BTreeMap::new(),
        Some(Value::Object(m)) => env_map(m)?,
        Some(_) => return Err(bad("env must be an object")),
    };
    let start_within = match o.get("start_within_ms") {
        None => START_WITHIN,
        Some(v) => Duration::from_millis(
            v.as_u64()
                .filter(|ms| *ms <= 60_000)
                .ok_or_else(|| bad("start_within_ms must be 0 to 60000"))?,
        ),
    };
    Ok(Dropin {
        program,
        args,
        netns,
        env,
        start_within,
    })
}

fn env_map(m: &Map<String, Value>) -> Result<BTreeMap<String, Option<String>>> {
    m.iter()
        .map(|(k, v)| match v {
            Value::Null => Ok((k.clone(), None)),
            Value::String(s) => Ok((k.clone(), Some(s.clone()).filter(|s| !s.is_empty()))),
            _ => Err(bad(format!("env {k:?} must be a string or null"))),
        })
        .collect()
}

/// Why the service must not serve `d` for a namespace `target` (`None`: its own), if it
/// must not: the client's namespace or lock environment is not the service's.
pub fn mismatch(d: &Dropin, target: Option<&Netns>) -> Option<String> {
    let path = target.map_or(Path::new("/proc/self/ns/net"), |n| n.path.as_path());
    match netns_id(path) {
        Ok(id) if id == d.netns => {}
        Ok(_) => return Some("the client is in another network namespace".into()),
        Err(e) => return Some(format!("the service's network namespace: {e}")),
    }
    let mine = compared_env();
    for k in COMPARED_ENV {
        let theirs = d.env.get(k).cloned().flatten();
        if mine.get(k).cloned().flatten() != theirs {
            return Some(format!("the client's {k} is not the service's"));
        }
    }
    None
}

/// The line the service writes when it starts executing a drop-in request (from then on
/// the client waits for the response, however long the command takes).
pub fn started(id: &Value) -> Value {
    json!({"id": id, "started": true})
}

/// Whether a response line is [`started`]'s.
pub fn is_started(v: &Value) -> bool {
    v.get("started") == Some(&Value::Bool(true)) && v.get("ok").is_none()
}

/// The body of the response to a request not served (the client runs the command itself).
pub fn fallback_body(why: &str) -> Value {
    json!({"fallback": why})
}

/// The body of the response carrying the interpreter's output (`fallback` when it did not
/// serve it), and whether it is `ok`.
pub fn reply_body(out: DropinOutput) -> (bool, Value) {
    match out.fallback {
        Some(why) => (false, fallback_body(&why)),
        None => (
            out.status == 0,
            json!({"status": out.status, "stdout": out.stdout, "stderr": out.stderr}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropin_bodies_round_trip_and_bad_ones_say_why() {
        let d = Dropin {
            program: "iptables".into(),
            args: vec!["-t".into(), "nat".into(), "-N".into(), "x".into()],
            netns: (4, 4026531840),
            env: compared_env(),
            start_within: Duration::from_millis(250),
        };
        assert_eq!(parse(&to_value(&d)).unwrap(), d);
        for (v, want) in [
            (json!([]), "must be an object"),
            (json!({"program": 1}), "program must be a string"),
            (
                json!({"program": "iptables", "args": [1]}),
                "array of strings",
            ),
            (
                json!({"program": "iptables", "args": [], "netns": "x"}),
                "DEV:INO",
            ),
            (json!({"program": "iptables", "x": 1}), "unknown key"),
            (
                json!({"program": "iptables", "args": [], "netns": "1:2", "start_within_ms": -1}),
                "start_within_ms",
            ),
        ] {
            let e = parse(&v).unwrap_err().to_string();
            assert!(e.contains(want), "{v}: {e}");
        }
    }

    #[test]
    fn another_namespace_or_lock_is_not_served() {
        let own = netns_id(Path::new("/proc/self/ns/net")).unwrap();
        let mut d = Dropin {
            program: "iptables".into(),
            args: vec![],
            netns: own,
            env: compared_env(),
            start_within: START_WITHIN,
        };
        assert_eq!(mismatch(&d, None), None);
        d.netns = (own.0, own.1 + 1);
        assert!(mismatch(&d, None).unwrap().contains("network namespace"));
        d.netns = own;
        d.env.insert(
            "XTABLES_LOCKFILE".into(),
            Some("/nonexistent/elsewhere.lock".into()),
        );
        assert!(mismatch(&d, None).unwrap().contains("XTABLES_LOCKFILE"));
        assert!(is_started(&started(&json!(3))));
        assert!(!is_started(
            &json!({"id": 3, "version": 1, "ok": false, "fallback": "x"})
        ));
    }
}
