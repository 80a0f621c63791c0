//! xtnl's only `unsafe` code, as safe wrappers: handing a netlink socket to a detached
//! process to close, the x_tables get/setsockopt calls with variable-length buffers,
//! extended attributes, the environment of a privileged run, systemd socket activation and
//! dying of SIGPIPE (each below with its reason). Every other crate of the workspace
//! forbids `unsafe`; this one is the lowest layer and imports no other xtnl crate.
//!
//! ```
//! // Not started by systemd's socket activation (no LISTEN_PID naming this process): no
//! // listener, and no error.
//! assert!(xtnl_sys::systemd_listener()?.is_none());
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Why: when a NETLINK_NETFILTER socket is released after a commit that deleted anything, the
//! kernel's release notifier waits for nf_tables' deferred destroy work, which first waits for
//! an RCU grace period (15-28 ms measured here). A short-lived command would make its caller
//! wait for that on exit. Forking needs `unsafe` (nix marks `fork` unsafe because only
//! async-signal-safe calls are allowed in the child of a multi-threaded process); the child
//! below only calls `fork`, `dup2`, `close_range`, `read`, `membarrier`, `close` and `_exit`.

#![deny(missing_docs)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

/// Closes `fd` in a detached grandchild, after this process has dropped its own copy, so
/// that the release (and any wait it implies) happens outside this process. Returns once
/// the handover is done; the socket's last reference is then the grandchild's. `probe` is a
/// complete GETGEN request (no ACK) the grandchild sends on the socket to tell whether the
/// namespace committed while it waited (see `linger`).
pub fn close_in_detached_process(socket: impl IntoRawFd, probe: &[u8]) -> io::Result<()> {
    // SAFETY: `into_raw_fd` gave up ownership without closing; we are now its only owner.
    let fd = unsafe { OwnedFd::from_raw_fd(socket.into_raw_fd()) };
    let (gate_r, gate_w) = nix::unistd::pipe().map_err(io::Error::from)?;
    let raw = fd.as_raw_fd();
    let gate = gate_r.as_raw_fd();
    // SAFETY: the child only performs async-signal-safe system calls (see module docs) on
    // descriptors it inherited, and leaves with `_exit` so no destructor or atexit handler
    // of the parent's state runs in it.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        unsafe {
            if libc::fork() == 0 {
                // Grandchild: keep only the socket (as fd 0) and the gate (as fd 1), so that
                // no pipe a caller waits on (stdout, stderr) stays open here.
                libc::dup2(raw, 0);
                libc::dup2(gate, 1);
                libc::syscall(libc::SYS_close_range, 2u32, u32::MAX, 0u32);
                let mut b = 0u8;
                // Wait until the parent has closed its copies (EOF on the gate), so that the
                // final release is ours and not the parent's.
                while libc::read(1, (&mut b as *mut u8).cast(), 1) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
                // Linger: let the kernel's deferred destroy work for our commit run before
                // the release (see `linger`), so that the release does not flush it while
                // holding the namespace's commit mutex.
                linger(0, probe);
                libc::close(0);
            }
            libc::_exit(0);
        }
    }
    drop(gate_r);
    drop(fd);
    drop(gate_w);
    // The intermediate child exits at once; reaping it keeps no zombie behind.
    let _ = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid), None);
    Ok(())
}

/// `membarrier(2)`'s `MEMBARRIER_CMD_GLOBAL` (not in the libc crate): returns after an RCU
/// grace period (the kernel implements it with `synchronize_rcu()`).
const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1;

/// Rounds of two grace periods the closer waits at most for a quiet namespace.
const LINGER_ROUNDS: usize = 8;

/// Waits, in the detached closer, until nf_tables has no deferred destroy work pending in
/// the namespace: two RCU grace periods (`membarrier`) during which nothing committed (the
/// GETGEN answer to `probe` on socket `fd` unchanged). Why: that work waits for a grace
/// period, and a NETLINK_NETFILTER socket released while any is pending, this process's or
/// another's, makes the kernel's release notifier flush it with the namespace's commit mutex
/// held, so the next commit, of any process, waits for the rest of the grace period
/// (measured: `-N` after `-X`, `-F` after `-D`, 2-16 ms each in a back-to-back stream). Two
/// grace periods: work queued just before ours may start its own wait a little after. At
/// most [`LINGER_ROUNDS`] rounds under a steady stream of commits; if the kernel refuses
/// `membarrier` (a `nohz_full` kernel) or the probe, the socket is closed at once. Only
/// async-signal-safe system calls, on the stack.
unsafe fn linger(fd: libc::c_int, probe: &[u8]) {
    let mut before = [0u8; 512];
    // SAFETY: `before` is a live buffer of its length; `fd` is the closer's socket.
    let mut n_before = unsafe { generation_reply(fd, probe, &mut before) };
    for _ in 0..LINGER_ROUNDS {
        for _ in 0..2 {
            // SAFETY: membarrier takes no pointers; a failure leaves nothing behind.
            if unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0u32, 0i32) }
                != 0
            {
                return;
            }
        }
        let mut after = [0u8; 512];
        // SAFETY: as above.
        let n_after = unsafe { generation_reply(fd, probe, &mut after) };
        let (Some(a), Some(b)) = (n_after, n_before) else {
            return;
        };
        if after[..a] == before[..b] {
            return;
        }
        before = after;
        n_before = n_after;
    }
}

