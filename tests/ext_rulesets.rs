//! Whole rulesets shaped like the ones Docker, kube-proxy (iptables mode), libvirt, a host
//! firewall with fail2ban and an IPv6 host install (tests/rulesets, written for xtnl from
//! those projects' documentation): loaded by the real iptables-restore, `xtnl save` must
//! print what iptables-save prints; `xtnl save | xtnl restore` must change nothing; and
//! `xtnl restore` of the file must give what iptables-restore gives. Both backends.
//! Also an edge gateway's (time, cluster, u32, bpf, ipcomp, TRACE) and an IPv6 site's
//! (DNPT/SNPT, eui64), written for xtnl from the iptables man pages.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{in_netns, private_lock_path};

const RULESETS: [(&str, bool, &str); 7] = [
    ("gateway", false, include_str!("rulesets/gateway.v4")),
    ("npt", true, include_str!("rulesets/npt.v6")),
    ("docker", false, include_str!("rulesets/docker.v4")),
    ("kube-proxy", false, include_str!("rulesets/kube-proxy.v4")),
    ("libvirt", false, include_str!("rulesets/libvirt.v4")),
    ("fail2ban", false, include_str!("rulesets/fail2ban.v4")),
    ("ipv6-host", true, include_str!("rulesets/host.v6")),
];

fn with_stdin(program: &str, args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_owned();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    feeder.join().expect("feeder");
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Save output without its `#` comment lines (dates, versions).
fn body(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

struct Tools {
    six: bool,
    restore: &'static str,
    save: &'static str,
    xtnl: Vec<&'static str>,
}

fn tools(legacy: bool, six: bool) -> Tools {
    let mut xtnl = Vec::new();
    if legacy {
        xtnl.extend(["--backend", "legacy"]);
    }
    let (restore, save) = match (legacy, six) {
        (false, false) => ("iptables-nft-restore", "iptables-nft-save"),
        (false, true) => ("ip6tables-nft-restore", "ip6tables-nft-save"),
        (true, false) => ("iptables-legacy-restore", "iptables-legacy-save"),
        (true, true) => ("ip6tables-legacy-restore", "ip6tables-legacy-save"),
    };
    Tools {
        six,
        restore,
        save,
        xtnl,
    }
}

fn xtnl(t: &Tools, lock: &str, cmd: &str, input: &str) -> Output {
    let mut a = t.xtnl.clone();
    a.push(cmd);
    if t.six {
        a.push("-6");
    }
    with_stdin(common::xtnl_bin(), &a, &[("XTABLES_LOCKFILE", lock)], input)
}

fn check(name: &'static str, six: bool, file: &'static str, legacy: bool) {
    let t = tools(legacy, six);
    // The oracle loads the file; xtnl saves what it sees; xtnl restores its own save.
    let oracle_saved = in_netns(move || {
        let t = tools(legacy, six);
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        let o = with_stdin(t.restore, &[], &[("XTABLES_LOCKFILE", lock.as_str())], file);
        assert!(
            o.status.success(),
            "{name}: {} failed: {}",
            t.restore,
            text(&o)
        );
        let theirs = body(&with_stdin(t.save, &[], &[], ""));
        let ours = xtnl(&t, &lock, "save", "");
        assert!(ours.status.success(), "{name}: xtnl save: {}", text(&ours));
        assert_eq!(
            body(&ours),
            theirs,
            "{name}: xtnl save differs from {}",
            t.save
        );
        let again = xtnl(&t, &lock, "restore", &body(&ours));
        assert!(
            again.status.success(),
            "{name}: xtnl restore of its save: {}",
            text(&again)
        );
        let after = body(&with_stdin(t.save, &[], &[], ""));
        assert_eq!(
            after, theirs,
            "{name}: xtnl save | xtnl restore changed the ruleset"
        );
        theirs
    });
    // xtnl loads the file: the oracle must see what its own restore gave.
    let xtnl_saved = in_netns(move || {
        let t = tools(legacy, six);
        let lock = private_lock_path();
        let lock = lock.to_str().expect("utf-8 path").to_owned();
        let o = xtnl(&t, &lock, "restore", file);
        assert!(o.status.success(), "{name}: xtnl restore: {}", text(&o));
        body(&with_stdin(t.save, &[], &[], ""))
    });
    assert_eq!(
        xtnl_saved, oracle_saved,
        "{name}: {} after xtnl restore differs from after {}",
        t.save, t.restore
    );
    // Every rule of the file is there, as written (the files use iptables-save's words).
    for line in file.lines().filter(|l| l.starts_with("-A")) {
        assert!(
            oracle_saved.contains(line),
            "{name}: {line} not saved as written"
        );
    }
}

#[test]
fn rulesets_on_nf_tables_like_iptables_nft() {
    common::require_kernel!();
    for (name, six, file) in RULESETS {
        check(name, six, file, false);
    }
}

#[test]
fn rulesets_on_x_tables_like_iptables_legacy() {
    common::require_kernel!();
    for (name, six, file) in RULESETS {
        check(name, six, file, true);
    }
}
