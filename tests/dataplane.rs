//! Data plane: a reservation's DNAT forward, set up and torn down by the `xtnl` binary exactly
//! as the NAT-host agent issues it, carries real TCP traffic between three network namespaces
//! (client, NAT host, compute node), and stops carrying it after the teardown.
//!
//! Everything happens in named namespaces this test creates (names carry the process id) and
//! only on documentation addresses; the host's namespace and ruleset are never touched. The
//! namespaces are deleted by a guard's `Drop`, so also when an assertion fails.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const PUBLIC_NATHOST: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 1);
const PUBLIC_CLIENT: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 2);
const PRIVATE_NATHOST: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 1);
const PRIVATE_COMPUTE: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);
const PUBLIC_PORT: u16 = 50443;
const COMPUTE_PORT: u16 = 3389;
const BANNER: &str = "compute-node\n";
/// The listener exits on its own after this long even if nobody stops it.
const LISTENER_LIFETIME: Duration = Duration::from_secs(30);

const CHAIN: &str = "vcld-5205";
const JUMP_COMMENT: &str =
    "VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-5205";
const FORWARD_COMMENT: &str = "VCL: forward eth1:tcp/50443 --> 198.51.100.2:3389";

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `ip args...` in the host namespace (only `netns add/del` and `ip -n <ours> ...`).
fn ip(args: &[&str]) {
    let out = common::run("ip", args);
    assert!(
        out.status.success(),
        "ip {args:?} failed ({}): {}",
        out.status,
        text(&out)
    );
}

/// The three namespaces, the compute node's listener, and their cleanup.
struct Lab {
    client: String,
    nathost: String,
    compute: String,
    /// Namespaces `ip netns add` created so far (deleted in `Drop`).
    created: Vec<String>,
    lock: String,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    listener: Option<JoinHandle<()>>,
}

impl Lab {
    fn new() -> Lab {
        static N: AtomicUsize = AtomicUsize::new(0);
        let tag = format!(
            "xtnl-dp-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let lock = common::private_lock_path();
        Lab {
            client: format!("{tag}-client"),
            nathost: format!("{tag}-nathost"),
            compute: format!("{tag}-compute"),
            created: Vec::new(),
            lock: lock.to_str().expect("temp paths are UTF-8").to_owned(),
            stop: Arc::new(AtomicBool::new(false)),
            accepted: Arc::new(AtomicUsize::new(0)),
            listener: None,
        }
    }

    /// Namespaces, veth pairs (created straight inside the namespaces, never in the host's),
    /// addresses, routes and forwarding on the NAT host.
    fn build(&mut self) {
        for ns in [
            self.client.clone(),
            self.nathost.clone(),
            self.compute.clone(),
        ] {
            ip(&["netns", "add", &ns]);
            self.created.push(ns);
        }
        let (c, n, k) = (&self.client, &self.nathost, &self.compute);
        // client veth0 <-> nathost eth1 (public), nathost eth0 (private) <-> compute veth0.
        ip(&[
            "-n", c, "link", "add", "veth0", "type", "veth", "peer", "name", "eth1", "netns", n,
        ]);
        ip(&[
            "-n", k, "link", "add", "veth0", "type", "veth", "peer", "name", "eth0", "netns", n,
        ]);
        for (ns, addr, dev) in [
            (c, PUBLIC_CLIENT, "veth0"),
            (n, PUBLIC_NATHOST, "eth1"),
            (n, PRIVATE_NATHOST, "eth0"),
            (k, PRIVATE_COMPUTE, "veth0"),
        ] {
            ip(&["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", dev]);
        }
        for (ns, dev) in [
            (c, "lo"),
            (c, "veth0"),
            (n, "lo"),
            (n, "eth0"),
            (n, "eth1"),
            (k, "lo"),
            (k, "veth0"),
        ] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        // Replies from the compute node go back through the NAT host (no masquerade needed).
        ip(&[
            "-n",
            k,
            "route",
            "add",
            "default",
            "via",
            &PRIVATE_NATHOST.to_string(),
        ]);
        // ip_forward is per namespace; /proc/sys/net follows the writer's namespace.
        let out = common::run(
            "ip",
            &[
                "netns",
                "exec",
                n,
                "sh",
                "-c",
                "echo 1 > /proc/sys/net/ipv4/ip_forward && cat /proc/sys/net/ipv4/ip_forward",
            ],
        );
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "1",
            "enabling forwarding in {n}: {}",
            text(&out)
        );
    }

