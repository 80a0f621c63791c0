//! Who is running xtnl, and on whose behalf: the facts the privileged-helper safety rules
//! depend on (see the README's "Running as a privileged helper").
//!
//! Secure mode is the kernel's own verdict, `AT_SECURE` in the auxiliary vector: it is 1 when
//! the program was started setuid or setgid, or gained file capabilities (the Linux ELF loader
//! sets it from `bprm->secureexec`, which the commoncap LSM sets whenever an exec raises
//! capabilities, and `setup_new_exec` whenever the credentials changed). glibc keys
//! `__libc_enable_secure`/`secure_getenv` on the same value. We read it from
//! `/proc/self/auxv` (pairs of native `unsigned long`), which needs no `unsafe` call; when that
//! file cannot be read the answer is "secure" (fail closed).
//!
//! A delegated run is one where a root process acts for someone else: secure mode, or sudo
//! (real uid 0 with `SUDO_UID` naming another user; sudo always sets that variable itself,
//! and only root could forge it, which would only restrict root). In a delegated run the
//! caller's own settings that could widen what it may do are ignored.

use std::sync::OnceLock;

/// `AT_SECURE` from `<linux/auxvec.h>`.
const AT_SECURE: u64 = 23;
/// `AT_NULL`, the vector's terminator.
const AT_NULL: u64 = 0;

/// How this process came to hold its privileges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elevation {
    /// Started normally by whoever runs it (root, or an unprivileged user with no extra
    /// privilege); nothing is delegated.
    None,
    /// `AT_SECURE`: setuid, setgid or file capabilities.
    Secure,
    /// Real and effective uid 0 under sudo for a non-root user.
    Sudo,
    /// A request to `xtnl serve` over its unix socket: the uid is the peer's
    /// (`SO_PEERCRED`), the service acts for it.
    Socket,
}

/// The identity an audit line names and the mode the safety rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invoker {
    /// The user on whose behalf xtnl runs: the real uid, or sudo's `SUDO_UID`.
    pub uid: u32,
    /// The effective uid the process runs with.
    pub euid: u32,
    pub elevation: Elevation,
}

impl Invoker {
    /// Whether the caller's options and environment must not widen what it may do.
    pub fn delegated(&self) -> bool {
        self.elevation != Elevation::None
    }
}

/// This process's invoker, computed once.
pub fn invoker() -> Invoker {
    static INVOKER: OnceLock<Invoker> = OnceLock::new();
    *INVOKER.get_or_init(|| {
        let uid = nix::unistd::getuid().as_raw();
        let euid = nix::unistd::geteuid().as_raw();
        let secure = at_secure();
        classify(uid, euid, secure, || {
            std::env::var("SUDO_UID").ok().and_then(|v| v.parse().ok())
        })
    })
}

/// Whether the kernel started this process in secure mode (`AT_SECURE`).
pub fn secure_mode() -> bool {
    invoker().elevation == Elevation::Secure
}

/// Whether this run is delegated (secure mode or sudo for a non-root user).
pub fn delegated() -> bool {
    invoker().delegated()
}

fn classify(uid: u32, euid: u32, secure: bool, sudo_uid: impl FnOnce() -> Option<u32>) -> Invoker {
    let elevation = if secure || uid != euid {
        Elevation::Secure
    } else if uid == 0 {
        match sudo_uid() {
            Some(caller) if caller != 0 => {
                return Invoker {
                    uid: caller,
                    euid,
                    elevation: Elevation::Sudo,
                };
            }
            _ => Elevation::None,
        }
    } else {
        Elevation::None
    };
    Invoker {
        uid,
        euid,
        elevation,
    }
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

    #[test]
    fn classification() {
        let none = || None;
        assert_eq!(classify(0, 0, false, none).elevation, Elevation::None);
        assert_eq!(classify(1000, 1000, false, none).elevation, Elevation::None);
        assert_eq!(classify(1000, 0, false, none).elevation, Elevation::Secure);
        assert_eq!(
            classify(1000, 1000, true, none).elevation,
            Elevation::Secure
        );
        let sudo = classify(0, 0, false, || Some(1000));
        assert_eq!((sudo.uid, sudo.elevation), (1000, Elevation::Sudo));
        // sudo from a root shell acts for root: nothing is delegated.
        assert_eq!(classify(0, 0, false, || Some(0)).elevation, Elevation::None);
        // SUDO_UID set by an unprivileged user for itself means nothing.
        assert_eq!(
            classify(1000, 1000, false, || Some(5)).elevation,
            Elevation::None
        );
    }
}
