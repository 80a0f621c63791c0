//! `iptables-xml` (issue 24): xtnl under that name against the real iptables-xml of
//! iptables 1.8.9, differentially: the same iptables-save text (the rulesets and corpora of
//! tests/, iptables-save output of rulesets loaded into a scratch namespace, and bad or odd
//! input) to both, with and without `-c`/`-v`, and identical stdout, stderr and status.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

const REAL: &str = "/usr/bin/iptables-xml";

/// Runs `iptables-xml ARGS` (argv[0] exactly `iptables-xml`, as getopt's messages name it).
fn run(bin: &str, args: &[&str], stdin: &[u8], dir: &std::path::Path) -> (Vec<u8>, Vec<u8>, i32) {
    // Not a delegated run, even when the tests themselves run under sudo.
    let mut child = Command::new(bin)
        .env_remove("SUDO_UID")
        .env_remove("PKEXEC_UID")
        .env_remove("DOAS_USER")
        .arg0("iptables-xml")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // The tool may exit before reading it all (bad options, a file operand).
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let out = child.wait_with_output().expect("wait");
    (out.stdout, out.stderr, out.status.code().unwrap_or(-1))
}

fn same(name: &str, args: &[&str], stdin: &[u8], dir: &std::path::Path) {
    let real = run(REAL, args, stdin, dir);
    let ours = run(env!("CARGO_BIN_EXE_xtnl"), args, stdin, dir);
    assert_eq!(
        (
            String::from_utf8_lossy(&ours.0),
            String::from_utf8_lossy(&ours.1),
            ours.2
        ),
        (
            String::from_utf8_lossy(&real.0),
            String::from_utf8_lossy(&real.1),
            real.2
        ),
        "{name} with {args:?}: xtnl (left) differs from iptables-xml (right)"
    );
}

fn all_options(name: &str, text: &[u8], dir: &std::path::Path) {
    for args in [
        &[][..],
        &["-c"],
        &["-v"],
        &["-c", "-v"],
        &["--combine", "--verbose"],
    ] {
        same(name, args, text, dir);
    }
}

