//! The xtables lock against the real `iptables-legacy`, `iptables-legacy-restore` and
//! `flock(1)`: each side must see the other's lock. Every test but the last uses its own lock
//! file (passed to the children as `XTABLES_LOCKFILE`), and everything that runs iptables does
//! so in a network namespace of its own, so the tests can run in parallel and never touch the
//! host's ruleset.

mod common;

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use xtnl::Error;
use xtnl::lock::{DEFAULT_LOCK_PATH, LockGuard, WaitPolicy, XtablesLock};

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// One FailFast attempt: `Ok(guard)`, `Err(true)` if busy; panics on any other failure.
fn try_once(path: &Path) -> Result<LockGuard, bool> {
    match XtablesLock::new(path, WaitPolicy::FailFast).acquire() {
        Ok(g) => Ok(g),
        Err(Error::LockBusy { .. }) => Err(true),
        Err(e) => panic!("unexpected error locking {}: {e:?}", path.display()),
    }
}

/// Polls until someone else holds the lock at `path`; false if that did not happen in `limit`.
fn wait_until_held_elsewhere(path: &Path, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if try_once(path).is_err() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Waits for a child to exit, killing it (and failing) if it takes longer than `limit`.
fn wait_bounded(child: &mut Child, what: &str, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `flock -x <path> sleep <secs>`, returned once it holds the lock.
fn spawn_flock_holder(path: &Path, secs: &str) -> Child {
    let mut child = Command::new("flock")
        .args(["-x", path_str(path), "sleep", secs])
        .spawn()
        .expect("spawn flock(1)");
    if !wait_until_held_elsewhere(path, Duration::from_secs(5)) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("flock(1) never took {}", path.display());
    }
    child
}

#[test]
fn iptables_legacy_waits_for_our_lock_then_gives_up() {
    let path = common::private_lock_path();
    common::in_netns(move || {
        let p = path_str(&path).to_owned();
        let env = [("XTABLES_LOCKFILE", p.as_str())];
        let args = ["-w", "1", "-t", "nat", "-L", "-n"];

        let guard = XtablesLock::new(&path, WaitPolicy::FailFast)
            .acquire()
            .expect("take lock");
        let start = Instant::now();
        let held = common::run_env("iptables-legacy", &args, &env);
        let elapsed = start.elapsed();
        drop(guard);

        let after = common::run_env("iptables-legacy", &args, &env);

        let stderr = String::from_utf8_lossy(&held.stderr);
        assert_eq!(
            held.status.code(),
            Some(4),
            "while we hold the lock; stderr: {stderr}"
        );
        assert!(
            stderr.contains("Another app is currently holding the xtables lock"),
            "stderr: {stderr}"
        );
        assert!(
            elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5),
            "iptables -w 1 gave up after {elapsed:?}"
        );
        assert!(
            after.status.success(),
            "after we released the lock: {} {}",
            after.status,
            String::from_utf8_lossy(&after.stderr)
        );
        assert!(String::from_utf8_lossy(&after.stdout).contains("Chain POSTROUTING"));
    });
}

