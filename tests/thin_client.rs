//! xtnl under an iptables name as a thin client of a running `xtnl serve` (issue 22; see
//! docs/serve.md, "The drop-in as a thin client"): the agent's command stream through the
//! service prints the same bytes, exits with the same statuses and leaves the same ruleset as
//! iptables-nft (and as xtnl's own process); the service is proven to have served it; a
//! service absent, dead, hung or untrusted, another network namespace, another lock
//! environment or a policy refusal leave the command to the process itself, which behaves as
//! it always did.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{in_netns, private_lock_path, run_env, save_undated, xtnl_bin};
use serde_json::{Value, json};

/// A fresh directory (root's, mode `mode`) holding an `iptables` link to xtnl.
fn dir(tag: &str, mode: u32) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "thin-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
    std::os::unix::fs::symlink(xtnl_bin(), d.join("iptables")).unwrap();
    d
}

/// `xtnl serve --socket DIR/xtnl.sock` in the calling thread's namespace.
struct Service {
    child: Child,
    socket: PathBuf,
}

impl Service {
    fn start(dir: &Path, lock: &str, pre: &[&str], args: &[&str]) -> Service {
        let socket = dir.join("xtnl.sock");
        let child = Command::new(xtnl_bin())
            .args(pre)
            .args(["--audit", "off", "serve", "--socket"])
            .arg(&socket)
            .args(args)
            .env("XTABLES_LOCKFILE", lock)
            .env("XTNL_BACKEND", "nft")
            .env_remove("XTNL_LOCK_WAIT")
            .env_remove("LISTEN_FDS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn xtnl serve");
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "xtnl serve did not listen");
            std::thread::sleep(Duration::from_millis(5));
        }
        Service { child, socket }
    }

    /// Requests the service has executed (its `ping` counts itself).
    fn requests(&self) -> u64 {
        let mut s = UnixStream::connect(&self.socket).unwrap();
        s.write_all(b"{\"ping\":{}}\n").unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        v["server"]["requests"]
            .as_u64()
            .expect("ping counts requests")
            - 1
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `program args` with the lock and socket environment of a client.
fn client(
    program: &Path,
    args: &[&str],
    lock: &str,
    socket: &Path,
    more: &[(&str, &str)],
) -> Output {
    let mut env = vec![
        ("XTABLES_LOCKFILE", lock),
        ("XTNL_BACKEND", "nft"),
        ("XTNL_SERVE_SOCKET", socket.to_str().unwrap()),
    ];
    env.extend_from_slice(more);
    run_env(program.to_str().unwrap(), args, &env)
}

/// (status, stdout, stderr), stderr with the program's path named as iptables names it.
fn seen(o: &Output) -> (Option<i32>, String, String) {
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The agent's commands: a reservation's set-up and teardown (VCL's cycle), listings, and
/// the refusals an agent meets (exists, missing, busy, a bad option, a check that finds
/// nothing).
fn stream() -> Vec<Vec<&'static str>> {
    let lines: [&str; 24] = [
        "-t nat -N vcld-1",
        "-t nat -I PREROUTING -j vcld-1 -m comment --comment VCL:vcld-1",
        "-t nat -I vcld-1 -p tcp --dport 50443 -j DNAT --to-destination 192.0.2.3:3389",
        "-t nat -I vcld-1 -p udp --dport 50444 -j DNAT --to-destination 192.0.2.3:3389",
        "-t nat -S vcld-1",
        "-t nat -S PREROUTING 1",
        "-t nat -L vcld-1 -n",
        "-t nat -C vcld-1 -p tcp --dport 50443 -j DNAT --to-destination 192.0.2.3:3389",
        "-t nat -C vcld-1 -p tcp --dport 1 -j DNAT --to-destination 192.0.2.3:3389",
        "-t nat -N vcld-1",
        "-t nat -X vcld-1",
        "-t nat -X vcld-9",
        "-t nat -D PREROUTING -j vcld-9",
        "-t nat -Q vcld-1",
        "-t nat -S vcld-9",
        "-t nat -D PREROUTING -j vcld-1 -m comment --comment VCL:vcld-1",
        "-t nat -F vcld-1",
        "-t nat -X vcld-1",
        "-t nat -N vcld-2",
        "-t nat -A vcld-2 -s 198.51.100.0/24 -j ACCEPT",
        "-t filter -P FORWARD DROP",
        // the extensions' warnings on stderr, also before a refusal
        "-A INPUT -m time --localtz -j NFLOG --nflog-range 5",
        "-A NOPE -m time --localtz -j NFLOG --nflog-range 5",
        "-S",
    ];
    lines.iter().map(|l| l.split(' ').collect()).collect()
}

/// The same stream through the thin client and through iptables-nft (and xtnl's own
/// process, `XTNL_NO_SERVE=1`), each in a namespace of its own: the same bytes on stdout and
/// stderr, the same statuses, the same saved ruleset; and every command was served.
#[test]
fn the_agents_stream_through_the_service_is_iptables_nfts() {
    common::require_kernel!();
    let d = dir("diff", 0o755);
    let theirs = in_netns(|| {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        let out: Vec<_> = stream()
            .iter()
            .map(|a| seen(&run_env("iptables-nft", a, &[("XTABLES_LOCKFILE", lock)])))
            .collect();
        (out, save_undated("iptables-nft-save", &[]))
    });
    let dd = d.clone();
    let local = in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        let none = dd.join("nothing-here.sock");
        let out: Vec<_> = stream()
            .iter()
            .map(|a| {
                seen(&client(
                    &dd.join("iptables"),
                    a,
                    lock,
                    &none,
                    &[("XTNL_NO_SERVE", "1")],
                ))
            })
            .collect();
        (out, save_undated("iptables-nft-save", &[]))
    });
    let dd = d.clone();
    let (ours, served) = in_netns(move || {
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        let svc = Service::start(&dd, lock, &[], &[]);
        let before = svc.requests();
        let out: Vec<_> = stream()
            .iter()
            .map(|a| seen(&client(&dd.join("iptables"), a, lock, &svc.socket, &[])))
            .collect();
        let served = svc.requests() - before - 1;
        ((out, save_undated("iptables-nft-save", &[])), served)
    });
    for (i, a) in stream().iter().enumerate() {
        assert_eq!(
            ours.0[i],
            theirs.0[i],
            "`iptables {}`: thin client left, iptables-nft right",
            a.join(" ")
        );
        assert_eq!(
            ours.0[i],
            local.0[i],
            "`iptables {}`: thin client left, xtnl's process right",
            a.join(" ")
        );
    }
    assert!(
        ours.0.iter().any(|(s, _, _)| *s != Some(0)),
        "the stream has refusals"
    );
    assert_eq!(
        ours.1, theirs.1,
        "saved rulesets: thin client left, iptables-nft right"
    );
    // All but `-Q`, which the client's own parse refuses before it connects (the refusal
    // is the process's, compared above).
    assert_eq!(
        served,
        stream().len() as u64 - 1,
        "every command that parses went through the service"
    );
}

