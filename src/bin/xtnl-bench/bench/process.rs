//! Running the compared tools as processes: spawn and time one, the NAT-host agent's
//! set-up and teardown sequences with iptables-nft or iptables-legacy, the settle between
//! timed steps. Used by scaling and contention alike (so neither imports the other's).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::spec::{self, Step};
use xtnl::error::{Error, Result};
use xtnl::transport::NlSocket;

/// How a process ended.
pub(super) struct Exit {
    pub took: Duration,
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Exit {
    /// The tool's first error line (for failure counts and messages).
    pub fn error_line(&self) -> String {
        self.stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no message)")
            .trim()
            .to_string()
    }
}

/// Runs a program to completion (standard input from `input`, output captured) and times
/// it from spawn to reap. Fails only when it cannot be started.
pub(super) fn spawn(
    program: &Path,
    args: &[String],
    input: Option<&str>,
    lock: &Path,
) -> Result<Exit> {
    spawn_env(program, args, input, lock, &[])
}

/// [`spawn`] with more environment.
pub(super) fn spawn_env(
    program: &Path,
    args: &[String],
    input: Option<&str>,
    lock: &Path,
    env: &[(&str, &Path)],
) -> Result<Exit> {
    let mut c = Command::new(program);
    c.envs(env.iter().copied());
    // The xtnl binary is compared as the nf_tables tool it is by default on an iptables-nft
    // system; pinned, so that a host whose `iptables` is legacy does not switch it.
    c.args(args)
        .env("XTABLES_LOCKFILE", lock)
        .env(xtnl::backend::BACKEND_ENV, "nft")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = c.spawn().map_err(|e| {
        Error::Precondition(format!(
            "xtnl bench: cannot run {}: {e} (is it installed?)",
            program.display()
        ))
    })?;
    if let Some(text) = input
        && let Some(mut stdin) = child.stdin.take()
    {
        // A tool that fails early closes its input; its exit status tells why.
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| super::io("wait for a child process", e))?;
    Ok(Exit {
        took: start.elapsed(),
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Like [`spawn`], failing with the tool's message unless it succeeded.
pub(super) fn must(
    program: &Path,
    args: &[String],
    input: Option<&str>,
    lock: &Path,
) -> Result<Exit> {
    let e = spawn(program, args, input, lock)?;
    if !e.ok {
        return Err(Error::Precondition(format!(
            "xtnl bench: `{} {}` failed: {}",
            program.display(),
            args.join(" "),
            e.stderr.trim()
        )));
    }
    Ok(e)
}

/// Waits until nf_tables' deferred destroy work queued by earlier deletions is done:
/// releasing a bound NETLINK_NETFILTER socket flushes it.
pub(super) fn settle() -> Result<()> {
    drop(NlSocket::open()?);
    Ok(())
}

pub(super) fn p(s: &str) -> &Path {
    Path::new(s)
}

/// The program and leading arguments of an iptables-style tool.
pub(super) fn ipt_program(legacy: bool) -> (&'static str, Vec<String>) {
    if legacy {
        ("iptables-legacy", vec!["-w".into()])
    } else {
        ("iptables-nft", Vec::new())
    }
}

/// Runs one step of the agent's sequences with iptables-nft or iptables-legacy -w.
pub(super) fn agent_step(
    legacy: bool,
    step: Step,
    lock: &Path,
    save_to: &Path,
) -> Result<std::result::Result<String, String>> {
    let (program, mut args) = ipt_program(legacy);
    let exit = match step {
        Step::Ipt(a) => {
            args.extend(a);
            spawn(p(program), &args, None, lock)?
        }
        Step::Save => {
            let save = if legacy {
                "iptables-legacy-save"
            } else {
                "iptables-nft-save"
            };
            let e = spawn(p(save), &spec::words(&["-t", "nat"]), None, lock)?;
            if e.ok {
                std::fs::write(save_to, &e.stdout).map_err(|e| super::io("write save file", e))?;
            }
            e
        }
    };
    Ok(if exit.ok {
        Ok(exit.stdout)
    } else {
        Err(exit.error_line())
    })
}

/// The message of a sequence stopped at the time box (not a failure of the tool).
pub(super) const STOPPED: &str = "(stopped at the time box)";

/// The agent's set-up or teardown with `legacy` or not; Err(message) on the first failing
/// command (Ok(Err) so that contention can count it; the outer Result is the runner's own).
pub(super) fn agent(
    legacy: bool,
    setup: Option<usize>,
    chain: &str,
    lock: &Path,
    save_to: &Path,
    stop_at: Option<Instant>,
) -> Result<std::result::Result<(), String>> {
    let mut fatal = None;
    let mut run = |s: Step| -> std::result::Result<String, String> {
        if stop_at.is_some_and(|t| Instant::now() > t) {
            return Err(STOPPED.into());
        }
        match agent_step(legacy, s, lock, save_to) {
            Ok(r) => r,
            Err(e) => {
                let m = e.to_string();
                fatal = Some(e);
                Err(m)
            }
        }
    };
    let r = match setup {
        Some(id) => spec::agent_setup(id, chain, &mut run),
        None => spec::agent_teardown(chain, &mut run),
    };
    match fatal {
        Some(e) => Err(e),
        None => Ok(r),
    }
}

/// `xtnl reservation setup` arguments for reservation `id`.
pub(super) fn binary_setup_args(id: usize, chain: &str) -> Vec<String> {
    let mut a = spec::words(&["reservation", "setup", chain]);
    for (port, to) in spec::forwards(id) {
        a.push("--forward".into());
        a.push(format!("eth1:tcp/{port}={to}"));
    }
    a.extend(spec::words(&["--comment-prefix", "VCL: "]));
    a
}