#[test]
fn wait_policies_against_flock_holder() {
    let path = common::private_lock_path();
    let spawned = Instant::now();
    let mut holder = spawn_flock_holder(&path, "1.5");

    // FailFast: one try, no waiting.
    let start = Instant::now();
    let r = XtablesLock::new(&path, WaitPolicy::FailFast).acquire();
    let fail_fast_took = start.elapsed();
    match r {
        Err(Error::LockBusy {
            path: p,
            waited: None,
        }) => assert_eq!(p, path),
        other => panic!("FailFast while held by flock(1): {other:?}"),
    }
    assert!(
        fail_fast_took < Duration::from_millis(200),
        "FailFast took {fail_fast_took:?}"
    );

    // Timeout: keeps trying for the whole limit, then reports it.
    let limit = Duration::from_millis(300);
    let start = Instant::now();
    let r = XtablesLock::new(&path, WaitPolicy::Timeout(limit)).acquire();
    let timeout_took = start.elapsed();
    match r {
        Err(Error::LockBusy {
            waited: Some(w), ..
        }) => assert_eq!(w, limit),
        other => panic!("Timeout(300ms) while held by flock(1): {other:?}"),
    }
    assert!(timeout_took >= limit, "gave up after {timeout_took:?}");
    assert!(
        timeout_took < Duration::from_secs(1),
        "gave up only after {timeout_took:?}"
    );

    // Forever: blocks until the holder exits. Run on a thread so a hang fails the test.
    let (tx, rx) = mpsc::channel();
    let forever_path = path.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        let r = XtablesLock::new(&forever_path, WaitPolicy::Forever).acquire();
        let _ = tx.send((r, start.elapsed(), Instant::now()));
    });
    let received = rx.recv_timeout(Duration::from_secs(5));
    let status = wait_bounded(&mut holder, "flock(1) holder", Duration::from_secs(5));
    let (r, waited, got_at) = received.expect("Forever acquire never returned");
    let guard = r.expect("Forever acquire after the holder exited");
    assert!(status.success(), "flock(1) holder: {status}");
    assert_eq!(guard.path(), path.as_path());
    assert!(
        waited >= Duration::from_millis(300),
        "Forever returned after only {waited:?}"
    );
    assert!(
        got_at.duration_since(spawned) >= Duration::from_millis(1400),
        "lock granted {:?} after the 1.5 s holder started",
        got_at.duration_since(spawned)
    );
}

