//! Who is running xtnl, and on whose behalf: the facts the privileged-helper safety rules
//! depend on (see docs/privileged-helper.md).
//!
//! Secure mode is the kernel's own verdict, `AT_SECURE` in the auxiliary vector: it is 1 when
//! the program was started setuid or setgid, or gained file capabilities (the Linux ELF loader
//! sets it from `bprm->secureexec`, which the commoncap LSM sets whenever an exec raises
//! capabilities, and `setup_new_exec` whenever the credentials changed). glibc keys
//! `__libc_enable_secure`/`secure_getenv` on the same value. We read it from
//! `/proc/self/auxv` (pairs of native `unsigned long`), which needs no `unsafe` call; when that
//! file cannot be read the answer is "secure" (fail closed).
//!
//! A delegated run is one where a root process acts for someone else: secure mode, a real uid
//! or gid that differs from the effective one, or a delegation tool for a non-root user (real
//! and effective uid 0 with sudo's or run0's `SUDO_UID`, pkexec's `PKEXEC_UID` or doas's
//! `DOAS_USER`; these tools set the variables themselves, and only root could forge them,
//! which would only restrict root). In a delegated run the caller's own settings that could
//! widen what it may do are ignored (see `cli::delegated` and docs/privileged-helper.md).

#![deny(missing_docs)]

use std::sync::OnceLock;

/// `AT_SECURE` from `<linux/auxvec.h>`.
const AT_SECURE: u64 = 23;
/// `AT_NULL`, the vector's terminator.
const AT_NULL: u64 = 0;

/// The program a root process says it was started by on someone else's behalf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `SUDO_UID` (sudo, sudo-rs).
    Sudo,
    /// `SUDO_UID` set by systemd's `run0`, which sets sudo's variables; told apart from sudo
    /// by being started by the service manager (`INVOCATION_ID` set, parent pid 1).
    Run0,
    /// `DOAS_USER` (OpenDoas), a user name.
    Doas,
    /// `PKEXEC_UID` (polkit's pkexec).
    Pkexec,
}

impl Tool {
    /// The tool's command name, as audit lines print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::Sudo => "sudo",
            Tool::Run0 => "run0",
            Tool::Doas => "doas",
            Tool::Pkexec => "pkexec",
        }
    }
}

/// How this process came to hold its privileges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elevation {
    /// Started normally by whoever runs it (root, or an unprivileged user with no extra
    /// privilege); nothing is delegated.
    None,
    /// `AT_SECURE` (setuid, setgid or file capabilities), or a real uid or gid that differs
    /// from the effective one.
    Secure,
    /// Real and effective uid 0, started by a delegation tool for a non-root user.
    Tool(Tool),
    /// A request to `xtnl serve` over its unix socket: the uid is the peer's
    /// (`SO_PEERCRED`), the service acts for it.
    Socket,
}

/// The identity an audit line names and the mode the safety rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invoker {
    /// The user on whose behalf xtnl runs: the real uid at start, or the uid the delegation
    /// tool names.
    pub uid: u32,
    /// The effective uid the process started with.
    pub euid: u32,
    /// How the process came to hold its privileges.
    pub elevation: Elevation,
}

impl Invoker {
    /// Whether the caller's options and environment must not widen what it may do.
    pub fn delegated(&self) -> bool {
        self.elevation != Elevation::None
    }
    /// How the run was delegated, as audit records name it: `setuid`, `capabilities`,
    /// `sudo`, `run0`, `doas`, `pkexec`, or `none`.
    pub fn via(&self) -> &'static str {
        match self.elevation {
            Elevation::None => "none",
            Elevation::Secure if self.euid == 0 && self.uid != 0 => "setuid",
            Elevation::Secure => "capabilities",
            Elevation::Tool(t) => t.as_str(),
            Elevation::Socket => "socket",
        }
    }
}

/// This process's invoker, computed once (before the binary's `cli` resets the environment of a
/// delegated run, which removes the variables read here).
pub fn invoker() -> Invoker {
    static INVOKER: OnceLock<Invoker> = OnceLock::new();
    *INVOKER.get_or_init(|| {
        let ids = Ids {
            uid: nix::unistd::getuid().as_raw(),
            euid: nix::unistd::geteuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
            egid: nix::unistd::getegid().as_raw(),
        };
        classify(ids, at_secure(), &|name| {
            std::env::var(name).ok().filter(|v| !v.is_empty())
        })
    })
}