/// Odd and bad input: every branch of iptables-xml's line parser and its messages.
const ODD: &[&str] = &[
    "*filter\n:INPUT ACCEPT [1:2]\n:X - [0:0]\n:Y - [3:4]\n[5:6] -A INPUT -p tcp ! --dport 22 -j X\n-A INPUT -s 192.0.2.1 -g Y\n-A X ! -s 198.51.100.4 -j ACCEPT\n-A X -m comment --comment \"a -j b & <c>\" -j DROP\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp -j LOG\n-A INPUT -p tcp -j MARK --set-mark 1\n-A INPUT -p tcp -j ACCEPT\n-A INPUT -p tcp -j DROP\n-A INPUT -j ACCEPT\n-A INPUT -j ACCEPT\nCOMMIT\n",
    "# comment -- with --- hyphens\n\n*nat\n:PREROUTING ACCEPT\n:A - [x:y]\n:B - [1]\n:C - 7\n-A A -j\n-A A -m\n-A A ! foo\n-A A ! -p udp ! bar\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment \"esc \\\" q \\\\ x\" -j ACCEPT\n-A INPUT -m comment --comment \"\" -j ACCEPT\n-A INPUT -m comment --comment \"unterminated\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n[1:2] -A INPUT\n[:3] -A INPUT -j ACCEPT\n[4:] -A INPUT -j ACCEPT\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n[1:2 -A INPUT\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-p tcp -j ACCEPT\nCOMMIT\n",
    "COMMIT\n",
    "*\n",
    "*filter\n:\nCOMMIT\n",
    "*filter\n:X\nCOMMIT\n",
    "*filter\nFOO\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m state --state NEW -j ACCEPT\n*raw\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j CT --notrack\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -s 10.0.0.1 -j ACCEPT\n-A INPUT -s 10.0.0.1 -j DROP\n-A INPUT -s 10.0.0.2 -j LOG\n-A INPUT -s 10.0.0.2 -j LOG --log-prefix \"x y\"\n-A INPUT -s 10.0.0.2 -g INPUT\n-A INPUT -s 10.0.0.2 -j INPUT\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -m comment --comment \"\u{e9}\u{7f}\u{1}\" -j ACCEPT\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT\t-p\ttcp  -j ACCEPT \n  -A INPUT -j DROP\n-A INPUT -A X -j DROP\nCOMMIT\n\n",
    "*filter\n:INPUT ACCEPT [99999999999999999999:18446744073709551615]\n:X - [-5:+3]\n-A INPUT -j X\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT \"-j\" ACCEPT\n-A INPUT -j \"ACCEPT\"\n-A INPUT ! \"! \"\nCOMMIT\n",
    "*filter x y\n:INPUT ACCEPT [0:0] extra\nCOMMIT\nCOMMIT\n",
    "*filter\n:A - [3:4]\n:B -\n:C - [7\n:D - [ 8 : 9 ]\nCOMMIT\n",
    "",
    "\n\n# only\n",
    "*filter\n:INPUT ACCEPT [0:0]\n:X - [0:0]\n:Y - [0:0]\n-A Y -j ACCEPT\n-p tcp -A INPUT -j ACCEPT\n-A INPUT -A X -j DROP\n-A X -A INPUT -j DROP\n-p -A -A INPUT\n\"-A\" Y\nx -A X\nCOMMIT\n",
    "*filter\n:INPUT ACCEPT [0:0]\n:X - [0:0]\n:X - [1:1]\n-A X -j ACCEPT\n-A INPUT -j X\n-A X -j DROP\nCOMMIT\n",
    "*filter\n:CHAIN-NAME-OF-MORE-THAN-32-BYTES-LONG - [0:0]\n:INPUT ACCEPT [0:0]\n-A CHAIN-NAME-OF-MORE-THAN-32-BYTES-LONG -j ACCEPT\n-A CHAIN-NAME-OF-MORE-THAN-32-BYTES-LONG -j DROP\n-A INPUT -j CHAIN-NAME-OF-MORE-THAN-32-BYTES-LONG\nCOMMIT\n*a-table-name-of-more-than-32-bytes-long\nCOMMIT\n",
];

/// A scratch directory for one test, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("xtnl-iptables-xml-{}-{test}", std::process::id()));
    std::fs::create_dir_all(dir.join("a-directory")).expect("scratch dir");
    Scratch(dir)
}

#[test]
fn rulesets_and_corpora_convert_identically() {
    let dir = scratch("rulesets_and_corpora_convert_identically");
    let mut n = 0;
    for sub in ["tests/rulesets", "tests/ext_corpus"] {
        for e in std::fs::read_dir(sub).expect(sub) {
            let path = e.expect("entry").path();
            let text = std::fs::read(&path).expect("read");
            all_options(&path.display().to_string(), &text, &dir);
            n += 1;
        }
    }
    assert!(n >= 7, "only {n} inputs");
}

#[test]
fn odd_and_bad_input_converts_identically() {
    let dir = scratch("odd_and_bad_input_converts_identically");
    for (i, text) in ODD.iter().enumerate() {
        all_options(&format!("ODD[{i}]"), text.as_bytes(), &dir);
    }
}