/// Runs `iptables -t nat -N keep` through a client whose socket is `socket`; the command
/// must have run (locally) exactly once, at once (well within `bound`).
fn runs_here(tag: &str, d: &Path, socket: &Path, bound: Duration) {
    let lock = private_lock_path();
    let lock = lock.to_str().unwrap();
    let t = Instant::now();
    let o = client(
        &d.join("iptables"),
        &["-t", "nat", "-N", "keep"],
        lock,
        socket,
        &[],
    );
    let took = t.elapsed();
    assert_eq!(seen(&o), (Some(0), String::new(), String::new()), "{tag}");
    assert!(took < bound, "{tag}: took {took:?}, more than {bound:?}");
    let o = client(
        &d.join("iptables"),
        &["-t", "nat", "-N", "keep"],
        lock,
        socket,
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{tag}: the chain was made once: {o:?}"
    );
    let o = client(
        &d.join("iptables"),
        &["-t", "nat", "-X", "keep"],
        lock,
        socket,
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{tag}: {o:?}");
}

/// A fake service: accepts every connection, reads its line, and (when `answer`) answers it
/// as a service that served it with `FAKE` on stdout would; else never answers.
fn fake(socket: &Path, answer: bool) -> std::thread::JoinHandle<()> {
    let l = UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().take(8) {
            let Ok(mut s) = s else { return };
            let mut line = String::new();
            let _ = BufReader::new(s.try_clone().unwrap()).read_line(&mut line);
            if answer {
                let _ = writeln!(s, "{}", json!({"id": null, "started": true}));
                let _ = writeln!(
                    s,
                    "{}",
                    json!({"id": null, "version": 1, "ok": true, "status": 0, "stdout": "FAKE\n", "stderr": ""})
                );
            }
            held.push(s);
        }
    })
}

