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