#[test]
fn iptables_legacy_restore_holds_lock_from_table_line_to_commit() {
    let path = common::private_lock_path();
    common::in_netns(move || {
        let mut child = Command::new("iptables-legacy-restore")
            .arg("-w")
            .env("XTABLES_LOCKFILE", &path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn iptables-legacy-restore");
        let mut stdin = child.stdin.take().expect("stdin pipe");

        // Before the first *table line it must not hold the lock.
        std::thread::sleep(Duration::from_millis(100));
        let before = try_once(&path).is_ok();

        stdin.write_all(b"*filter\n").expect("write *filter");
        stdin.flush().expect("flush");
        let held_during_table = wait_until_held_elsewhere(&path, Duration::from_secs(5));

        stdin.write_all(b"COMMIT\n").expect("write COMMIT");
        drop(stdin);
        wait_bounded(
            &mut child,
            "iptables-legacy-restore",
            Duration::from_secs(5),
        );
        let out = child.wait_with_output().expect("collect output");
        let after = try_once(&path);

        assert!(
            before,
            "lock was held before iptables-legacy-restore read a table line"
        );
        assert!(
            held_during_table,
            "lock never held while the *filter section was open"
        );
        assert!(
            out.status.success(),
            "iptables-legacy-restore: {} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(after.is_ok(), "lock still busy after COMMIT and exit");
    });
}

#[test]
fn creates_missing_file_0600_and_opens_read_only() {
    let path = common::private_lock_path();
    assert!(!path.exists());
    let guard = XtablesLock::new(&path, WaitPolicy::FailFast)
        .acquire()
        .expect("take lock");
    let mode = std::fs::metadata(&path)
        .expect("lock file exists")
        .permissions()
        .mode();
    let flags = nix::fcntl::fcntl(guard.as_fd(), nix::fcntl::FcntlArg::F_GETFL).expect("F_GETFL");
    let fd_flags =
        nix::fcntl::fcntl(guard.as_fd(), nix::fcntl::FcntlArg::F_GETFD).expect("F_GETFD");
    // Root bypasses file permissions, so check the access mode of the descriptor itself.
    assert_eq!(
        flags & libc::O_ACCMODE,
        libc::O_RDONLY,
        "lock file not opened read-only"
    );
    assert_ne!(
        fd_flags & libc::FD_CLOEXEC,
        0,
        "lock fd would leak into children"
    );
    drop(guard);
    assert_eq!(mode & 0o777, 0o600, "created with mode {mode:o}");
}

#[test]
fn locks_existing_read_only_file() {
    let path: PathBuf = common::private_lock_path();
    std::fs::write(&path, b"").expect("create lock file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).expect("chmod 0400");

    let guard = XtablesLock::new(&path, WaitPolicy::FailFast)
        .acquire()
        .expect("lock 0400 file");
    let while_held = common::run("flock", &["-n", path_str(&path), "true"]);
    drop(guard);
    let after = common::run("flock", &["-n", path_str(&path), "true"]);
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode();

    assert_eq!(
        while_held.status.code(),
        Some(1),
        "flock -n got the lock we hold"
    );
    assert_eq!(
        after.status.code(),
        Some(0),
        "flock -n failed after release"
    );
    assert_eq!(
        mode & 0o777,
        0o400,
        "existing file's mode changed to {mode:o}"
    );
}

/// flock locks belong to an open file description, so a second acquire in the same process
/// (even the same thread) conflicts like another program would: the lock is not re-entrant.
#[test]
fn second_acquire_in_same_process_is_busy() {
    let path = common::private_lock_path();
    let first = XtablesLock::new(&path, WaitPolicy::FailFast)
        .acquire()
        .expect("first lock");
    let fail_fast = XtablesLock::new(&path, WaitPolicy::FailFast).acquire();
    let timed = XtablesLock::new(&path, WaitPolicy::Timeout(Duration::from_millis(50)))
        .with_poll_interval(Duration::from_millis(5))
        .acquire();
    drop(first);
    let again = XtablesLock::new(&path, WaitPolicy::FailFast).acquire();

    assert!(
        matches!(fail_fast, Err(Error::LockBusy { waited: None, .. })),
        "{fail_fast:?}"
    );
    assert!(
        matches!(
            timed,
            Err(Error::LockBusy {
                waited: Some(_),
                ..
            })
        ),
        "{timed:?}"
    );
    assert!(again.is_ok(), "not released by drop: {again:?}");
}

/// An unopenable lock file is reported as such, not as a busy lock.
#[test]
fn unopenable_path_is_lock_file_error() {
    let dir = common::private_lock_path().with_extension("missing-dir");
    let path = dir.join("xtables.lock");
    match XtablesLock::new(&path, WaitPolicy::Forever).acquire() {
        Err(Error::LockFile { path: p, source }) => {
            assert_eq!(p, path);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("lock in a missing directory: {other:?}"),
    }
}

/// The only test on the real, host-wide lock: it holds it for a few milliseconds and checks
/// that `flock(1)` (which takes it the way iptables does) sees it, then that it is free again.
#[test]
fn real_default_lock_interops_with_flock() {
    common::require_kernel!();
    let lock = XtablesLock::new(DEFAULT_LOCK_PATH, WaitPolicy::FailFast);
    let mut guard = None;
    for _ in 0..20 {
        match lock.acquire() {
            Ok(g) => {
                guard = Some(g);
                break;
            }
            Err(Error::LockBusy { .. }) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("cannot take {DEFAULT_LOCK_PATH}: {e:?}"),
        }
    }
    let Some(guard) = guard else {
        panic!("{DEFAULT_LOCK_PATH} stayed held by another process for 1 s; cannot test interop");
    };
    let guard_path = guard.path().to_path_buf();
    let while_held = common::run("flock", &["-n", DEFAULT_LOCK_PATH, "true"]);
    drop(guard);
    let after = common::run("flock", &["-n", DEFAULT_LOCK_PATH, "true"]);

    assert_eq!(guard_path, Path::new(DEFAULT_LOCK_PATH));
    assert_eq!(
        while_held.status.code(),
        Some(1),
        "flock -n took the lock we held"
    );
    assert_eq!(
        after.status.code(),
        Some(0),
        "{DEFAULT_LOCK_PATH} still locked after drop"
    );
}