/// No socket, a dead service's (connect refused), a service that accepts and never
/// answers, a socket in a directory others may write, a socket another uid owns: the
/// command runs here, once; at once when there is nothing to connect to, within the client's
/// bound (2 s) when the service does not start it.
#[test]
fn an_absent_dead_hung_or_untrusted_service_leaves_the_command_here() {
    in_netns(|| {
        let d = dir("fallback", 0o755);
        runs_here(
            "absent",
            &d,
            &d.join("absent.sock"),
            Duration::from_millis(1500),
        );
        // A dead service leaves its socket file: nobody listens there.
        let dead = d.join("dead.sock");
        drop(UnixListener::bind(&dead).unwrap());
        runs_here("dead", &d, &dead, Duration::from_millis(1500));
        let hung = d.join("hung.sock");
        let _h = fake(&hung, false);
        runs_here("hung", &d, &hung, Duration::from_secs(8));
        // An answering impostor is believed only where only root could have put it.
        let trusted = d.join("impostor.sock");
        let _f = fake(&trusted, true);
        let lock = private_lock_path();
        let o = client(
            &d.join("iptables"),
            &["-S"],
            lock.to_str().unwrap(),
            &trusted,
            &[],
        );
        assert_eq!(
            seen(&o).1,
            "FAKE\n",
            "a root-owned socket in a root-only directory is used"
        );
        let open = dir("open", 0o777);
        let sock = open.join("impostor.sock");
        let _o = fake(&sock, true);
        let o = client(
            &open.join("iptables"),
            &["-S"],
            lock.to_str().unwrap(),
            &sock,
            &[],
        );
        assert!(seen(&o).1.starts_with("-P INPUT ACCEPT\n"), "{o:?}");
        runs_here(
            "world-writable directory",
            &open,
            &sock,
            Duration::from_millis(1500),
        );
        let owned = d.join("owned.sock");
        let _g = fake(&owned, true);
        std::os::unix::fs::chown(&owned, Some(65534), None).unwrap();
        runs_here(
            "socket of another uid",
            &d,
            &owned,
            Duration::from_millis(1500),
        );
        // Turned off: the trusted impostor is not asked.
        let o = client(
            &d.join("iptables"),
            &["-S"],
            lock.to_str().unwrap(),
            &trusted,
            &[("XTNL_NO_SERVE", "1")],
        );
        assert!(seen(&o).1.starts_with("-P INPUT ACCEPT\n"), "{o:?}");
    });
}

/// A client in another network namespace than the service's is not served there: its
/// command changes its own namespace, not the service's.
#[test]
fn another_namespace_is_not_served() {
    common::require_kernel!();
    let d = dir("netns", 0o755);
    let lock = private_lock_path();
    let lock = lock.to_str().unwrap().to_owned();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<u64>();
    let dd = d.clone();
    let l2 = lock.clone();
    let service = std::thread::spawn(move || {
        in_netns(move || {
            let svc = Service::start(&dd, &l2, &[], &[]);
            ready_tx.send(svc.requests()).unwrap();
            rx.recv().unwrap();
            let served = svc.requests();
            let o = run_env("iptables-nft", &["-t", "nat", "-S"], &[]);
            (served, String::from_utf8_lossy(&o.stdout).into_owned())
        })
    });
    let before = ready_rx.recv().unwrap();
    let dd = d.clone();
    let mine = in_netns(move || {
        let o = client(
            &dd.join("iptables"),
            &["-t", "nat", "-N", "mine"],
            &lock,
            &dd.join("xtnl.sock"),
            &[],
        );
        assert_eq!(seen(&o), (Some(0), String::new(), String::new()));
        String::from_utf8_lossy(&run_env("iptables-nft", &["-t", "nat", "-S"], &[]).stdout)
            .into_owned()
    });
    tx.send(()).unwrap();
    let (after, theirs) = service.join().unwrap();
    assert!(mine.contains("-N mine"), "{mine}");
    assert!(!theirs.contains("-N mine"), "{theirs}");
    // Asked (one request, answered `fallback`), nothing done there; the ping counts itself.
    assert_eq!(
        after,
        before + 2,
        "the request reached the service and was refused"
    );
}

