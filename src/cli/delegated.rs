//! What a delegated run (setuid, file capabilities, sudo, run0, doas, pkexec; see
//! [`xtnl::privilege`]) may do and how it sheds what its caller handed it, before anything
//! else happens. See docs/privileged-helper.md.
//!
//! In order, before the policy is read or any socket opened:
//! 1. the command must be on [`DELEGATED_COMMANDS`], else status 2;
//! 2. standard input, output and error must be open (std's runtime already puts /dev/null on
//!    closed ones; this refuses if that failed, so that no file xtnl opens becomes fd 1);
//! 3. a setuid-root run makes its real (and saved) uid and gid root and drops the caller's
//!    groups, so that the caller can no longer signal it (SIGSTOP while it holds the xtables
//!    lock, SIGKILL between commit and audit record);
//! 4. the terminal's stop signals (SIGTSTP, SIGTTIN, SIGTTOU), which the kernel delivers
//!    from the caller's terminal whatever the uids, are blocked;
//! 5. the environment is reset ([`KEPT_ENVIRONMENT`]), the working directory becomes `/` and
//!    the umask 022.

use std::io::Write;

use xtnl::error::{Error, Result};
use xtnl::privilege::{Elevation, invoker};

/// The commands a delegated run may run: what an agent needs. Everything else (`bench`,
/// `demo`, and any command added later that is not listed here) is refused with status 2.
/// The iptables commands themselves are the arguments starting with `-` (`-A`, `-t nat -N`,
/// `-S`, `--version`, ...). Keep this the one list.
pub const DELEGATED_COMMANDS: &[&str] = &[
    "restore",
    "save",
    "apply",
    "reservation",
    "forward",
    "teardown",
    "sweep",
    "host",
    "migrate",
    "list",
    "version",
    "help",
    "doctor",
    // `serve --stdio` only: serve refuses `--socket` in a delegated run itself.
    "serve",
];

/// The `PATH` of a delegated run (sudo's usual `secure_path`). xtnl starts no program in a
/// delegated run; `--backend auto` looks `iptables` up here to tell which backend the host's
/// iptables is.
pub const SECURE_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment a delegated run keeps: `PATH` set to [`SECURE_PATH`], and `XTNL_BACKEND`
/// (validated; both backends check the policy). Every other variable is removed, including
/// `XTABLES_LOCKFILE`, `XTNL_POLICY`, `XTNL_AUDIT`, `TMPDIR`, `HOME`, `XDG_*`, `LD_*`,
/// `GLIBC_TUNABLES` and the locale variables (xtnl's messages are not localised).
pub const KEPT_ENVIRONMENT: &[&str] = &["PATH", xtnl::backend::BACKEND_ENV];

/// Whether a delegated run may run `command` (the first word after the global options).
pub fn command_allowed(command: Option<&str>) -> bool {
    match command {
        Some(c) if c.starts_with('-') => true,
        Some(c) => DELEGATED_COMMANDS.contains(&c),
        None => false,
    }
}

/// Applies the rules above in a delegated run; does nothing otherwise.
pub(crate) fn enter(command: Option<&str>) -> Result<()> {
    let who = invoker();
    if !who.delegated() {
        return Ok(());
    }
    if !command_allowed(command) {
        return Err(Error::InvalidInput(format!(
            "{} is not allowed in a privileged run (setuid, file capabilities, sudo, run0, doas \
             or pkexec); allowed: the iptables commands, {}",
            match command {
                Some(c) => format!("command {c:?}"),
                None => "no command".into(),
            },
            DELEGATED_COMMANDS.join(", ")
        )));
    }
    for fd in 0..3 {
        if std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_err() {
            return Err(Error::InvalidInput(format!(
                "file descriptor {fd} (standard input, output or error) is closed; a \
                 privileged run needs all three open"
            )));
        }
    }
    if who.elevation == Elevation::Secure && who.euid == 0 {
        // setuid root: from now on the real, effective and saved ids are root's. The caller
        // was recorded in `who` (and is what audit records name).
        let root_u = nix::unistd::Uid::from_raw(0);
        let root_g = nix::unistd::Gid::from_raw(0);
        nix::unistd::setgroups(&[])
            .and_then(|()| nix::unistd::setresgid(root_g, root_g, root_g))
            .and_then(|()| nix::unistd::setresuid(root_u, root_u, root_u))
            .map_err(|e| Error::NotPermitted {
                context: format!("make the real uid root in a setuid run: {e}"),
            })?;
    }
    let mut stops = nix::sys::signal::SigSet::empty();
    for s in [
        nix::sys::signal::Signal::SIGTSTP,
        nix::sys::signal::Signal::SIGTTIN,
        nix::sys::signal::Signal::SIGTTOU,
    ] {
        stops.add(s);
    }
    let _ = stops.thread_block();
    for name in [
        xtnl::policy::POLICY_PATH_ENV,
        xtnl::policy::audit::AUDIT_ENV,
        xtnl::lock::LOCK_PATH_ENV,
    ] {
        if std::env::var_os(name).is_some() {
            let _ = writeln!(
                std::io::stderr().lock(),
                "xtnl: ignoring {name} in a privileged run (its environment is reset)"
            );
        }
    }
    let mut keep = vec![("PATH".to_owned(), SECURE_PATH.to_owned())];
    for name in KEPT_ENVIRONMENT.iter().filter(|n| **n != "PATH") {
        if let Ok(v) = std::env::var(name) {
            keep.push(((*name).to_owned(), v));
        }
    }
    xtnl::privilege::reset_environment(&keep);
    let _ = std::env::set_current_dir("/");
    nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list() {
        for ok in [
            "-A",
            "-t",
            "--version",
            "restore",
            "apply",
            "teardown",
            "help",
        ] {
            assert!(command_allowed(Some(ok)), "{ok}");
        }
        for no in ["bench", "demo", "anything-new", ""] {
            assert!(!command_allowed(Some(no)), "{no}");
        }
        assert!(!command_allowed(None));
    }
}
