//! The binary's policy and audit set-up: which policy file is in force, where audit lines go,
//! and what a delegated run (setuid, file capabilities, sudo) ignores. Everything here is
//! installed as the process's session defaults, so every command's transactions are checked
//! and audited whichever front plans them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use xtnl::backend::BackendChoice;
use xtnl::error::{Error, Result};
use xtnl::model::Family;
use xtnl::nft::Auditor;
use xtnl::policy::audit::{AUDIT_ENV, AuditTarget, LineAuditor};
use xtnl::policy::{DEFAULT_POLICY_PATH, POLICY_PATH_ENV, Policy, load_file, load_secure};
use xtnl::privilege::{Invoker, invoker};

/// Options that come before the command: `--policy-file FILE`, `--audit TARGET`.
/// (`--policy` would clash with iptables' own `--policy CHAIN TARGET`.)
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Globals {
    pub policy_file: Option<PathBuf>,
    pub audit: Option<AuditTarget>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidInput(msg.into())
}

fn audit_target(v: &str, from: &str) -> Result<AuditTarget> {
    AuditTarget::parse(v)
        .ok_or_else(|| bad(format!("{from} {v:?}: expected syslog, stderr or off")))
}

/// Takes the leading global options off the command line.
pub(crate) fn split_globals(args: &[String]) -> Result<(Globals, &[String])> {
    let mut g = Globals::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (a.as_str(), None),
        };
        if name != "--policy-file" && name != "--audit" {
            break;
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| bad(format!("{name} needs a value")))?
            }
        };
        if name == "--policy-file" {
            g.policy_file = Some(PathBuf::from(value));
        } else {
            g.audit = Some(audit_target(&value, "--audit")?);
        }
        i += 1;
    }
    Ok((g, &args[i..]))
}

fn warn(msg: &str) {
    let _ = writeln!(std::io::stderr().lock(), "xtnl: {msg}");
}

/// The policy in force for this run, if any.
///
/// A delegated run reads only [`DEFAULT_POLICY_PATH`], with ownership checks, and refuses to
/// run without it; otherwise `--policy-file`, then `$XTNL_POLICY`, then the default path if
/// it exists (a file named explicitly must exist).
pub(crate) fn policy_for(g: &Globals, who: &Invoker) -> Result<Option<Policy>> {
    let default = Path::new(DEFAULT_POLICY_PATH);
    if who.delegated() {
        if g.policy_file.is_some() {
            warn(&format!(
                "ignoring --policy-file in a privileged run; the policy is {DEFAULT_POLICY_PATH}"
            ));
        }
        if std::env::var_os(POLICY_PATH_ENV).is_some() {
            warn(&format!(
                "ignoring {POLICY_PATH_ENV} in a privileged run; the policy is {DEFAULT_POLICY_PATH}"
            ));
        }
        return match load_secure(default) {
            Ok(p) => Ok(Some(p)),
            Err(Error::PolicyInvalid(m)) => Err(Error::PolicyInvalid(format!(
                "{m}; a privileged run (setuid, file capabilities or sudo) changes nothing \
                 without a usable policy"
            ))),
            Err(e) => Err(e),
        };
    }
    let chosen = g.policy_file.clone().or_else(|| {
        std::env::var_os(POLICY_PATH_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    match chosen {
        Some(path) => load_file(&path).map(Some),
        None if default.exists() => load_file(default).map(Some),
        None => Ok(None),
    }
}

/// Where audit lines go: syslog in a delegated run whatever the caller asks (it must not be
/// able to hide or redirect the record); else `--audit`, `$XTNL_AUDIT`, or syslog.
pub(crate) fn audit_for(g: &Globals, who: &Invoker) -> Result<AuditTarget> {
    if who.delegated() {
        if g.audit.is_some_and(|t| t != AuditTarget::Syslog) {
            warn("ignoring --audit in a privileged run; audit lines go to syslog");
        }
        return Ok(AuditTarget::Syslog);
    }
    if let Some(t) = g.audit {
        return Ok(t);
    }
    match std::env::var(AUDIT_ENV) {
        Ok(v) if !v.is_empty() => audit_target(&v, AUDIT_ENV),
        _ => Ok(AuditTarget::Syslog),
    }
}

/// The backend a policy can be enforced on: both. The nf_tables backend checks it where
/// transactions are committed, the x_tables backend on the difference between the table as
/// read and the table it replaces (`legacy::guard`), and both write the same audit records.
/// In a delegated run `auto` looks `iptables` up in the reset environment's fixed `PATH`
/// (`cli::delegated::SECURE_PATH`), not the caller's.
pub(crate) fn restrict_backend(choice: BackendChoice, _family: Family) -> Result<BackendChoice> {
    Ok(choice)
}

/// Refuses, in a delegated run, to open a file the caller names: xtnl would open it with
/// root's rights (or past the caller's), and its error messages quote the lines they reject,
/// so `restore /etc/shadow` would print a line of it. Standard input, which the caller's
/// shell opens with the caller's own rights, carries documents instead.
pub(crate) fn caller_file(path: &str) -> Result<()> {
    if invoker().delegated() {
        return Err(bad(format!(
            "a privileged run (setuid, file capabilities or sudo) does not open files named by its \
             caller ({path}); pass the document on standard input instead (`< {path}`)"
        )));
    }
    Ok(())
}

/// Loads the policy and audit settings: what every backend the run opens enforces.
pub(crate) fn install(g: &Globals) -> Result<xtnl::seam::Enforcement> {
    let who = invoker();
    let policy = super::netns_opt::scope_policy(policy_for(g, &who)?, &who)?;
    let target = audit_for(g, &who)?;
    let policy = policy.map(Arc::new);
    let auditor = (target != AuditTarget::Off)
        .then(|| LineAuditor::new(who, target).opened())
        .transpose()?
        .map(|a| Arc::new(a) as Arc<dyn Auditor>);
    Ok(xtnl::seam::Enforcement::new(policy, auditor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globals_are_taken_off_the_front_only() {
        let a = args(&["--policy-file", "/p.toml", "--audit=stderr", "-A", "INPUT"]);
        let (g, rest) = split_globals(&a).unwrap();
        assert_eq!(g.policy_file.as_deref(), Some(Path::new("/p.toml")));
        assert_eq!(g.audit, Some(AuditTarget::Stderr));
        assert_eq!(rest, &a[3..]);
        // iptables' own --policy is left alone.
        let a = args(&["--policy", "INPUT", "DROP"]);
        let (g, rest) = split_globals(&a).unwrap();
        assert_eq!(g, Globals::default());
        assert_eq!(rest.len(), 3);
        assert!(split_globals(&args(&["--audit", "loud"])).is_err());
        assert!(split_globals(&args(&["--policy-file"])).is_err());
    }
}