/// The xtables lock: a command through the service waits for it and gives up as the
/// process would (`-w 1`: after a second, status 4, iptables' two lines; no `-w` with
/// `XTNL_LOCK_WAIT=0`: at once), and was served; a client whose lock file is not the
/// service's is not served (the service never opens a path a client names).
#[test]
fn the_lock_is_taken_as_the_process_takes_it() {
    in_netns(|| {
        let d = dir("lock", 0o755);
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        let svc = Service::start(&d, lock, &[], &[]);
        let ipt = d.join("iptables");
        let holder = xtnl::lock::XtablesLock::new(lock, xtnl::lock::WaitPolicy::Forever)
            .acquire()
            .expect("take the lock");
        let before = svc.requests();
        let t = Instant::now();
        let thin = client(
            &ipt,
            &["-w", "1", "-t", "nat", "-N", "x"],
            lock,
            &svc.socket,
            &[],
        );
        let waited = t.elapsed();
        let served = svc.requests() - before - 1;
        let local = client(
            &ipt,
            &["-w", "1", "-t", "nat", "-N", "x"],
            lock,
            &svc.socket,
            &[("XTNL_NO_SERVE", "1")],
        );
        assert_eq!(seen(&thin), seen(&local));
        assert_eq!(thin.status.code(), Some(4));
        assert!(
            seen(&thin).2.contains("Stopped waiting after 1s."),
            "{thin:?}"
        );
        assert!(
            waited >= Duration::from_millis(900),
            "gave up after {waited:?}"
        );
        assert_eq!(served, 1, "served by the service");
        // The client's XTNL_LOCK_WAIT=0 is not the service's: not served, and the process
        // fails at once, as always.
        let before = svc.requests();
        let thin = client(
            &ipt,
            &["-t", "nat", "-N", "x"],
            lock,
            &svc.socket,
            &[("XTNL_LOCK_WAIT", "0")],
        );
        assert_eq!(svc.requests() - before - 1, 1, "asked");
        let local = client(
            &ipt,
            &["-t", "nat", "-N", "x"],
            lock,
            &svc.socket,
            &[("XTNL_LOCK_WAIT", "0"), ("XTNL_NO_SERVE", "1")],
        );
        assert_eq!(seen(&thin), seen(&local));
        assert!(
            seen(&thin)
                .2
                .contains("Perhaps you want to use the -w option?"),
            "{thin:?}"
        );
        // Another lock file: not served; the process takes that lock, which is free.
        let other = private_lock_path();
        let o = client(
            &ipt,
            &["-t", "nat", "-N", "x"],
            other.to_str().unwrap(),
            &svc.socket,
            &[],
        );
        assert_eq!(seen(&o), (Some(0), String::new(), String::new()));
        drop(holder);
        // Reads take no lock, as the process's.
        let o = client(&ipt, &["-t", "nat", "-S", "x"], lock, &svc.socket, &[]);
        assert_eq!(seen(&o).1, "-N x\n");
    });
}

const POLICY: &str = r#"
[[allow]]
table = "nat"
chains = ["vcld-*"]
verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
uids = [65534]
"#;

