//! The drop-in as a thin client of a running `xtnl serve` (issue 22): under an iptables name,
//! when the service's socket exists and may be trusted, an iptables command is one connect
//! and one request line instead of a netlink session of its own (and the release of its
//! socket, which waits for the kernel's deferred destroy work). The service runs it with the
//! same interpreter ([`run_forwarded`]) and sends back the bytes of standard output and
//! error and the exit status, which the client prints and exits with.
//!
//! Whenever the service could behave differently from the process, the client runs the
//! command itself, at once: no socket (ENOENT, ECONNREFUSED), a socket not owned by root or
//! in a directory others may write, a service whose process is not root, another network
//! namespace or lock environment than the service's (the service compares them and answers
//! `fallback`), a host name in `-s`/`-d` (resolved with this process's resolver files), a
//! refusal by the service's policy (nothing done: the local run then refuses,
//! or does, as it always would), a service that does not start the request within
//! [`thin::CLIENT_WAIT`] (it never starts it later: [`thin::START_WITHIN`]). Never in a
//! delegated run (setuid, capabilities, sudo), nor with [`thin::OFF_ENV`] set. See
//! docs/serve.md, "The drop-in as a thin client".

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use xtnl::backend::{Backend, BackendChoice};
use xtnl::error::ErrorKind;
use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::nft::Session;
use xtnl::serve::thin::{self, Dropin, DropinOutput};

use super::dropin::{self, Tool};

/// Options only xtnl's own command line knows: a command that names one runs here.
const OWN_OPTIONS: [&str; 5] = ["--netns", "--backend", "--policy-file", "--audit", "--json"];

