//! Data plane of the NAT-host map layout: three network namespaces (client, NAT host,
//! compute node), IPv4 and IPv6. Forwards set up with `xtnl ... --layout map` carry TCP
//! connections to the compute node and count them per element; after teardown or sweep they
//! do not; a connection forwarded by the chain layout keeps working across `xtnl migrate`
//! both ways; and where both layouts translate the same connection, the map (priority -110)
//! wins over iptables' nat chain (-100).
//!
//! Only namespaces this test creates and documentation addresses are used; a guard deletes
//! the namespaces also when an assertion fails.

mod common;
#[path = "common/serve.rs"]
mod serve_support;

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ip(args: &[&str]) {
    let out = common::run("ip", args);
    assert!(out.status.success(), "ip {args:?}: {}", text(&out));
}

struct Lab {
    client: String,
    nathost: String,
    compute: String,
    created: Vec<String>,
    lock: String,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in self.created.drain(..).rev() {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", &ns])
                .output();
        }
        let _ = std::fs::remove_file(&self.lock);
    }
}

fn enter_named(ns: &str) {
    let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("open netns");
    nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns");
    let id = |m: std::fs::Metadata| (m.dev(), m.ino());
    assert_eq!(
        id(std::fs::metadata("/proc/thread-self/ns/net").unwrap()),
        id(f.metadata().unwrap()),
        "not in {ns}"
    );
}

fn in_named<R: Send + 'static>(ns: &str, body: impl FnOnce() -> R + Send + 'static) -> R {
    let ns = ns.to_owned();
    match std::thread::spawn(move || {
        enter_named(&ns);
        body()
    })
    .join()
    {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    }
}

const PUB4: [&str; 2] = ["203.0.113.1", "203.0.113.2"];
const PRIV4: [&str; 2] = ["198.51.100.1", "198.51.100.2"];
const PUB6: [&str; 2] = ["2001:db8:1::1", "2001:db8:1::2"];
const PRIV6: [&str; 2] = ["2001:db8:2::1", "2001:db8:2::2"];

