//! `xtnl doctor`: what this host has and what xtnl will do on it, each finding with a hint
//! when something will fail.
//!
//! Read-only, and safe in a delegated run (setuid, file capabilities, sudo): it starts no
//! program (the alternatives are read from `/etc/alternatives` and
//! `/var/lib/dpkg/alternatives`, not asked of `update-alternatives`), opens no file its
//! caller names (only fixed system paths, the xtables lock path iptables would use, which a
//! delegated run fixes to `/run/xtables.lock`, and this binary), never opens the lock file
//! (it only `stat`s it), and follows `PATH` for the backend detection only when the run is
//! not delegated. The one kernel request is an nf_tables generation read.

use std::fmt::Write as _;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

mod alternatives;

use super::io_error;
use xtnl::backend::{self, BACKEND_ENV, BackendChoice};
use xtnl::error::{Error, Result};
use xtnl::model::Family;
use xtnl::policy::{DEFAULT_POLICY_PATH, POLICY_PATH_ENV};
use xtnl::privilege::{Elevation, invoker};

pub const USAGE: &str = "  doctor                        say what this host has (nf_tables, x_tables, the lock file, the
                                policy, the binary's privileges, the iptables alternatives)
                                and what xtnl will do; a hint for each thing that will fail";

/// `CAP_NET_ADMIN`, the one capability xtnl needs.
const CAP_NET_ADMIN: u32 = 12;

/// How a finding bears on xtnl's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Ok,
    /// Worth knowing; nothing fails because of it.
    Note,
    /// Something will fail (the exit status is 1).
    Fail,
}

#[derive(Default)]
pub(super) struct Report {
    text: String,
    failed: usize,
}

impl Report {
    pub(super) fn add(
        &mut self,
        level: Level,
        topic: &str,
        what: impl AsRef<str>,
        hint: Option<String>,
    ) {
        let tag = match level {
            Level::Ok => "ok  ",
            Level::Note => "note",
            Level::Fail => {
                self.failed += 1;
                "FAIL"
            }
        };
        let _ = writeln!(self.text, "{tag} {topic}: {}", what.as_ref());
        if let Some(h) = hint {
            let _ = writeln!(self.text, "       hint: {h}");
        }
    }
}

/// Runs the checks and prints them; exit status 0 when nothing will fail, else 1.
pub(crate) fn run(out: &mut impl Write, args: &[String]) -> Result<i32> {
    if let Some(a) = args.first() {
        return Err(Error::InvalidInput(format!(
            "doctor takes no arguments (got {a:?})"
        )));
    }
    let mut r = Report::default();
    let who = invoker();
    binary(&mut r, &who);
    kernel(&mut r);
    backends(&mut r, who.delegated());
    lock(&mut r, &who);
    policy(&mut r, who.delegated());
    for name in ["iptables", "ip6tables"] {
        alternatives::check(&mut r, name);
    }
    let _ = writeln!(
        r.text,
        "{}",
        if r.failed == 0 {
            "doctor: nothing found that will fail".to_owned()
        } else {
            format!("doctor: {} finding(s) will make commands fail", r.failed)
        }
    );
    out.write_all(r.text.as_bytes()).map_err(io_error)?;
    Ok(if r.failed == 0 { 0 } else { 1 })
}