/// Whether the kernel started this process in secure mode (`AT_SECURE`).
pub fn secure_mode() -> bool {
    invoker().elevation == Elevation::Secure
}

/// Whether this run is delegated (secure mode or a delegation tool for a non-root user).
pub fn delegated() -> bool {
    invoker().delegated()
}

/// The process's ids at start.
#[derive(Debug, Clone, Copy)]
struct Ids {
    uid: u32,
    euid: u32,
    gid: u32,
    egid: u32,
}

/// The delegation tools' variables are trusted only in a process whose real and effective
/// uid are 0 and that is not in secure mode: only root could have set them, and a root that
/// forges them only restricts itself.
fn classify(ids: Ids, secure: bool, var: &dyn Fn(&str) -> Option<String>) -> Invoker {
    let mk = |uid, elevation| Invoker {
        uid,
        euid: ids.euid,
        elevation,
    };
    if secure || ids.uid != ids.euid || ids.gid != ids.egid {
        return mk(ids.uid, Elevation::Secure);
    }
    if ids.uid != 0 {
        return mk(ids.uid, Elevation::None);
    }
    let num = |name: &str| var(name).and_then(|v| v.parse::<u32>().ok());
    let found = if let Some(u) = num("SUDO_UID") {
        let run0 = var("INVOCATION_ID").is_some() && nix::unistd::getppid().as_raw() == 1;
        Some((u, if run0 { Tool::Run0 } else { Tool::Sudo }))
    } else if let Some(u) = num("PKEXEC_UID") {
        Some((u, Tool::Pkexec))
    } else if let Some(name) = var("DOAS_USER") {
        // A user doas names that has no uid here is still someone else: u32::MAX stands for
        // "unknown caller", and the run is delegated.
        let uid = std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|p| passwd_uid(&p, &name))
            .unwrap_or(u32::MAX);
        Some((uid, Tool::Doas))
    } else {
        None
    };
    match found {
        Some((caller, tool)) if caller != 0 => mk(caller, Elevation::Tool(tool)),
        _ => mk(0, Elevation::None),
    }
}

/// The uid of `name` in an `/etc/passwd` text. Read directly rather than through NSS
/// (`getpwnam`), which in a statically linked program loads shared modules at run time.
fn passwd_uid(passwd: &str, name: &str) -> Option<u32> {
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then_some(())?;
        f.nth(1)?.parse().ok()
    })
}

/// `AT_SECURE` of this process; true when it cannot be read.
fn at_secure() -> bool {
    match std::fs::read("/proc/self/auxv") {
        Ok(bytes) => auxv_value(&bytes, AT_SECURE).is_none_or(|v| v != 0),
        Err(_) => true,
    }
}

/// The value of `key` in an auxiliary vector in this machine's word size and byte order.
fn auxv_value(bytes: &[u8], key: u64) -> Option<u64> {
    const W: usize = std::mem::size_of::<usize>();
    let word = |b: &[u8]| -> u64 {
        let mut a = [0u8; W];
        a.copy_from_slice(b);
        usize::from_ne_bytes(a) as u64
    };
    for pair in bytes.chunks_exact(2 * W) {
        let (k, v) = (word(&pair[..W]), word(&pair[W..]));
        if k == AT_NULL {
            break;
        }
        if k == key {
            return Some(v);
        }
    }
    None
}

/// `getxattr(path, name)`: the value of an extended attribute of `path` (symbolic links
/// followed), `None` when the file has no such attribute; at most 256 bytes. `xtnl doctor`
/// reads a binary's file capabilities (`security.capability`) with it.
pub fn get_xattr(
    path: &std::path::Path,
    name: &std::ffi::CStr,
) -> std::io::Result<Option<Vec<u8>>> {
    xtnl_sys::get_xattr(path, name)
}