    /// A thread in the compute namespace serving `BANNER` on 198.51.100.2:3389 until stopped
    /// (or `LISTENER_LIFETIME` passes). Returns once the socket listens.
    fn start_listener(&mut self) {
        let (stop, accepted) = (self.stop.clone(), self.accepted.clone());
        let ns = self.compute.clone();
        let (ready_tx, ready_rx) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("compute-listener".into())
            .spawn(move || {
                enter_named(&ns);
                let listener = TcpListener::bind(SocketAddrV4::new(PRIVATE_COMPUTE, COMPUTE_PORT))
                    .and_then(|l| l.set_nonblocking(true).map(|()| l));
                let listener = match listener {
                    Ok(l) => {
                        let _ = ready_tx.send(Ok(()));
                        l
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let deadline = Instant::now() + LISTENER_LIFETIME;
                while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((mut conn, _)) => {
                            accepted.fetch_add(1, Ordering::Relaxed);
                            let _ = conn.set_nonblocking(false);
                            let _ = conn.set_write_timeout(Some(Duration::from_secs(2)));
                            let _ = conn.write_all(BANNER.as_bytes());
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
            .expect("spawn listener thread");
        self.listener = Some(handle);
        match ready_rx.recv_timeout(Duration::from_secs(5)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("listener in {}: {e}", self.compute),
            Err(e) => panic!("listener in {} never reported: {e}", self.compute),
        }
    }

    /// `ip netns exec <nathost> xtnl args...` with the private xtables lock.
    fn xtnl(&self, args: &[&str]) -> Output {
        let mut full = vec!["netns", "exec", self.nathost.as_str(), common::xtnl_bin()];
        full.extend_from_slice(args);
        common::run_env("ip", &full, &[("XTABLES_LOCKFILE", self.lock.as_str())])
    }

    fn xtnl_ok(&self, args: &[&str]) -> String {
        let out = self.xtnl(args);
        assert!(
            out.status.success(),
            "xtnl {args:?} in {} failed ({}): {}",
            self.nathost,
            out.status,
            text(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `ip netns exec <nathost> iptables-nft args...` (the oracle's view), stdout.
    fn iptables_nft(&self, args: &[&str]) -> String {
        let mut full = vec!["netns", "exec", self.nathost.as_str(), "iptables-nft"];
        full.extend_from_slice(args);
        let out = common::run_env("ip", &full, &[("XTABLES_LOCKFILE", self.lock.as_str())]);
        assert!(
            out.status.success(),
            "iptables-nft {args:?} in {} failed ({}): {}",
            self.nathost,
            out.status,
            text(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Stop the listener first: its thread holds a reference to the compute namespace.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.listener.take() {
            let _ = h.join();
        }
        for ns in self.created.drain(..).rev() {
            match std::process::Command::new("ip")
                .args(["netns", "del", &ns])
                .output()
            {
                Ok(o) if o.status.success() => {}
                Ok(o) => eprintln!("cleanup: ip netns del {ns}: {}", text(&o)),
                Err(e) => eprintln!("cleanup: ip netns del {ns}: {e}"),
            }
        }
        let _ = std::fs::remove_file(&self.lock);
        // The harness's per-process lock directory, if nothing else is in it.
        if let Some(dir) = std::path::Path::new(&self.lock).parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Moves the calling thread into the named namespace `ns` (sockets it creates live there).
fn enter_named(ns: &str) {
    let f = std::fs::File::open(format!("/run/netns/{ns}"))
        .unwrap_or_else(|e| panic!("open /run/netns/{ns}: {e}"));
    nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
        .unwrap_or_else(|e| panic!("setns into {ns}: {e}"));
    // Check the move took: this thread's namespace is the named one (same nsfs inode).
    // (`scratch::refuse_initial` cannot be used here: without `enter_new` it has no origin
    // to compare with and, where /proc/1/ns/net is unreadable, conservatively refuses.)
    let id = |m: std::fs::Metadata| (m.dev(), m.ino());
    let want = id(f.metadata().expect("stat netns file"));
    let here = id(std::fs::metadata("/proc/thread-self/ns/net").expect("stat own netns"));
    assert_eq!(here, want, "thread is not in namespace {ns} after setns");
}

/// Runs `body` on a fresh thread inside the named namespace `ns`; panics are propagated.
fn in_named<R: Send + 'static>(ns: &str, body: impl FnOnce() -> R + Send + 'static) -> R {
    let ns = ns.to_owned();
    let handle = std::thread::Builder::new()
        .name(format!("in-{ns}"))
        .spawn(move || {
            enter_named(&ns);
            body()
        })
        .expect("spawn namespace thread");
    match handle.join() {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A TCP connection from `src` (port chosen by the caller: every attempt gets a fresh one, so
/// no conntrack entry of an earlier connection can match) to `dst`, giving up on the connect
/// after `timeout`. Returns what the peer sent before closing, or the error.
fn fetch(src: SocketAddrV4, dst: SocketAddrV4, timeout: Duration) -> Result<String, String> {
    use nix::sys::socket::{
        AddressFamily, SockFlag, SockType, SockaddrIn, bind, connect, setsockopt, socket,
        sockopt::SendTimeout,
    };
    use nix::sys::time::TimeVal;
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| format!("socket: {e}"))?;
    // On Linux a blocking connect(2) gives up after SO_SNDTIMEO.
    setsockopt(
        &fd,
        SendTimeout,
        &TimeVal::new(timeout.as_secs() as _, timeout.subsec_micros() as _),
    )
    .map_err(|e| format!("SO_SNDTIMEO: {e}"))?;
    bind(fd.as_raw_fd(), &SockaddrIn::from(src)).map_err(|e| format!("bind {src}: {e}"))?;
    let started = Instant::now();
    connect(fd.as_raw_fd(), &SockaddrIn::from(dst))
        .map_err(|e| format!("connect {src} -> {dst}: {e} after {:?}", started.elapsed()))?;
    let mut stream = TcpStream::from(fd);
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut got = String::new();
    stream
        .read_to_string(&mut got)
        .map_err(|e| format!("read from {dst}: {e} (got {got:?})"))?;
    Ok(got)
}

/// The packet counter of the DNAT rule in `iptables-nft -L <chain> -v -x -n` output.
fn dnat_packets(listing: &str) -> u64 {
    let line = listing
        .lines()
        .find(|l| l.contains("DNAT") && l.contains("to:198.51.100.2:3389"))
        .unwrap_or_else(|| panic!("no DNAT rule in listing:\n{listing}"));
    line.split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no packet counter in {line:?}"))
}

#[test]
fn reservation_dnat_forwards_tcp_and_teardown_stops_it() {
    common::require_kernel!();
    let t0 = Instant::now();
    let mut lab = Lab::new();
    lab.build();
    lab.start_listener();

    let public = SocketAddrV4::new(PUBLIC_NATHOST, PUBLIC_PORT);
    let from = |port| SocketAddrV4::new(PUBLIC_CLIENT, port);

    // The listener answers inside the compute namespace (bounded poll).
    let direct = SocketAddrV4::new(PRIVATE_COMPUTE, COMPUTE_PORT);
    let ready = in_named(&lab.compute, move || {
        let mut last = String::new();
        for _ in 0..50 {
            match TcpStream::connect_timeout(&direct.into(), Duration::from_millis(200)) {
                Ok(mut s) => {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                    let mut got = String::new();
                    match s.read_to_string(&mut got) {
                        Ok(_) if got == BANNER => return Ok(()),
                        r => last = format!("{r:?}, got {got:?}"),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(last)
    });
    if let Err(e) = ready {
        panic!("listener at {direct} in {} not serving: {e}", lab.compute);
    }
    let accepted_before = lab.accepted.load(Ordering::Relaxed);

    // 3. Without the forward the public port is closed.
    let before = in_named(&lab.client, move || {
        fetch(from(40001), public, Duration::from_secs(1))
    });
    assert!(
        before.is_err(),
        "{public} answered before any rule existed: {before:?}"
    );
    eprintln!(
        "[{:>8.3?}] before the rules: {}",
        t0.elapsed(),
        before.unwrap_err()
    );

    // 4. The reservation, exactly as the NAT-host agent sets it up.
    let t_setup = Instant::now();
    lab.xtnl_ok(&["--new-chain", CHAIN, "--table", "nat"]);
    lab.xtnl_ok(&[
        "--insert",
        "PREROUTING",
        "--table",
        "nat",
        "--jump",
        CHAIN,
        "--match",
        "comment",
        "--comment",
        JUMP_COMMENT,
    ]);
    lab.xtnl_ok(&[
        "--insert",
        CHAIN,
        "--table",
        "nat",
        "--in-interface",
        "eth1",
        "--protocol",
        "tcp",
        "--match",
        "comment",
        "--comment",
        FORWARD_COMMENT,
        "--match",
        "tcp",
        "--destination-port",
        "50443",
        "--jump",
        "DNAT",
        "--to-destination",
        "198.51.100.2:3389",
    ]);
    eprintln!(
        "[{:>8.3?}] set up {CHAIN} with xtnl (3 commands) in {:?}",
        t0.elapsed(),
        t_setup.elapsed()
    );

    // 5. The forward carries a real connection to the compute node.
    let through = in_named(&lab.client, move || {
        fetch(from(40002), public, Duration::from_secs(3))
    });
    assert_eq!(
        through.as_deref(),
        Ok(BANNER),
        "connection through the forward {public} -> {direct}"
    );
    assert_eq!(
        lab.accepted.load(Ordering::Relaxed),
        accepted_before + 1,
        "the compute node accepted the forwarded connection"
    );
    eprintln!(
        "[{:>8.3?}] through the forward: {:?}",
        t0.elapsed(),
        through.unwrap()
    );
    let listing = lab.iptables_nft(&["-t", "nat", "-L", CHAIN, "-v", "-x", "-n"]);
    let packets = dnat_packets(&listing);
    assert!(
        packets >= 1,
        "DNAT counter did not count the connection:\n{listing}"
    );
    eprintln!(
        "[{:>8.3?}] DNAT rule counter: {packets} packet(s)",
        t0.elapsed()
    );

    // 6. Teardown, exactly as the agent does it.
    let t_down = Instant::now();
    lab.xtnl_ok(&["--flush", CHAIN, "--table", "nat"]);
    lab.xtnl_ok(&[
        "--delete",
        "PREROUTING",
        "-t",
        "nat",
        "-j",
        CHAIN,
        "-m",
        "comment",
        "--comment",
        JUMP_COMMENT,
    ]);
    lab.xtnl_ok(&["--delete-chain", CHAIN, "--table", "nat"]);
    eprintln!(
        "[{:>8.3?}] tore down {CHAIN} with xtnl (3 commands) in {:?}",
        t0.elapsed(),
        t_down.elapsed()
    );

    // A fresh connection (new source port, so no conntrack entry matches) is not forwarded.
    let after = in_named(&lab.client, move || {
        fetch(from(40003), public, Duration::from_millis(1500))
    });
    assert!(
        after.is_err(),
        "{public} still forwarded after the teardown: {after:?}"
    );
    assert_eq!(
        lab.accepted.load(Ordering::Relaxed),
        accepted_before + 1,
        "the compute node saw a connection after the teardown"
    );
    eprintln!(
        "[{:>8.3?}] after the teardown: {}",
        t0.elapsed(),
        after.unwrap_err()
    );

    // 7. Nothing of the reservation is left in the NAT host's nat table.
    let rules = lab.iptables_nft(&["-t", "nat", "-S"]);
    assert!(
        !rules.contains(CHAIN),
        "{CHAIN} left behind in {}:\n{rules}",
        lab.nathost
    );

    drop(lab);
    eprintln!("[{:>8.3?}] namespaces deleted", t0.elapsed());
}