/// The run (who, with what) and the binary's own privileges (setuid, file capabilities).
fn binary(r: &mut Report, who: &xtnl::privilege::Invoker) {
    let how = match who.elevation {
        Elevation::None => "not delegated".to_string(),
        Elevation::Secure => "delegated (secure mode: setuid or file capabilities)".to_string(),
        Elevation::Tool(_) | Elevation::Socket => format!("delegated ({})", who.via()),
    };
    let caps = process_caps();
    let has_admin = caps.is_some_and(|c| c & (1 << CAP_NET_ADMIN) != 0);
    let what = format!(
        "xtnl {} for uid {} (euid {}), {how}; CAP_NET_ADMIN {}",
        env!("CARGO_PKG_VERSION"),
        who.uid,
        who.euid,
        if has_admin { "held" } else { "not held" }
    );
    if has_admin {
        r.add(Level::Ok, "run", what, None);
    } else {
        r.add(
            Level::Fail,
            "run",
            what,
            Some(
                "listing and changing the firewall need CAP_NET_ADMIN: run as root, through \
                 sudo, or give the binary the capability (setcap cap_net_admin+ep PATH)"
                    .into(),
            ),
        );
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            r.add(Level::Note, "binary", format!("cannot find it: {e}"), None);
            return;
        }
    };
    let meta = match std::fs::metadata(&exe) {
        Ok(m) => m,
        Err(e) => {
            r.add(
                Level::Note,
                "binary",
                format!("{}: {e}", exe.display()),
                None,
            );
            return;
        }
    };
    let mode = meta.permissions().mode();
    let mut what = format!(
        "{} (owner uid {}, mode {:04o})",
        exe.display(),
        meta.uid(),
        mode & 0o7777
    );
    let file_caps = xtnl::privilege::get_xattr(&exe, c"security.capability");
    match &file_caps {
        Ok(Some(v)) => match decode_file_caps(v) {
            Some((eff, perm)) => {
                let _ = write!(
                    what,
                    "; file capabilities {}{}",
                    cap_names(perm),
                    if eff { "+ep" } else { "+p (not effective)" }
                );
            }
            None => what.push_str("; file capabilities (undecodable)"),
        },
        Ok(None) => what.push_str("; no file capabilities"),
        Err(e) => {
            let _ = write!(what, "; file capabilities unreadable ({e})");
        }
    }
    if mode & 0o4000 != 0 {
        what.push_str("; setuid");
    }
    let privileged = mode & 0o4000 != 0 || matches!(file_caps, Ok(Some(_)));
    let dir_unsafe = exe
        .parent()
        .and_then(|d| std::fs::metadata(d).ok())
        .is_some_and(|d| d.uid() != 0 || d.mode() & 0o022 != 0);
    if privileged && (meta.uid() != 0 || mode & 0o022 != 0 || dir_unsafe) {
        r.add(
            Level::Fail,
            "binary",
            what,
            Some(
                "a setuid or capability binary and its directory must be owned by root and \
                 writable only by root, or someone else can replace what runs privileged"
                    .into(),
            ),
        );
    } else if mode & 0o4000 != 0 {
        r.add(
            Level::Note,
            "binary",
            what,
            Some(
                "setuid root grants every capability; cap_net_admin+ep grants only the one \
                 xtnl needs (chmod u-s, then setcap cap_net_admin+ep)"
                    .into(),
            ),
        );
    } else {
        r.add(Level::Ok, "binary", what, None);
    }
}

/// The effective capability set of this process (`CapEff` in /proc/self/status).
fn process_caps() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))?
        .trim();
    u64::from_str_radix(hex, 16).ok()
}

/// `struct vfs_cap_data` (`security.capability`, little endian): the effective flag and the
/// permitted set (revision 1: 32 bits; 2 and 3: 64 bits, 3 adding the namespace's root uid).
fn decode_file_caps(v: &[u8]) -> Option<(bool, u64)> {
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(v.get(at..at + 4)?.try_into().ok()?))
    };
    let magic = word(0)?;
    let effective = magic & 1 != 0;
    let low = u64::from(word(4)?);
    let perm = match magic & 0xff00_0000 {
        0x0100_0000 => low,
        0x0200_0000 | 0x0300_0000 => low | (u64::from(word(12)?) << 32),
        _ => return None,
    };
    Some((effective, perm))
}

/// `cap_net_admin`, or the capability numbers, for a set.
fn cap_names(set: u64) -> String {
    let mut names: Vec<String> = (0..64)
        .filter(|b| set & (1u64 << b) != 0)
        .map(|b| {
            if b == CAP_NET_ADMIN {
                "cap_net_admin".to_owned()
            } else {
                format!("cap#{b}")
            }
        })
        .collect();
    if names.is_empty() {
        names.push("(none)".into());
    }
    names.join(",")
}