/// Replaces the whole environment by `keep` (name, value), as a delegated run does before
/// anything else (sudo's `env_reset` with a shorter list). Changing the environment is only
/// sound while no other thread can read it, so this panics when /proc/self/status shows more
/// than one thread in the process (a caller's bug, not an input error).
pub fn reset_environment(keep: &[(String, String)]) {
    let threads = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<u32>().ok())
        });
    assert!(
        threads.is_none_or(|n| n == 1),
        "privilege::reset_environment called with {threads:?} threads; it needs a single thread"
    );
    xtnl_sys::reset_environment(keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(pairs: &[(usize, usize)]) -> Vec<u8> {
        pairs
            .iter()
            .flat_map(|&(k, v)| [k.to_ne_bytes(), v.to_ne_bytes()])
            .flatten()
            .collect()
    }

    #[test]
    fn auxv_lookup() {
        let v = vector(&[(33, 7), (23, 1), (0, 0)]);
        assert_eq!(auxv_value(&v, AT_SECURE), Some(1));
        let v = vector(&[(33, 7), (0, 0), (23, 1)]);
        assert_eq!(
            auxv_value(&v, AT_SECURE),
            None,
            "entries after AT_NULL do not count"
        );
    }

    #[test]
    fn this_test_process_is_not_secure() {
        // Run by root (or any user) without setuid or file capabilities.
        let bytes = std::fs::read("/proc/self/auxv").unwrap();
        assert_eq!(auxv_value(&bytes, AT_SECURE), Some(0));
        assert!(!at_secure());
    }

    fn ids(uid: u32, euid: u32) -> Ids {
        Ids {
            uid,
            euid,
            gid: 0,
            egid: 0,
        }
    }

    #[test]
    fn classification() {
        let none = |_: &str| None;
        assert_eq!(classify(ids(0, 0), false, &none).elevation, Elevation::None);
        let user = Ids {
            uid: 1000,
            euid: 1000,
            gid: 1000,
            egid: 1000,
        };
        assert_eq!(classify(user, false, &none).elevation, Elevation::None);
        let setuid = classify(ids(1000, 0), false, &none);
        assert_eq!(
            (setuid.elevation, setuid.via()),
            (Elevation::Secure, "setuid")
        );
        let caps = classify(user, true, &none);
        assert_eq!(
            (caps.elevation, caps.via()),
            (Elevation::Secure, "capabilities")
        );
        // A setgid run (real gid differs) is delegated even without AT_SECURE.
        let setgid = Ids { egid: 0, ..user };
        assert_eq!(classify(setgid, false, &none).elevation, Elevation::Secure);
        let sudo = classify(ids(0, 0), false, &|n| {
            (n == "SUDO_UID").then(|| "1000".into())
        });
        assert_eq!((sudo.uid, sudo.via()), (1000, "sudo"));
        let pk = classify(ids(0, 0), false, &|n| {
            (n == "PKEXEC_UID").then(|| "1001".into())
        });
        assert_eq!((pk.uid, pk.via()), (1001, "pkexec"));
        let doas = classify(ids(0, 0), false, &|n| {
            (n == "DOAS_USER").then(|| "nobody".into())
        });
        assert_eq!(doas.elevation, Elevation::Tool(Tool::Doas));
        assert_ne!(doas.uid, 0);
        let ghost = classify(ids(0, 0), false, &|n| {
            (n == "DOAS_USER").then(|| "no-such-user-xtnl".into())
        });
        assert_eq!((ghost.uid, ghost.via()), (u32::MAX, "doas"));
        assert_eq!(
            passwd_uid(
                "root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/x\n",
                "nobody"
            ),
            Some(65534)
        );
        assert_eq!(passwd_uid("nobody2:x:5:5::/:/x\n", "nobody"), None);
        // sudo from a root shell acts for root: nothing is delegated.
        let root = classify(ids(0, 0), false, &|n| (n == "SUDO_UID").then(|| "0".into()));
        assert_eq!(root.elevation, Elevation::None);
        // SUDO_UID set by an unprivileged user for itself means nothing.
        assert_eq!(
            classify(user, false, &|_| Some("5".into())).elevation,
            Elevation::None
        );
    }
}
