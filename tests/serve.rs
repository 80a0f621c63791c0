//! `xtnl serve` against the real kernel: every request line answered in order with its id
//! (malformed ones too, and the service goes on), stdio mode ends with status 0, socket
//! callers under the policy entries for their uid and groups and audited with their uid,
//! network-namespace targeting, SIGTERM, clients that leave mid-request, many clients at
//! once, and a delegated run. Results are checked with iptables-nft's own listing.

mod common;
#[path = "common/serve.rs"]
mod serve_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use common::{in_netns, private_lock_path, run, run_ok, xtnl_bin};
use serde_json::{Value, json};
use serve_support::{Server, scratch_dir};

fn nat_rules() -> String {
    run_ok("iptables-nft", &["-t", "nat", "-S"])
}

fn setup(chain: &str, port: u32) -> Value {
    json!({"operations": [{"op": "reservation_setup", "chain": chain,
        "jump_comment": format!("VCL: jump to {chain}"),
        "forwards": [{"protocol": "tcp", "public_port": port, "to": "192.0.2.3:3389",
                      "in_interface": "eth1"}]}]})
}

/// Runs `xtnl serve --stdio` with `input`; returns the exit status, response lines, stderr.
fn stdio(pre: &[&str], args: &[&str], input: &[u8]) -> (Option<i32>, Vec<Value>, String) {
    let mut child = Command::new(xtnl_bin())
        .args(pre)
        .args(["serve", "--stdio"])
        .args(args)
        .env("XTABLES_LOCKFILE", private_lock_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn xtnl serve --stdio");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (
        out.status.code(),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn stdio_answers_every_line_in_order_even_malformed_ones_and_exits_0_at_eof() {
    in_netns(|| {
        let malformed: [&[u8]; 10] = [
            b"not json",
            b"{\"id\": 1",
            b"[1,2,3]",
            b"{\"id\": 2}",
            b"{\"ping\": {}, \"list\": {}}",
            b"{\"ping\": {}, \"bogus\": true}",
            b"{\"iptables\": \"-S\"}",
            b"{\"operations\": [{\"op\": \"no_such_op\"}]}",
            b"{\"id\": \"\xff\xfe\", \"ping\": {}}",
            b"{\"list\": {\"family\": \"ipx\"}}",
        ];
        let mut input = Vec::new();
        let mut want_ids = Vec::new();
        let mut push = |line: &[u8], id: Value| {
            input.extend_from_slice(line);
            input.push(b'\n');
            want_ids.push(id);
        };
        push(br#"{"id": "first", "ping": {}}"#, json!("first"));
        for i in 0..1000 {
            let m = malformed[i % malformed.len()];
            let id = if m.starts_with(b"{\"id\": 2}") {
                json!(2)
            } else {
                Value::Null
            };
            push(m, id);
        }
        // A line past --max-request-bytes is refused whole; the next line is read normally.
        push(&vec![b'x'; 5000], Value::Null);
        push(
            json!({"id": 10, "iptables": ["-t", "nat", "-N", "vcld-9"]})
                .to_string()
                .as_bytes(),
            json!(10),
        );
        let mut s = setup("vcld-10", 50010);
        s["id"] = json!({"deep": [1]});
        push(s.to_string().as_bytes(), json!({"deep": [1]}));
        push(
            br#"{"id": 12, "iptables": ["-t", "nat", "-C", "vcld-9", "-j", "ACCEPT"]}"#,
            json!(12),
        );
        push(
            br#"{"id": 13, "list": {"table": "nat", "chain": "vcld-10"}}"#,
            json!(13),
        );
        push(br#"{"id": 14, "save": {"table": "nat"}}"#, json!(14));
        push(
            br#"{"id": 15, "iptables": ["-t", "nat", "-S", "--json"]}"#,
            json!(15),
        );
        input.extend_from_slice(b"\n   \n"); // blank lines are not requests
        // The last line without its newline is still a request.
        input.extend_from_slice(br#"{"id": "last", "ping": {}}"#);
        want_ids.push(json!("last"));

        let (code, lines, stderr) = stdio(
            &["--audit", "off"],
            &["--max-request-bytes", "4096"],
            &input,
        );
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(lines.len(), want_ids.len(), "one response per request line");
        for (i, (l, id)) in lines.iter().zip(&want_ids).enumerate() {
            assert_eq!(&l["id"], id, "response {i}: {l}");
            assert_eq!(l["version"], 1, "response {i}");
            assert!(l["ok"].is_boolean(), "response {i}");
        }
        for l in &lines[1..1001] {
            assert_eq!(l["ok"], false, "{l}");
            assert_eq!(l["error"]["kind"], "invalid_input", "{l}");
            assert_eq!(l["error"]["status"], 2, "{l}");
        }
        assert!(
            lines[1001]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than the limit of 4096 bytes")
        );
        let n = 1002;
        assert_eq!(lines[n]["ok"], true, "{}", lines[n]);
        assert_eq!(lines[n + 1]["ok"], true, "{}", lines[n + 1]);
        assert_eq!(lines[n + 1]["transactions"][0]["status"], "committed");
        // -C of a rule that is not there: iptables' status 1, as an error object.
        assert_eq!(lines[n + 2]["ok"], false);
        assert_eq!(lines[n + 2]["error"]["status"], 1, "{}", lines[n + 2]);
        let chain = &lines[n + 3]["tables"][0]["chains"][0];
        assert_eq!(chain["name"], "vcld-10");
        assert_eq!(
            chain["rules"][0]["line"],
            "-A vcld-10 -i eth1 -p tcp -m tcp --dport 50010 -j DNAT --to-destination 192.0.2.3:3389"
        );
        assert_eq!(lines[n + 4]["tables"][0]["table"], "nat");
        assert_eq!(lines[n + 5]["family"], "ip");
        // What the service did is what iptables-nft sees.
        let rules = nat_rules();
        assert!(rules.contains("-N vcld-9\n"), "{rules}");
        assert!(
            rules.contains(
                "-A PREROUTING -m comment --comment \"VCL: jump to vcld-10\" -j vcld-10\n"
            ),
            "{rules}"
        );
        assert!(
            rules.contains("-A vcld-10 -i eth1 -p tcp -m tcp --dport 50010 -j DNAT --to-destination 192.0.2.3:3389"),
            "{rules}"
        );
    });
}

fn as_uid(uid: u32, gid: u32, socket: &std::path::Path, line: &Value) -> Value {
    const CLIENT: &str = "use IO::Socket::UNIX; my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) \
        or die \"connect: $!\"; print $s $ARGV[1], \"\\n\"; my $r = <$s>; print $r;";
    let out = run(
        "setpriv",
        &[
            &format!("--reuid={uid}"),
            &format!("--regid={gid}"),
            "--clear-groups",
            "perl",
            "-e",
            CLIENT,
            socket.to_str().unwrap(),
            &line.to_string(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| {
        panic!(
            "uid {uid}: not JSON ({e}): {text:?} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const POLICY: &str = r#"
[[allow]]
table = "nat"
chains = ["vcld-a*"]
verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
uids = [1001]

[[allow]]
table = "nat"
chains = ["vcld-b*"]
verbs = ["create", "flush", "delete", "add-rule", "delete-rule"]
groups = [4242]

[[allow]]
table = "nat"
chains = ["PREROUTING"]
verbs = ["add-rule", "delete-rule"]
jump_to = ["vcld-*"]
"#;

#[test]
fn socket_callers_get_the_policy_entries_for_their_uid_and_groups_and_are_audited() {
    in_netns(|| {
        let dir = scratch_dir("policy");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        let server = Server::start(
            &[
                "--policy-file",
                policy.to_str().unwrap(),
                "--audit",
                "stderr",
            ],
            &["--socket-mode", "0666"],
        );
        let sock = server.socket.clone();
        // The built-in chain exists (the entries allow jumps from it, not creating it).
        run_ok("iptables-nft", &["-t", "nat", "-P", "PREROUTING", "ACCEPT"]);
        let r = as_uid(1001, 1001, &sock, &setup("vcld-a1", 50001));
        assert_eq!(r["ok"], true, "{r}");
        let r = as_uid(1001, 1001, &sock, &setup("vcld-b1", 50002));
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(
            r["transactions"][0]["error"]["kind"], "policy_denied",
            "{r}"
        );
        let r = as_uid(1002, 4242, &sock, &setup("vcld-b1", 50003));
        assert_eq!(r["ok"], true, "group 4242 may: {r}");
        let r = as_uid(1002, 1002, &sock, &setup("vcld-b2", 50004));
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["status"], 5, "{r}");
        // Root over the socket gets the entries for root: none here.
        let mut c = server.client();
        let r = c.call(&setup("vcld-a2", 50005));
        assert_eq!(r["ok"], false, "{r}");
        // A caller under a policy names namespaces, never paths root would open for it.
        let mut req = json!({"id": 1, "ping": {}});
        req["netns"] = json!("/proc/1/ns/net");
        let r = as_uid(1001, 1001, &sock, &req);
        assert_eq!(r["error"]["kind"], "policy_denied", "{r}");
        // ... and only namespaces an entry is for.
        req["netns"] = json!("some-ns");
        let r = as_uid(1001, 1001, &sock, &req);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no entry for uid 1001 in network namespace \"some-ns\""),
            "{r}"
        );
        let rules = nat_rules();
        assert!(
            rules.contains("-N vcld-a1\n") && rules.contains("-N vcld-b1\n"),
            "{rules}"
        );
        assert!(
            !rules.contains("vcld-b2") && !rules.contains("vcld-a2"),
            "{rules}"
        );
        let (code, stderr) = server.stop();
        assert_eq!(code, Some(0), "SIGTERM ends the service with 0: {stderr}");
        for want in [
            "uid=1001 euid=0 mode=socket result=ok ops=4: add table ip nat; create chain ip nat vcld-a1; insert rule ip nat PREROUTING; add rule ip nat vcld-a1",
            "uid=1001 euid=0 mode=socket result=denied",
            "uid=1002 euid=0 mode=socket result=ok",
            "uid=1002 euid=0 mode=socket result=denied",
            "uid=0 euid=0 mode=socket result=denied",
        ] {
            assert!(stderr.contains(want), "missing {want:?} in\n{stderr}");
        }
    });
}

#[test]
fn without_a_policy_only_root_may_use_the_socket() {
    in_netns(|| {
        let server = Server::start(
            &["--policy-file", "/dev/null", "--audit", "off"],
            &["--socket-mode", "0666"],
        );
        drop(server);
        // `--policy-file /dev/null` is an empty policy (allows nothing); without any policy:
        let server = Server::start(&["--audit", "off"], &["--socket-mode", "0666"]);
        let r = as_uid(1001, 1001, &server.socket, &json!({"ping": {}}));
        assert_eq!(r["ok"], false, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("only root may use it"),
            "{r}"
        );
        let r = server.client().call(&setup("vcld-root", 50100));
        assert_eq!(r["ok"], true, "{r}");
    });
}

/// A named namespace (`ip netns add`), deleted when dropped.
struct NamedNetns(String);

impl NamedNetns {
    fn new() -> NamedNetns {
        NamedNetns::named("a")
    }
    fn named(tag: &str) -> NamedNetns {
        let name = format!("xtnl-serve-test-{}-{tag}", std::process::id());
        let _ = run("ip", &["netns", "del", &name]);
        run_ok("ip", &["netns", "add", &name]);
        NamedNetns(name)
    }
}

impl Drop for NamedNetns {
    fn drop(&mut self) {
        let _ = run("ip", &["netns", "del", &self.0]);
    }
}

#[test]
fn requests_and_commands_target_named_network_namespaces() {
    in_netns(|| {
        let ns = NamedNetns::new();
        let server = Server::start(&["--audit", "off"], &[]);
        let mut c = server.client();
        let r =
            c.call(&json!({"id": 1, "netns": ns.0, "iptables": ["-t", "nat", "-N", "vcld-ns"]}));
        assert_eq!(r["ok"], true, "{r}");
        let r = c.call(&json!({"id": 2, "netns": ns.0, "operations":
            setup("vcld-ns2", 50200)["operations"]}));
        assert_eq!(r["ok"], true, "{r}");
        let r = c.call(&json!({"id": 3, "netns": "no-such-ns-xtnl", "ping": {}}));
        assert_eq!(r["ok"], true, "a ping needs no namespace: {r}");
        let r = c.call(&json!({"id": 4, "netns": "no-such-ns-xtnl", "list": {"table": "nat"}}));
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("/run/netns/no-such-ns-xtnl"),
            "{r}"
        );
        // There, and not here.
        let there = run_ok(
            "ip",
            &["netns", "exec", &ns.0, "iptables-nft", "-t", "nat", "-S"],
        );
        assert!(
            there.contains("-N vcld-ns\n") && there.contains("-N vcld-ns2\n"),
            "{there}"
        );
        assert!(!nat_rules().contains("vcld-ns"));
        // The command line: --netns NAME or PATH, before or after the command.
        let by_name = run_ok(xtnl_bin(), &["--netns", &ns.0, "-t", "nat", "-S"]);
        assert_eq!(by_name, there);
        let path = format!("/run/netns/{}", ns.0);
        let by_path = run_ok(xtnl_bin(), &["-t", "nat", "-S", "--netns", &path]);
        assert_eq!(by_path, there);
        let out = run(xtnl_bin(), &["--netns", "no-such-ns-xtnl", "-S"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("ip netns list"));
    });
}

/// A namespace's session is opened lazily, by its first request's first use of the kernel:
/// a failure to open it (the namespace does not exist yet) is still each request's error,
/// naming the namespace, not a failure of the request's first transaction (an `apply`
/// document answers no `status`), and nothing is kept that stops a later request once the
/// namespace exists.
#[test]
fn a_namespace_that_cannot_be_opened_is_the_requests_error() {
    in_netns(|| {
        let name = format!("xtnl-serve-test-{}-late", std::process::id());
        let _ = run("ip", &["netns", "del", &name]);
        let path = format!("/run/netns/{name}");
        let server = Server::start(&["--audit", "off"], &[]);
        let mut c = server.client();
        let requests = [
            json!({"id": 1, "netns": name, "iptables": ["-t", "nat", "-N", "vcld-late"]}),
            json!({"id": 2, "netns": name, "iptables": ["-t", "nat", "-S"]}),
            json!({"id": 3, "netns": name, "operations": setup("vcld-late2", 50300)["operations"]}),
        ];
        for req in &requests {
            let r = c.call(req);
            assert_eq!(r["ok"], false, "{r}");
            assert!(
                r.get("status").is_none(),
                "not a transaction's failure: {r}"
            );
            assert!(
                r["error"]["message"].as_str().unwrap().contains(&path),
                "{r}"
            );
        }
        let ns = NamedNetns::named("late");
        assert_eq!(ns.0, name);
        for req in &requests {
            let r = c.call(req);
            assert_eq!(r["ok"], true, "{r}");
        }
        let there = run_ok(
            "ip",
            &["netns", "exec", &ns.0, "iptables-nft", "-t", "nat", "-S"],
        );
        assert!(
            there.contains("-N vcld-late\n") && there.contains("-N vcld-late2\n"),
            "{there}"
        );
        assert!(!nat_rules().contains("vcld-late"));
    });
}

#[test]
fn sigterm_finishes_the_request_in_flight_and_exits_0() {
    in_netns(|| {
        let forwards: Vec<Value> = (0..400)
            .map(|i| json!({"protocol": "tcp", "public_port": 40000 + i, "to": "192.0.2.3:22"}))
            .collect();
        let req = json!({"id": 1, "operations": [{"op": "reservation_setup",
            "chain": "vcld-big", "forwards": forwards}]});
        for delay_ms in [0u64, 2, 5, 20] {
            let _ = run(xtnl_bin(), &["-t", "nat", "-F", "vcld-big"]);
            let _ = run(xtnl_bin(), &["-t", "nat", "-F", "PREROUTING"]);
            let _ = run(xtnl_bin(), &["-t", "nat", "-X", "vcld-big"]);
            let mut child = Command::new(xtnl_bin())
                .args(["--audit", "off", "serve", "--stdio"])
                .env("XTABLES_LOCKFILE", private_lock_path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = BufReader::new(child.stdout.take().unwrap());
            writeln!(stdin, r#"{{"id": 0, "ping": {{}}}}"#).unwrap();
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            writeln!(stdin, "{req}").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay_ms));
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            )
            .unwrap();
            let mut rest = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(0), "delay {delay_ms} ms");
            let rules = nat_rules();
            let n = rules.matches("-A vcld-big").count();
            if rest.trim().is_empty() {
                assert_eq!(n, 0, "no response, so nothing may be there: {rules}");
            } else {
                let v: Value = serde_json::from_str(rest.trim()).unwrap();
                if v["ok"] == true {
                    assert_eq!(n, 400, "committed, so all of it is there");
                } else {
                    // It arrived after the signal: refused whole.
                    let m = v["error"]["message"].as_str().unwrap_or("");
                    assert!(m.contains("shutting down; nothing was done"), "{v}");
                    assert_eq!(n, 0, "refused, so nothing of it is there");
                }
            }
            // Either way, never part of it.
            assert!(n == 0 || n == 400, "{n} rules");
        }
    });
}

#[test]
fn clients_that_leave_mid_request_change_nothing_half_way_and_many_clients_are_served() {
    in_netns(|| {
        let server = Server::start(&["--audit", "off"], &[]);
        // Half a line, then gone: nothing is executed.
        {
            let mut c = server.client();
            let line = setup("vcld-half", 50300).to_string();
            c.send_raw_partial(&line.as_bytes()[..line.len() / 2]);
        }
        // A whole line, then gone without reading the response: all of it is done.
        {
            let mut c = server.client();
            c.send_raw(setup("vcld-gone", 50301).to_string().as_bytes());
        }
        let mut c = server.client();
        assert_eq!(c.call(&json!({"ping": {}}))["ok"], true);
        let rules = nat_rules();
        assert!(!rules.contains("vcld-half"), "{rules}");
        // 16 clients at once, each setting up 20 reservations and tearing down half of them.
        let sock = server.socket.clone();
        let workers: Vec<_> = (0..16)
            .map(|w| {
                let sock = sock.clone();
                std::thread::spawn(move || {
                    let mut c = serve_support::Client::connect(&sock);
                    for i in 0..20 {
                        let chain = format!("vcld-{w}-{i}");
                        let mut req = setup(&chain, 1000 + w * 100 + i);
                        req["id"] = json!(i);
                        let r = c.call(&req);
                        assert_eq!(r["ok"], true, "{r}");
                        assert_eq!(r["id"], i);
                        if i % 2 == 0 {
                            let r = c.call(&json!({"id": "td", "operations": [{"op": "teardown", "chain": chain}]}));
                            assert_eq!(r["ok"], true, "{r}");
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let rules = nat_rules();
        assert!(rules.contains("-N vcld-gone\n"), "{rules}");
        for w in 0..16 {
            for i in 0..20 {
                let there = rules.contains(&format!("-N vcld-{w}-{i}\n"));
                assert_eq!(there, i % 2 == 1, "vcld-{w}-{i}");
            }
        }
        assert_eq!(rules.matches("-A PREROUTING").count(), 16 * 10 + 1);
    });
}

#[test]
fn a_delegated_run_serves_stdio_under_the_policy_and_refuses_a_socket() {
    in_netns(|| {
        let etc = scratch_dir("etc");
        for f in ["passwd", "group", "protocols", "services"] {
            if std::path::Path::new("/etc").join(f).exists() {
                std::fs::copy(format!("/etc/{f}"), etc.join(f)).unwrap();
            }
        }
        std::fs::create_dir(etc.join("xtnl")).unwrap();
        std::fs::write(etc.join("xtnl/policy.toml"), POLICY).unwrap();
        // The system log a delegated run needs (it refuses to change what it cannot record).
        let _journal = std::os::unix::net::UnixDatagram::bind(etc.join("journal")).unwrap();
        let input = format!("{}\n{}\n", setup("vcld-a7", 50700), setup("vcld-x7", 50701));
        let script = format!(
            "iptables-nft -t nat -P PREROUTING ACCEPT && \
             mount --bind {etc} /etc && mount -t tmpfs xtnl-test-run /run && cd / && \
             mkdir -p /run/systemd/journal && touch /run/systemd/journal/socket && \
             mount --bind {etc}/journal /run/systemd/journal/socket && \
             (SUDO_UID=1001 {bin} serve --socket {etc}/s.sock; echo \"socket-rc=$?\" >&2); \
             printf '%s' '{input}' | SUDO_UID=1001 {bin} serve --stdio",
            etc = etc.display(),
            bin = xtnl_bin(),
        );
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .env("XTABLES_LOCKFILE", private_lock_path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("serve --socket is for a service that root starts"),
            "{stderr}"
        );
        assert!(stderr.contains("socket-rc=2"), "{stderr}");
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{stderr}");
        assert_eq!(
            lines[0]["ok"], true,
            "uid 1001 may set up vcld-a*: {}",
            lines[0]
        );
        assert_eq!(lines[1]["ok"], false, "{}", lines[1]);
        assert_eq!(lines[1]["status"], 5);
        let rules = nat_rules();
        assert!(
            rules.contains("-N vcld-a7\n") && !rules.contains("vcld-x7"),
            "{rules}"
        );
    });
}

#[test]
fn requests_arriving_together_are_committed_as_one_group_and_a_bad_one_fails_alone() {
    in_netns(|| {
        let server = Server::start(&["--audit", "off"], &[]);
        let sock = server.socket.clone();
        for round in 0..10 {
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(32));
            let workers: Vec<_> = (0..32)
                .map(|w| {
                    let (sock, barrier) = (sock.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        let mut c = serve_support::Client::connect(&sock);
                        let req = if w == 7 {
                            // A request the kernel state refuses: its chain does not exist.
                            json!({"id": w, "operations": [{"op": "forward_add", "chain": "nosuch",
                                "forward": {"protocol": "tcp", "public_port": 1, "to": "192.0.2.1:2"}}]})
                        } else {
                            let mut r = setup(&format!("vcld-g{round}-{w}"), 2000 + w);
                            r["id"] = json!(w);
                            r
                        };
                        barrier.wait();
                        c.call(&req)
                    })
                })
                .collect();
            for (w, h) in workers.into_iter().enumerate() {
                let r = h.join().unwrap();
                assert_eq!(r["id"], w);
                assert_eq!(r["ok"], w != 7, "{r}");
            }
        }
        let rules = nat_rules();
        for round in 0..10 {
            for w in (0..32).filter(|w| *w != 7) {
                assert!(
                    rules.contains(&format!("-N vcld-g{round}-{w}\n")),
                    "vcld-g{round}-{w}"
                );
            }
        }
        let stats = server.client().call(&json!({"ping": {}}));
        let groups = stats["server"]["group_commits"].as_u64().unwrap();
        let split = stats["server"]["split_groups"].as_u64().unwrap();
        assert!(
            groups > 0,
            "no group commit in 10 rounds of 32 requests at once: {stats}"
        );
        assert!(split > 0, "the bad request's group was split: {stats}");
    });
}

#[test]
fn a_socket_systemd_passes_is_served_socket_activation() {
    in_netns(|| {
        let dir = scratch_dir("activation");
        let sock = dir.join("activated.sock");
        let unused = dir.join("not-this-one.sock");
        let mut activator = Command::new("systemd-socket-activate")
            .arg("-l")
            .arg(&sock)
            .arg(xtnl_bin())
            .args(["--audit", "off", "serve", "--socket"])
            .arg(&unused)
            .env("XTABLES_LOCKFILE", private_lock_path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("systemd-socket-activate (.ci/run installs systemd)");
        // systemd-socket-activate binds, then listens: the path exists before a connect is
        // taken, so wait for a connect that succeeds (not only for the path).
        let t = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            assert!(
                t.elapsed().as_secs() < 20,
                "no listening socket from systemd-socket-activate"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut c = serve_support::Client::connect(&sock);
        let r = c.call(&json!({"id": 1, "ping": {}}));
        assert_eq!(r["ok"], true, "{r}");
        let r = c.call(&setup("vcld-act", 50900));
        assert_eq!(r["ok"], true, "{r}");
        // A second client on the same passed socket.
        let r = serve_support::Client::connect(&sock).call(&json!({"ping": {}}));
        assert_eq!(r["server"]["requests"], 3, "one service for both: {r}");
        assert!(
            !unused.exists(),
            "the passed socket is served, --socket PATH is not bound"
        );
        assert!(nat_rules().contains("-N vcld-act\n"));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(activator.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let status = activator.wait().unwrap();
        assert_eq!(status.code(), Some(0));
    });
}

#[test]
fn family_inet_takes_the_generic_chain_and_rule_operations() {
    in_netns(|| {
        let doc = json!({"id": 1, "family": "inet", "operations": [
            {"op": "create_chain", "table": "agent", "chain": "in"},
            {"op": "ensure_rule", "table": "agent", "chain": "in",
             "rule": "-p tcp --dport 22 -s 192.0.2.0/24 -j ACCEPT"},
            {"op": "ensure_rule", "table": "agent", "chain": "in",
             "rule": {"protocol": "tcp", "dport": 23, "jump": "DROP"}}]});
        let mut input = format!("{doc}\n{doc}\n");
        input.push_str(
            &json!({"id": 3, "family": "inet", "operations": [{"op": "teardown", "chain": "x"}]})
                .to_string(),
        );
        let (code, lines, stderr) = stdio(&["--audit", "off"], &[], input.as_bytes());
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(lines[0]["ok"], true, "{}", lines[0]);
        let outcomes: Vec<&Value> = lines[1]["transactions"][0]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| &o["outcome"])
            .collect();
        assert!(
            outcomes.iter().all(|o| *o != "changed"),
            "again: nothing changes: {}",
            lines[1]
        );
        assert_eq!(lines[2]["ok"], false);
        assert!(
            lines[2]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("family inet takes"),
            "{}",
            lines[2]
        );
        let nft = run_ok("nft", &["list", "table", "inet", "agent"]);
        assert!(
            nft.contains("ip saddr 192.0.2.0/24 tcp dport 22 counter packets 0 bytes 0 accept"),
            "{nft}"
        );
        assert!(
            nft.contains("tcp dport 23 counter packets 0 bytes 0 drop"),
            "{nft}"
        );
    });
}

#[test]
fn a_delegated_run_joins_only_the_namespaces_its_policy_names() {
    in_netns(|| {
        let ns = NamedNetns::named("deleg");
        let unlisted = NamedNetns::named("unlisted");
        let etc = scratch_dir("etc-netns");
        for f in ["passwd", "group", "protocols", "services"] {
            if std::path::Path::new("/etc").join(f).exists() {
                std::fs::copy(format!("/etc/{f}"), etc.join(f)).unwrap();
            }
        }
        std::fs::create_dir(etc.join("xtnl")).unwrap();
        std::fs::write(
            etc.join("xtnl/policy.toml"),
            format!(
                "[[allow]]\ntable = \"nat\"\nchains = [\"vcld-*\"]\nverbs = [\"create\"]\n\
                 uids = [1001]\nnetns = [\"{}\"]\n",
                ns.0
            ),
        )
        .unwrap();
        let _journal = std::os::unix::net::UnixDatagram::bind(etc.join("journal")).unwrap();
        let save = scratch_dir("netns-save");
        let script = format!(
            "set -u; mount --rbind /run/netns {save} && mount --bind {etc} /etc && \
             mount -t tmpfs xtnl-test-run /run && mkdir /run/netns && \
             mount --rbind {save} /run/netns && cd / && mkdir -p /run/systemd/journal && \
             touch /run/systemd/journal/socket && \
             mount --bind {etc}/journal /run/systemd/journal/socket || exit 99
             x() {{ SUDO_UID=1001 {bin} \"$@\" >/dev/null 2>&1; echo $?; }}
             echo \"named=$(x --netns {ns} -t nat -N vcld-n1)\"
             echo \"path=$(x --netns /run/netns/{ns} -t nat -S)\"
             echo \"missing=$(x --netns missing-xtnl-ns -t nat -S)\"
             echo \"unlisted=$(x --netns {unlisted} -t nat -S)\"
             echo \"own=$(x -t nat -N vcld-n2)\"",
            save = save.display(),
            etc = etc.display(),
            bin = xtnl_bin(),
            ns = ns.0,
            unlisted = unlisted.0,
        );
        let out = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // A namespace no entry names is refused before it is looked for, existing or not.
        for want in ["named=0", "path=2", "missing=5", "unlisted=5", "own=5"] {
            assert!(
                text.lines().any(|l| l == want),
                "{want} in\n{text}\n{stderr}"
            );
        }
        let there = run_ok(
            "ip",
            &["netns", "exec", &ns.0, "iptables-nft", "-t", "nat", "-S"],
        );
        assert!(there.contains("-N vcld-n1\n"), "{there}");
        assert!(!nat_rules().contains("vcld-n2"));
    });
}

#[test]
fn the_x_tables_backend_when_asked_per_service_or_per_request() {
    in_netns(|| {
        let input = [
            json!({"id": 1, "iptables": ["-t", "nat", "-N", "vcld-l1"]}),
            setup("vcld-l2", 50800),
            json!({"id": 3, "backend": "nft", "iptables": ["-t", "nat", "-N", "vcld-n3"]}),
        ]
        .iter()
        .map(|v| format!("{v}\n"))
        .collect::<String>();
        let (code, lines, stderr) = stdio(
            &["--audit", "off", "--backend", "legacy"],
            &[],
            input.as_bytes(),
        );
        assert_eq!(code, Some(0), "{stderr}");
        assert!(lines.iter().all(|l| l["ok"] == true), "{lines:?}");
        let legacy = run_ok("iptables-legacy", &["-t", "nat", "-S"]);
        assert!(
            legacy.contains("-N vcld-l1\n") && legacy.contains("-N vcld-l2\n"),
            "{legacy}"
        );
        assert!(
            legacy.contains(
                "-A PREROUTING -m comment --comment \"VCL: jump to vcld-l2\" -j vcld-l2\n"
            ),
            "{legacy}"
        );
        let nft = nat_rules();
        assert!(
            nft.contains("-N vcld-n3\n") && !nft.contains("vcld-l"),
            "{nft}"
        );
    });
}

/// A caller under a policy may ask for the x_tables backend: its requests are held to its
/// policy entries and audited as on nf_tables (the x_tables handle gets the request's
/// policy), where the service used to refuse it outright.
#[test]
fn a_restricted_callers_legacy_requests_are_held_to_its_policy_and_audited() {
    in_netns(|| {
        let dir = scratch_dir("legacy-policy");
        let policy = dir.join("policy.toml");
        std::fs::write(&policy, POLICY).unwrap();
        let server = Server::start(
            &[
                "--policy-file",
                policy.to_str().unwrap(),
                "--audit",
                "stderr",
            ],
            &["--socket-mode", "0666"],
        );
        let sock = server.socket.clone();
        let legacy = |mut v: Value| {
            v["backend"] = json!("legacy");
            v
        };
        // Allowed: uid 1001 may set up vcld-a*.
        let r = as_uid(1001, 1001, &sock, &legacy(setup("vcld-a1", 50101)));
        assert_eq!(r["ok"], true, "{r}");
        // Denied: vcld-b* is group 4242's, in an apply and as an iptables command.
        let r = as_uid(1001, 1001, &sock, &legacy(setup("vcld-b1", 50102)));
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["status"], 5, "{r}");
        assert_eq!(
            r["transactions"][0]["error"]["kind"], "policy_denied",
            "{r}"
        );
        let req = legacy(json!({"id": 2, "iptables": ["-t", "nat", "-N", "vcld-b2"]}));
        let r = as_uid(1001, 1001, &sock, &req);
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["error"]["kind"], "policy_denied", "{r}");
        // The allowed change is in x_tables (not nf_tables), the denied ones nowhere.
        let tables = run_ok("iptables-legacy", &["-t", "nat", "-S"]);
        assert!(
            tables.contains("-N vcld-a1\n")
                && tables.contains(
                    "-A PREROUTING -m comment --comment \"VCL: jump to vcld-a1\" -j vcld-a1\n"
                ),
            "{tables}"
        );
        assert!(!tables.contains("vcld-b"), "{tables}");
        let nft = run("iptables-nft", &["-t", "nat", "-S"]);
        assert!(
            !String::from_utf8_lossy(&nft.stdout).contains("vcld-"),
            "{nft:?}"
        );
        let (code, stderr) = server.stop();
        assert_eq!(code, Some(0), "{stderr}");
        for want in [
            "uid=1001 euid=0 mode=socket result=ok",
            "uid=1001 euid=0 mode=socket result=denied",
        ] {
            assert!(stderr.contains(want), "missing {want:?} in\n{stderr}");
        }
        assert_eq!(
            stderr
                .matches("uid=1001 euid=0 mode=socket result=denied")
                .count(),
            2,
            "{stderr}"
        );
    });
}
