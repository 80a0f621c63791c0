//! Peak memory of `xtnl restore` against its input size (issue 11: at most 4x the input plus
//! 16 MiB), beside `iptables-nft-restore` on the same input, in a scratch network namespace.
//!
//! `cargo bench --bench restore_memory` (sizes in MiB: `XTNL_BENCH_SIZES=1,16,64`, the
//! default). Each size runs three ways, each a fresh process measured by `/usr/bin/time -f %M`
//! (peak resident set): xtnl committing the whole file as root without a policy; xtnl run with
//! a policy of `max_ops = 4096` (refused while reading); and iptables-nft-restore.

#[path = "../src/scratch.rs"]
mod scratch;
use std::io::Write;
use std::process::{Command, Stdio};

fn locate_xtnl() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("bench path");
    let target = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>/deps");
    target.join("xtnl")
}

/// A restore file of about `mib` MiB: reservation chains of 64 DNAT rules each.
fn input(mib: usize) -> Vec<u8> {
    let want = mib << 20;
    let mut chains = Vec::new();
    let mut rules = Vec::with_capacity(want + 4096);
    let mut i = 0usize;
    while rules.len() < want {
        let c = i / 64;
        if i % 64 == 0 {
            chains.extend_from_slice(format!(":vcld-{c} - [0:0]\n").as_bytes());
        }
        rules.extend_from_slice(
            format!(
                "-A vcld-{c} -p tcp -m tcp --dport {} -j DNAT --to-destination 192.0.2.{}:22\n",
                1024 + i % 60000,
                1 + i % 250
            )
            .as_bytes(),
        );
        i += 1;
    }
    let mut out = b"*nat\n".to_vec();
    out.extend_from_slice(&chains);
    out.extend_from_slice(&rules);
    out.extend_from_slice(b"COMMIT\n");
    out
}

/// Peak RSS in KiB, exit status and seconds of `program args < input`.
fn measure(program: &str, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> (u64, i32, f64) {
    let mut c = Command::new("/usr/bin/time");
    c.arg("-f").arg("maxrss_kib=%M").arg(program).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let start = std::time::Instant::now();
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("/usr/bin/time (.ci/run installs time)");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = feeder.join();
    let secs = start.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    let kib = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kib="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maxrss in {err}"));
    (kib, out.status.code().unwrap_or(-1), secs)
}

fn flush() {
    let _ = Command::new("nft").args(["flush", "ruleset"]).status();
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    scratch::enter_new().expect("unshare(CLONE_NEWNET): run as root");
    scratch::refuse_initial().expect("not in the initial namespace");
    let xtnl = locate_xtnl();
    let xtnl = xtnl.to_str().expect("utf-8 path");
    let dir = std::env::temp_dir().join(format!("xtnl-restore-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let policy = dir.join("policy.toml");
    std::fs::write(
        &policy,
        "max_ops = 4096\n[[allow]]\ntable = \"nat\"\nchains = [\"vcld-*\"]\nverbs = [\"create\", \"flush\", \"add-rule\"]\n",
    )
    .expect("policy");
    let lock = dir.join("xtables.lock");
    let lock = lock.to_str().expect("utf-8");
    let sizes = std::env::var("XTNL_BENCH_SIZES").unwrap_or_else(|_| "1,16,64".into());
    println!(
        "| input | xtnl restore (root, commits) | bound 4x+16 MiB | xtnl under max_ops=4096 | iptables-nft-restore |"
    );
    println!("|---|---|---|---|---|");
    for mib in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<usize>().ok())
    {
        let text = input(mib);
        let bytes = text.len() as u64;
        flush();
        let (full, s1, t1) = measure(
            xtnl,
            &["--audit", "off", "restore", "--noflush"],
            &[("XTABLES_LOCKFILE", lock)],
            &text,
        );
        flush();
        let p = policy.to_str().expect("utf-8");
        let (early, s2, _) = measure(
            xtnl,
            &["--policy-file", p, "--audit", "off", "restore", "--noflush"],
            &[("XTABLES_LOCKFILE", lock)],
            &text,
        );
        flush();
        let (ipt, s3, t3) = measure(
            "iptables-nft-restore",
            &["--noflush"],
            &[("XTABLES_LOCKFILE", lock)],
            &text,
        );
        flush();
        let bound = (4 * bytes + (16 << 20)) / 1024;
        println!(
            "| {mib} MiB | {full} KiB ({:.2}x input, status {s1}, {t1:.1} s) | {bound} KiB{} | {early} KiB (status {s2}) | {ipt} KiB (status {s3}, {t3:.1} s; xtnl/iptables {:.2}) |",
            full as f64 * 1024.0 / bytes as f64,
            if full <= bound { "" } else { " EXCEEDED" },
            full as f64 / ipt as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