/// nf_tables (one generation read) and x_tables (`/proc/net/ip*_tables_names`).
fn kernel(r: &mut Report) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
    let nft = xtnl::nft::Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()
        .and_then(|mut s| {
            let generation = s.generation()?;
            let tables = s.list_tables()?;
            Ok((generation, tables))
        });
    match nft {
        Ok((generation, tables)) => {
            let names: Vec<String> = tables
                .iter()
                .map(|t| format!("{} {}", t.table.family.as_str(), t.table.name))
                .collect();
            r.add(
                Level::Ok,
                "nf_tables",
                format!(
                    "kernel {release} answers (generation {generation}); tables in this network \
                     namespace: {}",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
                None,
            );
        }
        Err(e) => {
            let hint = match e.kind() {
                xtnl::error::ErrorKind::NotPermitted => {
                    "the kernel refused the read: CAP_NET_ADMIN is missing (see `run` above)"
                }
                _ => {
                    "the nf_tables backend (the default) cannot work: the kernel needs \
                     CONFIG_NF_TABLES (module nf_tables; try `modprobe nf_tables`), or use \
                     --backend legacy"
                }
            };
            r.add(
                Level::Fail,
                "nf_tables",
                format!("kernel {release}: {e}"),
                Some(hint.into()),
            );
        }
    }
    for (family, file) in [
        ("ip", "/proc/net/ip_tables_names"),
        ("ip6", "/proc/net/ip6_tables_names"),
    ] {
        match std::fs::read_to_string(file) {
            Ok(names) => {
                let names: Vec<&str> = names.split_whitespace().collect();
                r.add(
                    Level::Ok,
                    "x_tables",
                    format!(
                        "{family}: the kernel has x_tables ({file}); legacy tables in this \
                         network namespace: {}",
                        if names.is_empty() {
                            "none".into()
                        } else {
                            names.join(", ")
                        }
                    ),
                    None,
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => r.add(
                Level::Note,
                "x_tables",
                format!("{family}: {file} is absent: x_tables is not loaded"),
                Some(
                    "only --backend legacy needs it; the kernel loads ip_tables/ip6_tables on \
                     first use when they are modules (CONFIG_IP_NF_IPTABLES)"
                        .into(),
                ),
            ),
            Err(e) => r.add(
                Level::Note,
                "x_tables",
                format!("{family}: cannot read {file}: {e}"),
                None,
            ),
        }
    }
}

/// What `--backend auto` picks for each family, and why; `XTNL_BACKEND`. Both backends are
/// held to the policy and write the audit (the x_tables backend judges the table it
/// replaces against the table it read), so neither a delegated run nor a policy in force
/// rules one out; a delegated run keeps `XTNL_BACKEND` and looks `iptables` up in its own
/// fixed `PATH`, never the caller's.
fn backends(r: &mut Report, delegated: bool) {
    let env = std::env::var(BACKEND_ENV).unwrap_or_default();
    let choice = match env.parse::<BackendChoice>() {
        Ok(c) => {
            if !env.is_empty() {
                r.add(
                    Level::Note,
                    "backend",
                    format!("{BACKEND_ENV}={env} sets the default for --backend"),
                    None,
                );
            }
            c
        }
        Err(_) if env.is_empty() => BackendChoice::Auto,
        Err(e) => {
            r.add(
                Level::Fail,
                "backend",
                format!("{BACKEND_ENV}={env:?}: {e}"),
                Some(format!(
                    "every command fails until {BACKEND_ENV} is nft, legacy, auto or unset"
                )),
            );
            return;
        }
    };
    let secure = std::ffi::OsStr::new(super::delegated::SECURE_PATH);
    for (family, program) in [(Family::Ipv4, "iptables"), (Family::Ipv6, "ip6tables")] {
        if !delegated {
            let (b, why) = choice.resolve(family);
            r.add(
                Level::Ok,
                "backend",
                format!("{program}: {} ({why})", b.as_str()),
                None,
            );
            continue;
        }
        // What auto finds in the delegated run's own PATH, whatever the caller's says.
        let (auto, auto_why) = backend::detect(program, Some(secure));
        let (b, why) = match choice {
            BackendChoice::Auto => (auto, auto_why.clone()),
            c => c.resolve(family),
        };
        r.add(
            Level::Ok,
            "backend",
            format!(
                "{program}: {} ({why}); a delegated run looks {program} up in {} (not the \
                 caller's PATH), where auto picks {} ({auto_why}); either backend is held to \
                 the policy",
                b.as_str(),
                super::delegated::SECURE_PATH,
                auto.as_str()
            ),
            None,
        );
    }
}

/// The xtables lock file: path, owner, mode, and whether this run can open it.
fn lock(r: &mut Report, who: &xtnl::privilege::Invoker) {
    let path = xtnl::lock::lock_path_from_env();
    let cap_only = who.euid != 0;
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let what = format!(
                "{} does not exist yet; the first change creates it (mode 0600, owned by whoever \
                 runs it)",
                path.display()
            );
            if cap_only {
                r.add(
                    Level::Fail,
                    "lock",
                    what,
                    Some(format!(
                        "this run has no root uid and cannot create it in /run: create it at boot \
                         readable by the agent's group, e.g. the tmpfiles line `f {} 0640 root \
                         AGENT-GROUP -`",
                        path.display()
                    )),
                );
            } else {
                r.add(Level::Ok, "lock", what, None);
            }
        }
        Err(e) => r.add(
            Level::Fail,
            "lock",
            format!("{}: {e}", path.display()),
            Some("every change takes this lock; it must be reachable".into()),
        ),
        Ok(m) => {
            let what = format!(
                "{} (owner uid {} gid {}, mode {:04o}{})",
                path.display(),
                m.uid(),
                m.gid(),
                m.mode() & 0o7777,
                if m.file_type().is_symlink() {
                    ", a symbolic link"
                } else {
                    ""
                }
            );
            if m.file_type().is_symlink() && who.delegated() {
                r.add(
                    Level::Fail,
                    "lock",
                    what,
                    Some(
                        "a delegated run refuses a symlinked lock path; make it a plain file"
                            .into(),
                    ),
                );
            } else if cap_only && !readable(&path) {
                r.add(
                    Level::Fail,
                    "lock",
                    what,
                    Some(format!(
                        "uid {} cannot open it, so every change fails with status 4: make it \
                         readable by the agent's group at boot (tmpfiles: `f {} 0640 root \
                         AGENT-GROUP -`); iptables keeps an existing file's mode",
                        who.uid,
                        path.display()
                    )),
                );
            } else {
                r.add(Level::Ok, "lock", what, None);
            }
        }
    }
}

