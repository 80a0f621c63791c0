//! The client examples in clients/ against a real `xtnl serve`: the Perl agent's
//! reservation set-up and teardown (as its iptables commands, and as one operation each)
//! over the socket and over stdio, the Python client, and the shell client through socat and
//! through stdio. What they leave is compared with what iptables-nft itself leaves for the
//! same commands in a twin namespace.

mod common;
#[path = "common/serve.rs"]
mod serve_support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{in_netns, private_lock_path, run_ok, xtnl_bin};
use serve_support::Server;

fn client(program: &str, script: &str, args: &[&str]) -> Output {
    let path = format!("{}/clients/{script}", env!("CARGO_MANIFEST_DIR"));
    Command::new(program)
        .arg(&path)
        .args(args)
        .env("XTABLES_LOCKFILE", private_lock_path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (.ci/run installs it): {e}"))
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn nat() -> String {
    run_ok("iptables-nft", &["-t", "nat", "-S"])
}

/// The agent's commands for a reservation, run through iptables-nft in a namespace of
/// their own: what the serve path must leave too.
fn iptables_nft_reference(chain: &'static str) -> String {
    in_netns(move || {
        let comment = format!("VCL: jump to {chain}");
        run_ok("iptables-nft", &["-t", "nat", "-N", chain]);
        run_ok(
            "iptables-nft",
            &[
                "-t",
                "nat",
                "-I",
                "PREROUTING",
                "-j",
                chain,
                "-m",
                "comment",
                "--comment",
                &comment,
            ],
        );
        run_ok(
            "iptables-nft",
            &[
                "-t",
                "nat",
                "-A",
                chain,
                "-i",
                "eth1",
                "-p",
                "tcp",
                "--dport",
                "50443",
                "-j",
                "DNAT",
                "--to-destination",
                "192.0.2.3:3389",
            ],
        );
        nat()
    })
}

#[test]
fn perl_agent_sets_up_and_tears_down_reservations_over_the_socket_and_stdio() {
    common::require_kernel!();
    let reference = iptables_nft_reference("vcld-5205");
    in_netns(move || {
        let server = Server::start(&["--audit", "off"], &[]);
        let sock = server.socket.to_str().unwrap().to_owned();
        let setup = ["setup", "vcld-5205", "eth1", "50443", "192.0.2.3:3389"];
        for (how, where_) in [("--socket", sock.as_str()), ("--stdio", xtnl_bin())] {
            for style in [&["--iptables"][..], &[][..]] {
                let mut args = vec![how, where_];
                args.extend_from_slice(style);
                let mut a = args.clone();
                a.extend_from_slice(&setup);
                let out = ok(&client("perl", "perl/reservation.pl", &a), "perl setup");
                assert_eq!(
                    out.lines().count(),
                    if style.is_empty() { 1 } else { 3 },
                    "{out}"
                );
                assert_eq!(
                    nat(),
                    reference,
                    "{how} {style:?}: the same rules as iptables-nft's"
                );
                let mut a = args.clone();
                a.extend_from_slice(&["teardown", "vcld-5205"]);
                ok(&client("perl", "perl/reservation.pl", &a), "perl teardown");
                let left = nat();
                assert!(!left.contains("vcld-5205"), "{how} {style:?}: {left}");
            }
        }
        // A refusal comes back as iptables' status, and the script says so.
        let out = client(
            "perl",
            "perl/reservation.pl",
            &["--socket", &sock, "--iptables", "teardown", "vcld-none"],
        );
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("\"status\":1"), "{text}");
    });
}

#[test]
fn python_client_over_the_socket_and_stdio() {
    in_netns(|| {
        let server = Server::start(&["--audit", "off"], &[]);
        let sock = server.socket.to_str().unwrap().to_owned();
        for (how, where_) in [("--socket", sock.as_str()), ("--stdio", xtnl_bin())] {
            let out = ok(
                &client(
                    "python3",
                    "python/xtnl_client.py",
                    &[
                        how,
                        where_,
                        "setup",
                        "vcld-py",
                        "eth1",
                        "50080",
                        "192.0.2.8:80",
                    ],
                ),
                "python setup",
            );
            assert!(out.contains("\"status\": \"committed\""), "{out}");
            assert!(nat().contains(
                "-A vcld-py -i eth1 -p tcp -m tcp --dport 50080 -j DNAT --to-destination 192.0.2.8:80"
            ));
            ok(
                &client(
                    "python3",
                    "python/xtnl_client.py",
                    &[how, where_, "teardown", "vcld-py"],
                ),
                "python teardown",
            );
            assert!(!nat().contains("vcld-py"));
        }
    });
}

#[test]
fn shell_client_through_socat_and_stdio() {
    in_netns(|| {
        let server = Server::start(&["--audit", "off"], &[]);
        let sock = server.socket.to_str().unwrap().to_owned();
        let docs = concat!(
            r#"{"transactions": [{"operations": [{"op": "create_chain", "table": "nat", "chain": "vcld-sh"}]}]}"#,
            "\n",
            r#"{"operations": [{"op": "ensure_rule", "table": "nat", "chain": "vcld-sh", "rule": "-p udp --dport 53 -j DNAT --to-destination 192.0.2.53"}]}"#,
            "\n",
        );
        for (how, where_) in [("--socket", sock.as_str()), ("--stdio", xtnl_bin())] {
            let script = format!("{}/clients/shell/xtnl-apply.sh", env!("CARGO_MANIFEST_DIR"));
            let mut child = Command::new("sh")
                .args([script.as_str(), how, where_])
                .env("XTABLES_LOCKFILE", private_lock_path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(docs.as_bytes())
                .unwrap();
            let out = ok(&child.wait_with_output().unwrap(), "shell client");
            assert_eq!(out.lines().count(), 2, "{out}");
            assert!(nat().contains(
                "-A vcld-sh -p udp -m udp --dport 53 -j DNAT --to-destination 192.0.2.53\n"
            ));
            run_ok(xtnl_bin(), &["-t", "nat", "-F", "vcld-sh"]);
            run_ok(xtnl_bin(), &["-t", "nat", "-X", "vcld-sh"]);
        }
        // A failing document makes the script fail.
        let script = format!("{}/clients/shell/xtnl-apply.sh", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new("sh")
            .args([script.as_str(), "--socket", &sock])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"iptables\": [\"-t\", \"nat\", \"-X\", \"vcld-none\"]}\n")
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1));
    });
}