/// Whether `-s`/`-d` name a host (not an address): the name is resolved where the command
/// runs, through that process's `/etc/hosts` and `/etc/resolv.conf`, which the service (in
/// another mount namespace, say) may not share.
fn names_a_host(args: &[String]) -> bool {
    let numeric = |v: &str| {
        v.split(',').all(|item| {
            let addr = item.trim_start().split('/').next().unwrap_or_default();
            addr.parse::<std::net::IpAddr>().is_ok()
                || addr.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = match a.as_str() {
            "-s" | "-d" | "--source" | "--destination" | "--src" | "--dst" => {
                it.next().map(String::as_str)
            }
            _ => [
                "--source=",
                "--destination=",
                "--src=",
                "--dst=",
                "-s",
                "-d",
            ]
            .iter()
            .find_map(|p| a.strip_prefix(p)),
        };
        if value.is_some_and(|v| !numeric(v)) {
            return true;
        }
    }
    false
}

fn forwardable(args: &[String]) -> bool {
    !dropin::wants_version(args)
        && !dropin::wants_help(args)
        && !names_a_host(args)
        && !args.iter().any(|a| {
            OWN_OPTIONS
                .iter()
                .any(|o| a == o || a.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
        })
}

fn set(var: &str) -> bool {
    std::env::var_os(var).is_some_and(|v| !v.is_empty())
}

/// The service's socket, if this run may use one: an iptables command under an iptables
/// name, on nf_tables, not delegated, not turned off, nothing on the command line or in the
/// environment that only this process could honour.
fn socket_for(id: &dropin::Identity, args: &[String]) -> Option<PathBuf> {
    if id.tool != Tool::Iptables || !forwardable(args) {
        return None;
    }
    if std::env::var_os(thin::OFF_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    if xtnl::privilege::invoker().delegated() {
        return None;
    }
    if set(xtnl::policy::POLICY_PATH_ENV) || set(xtnl::policy::audit::AUDIT_ENV) {
        return None;
    }
    let choice = match id.backend {
        Some(b) => b,
        None => BackendChoice::from_env().ok()?,
    };
    if choice.resolve(id.family).0 != Backend::Nft {
        return None;
    }
    Some(
        std::env::var_os(thin::SOCKET_ENV)
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(thin::DEFAULT_SOCKET), PathBuf::from),
    )
}

/// Whether `path` is a socket root made, in a directory only root may change.
fn trusted(path: &Path) -> bool {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !m.file_type().is_socket() || m.uid() != 0 {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::symlink_metadata(dir)
        .is_ok_and(|d| d.is_dir() && d.uid() == 0 && d.mode() & 0o022 == 0)
}

/// Connects to a trusted service whose process is root.
fn connect(path: &Path) -> Option<UnixStream> {
    if !trusted(path) {
        return None;
    }
    let stream = UnixStream::connect(path).ok()?;
    let cred =
        nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials).ok()?;
    (cred.uid() == 0).then_some(stream)
}

fn read_value(r: &mut impl BufRead) -> Option<Value> {
    let mut line = String::new();
    match r.read_line(&mut line) {
        Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
        _ => None,
    }
}

/// Runs `program args` through the service when it may (see the module's comment); returns
/// the exit status then, `None` when the command is to run here.
pub fn forward(program: &str, args: &[String]) -> Option<i32> {
    let id = dropin::identify(program)?;
    let path = socket_for(&id, args)?;
    // Whether running it here after the service has started it could do it twice.
    let parsed = xtnl::ipt::parse::parse(args, id.family);
    // Parsed again where it runs, which prints the extensions' warnings then.
    let _ = xtnl::ipt::messages::take_warnings();
    let mutates = parsed.ok()?.command.mutates();
    let netns = thin::netns_id(Path::new("/proc/self/ns/net")).ok()?;
    let mut stream = connect(&path)?;
    let request = Dropin {
        program: program.to_owned(),
        args: args.to_vec(),
        netns,
        env: thin::compared_env(),
        start_within: thin::START_WITHIN,
    };
    let line = format!("{}\n", json!({"dropin": thin::to_value(&request)}));
    stream.set_write_timeout(Some(thin::CLIENT_WAIT)).ok()?;
    stream.set_read_timeout(Some(thin::CLIENT_WAIT)).ok()?;
    stream.write_all(line.as_bytes()).ok()?;
    let mut reader = BufReader::new(stream);
    // Until the service says it started, nothing is done: any other answer, or none in
    // time, and the command runs here.
    let first = read_value(&mut reader)?;
    if !thin::is_started(&first) {
        return None;
    }
    // Started: the command may wait for the lock as long as it asks to.
    reader.get_ref().set_read_timeout(None).ok()?;
    let reply = read_value(&mut reader);
    let reply = match reply {
        Some(v) if v.get("fallback").is_some() => return None,
        Some(v) if v["error"]["kind"] == "policy_denied" => return None,
        Some(v) => v,
        None if !mutates => return None,
        None => Value::Null,
    };
    let (Some(status), Some(out), Some(err)) = (
        reply["status"].as_i64(),
        reply["stdout"].as_str(),
        reply["stderr"].as_str(),
    ) else {
        if !mutates {
            return None;
        }
        // The service failed while running a change: running it again here could do it
        // twice. Say so, as iptables says a resource problem.
        let why = reply["error"]["message"]
            .as_str()
            .unwrap_or("it closed the connection");
        let _ = writeln!(
            std::io::stderr().lock(),
            "{} v{} (nf_tables): xtnl serve ({}) failed during the command, whose outcome \
             is unknown (list the ruleset to see it): {why}",
            id.base(),
            dropin::IPTABLES_VERSION,
            path.display()
        );
        return Some(4);
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        let _ = super::io_error(e);
    }
    let _ = std::io::stderr().lock().write_all(err.as_bytes());
    Some(i32::try_from(status).unwrap_or(1))
}

/// The service's interpreter of forwarded invocations (registered by `xtnl serve`): the
/// drop-in's own parse, execution and words, on the service's session.
pub(crate) fn run_forwarded(
    session: &mut Session,
    d: &Dropin,
    lock: &dyn Fn(WaitPolicy) -> XtablesLock,
) -> DropinOutput {
    let fallback = |why: &str| DropinOutput {
        fallback: Some(why.to_owned()),
        ..DropinOutput::default()
    };
    let Some(id) = dropin::identify(&d.program) else {
        return fallback("not an iptables name");
    };
    if id.tool != Tool::Iptables || id.backend == Some(BackendChoice::Legacy) {
        return fallback("only iptables commands on nf_tables are served");
    }
    if !forwardable(&d.args) {
        return fallback("an option only the process itself honours");
    }
    let mut stdout = Vec::new();
    let _ = xtnl::ipt::messages::take_warnings();
    xtnl::ipt::messages::set_as_iptables(true);
    let done = super::iptables::run_on_session(&mut stdout, &d.args, id.family, session, lock);
    xtnl::ipt::messages::set_as_iptables(false);
    let mut stderr = Vec::new();
    dropin::write_warnings(&mut stderr);
    match done {
        Ok(()) => DropinOutput {
            status: 0,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            ..DropinOutput::default()
        },
        // Nothing was done: the client's own run refuses (or does) it as it always would.
        Err(e) if e.kind() == ErrorKind::PolicyDenied => fallback("denied by the policy"),
        Err(e) => {
            let status = dropin::report_to(&mut stderr, &id, dropin::mode(Backend::Nft), &e);
            DropinOutput {
                status,
                stdout: String::from_utf8_lossy(&stdout).into_owned(),
                stderr: String::from_utf8_lossy(&stderr).into_owned(),
                fallback: None,
                broken: e.kind() == ErrorKind::Io,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::names_a_host;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn host_names_run_in_the_process() {
        for a in [
            "-A INPUT -s gw.example -j ACCEPT",
            "-A INPUT -d 192.0.2.1,web -j ACCEPT",
            "-A INPUT --source=localhost/24",
            "-A INPUT -sgw",
        ] {
            assert!(names_a_host(&args(a)), "{a}");
        }
        for a in [
            "-A INPUT -s 192.0.2.1/24 -d 2001:db8::1 -j ACCEPT",
            "-A INPUT -s 0/0 -d 10.1/16,192.0.2.7",
            "-A INPUT -p tcp --dport 22 -j ACCEPT",
            "-S",
        ] {
            assert!(!names_a_host(&args(a)), "{a}");
        }
    }
}