/// iptables' limits: a word of 1024 bytes, 255 words, a line longer than fgets' 10239
/// bytes (read in pieces), NUL bytes (the end of a C string).
#[test]
fn limits_and_nul_bytes_behave_identically() {
    let dir = scratch("limits_and_nul_bytes_behave_identically");
    let head = "*filter\n:INPUT ACCEPT [0:0]\n";
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for len in [1023, 1024, 1100] {
        inputs.push(
            format!(
                "{head}-A INPUT -m comment --comment {} -j ACCEPT\nCOMMIT\n",
                "x".repeat(len)
            )
            .into_bytes(),
        );
        inputs.push(
            format!(
                "{head}-A INPUT -m comment --comment \"{}\" -j ACCEPT\nCOMMIT\n",
                "x".repeat(len)
            )
            .into_bytes(),
        );
    }
    for words in [254, 255, 300] {
        inputs.push(format!("{head}-A INPUT{}\nCOMMIT\n", " x".repeat(words - 2)).into_bytes());
    }
    let long = format!(" -m comment --comment {}", "y".repeat(900)).repeat(12);
    inputs.push(format!("{head}-A INPUT{long} -j ACCEPT\nCOMMIT\n").into_bytes());
    inputs.push(format!("{head}# a\0b\n-A INPUT -j ACCEPT\0 junk\n\0\nCOMMIT\n").into_bytes());
    inputs.push(
        format!("{head}[12] -A INPUT:x -j ACCEPT\n[1:2]] -A INPUT -j ACCEPT\nCOMMIT\n")
            .into_bytes(),
    );
    for (i, text) in inputs.iter().enumerate() {
        for args in [&[][..], &["-c"], &["-v"]] {
            same(&format!("limits[{i}]"), args, text, &dir);
        }
    }
}

#[test]
fn command_lines_behave_identically() {
    let dir = scratch("command_lines_behave_identically");
    std::fs::write(dir.join("rules"), ODD[0]).expect("write");
    for args in [
        &["-h"][..],
        &["-x"],
        &["--comb"],
        &["--help=x"],
        &["--verb", "rules"],
        &["--zz"],
        &["-cv"],
        &["-vx"],
        &["rules", "b"],
        &["/nonexistent"],
        &["a-directory"],
        &["rules"],
        &["rules", "-c"],
        &["--", "rules"],
        &["--", "-c"],
        &["-"],
        &["--help", "-c"],
    ] {
        same("command line", args, ODD[1].as_bytes(), &dir);
    }
}

/// iptables-save's own output, of each ruleset loaded into a scratch namespace, by both
/// backends' tools, with counters.
#[test]
fn iptables_save_output_converts_identically() {
    let dir = scratch("iptables_save_output_converts_identically");
    let lock = dir.join("xtables.lock");
    for (file, restore, save) in [
        ("gateway.v4", "iptables-nft-restore", "iptables-nft-save -c"),
        (
            "docker.v4",
            "iptables-legacy-restore",
            "iptables-legacy-save -c",
        ),
        ("kube-proxy.v4", "iptables-nft-restore", "iptables-nft-save"),
        (
            "host.v6",
            "ip6tables-legacy-restore",
            "ip6tables-legacy-save -c",
        ),
    ] {
        let path = format!("tests/rulesets/{file}");
        let out = Command::new("unshare")
            .args(["-n", "sh", "-c", &format!("{restore} < {path} && {save}")])
            .env("XTABLES_LOCKFILE", &lock)
            .output()
            .expect("unshare");
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.len() > 100, "{file}: saved nothing");
        all_options(&format!("saved {file}"), &out.stdout, &dir);
    }
}

/// A delegated run (here sudo's, simulated as the hardening tests do: root with `SUDO_UID`)
/// refuses to convert: a file operand would be read with root's rights.
#[test]
fn a_delegated_run_reads_nothing() {
    let dir = scratch("a_delegated_run_reads_nothing");
    let secret = dir.join("secret");
    std::fs::write(&secret, "*filter\n# the-secret-line\nCOMMIT\n").expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_xtnl"))
        .arg0("iptables-xml")
        .arg(&secret)
        .env("SUDO_UID", "65534")
        .env("SUDO_GID", "65534")
        .env("SUDO_USER", "nobody")
        .output()
        .expect("run");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(!all.contains("the-secret-line"), "{all}");
    assert!(all.contains("needs no privilege"), "{all}");
    // Without the delegation the same file converts (the refusal above is the delegation's).
    let plain = Command::new(env!("CARGO_BIN_EXE_xtnl"))
        .arg0("iptables-xml")
        .arg(&secret)
        .env_remove("SUDO_UID")
        .env_remove("PKEXEC_UID")
        .env_remove("DOAS_USER")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&plain.stdout);
    assert!(
        plain.status.success() && text.contains("secret"),
        "{plain:?}"
    );
}
