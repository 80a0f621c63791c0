//! The crate's only `unsafe` code: handing a netlink socket to a detached process to close.
//!
//! Why: when a NETLINK_NETFILTER socket is released after a commit that deleted anything, the
//! kernel's release notifier waits for nf_tables' deferred destroy work, which first waits for
//! an RCU grace period (15-28 ms measured here). A short-lived command would make its caller
//! wait for that on exit. Forking needs `unsafe` (nix marks `fork` unsafe because only
//! async-signal-safe calls are allowed in the child of a multi-threaded process); the child
//! below only calls `fork`, `dup2`, `close_range`, `read`, `close` and `_exit`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

/// Closes `fd` in a detached grandchild, after this process has dropped its own copy, so
/// that the release (and any wait it implies) happens outside this process. Returns once
/// the handover is done; the socket's last reference is then the grandchild's.
pub fn close_in_detached_process(socket: impl IntoRawFd) -> io::Result<()> {
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