/// Sends `probe` on `fd` (after dropping replies still queued) and reads the answer, which
/// the kernel queued inside the send, into `buf`: its length, or None.
unsafe fn generation_reply(fd: libc::c_int, probe: &[u8], buf: &mut [u8]) -> Option<usize> {
    // SAFETY (all calls): `buf` and `probe` are live slices of the lengths passed.
    unsafe {
        while libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) >= 0 {}
        if libc::send(fd, probe.as_ptr().cast(), probe.len(), 0) != probe.len() as isize {
            return None;
        }
        let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT);
        usize::try_from(n)
            .ok()
            .filter(|n| *n > 0 && *n <= buf.len())
    }
}

// x_tables get/setsockopt.
//
// Why `unsafe`: the x_tables interface (`IPT_SO_GET_ENTRIES`, `IPT_SO_SET_REPLACE`, ...)
// passes variable-length structs whose length the kernel checks against `optlen`. nix's
// generic socket options and socket2 only carry fixed-size values, so the two calls are made
// here with a byte buffer, whose pointer and length always describe the same live slice.

/// `getsockopt(fd, level, name, buf, &len)`: the kernel reads its request from `buf` and
/// writes its answer over it; returns the length the kernel reported.
pub fn getsockopt_buf(
    fd: std::os::fd::BorrowedFd<'_>,
    level: i32,
    name: i32,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut len = libc::socklen_t::try_from(buf.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?;
    // SAFETY: `buf` is a live, writable slice of exactly `len` bytes for the whole call, and
    // the kernel writes at most `len` bytes into it.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}

/// `setsockopt(fd, level, name, buf, len)` for a plain byte buffer (no user pointers inside).
pub fn setsockopt_buf(
    fd: std::os::fd::BorrowedFd<'_>,
    level: i32,
    name: i32,
    buf: &[u8],
) -> io::Result<()> {
    let len = libc::socklen_t::try_from(buf.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?;
    // SAFETY: `buf` is a live slice of exactly `len` bytes for the whole call; the kernel
    // only reads it.
    let rc = unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, buf.as_ptr().cast(), len) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `setsockopt(IPT_SO_SET_REPLACE)`: `replace` is an `ipt_replace` (or `ip6t_replace`) whose
/// `counters` field, at `counters_at`, must point at room for `num_counters` `xt_counters`
/// where the kernel writes the replaced table's counters. The pointer is written here, right
/// before the call, to `old_counters`, so it can never outlive the buffer it points into;
/// and `num_counters` (the u32 at `num_counters_at`) is checked against its size, so the
/// kernel cannot write past it.
pub fn setsockopt_replace(
    fd: std::os::fd::BorrowedFd<'_>,
    level: i32,
    name: i32,
    replace: &mut [u8],
    (num_counters_at, counters_at): (usize, usize),
    old_counters: &mut [u8],
) -> io::Result<()> {
    const XT_COUNTERS_SIZE: usize = 16;
    let num = replace
        .get(num_counters_at..num_counters_at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_ne_bytes)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    if (num as usize).saturating_mul(XT_COUNTERS_SIZE) > old_counters.len() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // The field is a pointer of the target's size (8 bytes, or 4 on a 32-bit target).
    let ptr = (old_counters.as_mut_ptr() as usize).to_ne_bytes();
    let field = replace
        .get_mut(counters_at..counters_at + ptr.len())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    field.copy_from_slice(&ptr);
    let len = libc::socklen_t::try_from(replace.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?;
    // SAFETY: `replace` is live for the call; the pointer inside it is to `old_counters`,
    // which is live and writable for the call and holds at least `num_counters *
    // sizeof(struct xt_counters)` bytes (checked above), the most the kernel writes there.
    let rc = unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, replace.as_ptr().cast(), len) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `getxattr(path, name)`: the value of an extended attribute of `path` (symbolic links
/// followed), `None` when the file has no such attribute. At most 256 bytes are read (file
/// capabilities, the one use, are 20 or 24 bytes); a longer value is an error (ERANGE).
///
/// Why `unsafe`: std has no extended attributes, and nix 0.32 none either.
pub fn get_xattr(path: &std::path::Path, name: &std::ffi::CStr) -> io::Result<Option<Vec<u8>>> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut buf = vec![0u8; 256];
    // SAFETY: both strings are NUL-terminated and live for the call; `buf` is a live,
    // writable slice of `buf.len()` bytes, the most the kernel writes.
    let n = unsafe {
        libc::getxattr(
            c_path.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENODATA) => Ok(None),
            _ => Err(e),
        };
    }
    buf.truncate(n as usize);
    Ok(Some(buf))
}

// Environment reset of a delegated run.
//
// Why `unsafe`: `std::env::remove_var`/`set_var` are unsafe since Rust 2024 because another
// thread may read the environment at the same time (glibc's `getenv` is not synchronised with
// `setenv`). The binary calls this from `cli::run` before it starts any thread.

/// Replaces the whole environment by `keep` (name, value): what sudo's `env_reset` does, with
/// an even shorter list. Must be called while the process has a single thread.
pub fn reset_environment(keep: &[(String, String)]) {
    let names: Vec<std::ffi::OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    for name in names {
        // SAFETY: called while the process is single-threaded (see above), so no other
        // thread reads or writes the environment meanwhile.
        unsafe { std::env::remove_var(&name) };
    }
    for (k, v) in keep {
        // SAFETY: as above.
        unsafe { std::env::set_var(k, v) };
    }
}

/// The first file descriptor systemd passes to a socket-activated service.
const SD_LISTEN_FDS_START: i32 = 3;

/// The listening unix stream socket systemd passed to this process (socket activation:
/// `LISTEN_PID` is this process and `LISTEN_FDS` at least 1), or `None` when there is none.
/// Descriptor 3 is taken over only after checking that it is an open `AF_UNIX`
/// `SOCK_STREAM` socket, so a stray descriptor is never mistaken for one.
pub fn systemd_listener() -> io::Result<Option<std::os::unix::net::UnixListener>> {
    let pid_ok = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
        == Some(std::process::id());
    let fds = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    if !pid_ok || fds == 0 {
        return Ok(None);
    }
    let int_opt = |opt: libc::c_int| -> io::Result<libc::c_int> {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `v` and `len` are valid for writes of the sizes given.
        let r = unsafe {
            libc::getsockopt(
                SD_LISTEN_FDS_START,
                libc::SOL_SOCKET,
                opt,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(v)
    };
    let domain = int_opt(libc::SO_DOMAIN)?;
    let kind = int_opt(libc::SO_TYPE)?;
    let listening = int_opt(libc::SO_ACCEPTCONN)?;
    if domain != libc::AF_UNIX || kind != libc::SOCK_STREAM || listening == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "LISTEN_FDS: descriptor 3 is not a listening unix stream socket \
             (the socket unit needs ListenStream=/path)",
        ));
    }
    // SAFETY: descriptor 3 is open (getsockopt succeeded), systemd handed it to this process
    // and nothing else in it owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(SD_LISTEN_FDS_START) };
    nix::fcntl::fcntl(
        &fd,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    )
    .map_err(io::Error::from)?;
    Ok(Some(std::os::unix::net::UnixListener::from(fd)))
}

/// Ends the process as a C program that writes to a closed pipe ends (iptables-save piped
/// into `head`): killed by SIGPIPE, silently. Rust's runtime ignores SIGPIPE, so a write to
/// a closed pipe returns EPIPE instead; the caller saw that and calls this. The default
/// action is restored and the signal raised; `_exit(128 + SIGPIPE)` follows should the
/// signal somehow not end the process.
pub fn die_of_sigpipe() -> ! {
    // SAFETY: setting a signal's disposition to SIG_DFL and raising it are async-signal-safe
    // and touch no memory of ours.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
        libc::_exit(128 + libc::SIGPIPE)
    }
}

/// Hands the whole free pages of the heap back to the kernel (glibc's `malloc_trim(0)`),
/// so that what a process freed counts in its resident memory no longer. A restore of
/// 80,000 rules frees each planned operation's rule as it is encoded into the batch, but
/// the batch grows in pages of its own (a large buffer is mapped apart from the heap): the
/// freed rules would stay resident beside it. Elsewhere than glibc: nothing.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only walks the allocator's own free lists and releases pages
    // no allocation uses; it touches no memory of ours and takes the allocator's locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