impl Lab {
    fn new() -> Lab {
        static N: AtomicUsize = AtomicUsize::new(0);
        let tag = format!(
            "xtnl-map-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let mut lab = Lab {
            client: format!("{tag}-c"),
            nathost: format!("{tag}-n"),
            compute: format!("{tag}-k"),
            created: Vec::new(),
            lock: common::private_lock_path().to_str().unwrap().to_owned(),
        };
        for ns in [&lab.client, &lab.nathost, &lab.compute] {
            ip(&["netns", "add", ns]);
        }
        lab.created = vec![lab.client.clone(), lab.nathost.clone(), lab.compute.clone()];
        let (c, n, k) = (&lab.client, &lab.nathost, &lab.compute);
        ip(&[
            "-n", c, "link", "add", "veth0", "type", "veth", "peer", "name", "eth1", "netns", n,
        ]);
        ip(&[
            "-n", k, "link", "add", "veth0", "type", "veth", "peer", "name", "eth0", "netns", n,
        ]);
        for (ns, dev, a4, a6) in [
            (c, "veth0", PUB4[1], PUB6[1]),
            (n, "eth1", PUB4[0], PUB6[0]),
            (n, "eth0", PRIV4[0], PRIV6[0]),
            (k, "veth0", PRIV4[1], PRIV6[1]),
        ] {
            ip(&["-n", ns, "addr", "add", &format!("{a4}/24"), "dev", dev]);
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{a6}/64"),
                "dev",
                dev,
                "nodad",
            ]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        ip(&["-n", k, "route", "add", "default", "via", PRIV4[0]]);
        ip(&["-n", k, "-6", "route", "add", "default", "via", PRIV6[0]]);
        let out = common::run(
            "ip",
            &[
                "netns",
                "exec",
                n,
                "sh",
                "-c",
                "echo 1 > /proc/sys/net/ipv4/ip_forward && echo 1 > /proc/sys/net/ipv6/conf/all/forwarding",
            ],
        );
        assert!(out.status.success(), "forwarding: {}", text(&out));
        // Echo servers on the compute node: port 3389 answers "A:line", 3390 "B:line".
        for (port, tag) in [(3389u16, "A"), (3390, "B")] {
            let ns = k.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                enter_named(&ns);
                // [::] takes IPv4 too (v4-mapped).
                let l = TcpListener::bind(("::", port)).expect("bind");
                tx.send(()).unwrap();
                for conn in l.incoming().flatten() {
                    std::thread::spawn(move || {
                        let mut w = conn.try_clone().unwrap();
                        for line in BufReader::new(conn).lines() {
                            let Ok(line) = line else { break };
                            if w.write_all(format!("{tag}:{line}\n").as_bytes()).is_err() {
                                break;
                            }
                        }
                    });
                }
            });
            rx.recv_timeout(Duration::from_secs(5))
                .expect("listener up");
        }
        lab
    }

    fn xtnl(&self, args: &[&str]) -> Output {
        let mut full = vec!["netns", "exec", self.nathost.as_str(), common::xtnl_bin()];
        full.extend_from_slice(args);
        common::run_env("ip", &full, &[("XTABLES_LOCKFILE", self.lock.as_str())])
    }

    fn xtnl_ok(&self, args: &[&str]) -> String {
        let out = self.xtnl(args);
        assert!(out.status.success(), "xtnl {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn in_nathost(&self, program: &str, args: &[&str]) -> String {
        let mut full = vec!["netns", "exec", self.nathost.as_str(), program];
        full.extend_from_slice(args);
        let out = common::run_env("ip", &full, &[("XTABLES_LOCKFILE", self.lock.as_str())]);
        assert!(out.status.success(), "{program} {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A connection from the client to `to`, or why not.
    fn connect(&self, to: SocketAddr) -> Result<Conn, String> {
        in_named(&self.client, move || {
            let s = TcpStream::connect_timeout(&to, Duration::from_millis(1500))
                .map_err(|e| format!("connect {to}: {e}"))?;
            s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            Ok(Conn {
                r: BufReader::new(s.try_clone().unwrap()),
                w: s,
            })
        })
    }

    /// One request/answer on a new connection: the answering server's tag.
    fn ask(&self, to: SocketAddr) -> Result<String, String> {
        let mut c = self.connect(to)?;
        c.echo("hello")
    }
}

struct Conn {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Conn {
    fn echo(&mut self, line: &str) -> Result<String, String> {
        self.w
            .write_all(format!("{line}\n").as_bytes())
            .map_err(|e| e.to_string())?;
        let mut got = String::new();
        self.r.read_line(&mut got).map_err(|e| e.to_string())?;
        Ok(got.trim_end().to_owned())
    }
}

fn public(v6: bool, port: u16) -> SocketAddr {
    let a: IpAddr = if v6 { PUB6[0] } else { PUB4[0] }.parse().unwrap();
    SocketAddr::new(a, port)
}

fn compute(v6: bool, port: u16) -> String {
    if v6 {
        format!("[{}]:{port}", PRIV6[1])
    } else {
        format!("{}:{port}", PRIV4[1])
    }
}

fn forwarded_packets(lab: &Lab, fam: &str, reservation: &str) -> u64 {
    let out = lab.xtnl_ok(&["forward", "list", fam, "--layout", "map", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["forwards"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["reservation"] == reservation)
        .map(|f| f["packets"].as_u64().unwrap())
        .sum()
}

#[test]
fn map_layout_forwards_count_and_stop_after_teardown_ipv4_and_ipv6() {
    common::require_kernel!();
    let lab = Lab::new();
    for (v6, fam) in [(false, "-4"), (true, "-6")] {
        let (net, addr) = if v6 {
            ("2001:db8:2::/64", PUB6[0])
        } else {
            ("198.51.100.0/24", PUB4[0])
        };
        let host = [
            "host",
            "setup",
            fam,
            "--layout",
            "map",
            "--public-interface",
            "eth1",
            "--private-interface",
            "eth0",
            "--private-network",
            net,
            "--public-address",
            addr,
            "--ports",
            "50000:51000",
        ];
        assert_eq!(lab.xtnl_ok(&host).trim(), "changed");
        assert_eq!(
            lab.xtnl_ok(&host).trim(),
            "unchanged",
            "host setup is idempotent"
        );

        assert!(
            lab.ask(public(v6, 50443)).is_err(),
            "{fam}: open before any forward"
        );
        let spec = format!("eth1:tcp/50443={}", compute(v6, 3389));
        let setup = [
            "reservation",
            "setup",
            fam,
            "vcld-7",
            "--layout",
            "map",
            "--forward",
            &spec,
        ];
        assert_eq!(lab.xtnl_ok(&setup).trim(), "changed");
        assert_eq!(lab.xtnl_ok(&setup).trim(), "unchanged", "{fam}: idempotent");
        assert_eq!(
            lab.ask(public(v6, 50443)).as_deref(),
            Ok("A:hello"),
            "{fam}"
        );
        assert!(
            forwarded_packets(&lab, fam, "vcld-7") >= 1,
            "{fam}: element counter"
        );

        // A forward on any interface, of another reservation.
        let any = format!("tcp/50444={}", compute(v6, 3390));
        lab.xtnl_ok(&[
            "forward",
            "add",
            fam,
            "vcld-8",
            "--layout",
            "map",
            &any,
            "--no-comments",
        ]);
        assert_eq!(
            lab.ask(public(v6, 50444)).as_deref(),
            Ok("B:hello"),
            "{fam}"
        );
        // The key is vcld-7's: another reservation cannot take it.
        let taken = lab.xtnl(&["forward", "add", fam, "vcld-8", "--layout", "map", &spec]);
        assert!(
            !taken.status.success(),
            "{fam}: a key held by another reservation"
        );
        assert!(
            text(&taken).contains("belongs to reservation vcld-7"),
            "{}",
            text(&taken)
        );

        // Teardown given the forwards removes exactly vcld-7's.
        let out = lab.xtnl_ok(&[
            "teardown",
            fam,
            "vcld-7",
            "--layout",
            "map",
            "--forward",
            "eth1:tcp/50443",
        ]);
        assert_eq!(out.trim(), "changed");
        assert!(
            lab.ask(public(v6, 50443)).is_err(),
            "{fam}: forwarded after teardown"
        );
        assert_eq!(
            lab.ask(public(v6, 50444)).as_deref(),
            Ok("B:hello"),
            "{fam}"
        );
        let again = lab.xtnl_ok(&["teardown", fam, "vcld-7", "--layout", "map"]);
        assert_eq!(again.trim(), "absent", "{fam}");
        // Sweep removes every vcld-* reservation not kept.
        assert_eq!(
            lab.xtnl_ok(&[
                "sweep", fam, "--layout", "map", "--prefix", "vcld-", "--keep", "x"
            ])
            .trim(),
            "changed"
        );
        assert!(
            lab.ask(public(v6, 50444)).is_err(),
            "{fam}: forwarded after sweep"
        );
    }
    // nft reads the layout as nft syntax.
    let listing = lab.in_nathost("nft", &["list", "table", "ip", "xtnl_nat"]);
    assert!(
        listing.contains("dnat ip to iifname . meta l4proto . th dport map @forwards"),
        "{listing}"
    );
    assert!(listing.contains("masquerade"), "{listing}");
}

#[test]
fn migration_keeps_a_forwarded_connection_and_the_map_wins_over_chains() {
    common::require_kernel!();
    let lab = Lab::new();
    let to = compute(false, 3389);
    let spec = format!("eth1:tcp/50443={to}");
    // The chain layout, as the agent's iptables commands make it.
    lab.xtnl_ok(&[
        "reservation",
        "setup",
        "vcld-9",
        "--forward",
        &spec,
        "--comment-prefix",
        "VCL: ",
    ]);
    let mut conn = lab
        .connect(public(false, 50443))
        .expect("through the chain layout");
    assert_eq!(conn.echo("one").as_deref(), Ok("A:one"));

    let out = lab.xtnl_ok(&["migrate", "--to", "map", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["reservations"].as_u64(), v["forwards"].as_u64()),
        (Some(1), Some(1))
    );
    let rules = lab.in_nathost("iptables-nft", &["-t", "nat", "-S"]);
    assert!(
        !rules.contains("vcld-9"),
        "chains left after migration:\n{rules}"
    );
    let listed = lab.xtnl_ok(&["forward", "list", "--layout", "map"]);
    assert!(
        listed.contains("vcld-9 eth1:tcp/50443=198.51.100.2:3389"),
        "{listed}"
    );
    assert_eq!(
        conn.echo("two").as_deref(),
        Ok("A:two"),
        "existing connection after migration"
    );
    assert_eq!(
        lab.ask(public(false, 50443)).as_deref(),
        Ok("A:hello"),
        "new connection"
    );

    let out = lab.xtnl_ok(&["migrate", "--to", "chains"]);
    assert!(out.contains("1 reservations, 1 forwards"), "{out}");
    let rules = lab.in_nathost("iptables-nft", &["-t", "nat", "-S"]);
    assert!(rules.contains("-A PREROUTING -m comment --comment \"VCL: jump from nat table PREROUTING chain to reservation NAT chain vcld-9\" -j vcld-9"), "{rules}");
    assert!(rules.contains("-A vcld-9 -i eth1 -p tcp -m comment --comment \"VCL: forward eth1:tcp/50443 --> 198.51.100.2:3389\" -m tcp --dport 50443 -j DNAT --to-destination 198.51.100.2:3389"), "{rules}");
    assert_eq!(
        conn.echo("three").as_deref(),
        Ok("A:three"),
        "after migrating back"
    );
    assert_eq!(lab.ask(public(false, 50443)).as_deref(), Ok("A:hello"));
    assert!(
        lab.xtnl_ok(&["forward", "list", "--layout", "map"])
            .is_empty()
    );
    // Nothing left to move: a second migration changes nothing.
    let out = lab.xtnl_ok(&["migrate", "--to", "chains"]);
    assert!(out.contains("0 reservations"), "{out}");

    // Both layouts translate the same key: the map's chain runs first and binds the
    // connection, so iptables' rule is never consulted for it.
    let other = format!("eth1:tcp/50443={}", compute(false, 3390));
    let clash = lab.xtnl(&["forward", "add", "vcld-10", "--layout", "map", &other]);
    assert!(clash.status.success(), "{}", text(&clash));
    assert_eq!(
        lab.ask(public(false, 50443)).as_deref(),
        Ok("B:hello"),
        "map wins"
    );
    lab.xtnl_ok(&["teardown", "vcld-10", "--layout", "map"]);
    assert_eq!(
        lab.ask(public(false, 50443)).as_deref(),
        Ok("A:hello"),
        "chains again"
    );
    // A chain holding more than forwards is refused, and nothing changes.
    lab.xtnl_ok(&["-t", "nat", "-A", "vcld-9", "-p", "udp", "-j", "RETURN"]);
    let before = lab.in_nathost("nft", &["list", "ruleset"]);
    let refused = lab.xtnl(&["migrate", "--to", "map"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("is not a plain forward"),
        "{}",
        text(&refused)
    );
    assert_eq!(lab.in_nathost("nft", &["list", "ruleset"]), before);
    drop(conn);
}

#[test]
fn json_apply_takes_the_layout_and_the_policy_and_audit_cover_elements() {
    common::in_netns(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
        let tag = std::process::id();
        let doc = dir.join(format!("map-apply-{tag}.json"));
        let policy = dir.join(format!("map-policy-{tag}.toml"));
        let lock = common::private_lock_path();
        let env = [("XTABLES_LOCKFILE", lock.to_str().unwrap())];
        let write = |text: &str| std::fs::write(&doc, text).unwrap();
        write(
            r#"{"transactions": [{"operations": [
                {"op": "reservation_setup", "chain": "vcld-1", "layout": "map",
                 "forwards": [{"protocol": "tcp", "public_port": 50001, "to": "198.51.100.2:22",
                               "in_interface": "eth1"}]},
                {"op": "forward_add", "chain": "vcld-1", "layout": "map",
                 "forward": {"protocol": "udp", "public_port": 50002, "to": "198.51.100.2:53"}}
            ]}]}"#,
        );
        let out = common::run_env(common::xtnl_bin(), &["apply", doc.to_str().unwrap()], &env);
        assert!(out.status.success(), "{}", text(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["transactions"][0]["operations"][1]["outcome"], "changed");
        let listed = common::run_ok(common::xtnl_bin(), &["forward", "list", "--layout", "map"]);
        assert!(
            listed.contains("vcld-1 eth1:tcp/50001=198.51.100.2:22"),
            "{listed}"
        );
        assert!(
            listed.contains("vcld-1 udp/50002=198.51.100.2:53"),
            "{listed}"
        );

        // One layout per transaction, said at the operation that breaks it.
        write(
            r#"{"transactions": [{"operations": [
                {"op": "teardown", "chain": "vcld-1", "layout": "map"},
                {"op": "teardown", "chain": "vcld-2"}
            ]}]}"#,
        );
        let out = common::run_env(common::xtnl_bin(), &["apply", doc.to_str().unwrap()], &env);
        assert!(!out.status.success());
        assert!(
            text(&out).contains(".transactions[0].operations[1].layout"),
            "{}",
            text(&out)
        );
        write(
            r#"{"transactions": [{"operations": [{"op": "teardown", "chain": "vcld-1", "layout": "maps"}]}]}"#,
        );
        let out = common::run_env(common::xtnl_bin(), &["apply", doc.to_str().unwrap()], &env);
        assert!(
            text(&out).contains("layout \\\"maps\\\" is not chains or map"),
            "{}",
            text(&out)
        );

        // A policy that allows element changes in the forward maps only: the teardown goes
        // through and is audited with the elements it removed; creating the layout is not
        // allowed by it.
        std::fs::write(
            &policy,
            "[[allow]]\ntable = \"xtnl_nat\"\nsets = [\"forwards*\"]\nverbs = [\"add-element\", \"delete-element\"]\n",
        )
        .unwrap();
        let p = policy.to_str().unwrap();
        let out = common::run_env(
            common::xtnl_bin(),
            &[
                "--policy-file",
                p,
                "--audit",
                "stderr",
                "teardown",
                "vcld-1",
                "--layout",
                "map",
            ],
            &env,
        );
        assert!(out.status.success(), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(
                "result=ok ops=2: delete 1 element(s) from ip xtnl_nat forwards [0x31687465"
            ),
            "{err}"
        );
        let out = common::run_env(
            common::xtnl_bin(),
            &[
                "--policy-file",
                p,
                "--audit",
                "stderr",
                "forward",
                "add",
                "-6",
                "vcld-3",
                "--layout",
                "map",
                "tcp/50003=[2001:db8::2]:22",
            ],
            &env,
        );
        assert!(!out.status.success());
        assert!(text(&out).contains("denied"), "{}", text(&out));
        let _ = std::fs::remove_file(&doc);
        let _ = std::fs::remove_file(&policy);
    });
}