/// Whether this process's real uid/gids may read `path` (`access(R_OK)`: the real ids, the
/// ones that matter for a capability-only helper, which has no CAP_DAC_OVERRIDE).
fn readable(path: &Path) -> bool {
    nix::unistd::access(path, nix::unistd::AccessFlags::R_OK).is_ok()
}

/// The policy a delegated run would enforce, checked as that run checks it.
fn policy(r: &mut Report, delegated: bool) {
    let path = Path::new(DEFAULT_POLICY_PATH);
    if !delegated {
        if let Some(v) = std::env::var_os(POLICY_PATH_ENV).filter(|v| !v.is_empty()) {
            r.add(
                Level::Note,
                "policy",
                format!(
                    "{POLICY_PATH_ENV}={} applies to runs that are not delegated (not read here)",
                    PathBuf::from(v).display()
                ),
                None,
            );
        }
    }
    if std::fs::symlink_metadata(path).is_err() {
        let what = format!("{DEFAULT_POLICY_PATH} does not exist");
        let hint = Some(
            "a delegated run (setuid, file capabilities, sudo) changes nothing without it (status \
             6); see xtnl-policy(5) and the example in /usr/share/doc/xtnl/examples/"
                .to_owned(),
        );
        if delegated {
            r.add(Level::Fail, "policy", what, hint);
        } else {
            r.add(
                Level::Ok,
                "policy",
                format!("{what}: root's own runs are unrestricted"),
                hint,
            );
        }
        return;
    }
    match xtnl::policy::load_secure(path) {
        Ok(p) => r.add(
            Level::Ok,
            "policy",
            format!(
                "{DEFAULT_POLICY_PATH} is usable in a delegated run ({} allow rule(s){})",
                p.allow.len(),
                p.max_ops
                    .map(|(n, _)| format!(", at most {n} operations per transaction"))
                    .unwrap_or_default()
            ),
            None,
        ),
        Err(e) => r.add(
            if delegated { Level::Fail } else { Level::Note },
            "policy",
            e.to_string(),
            Some(
                "a delegated run refuses to change anything with this policy (status 6): it \
                 must be valid, a regular file owned by root and writable only by root, in \
                 directories likewise"
                    .into(),
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_file_capabilities() {
        // cap_net_admin+ep, revision 2 (what setcap writes without a namespace root).
        let mut v = Vec::new();
        v.extend_from_slice(&0x0200_0001u32.to_le_bytes());
        v.extend_from_slice(&(1u32 << CAP_NET_ADMIN).to_le_bytes());
        v.extend_from_slice(&[0; 12]);
        assert_eq!(decode_file_caps(&v), Some((true, 1 << CAP_NET_ADMIN)));
        assert_eq!(cap_names(1 << CAP_NET_ADMIN), "cap_net_admin");
        v[0] = 0;
        assert_eq!(decode_file_caps(&v), Some((false, 1 << CAP_NET_ADMIN)));
        assert_eq!(decode_file_caps(&v[..6]), None);
        assert_eq!(decode_file_caps(&[0, 0, 0, 0x09, 0, 0, 0, 0]), None);
    }
}