/// A caller the service's policy refuses gets the words and status its own process gives
/// (here, uid 65534 without CAP_NET_ADMIN: iptables-nft's permission error, status 4), byte
/// for byte; what the policy allows it, the service does for it.
#[test]
fn a_refused_caller_gets_its_own_processs_refusal() {
    in_netns(|| {
        let d = dir("policy", 0o755);
        let policy = d.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap();
        let svc = Service::start(
            &d,
            lock,
            &["--policy-file", policy.to_str().unwrap()],
            &["--socket-mode", "0666"],
        );
        let as_nobody = |args: &[&str], off: bool| {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(d.join("iptables"))
                .args(args)
                .env("XTABLES_LOCKFILE", lock)
                .env("XTNL_BACKEND", "nft")
                .env("XTNL_SERVE_SOCKET", &svc.socket);
            if off {
                c.env("XTNL_NO_SERVE", "1");
            }
            c.output().expect("run setpriv")
        };
        let refused = as_nobody(&["-t", "nat", "-N", "other"], false);
        let own = as_nobody(&["-t", "nat", "-N", "other"], true);
        assert_eq!(seen(&refused), seen(&own));
        assert_eq!(refused.status.code(), Some(4), "{refused:?}");
        assert!(
            seen(&refused)
                .2
                .contains("Permission denied (you must be root)"),
            "{refused:?}"
        );
        let allowed = as_nobody(&["-t", "nat", "-N", "vcld-7"], false);
        assert_eq!(seen(&allowed), (Some(0), String::new(), String::new()));
        let o = run_env("iptables-nft", &["-t", "nat", "-S"], &[]);
        let listed = String::from_utf8_lossy(&o.stdout);
        assert!(
            listed.contains("-N vcld-7") && !listed.contains("-N other"),
            "{listed}"
        );
    });
}

/// Agents at once: six clients, each setting up and tearing down reservations of its own
/// through the service, every command answered with status 0 and served; the ruleset ends
/// with exactly the chains they kept.
#[test]
fn agents_at_once_are_each_served_whole() {
    in_netns(|| {
        let d = dir("concurrent", 0o755);
        let lock = private_lock_path();
        let lock = lock.to_str().unwrap().to_owned();
        let svc = Service::start(&d, &lock, &[], &[]);
        let before = svc.requests();
        let ipt = d.join("iptables");
        let total: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..6)
                .map(|agent| {
                    let (ipt, lock, sock) = (&ipt, &lock, &svc.socket);
                    s.spawn(move || {
                        let mut n = 0;
                        for k in 0..4 {
                            let c = format!("vcld-{agent}{k}");
                            let jump = ["-j", &c, "-m", "comment", "--comment", &c];
                            let mut cmds: Vec<Vec<&str>> = vec![
                                vec!["-t", "nat", "-N", &c],
                                [&["-t", "nat", "-I", "PREROUTING"][..], &jump[..]].concat(),
                                vec![
                                    "-t",
                                    "nat",
                                    "-I",
                                    &c,
                                    "-p",
                                    "tcp",
                                    "--dport",
                                    "50443",
                                    "-j",
                                    "DNAT",
                                    "--to-destination",
                                    "192.0.2.3:3389",
                                ],
                            ];
                            if k != 3 {
                                cmds.push(
                                    [&["-t", "nat", "-D", "PREROUTING"][..], &jump[..]].concat(),
                                );
                                cmds.push(vec!["-t", "nat", "-F", &c]);
                                cmds.push(vec!["-t", "nat", "-X", &c]);
                            }
                            for a in &cmds {
                                let o = client(ipt, a, lock, sock, &[]);
                                assert_eq!(
                                    seen(&o),
                                    (Some(0), String::new(), String::new()),
                                    "{a:?}"
                                );
                                n += 1;
                            }
                        }
                        n
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(
            svc.requests() - before - 1,
            total as u64,
            "every command served"
        );
        let o = run_env("iptables-nft", &["-t", "nat", "-S"], &[]);
        let listed = String::from_utf8_lossy(&o.stdout).into_owned();
        let chains: Vec<&str> = listed.lines().filter(|l| l.starts_with("-N ")).collect();
        let want: Vec<String> = (0..6).map(|a| format!("-N vcld-{a}3")).collect();
        assert_eq!(chains, want, "{listed}");
        assert_eq!(
            listed.lines().filter(|l| l.contains("-j DNAT")).count(),
            6,
            "{listed}"
        );
        assert_eq!(
            listed
                .lines()
                .filter(|l| l.starts_with("-A PREROUTING"))
                .count(),
            6,
            "{listed}"
        );
    });
}