#[test]
fn the_map_wins_over_iptables_legacy_nat_and_migrate_refuses_a_legacy_host() {
    common::require_kernel!();
    let lab = Lab::new();
    let spec = format!("eth1:tcp/50460={}", compute(false, 3389));
    lab.xtnl_ok(&[
        "--backend",
        "legacy",
        "reservation",
        "setup",
        "vcld-20",
        "--forward",
        &spec,
    ]);
    assert_eq!(
        lab.ask(public(false, 50460)).as_deref(),
        Ok("A:hello"),
        "legacy DNAT"
    );
    let other = format!("eth1:tcp/50460={}", compute(false, 3390));
    lab.xtnl_ok(&["forward", "add", "vcld-21", "--layout", "map", &other]);
    assert_eq!(
        lab.ask(public(false, 50460)).as_deref(),
        Ok("B:hello"),
        "map wins"
    );
    lab.xtnl_ok(&["teardown", "vcld-21", "--layout", "map"]);
    assert_eq!(
        lab.ask(public(false, 50460)).as_deref(),
        Ok("A:hello"),
        "legacy again"
    );
    let refused = lab.xtnl(&["--backend", "legacy", "migrate", "--to", "map"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("iptables-legacy"),
        "{}",
        text(&refused)
    );
}

/// A [`MapLayout`] handle plans from what it cached, pinned to the generation: in the steady
/// state an operation is one round trip (the commit), and a change made from outside between
/// two operations (by `nft`, another process) makes the next one plan again from reads, with
/// the answer reads give. Another reservation's forward is never removed or overwritten.
#[test]
fn a_handle_commits_in_one_round_trip_and_replans_after_an_outside_change() {
    use xtnl::lock::LockMode;
    use xtnl::model::Family;
    use xtnl::nathost::map::{MapLayout, MapOp, list_forwards};
    use xtnl::nathost::{Forward, Outcome};
    use xtnl::nft::Session;

    common::in_netns(|| {
        let fwd = |spec: &str| Forward::parse_spec(spec).unwrap();
        let session = Session::builder()
            .lock_mode(LockMode::Never)
            .open()
            .unwrap();
        let mut h = MapLayout::new(session, Family::Ipv4);
        let trips = |h: &mut MapLayout, op: MapOp| {
            let before = h.session().socket().round_trips();
            let rep = h.run(op);
            (rep, h.session().socket().round_trips() - before)
        };
        let add = |r: &str, f: &str| MapOp::ForwardAdd {
            reservation: r.into(),
            forward: fwd(f),
        };
        let remove = |r: &str, f: &str| MapOp::ForwardRemove {
            reservation: r.into(),
            key: fwd(f).key(),
            to: None,
        };
        let nft = |args: &str| {
            let args: Vec<&str> = args.split_whitespace().collect();
            common::run_ok("nft", &args)
        };
        let owner_of = |h: &mut MapLayout, port: u16| {
            list_forwards(h.session(), Family::Ipv4)
                .unwrap()
                .into_iter()
                .find(|f| f.forward.public_port == port)
                .map(|f| (f.reservation, f.forward.to.to_string()))
        };

        // Cold: the first operation reads (and creates the layout).
        let (rep, _) = trips(
            &mut h,
            MapOp::Setup {
                reservation: "r-1".into(),
                forwards: vec![fwd("eth1:tcp/1001=192.0.2.3:22")],
            },
        );
        assert_eq!(rep.unwrap().outcome, Outcome::Changed);
        assert!(
            h.cached_generation().is_some(),
            "a cache after the first commit"
        );

        // Steady state: one round trip each, planned from the cache.
        let from_cache = h.stats().from_cache;
        for (op, outcome) in [
            (add("r-1", "eth1:tcp/1002=192.0.2.3:23"), Outcome::Changed),
            (
                remove("r-1", "eth1:tcp/1002=192.0.2.3:23"),
                Outcome::Changed,
            ),
            (add("r-1", "eth1:udp/1003=192.0.2.3:24"), Outcome::Changed),
            (
                MapOp::Teardown {
                    reservation: "r-1".into(),
                    forwards: Some(vec![fwd("eth1:udp/1003=192.0.2.3:24").key()]),
                },
                Outcome::Changed,
            ),
        ] {
            let kind = op.kind();
            let (rep, n) = trips(&mut h, op);
            let rep = rep.unwrap();
            assert_eq!((kind, rep.outcome, rep.attempts, n), (kind, outcome, 1, 1));
        }
        assert_eq!(h.stats().from_cache, from_cache + 4);
        assert_eq!(h.stats().replanned, 0);
        // A repeat that changes nothing sends nothing: one generation check.
        let (rep, n) = trips(&mut h, add("r-1", "eth1:tcp/1001=192.0.2.3:22"));
        assert_eq!((rep.unwrap().outcome, n), (Outcome::Unchanged, 1));

        // From outside: another reservation's forward, unknown to the handle.
        nft(
            r#"add element ip xtnl_nat forwards { "eth1" . tcp . 2222 comment "r-2" : 192.0.2.9 . 22 }"#,
        );
        let replanned = h.stats().replanned;
        let err = h.run(add("r-1", "eth1:tcp/2222=192.0.2.3:22")).unwrap_err();
        assert!(
            err.innermost()
                .to_string()
                .contains("belongs to reservation r-2"),
            "{err}"
        );
        assert_eq!(h.stats().replanned, replanned + 1);
        let (rep, _) = trips(&mut h, remove("r-1", "eth1:tcp/2222=192.0.2.3:22"));
        assert_eq!(rep.unwrap().outcome, Outcome::Absent);
        assert_eq!(
            owner_of(&mut h, 2222),
            Some(("r-2".into(), "192.0.2.9:22".into()))
        );

        // From outside: r-1's own forward (cached as r-1's) is given to r-3. The handle's
        // teardown of r-1 is refused by the kernel (stale generation), planned again from
        // reads, and leaves r-3's forward alone.
        h.run(add("r-1", "eth1:tcp/3001=192.0.2.3:22")).unwrap();
        nft(r#"delete element ip xtnl_nat forwards { "eth1" . tcp . 3001 }"#);
        nft(
            r#"add element ip xtnl_nat forwards { "eth1" . tcp . 3001 comment "r-3" : 192.0.2.7 . 22 }"#,
        );
        let replanned = h.stats().replanned;
        let rep = h
            .run(MapOp::Teardown {
                reservation: "r-1".into(),
                forwards: Some(vec![fwd("eth1:tcp/3001=192.0.2.3:22").key()]),
            })
            .unwrap();
        assert_eq!(rep.outcome, Outcome::Absent);
        assert!(rep.attempts >= 2, "planned again: {rep:?}");
        assert_eq!(h.stats().replanned, replanned + 1);
        assert_eq!(
            owner_of(&mut h, 3001),
            Some(("r-3".into(), "192.0.2.7:22".into()))
        );
        // Nor does an add of r-1 overwrite it, though the stale cache said it was r-1's.
        let err = h.run(add("r-1", "eth1:tcp/3001=192.0.2.3:22")).unwrap_err();
        assert!(
            err.innermost()
                .to_string()
                .contains("belongs to reservation r-3"),
            "{err}"
        );

        // From outside: r-1's forward is deleted. Repeating its add from the handle (which
        // cached it as present, so the plan is empty) finds the generation moved and adds it.
        h.run(add("r-1", "eth1:tcp/4001=192.0.2.3:22")).unwrap();
        nft(r#"delete element ip xtnl_nat forwards { "eth1" . tcp . 4001 }"#);
        let rep = h.run(add("r-1", "eth1:tcp/4001=192.0.2.3:22")).unwrap();
        assert_eq!(rep.outcome, Outcome::Changed);
        assert_eq!(
            owner_of(&mut h, 4001),
            Some(("r-1".into(), "192.0.2.3:22".into()))
        );

        // An add of a key the handle does not know, that exists: the exclusive create is
        // refused and the plan from reads says Unchanged (idempotent), not an error.
        nft(
            r#"add element ip xtnl_nat forwards { "eth1" . tcp . 5001 comment "r-1" : 192.0.2.3 . 22 }"#,
        );
        h.run(add("r-1", "eth1:tcp/1001=192.0.2.3:22")).unwrap();
        let rep = h.run(add("r-1", "eth1:tcp/5001=192.0.2.3:22")).unwrap();
        assert_eq!(rep.outcome, Outcome::Unchanged);
        // With another destination it is replaced, still r-1's.
        let rep = h.run(add("r-1", "eth1:tcp/5001=192.0.2.4:22")).unwrap();
        assert_eq!(rep.outcome, Outcome::Changed);
        assert_eq!(
            owner_of(&mut h, 5001),
            Some(("r-1".into(), "192.0.2.4:22".into()))
        );

        // Teardown without forwards and sweep remove exactly r-1's, and leave r-2's, r-3's.
        h.run(MapOp::Teardown {
            reservation: "r-1".into(),
            forwards: None,
        })
        .unwrap();
        let left: Vec<(String, u16)> = list_forwards(h.session(), Family::Ipv4)
            .unwrap()
            .into_iter()
            .map(|f| (f.reservation, f.forward.public_port))
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.contains(&("r-2".into(), 2222)) && left.contains(&("r-3".into(), 3001)));
        // After the listing the cache is complete: a sweep plans from it, in one round trip.
        let (rep, n) = trips(
            &mut h,
            MapOp::Sweep {
                prefix: "r-".into(),
                keep: ["r-3".to_owned()].into_iter().collect(),
            },
        );
        assert_eq!((rep.unwrap().outcome, n), (Outcome::Changed, 1));
        assert_eq!(
            owner_of(&mut h, 3001),
            Some(("r-3".into(), "192.0.2.7:22".into()))
        );
        assert_eq!(owner_of(&mut h, 2222), None);
    });
}

/// Two handles (two agents) in one namespace, each in its own thread, race: each adds and
/// removes forwards of its own reservation and fights for one key. Each handle's cache is
/// made stale by the other's commits all the time; the pinned batches must still give
/// exactly the answers reads would: no forward of one reservation is removed or
/// overwritten by the other, and the contested key changes hands only when free.
#[test]
fn two_racing_handles_never_touch_each_others_forwards() {
    use xtnl::lock::LockMode;
    use xtnl::model::Family;
    use xtnl::nathost::map::{MapLayout, MapOp, list_forwards};
    use xtnl::nathost::{Forward, Outcome};
    use xtnl::nft::Session;

    common::in_netns(|| {
        let open = || {
            MapLayout::new(
                Session::builder()
                    .lock_mode(LockMode::Never)
                    .open()
                    .unwrap(),
                Family::Ipv4,
            )
        };
        let mut first = open();
        first
            .run(MapOp::Setup {
                reservation: "warm".into(),
                forwards: Vec::new(),
            })
            .unwrap();
        const ROUNDS: u16 = 300;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let agent = move |name: &'static str, base: u16, addr: &'static str| {
            let start = barrier.clone();
            let fwd =
                |port: u16| Forward::parse_spec(&format!("eth1:tcp/{port}={addr}:22")).unwrap();
            let mut h = open();
            h.run(MapOp::Setup {
                reservation: name.into(),
                forwards: Vec::new(),
            })
            .unwrap();
            start.wait();
            // (contested adds that changed, contested removes that changed)
            let mut log = Vec::new();
            for i in 0..ROUNDS {
                let r = h
                    .run(MapOp::ForwardAdd {
                        reservation: name.into(),
                        forward: fwd(base + i),
                    })
                    .unwrap();
                assert_eq!(r.outcome, Outcome::Changed, "{name} own add {i}");
                if i % 3 == 0 {
                    let r = h
                        .run(MapOp::ForwardRemove {
                            reservation: name.into(),
                            key: fwd(base + i).key(),
                            to: None,
                        })
                        .unwrap();
                    assert_eq!(r.outcome, Outcome::Changed, "{name} own remove {i}");
                }
                match h.run(MapOp::ForwardAdd {
                    reservation: name.into(),
                    forward: fwd(9000),
                }) {
                    Ok(r) if r.outcome == Outcome::Changed => log.push('+'),
                    Ok(r) => assert_eq!(r.outcome, Outcome::Unchanged),
                    Err(e) => assert!(
                        e.innermost().to_string().contains("belongs to reservation"),
                        "{e:?}"
                    ),
                }
                if i % 2 == 1 {
                    let r = h
                        .run(MapOp::ForwardRemove {
                            reservation: name.into(),
                            key: fwd(9000).key(),
                            to: None,
                        })
                        .unwrap();
                    if r.outcome == Outcome::Changed {
                        log.push('-');
                    }
                }
            }
            (log, h.stats())
        };
        let (agent_a, agent_b) = (agent.clone(), agent);
        let a = std::thread::spawn(move || agent_a("a", 1000, "192.0.2.1"));
        let b = std::thread::spawn(move || agent_b("b", 2000, "192.0.2.2"));
        let (log_a, stats_a) = a.join().unwrap();
        let (log_b, stats_b) = b.join().unwrap();
        // The handles did plan again (their caches went stale) and did commit from cache.
        assert!(
            stats_a.replanned + stats_b.replanned > 0,
            "{stats_a:?} {stats_b:?}"
        );
        assert!(
            stats_a.from_cache > 0 && stats_b.from_cache > 0,
            "{stats_a:?} {stats_b:?}"
        );
        let left = list_forwards(first.session(), Family::Ipv4).unwrap();
        for (name, base, addr) in [("a", 1000u16, "192.0.2.1"), ("b", 2000, "192.0.2.2")] {
            let mut own: Vec<u16> = left
                .iter()
                .filter(|f| f.reservation == name && f.forward.public_port != 9000)
                .map(|f| {
                    assert_eq!(f.forward.to.ip().to_string(), addr);
                    f.forward.public_port
                })
                .collect();
            own.sort();
            let want: Vec<u16> = (0..ROUNDS)
                .filter(|i| i % 3 != 0)
                .map(|i| base + i)
                .collect();
            assert_eq!(own, want, "{name}'s own forwards");
        }
        // A handle removes the contested key only while it holds it: its successes
        // alternate, starting with an add.
        let mut held = 0;
        for (name, log) in [("a", &log_a), ("b", &log_b)] {
            let mut mine = false;
            for c in log.iter() {
                assert_eq!(*c == '+', !mine, "{name}: {log:?}");
                mine = !mine;
            }
            let owner = left
                .iter()
                .find(|f| f.forward.public_port == 9000)
                .map(|f| f.reservation.clone());
            assert_eq!(
                mine,
                owner.as_deref() == Some(name),
                "{name}: {log:?} {owner:?}"
            );
            held += usize::from(mine);
        }
        assert!(held <= 1);
    });
}

/// `xtnl serve` applies `"layout": "map"` operations to the map layout (not to iptables'
/// nat table), through a handle it keeps per namespace and family: a steady-state request
/// commits on its first attempt, and a change from outside between two requests still gives
/// the answer reads give.
#[test]
fn serve_applies_the_map_layout_through_a_handle() {
    use serde_json::json;
    common::in_netns(|| {
        let server = serve_support::Server::start(&["--audit", "off"], &[]);
        let mut c = server.client();
        let fwd = |port: u32| {
            json!({"protocol": "tcp", "public_port": port, "to": "192.0.2.3:3389",
                   "in_interface": "eth1"})
        };
        let call = |c: &mut serve_support::Client, op: serde_json::Value| {
            c.call(&json!({"id": 1, "operations": [op]}))
        };
        let r = call(
            &mut c,
            json!({"op": "reservation_setup", "chain": "vcld-1", "layout": "map",
                   "forwards": [fwd(50443)]}),
        );
        assert_eq!(r["ok"], true, "{r}");
        for port in [50444, 50445] {
            let r = call(
                &mut c,
                json!({"op": "forward_add", "chain": "vcld-1", "layout": "map", "forward": fwd(port)}),
            );
            assert_eq!(r["ok"], true, "{r}");
            assert_eq!(r["transactions"][0]["attempts"], 1, "{r}");
        }
        let map = common::run_ok("nft", &["list", "map", "ip", "xtnl_nat", "forwards"]);
        for port in ["50443", "50444", "50445"] {
            assert!(map.contains(port) && map.contains("vcld-1"), "{map}");
        }
        let nat = common::run("nft", &["list", "ruleset"]);
        assert!(
            !String::from_utf8_lossy(&nat.stdout).contains("chain vcld-1"),
            "no reservation chain: {}",
            String::from_utf8_lossy(&nat.stdout)
        );
        // From outside: another reservation takes a key; the next request is planned again.
        common::run_ok(
            "nft",
            &[
                "add",
                "element",
                "ip",
                "xtnl_nat",
                "forwards",
                r#"{ "eth1" . tcp . 50446 comment "vcld-2" : 192.0.2.9 . 22 }"#,
            ],
        );
        let r = call(
            &mut c,
            json!({"op": "forward_add", "chain": "vcld-1", "layout": "map", "forward": fwd(50446)}),
        );
        assert_eq!(r["ok"], false, "{r}");
        assert!(
            r.to_string().contains("belongs to reservation vcld-2"),
            "{r}"
        );
        let r = call(
            &mut c,
            json!({"op": "teardown", "chain": "vcld-1", "layout": "map"}),
        );
        assert_eq!(r["ok"], true, "{r}");
        let map = common::run_ok("nft", &["list", "map", "ip", "xtnl_nat", "forwards"]);
        assert!(!map.contains("vcld-1") && map.contains("vcld-2"), "{map}");
    });
}
