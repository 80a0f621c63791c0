//! `xtnl serve` against the alternatives, in one run, in a network namespace of its own:
//!
//! 1. A Perl agent (benches/serve/perl_bench.pl) sets up N = 500 reservations (each
//!    followed by one single iptables command on it) and tears them all down back to back:
//!    through `xtnl serve` over its socket and over stdio, one `xtnl` process per call, and
//!    iptables-nft per command; p50/p99 of each step and the ratios.
//! 2. 64 clients x 200 requests (100 set-up + teardown cycles each, every client its own
//!    reservations) through one `xtnl serve` at once: failures, the final ruleset against
//!    the model (nothing left), cycles/s against 64 `iptables-legacy -w` workers doing the
//!    agent's commands in the same run.
//! 3. 100 kill -9 of the service at random moments while a client sets up and tears down:
//!    after each, every reservation is either whole (chain, its forward, one jump) or absent.
//! 4. 1,000 malformed lines: each answered with an error, the service alive after them.
//!
//! Run: `cargo bench --bench serve` (about a minute; `-- --quick` for a smoke run;
//! `-- --only perl|contention|kills|malformed` for one part).
//! Targets are printed with PASS/FAIL, never asserted.

#[path = "../src/scratch.rs"]
mod scratch;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Env {
    xtnl: PathBuf,
    dir: PathBuf,
    lock: PathBuf,
}

impl Env {
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("XTABLES_LOCKFILE", &self.lock);
        c
    }
    fn serve(&self, tag: &str) -> (Child, PathBuf) {
        self.serve_with(tag, &[])
    }
    fn serve_with(&self, tag: &str, extra: &[&str]) -> (Child, PathBuf) {
        let sock = self.dir.join(format!("{tag}.sock"));
        let child = self
            .cmd(&self.xtnl)
            .args(["--audit", "off", "serve", "--socket"])
            .arg(&sock)
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn xtnl serve");
        let t = Instant::now();
        while UnixStream::connect(&sock).is_err() {
            assert!(t.elapsed() < Duration::from_secs(20), "serve did not start");
            std::thread::sleep(Duration::from_millis(2));
        }
        (child, sock)
    }
    fn reset(&self) {
        let _ = Command::new("nft").args(["flush", "ruleset"]).status();
        let _ = self
            .cmd("iptables-legacy")
            .args(["-t", "nat", "-F"])
            .status();
        let _ = self
            .cmd("iptables-legacy")
            .args(["-t", "nat", "-X"])
            .status();
    }
}

fn stop(mut c: Child) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(c.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = c.wait();
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() {
        return f64::NAN;
    }
    s[((s.len() - 1) as f64 * p).round() as usize]
}

fn perl_run(env: &Env, mode: &str, target: &str, n: usize) -> Value {
    let out = env.dir.join(format!("perl-{mode}.json"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/serve/perl_bench.pl");
    let status = env
        .cmd("perl")
        .args([script, mode, target, &n.to_string(), out.to_str().unwrap()])
        .status()
        .expect("run perl");
    assert!(status.success(), "perl bench {mode} failed");
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

fn ms(v: &Value, k: &str) -> Vec<f64> {
    v[k].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn perl_latency(env: &Env, n: usize) {
    println!(
        "\n## 1. A Perl agent, N = {n} reservations (ms; set-up, one single command, teardown back to back)\n"
    );
    println!("| path | set-up p50 | p99 | single p50 | p99 | teardown p50 | p99 | failures |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for mode in ["socket", "stdio", "xtnl", "iptables"] {
        env.reset();
        let (server, target) = match mode {
            "socket" => {
                let (c, s) = env.serve("perl");
                (Some(c), s.to_str().unwrap().to_owned())
            }
            "stdio" | "xtnl" => (None, env.xtnl.to_str().unwrap().to_owned()),
            _ => (None, "iptables-nft".to_owned()),
        };
        let v = perl_run(env, mode, &target, n);
        if let Some(c) = server {
            stop(c);
        }
        let (s, o, t) = (ms(&v, "setup"), ms(&v, "single"), ms(&v, "teardown"));
        let name = match mode {
            "socket" => "xtnl serve, unix socket",
            "stdio" => "xtnl serve --stdio",
            "xtnl" => "one xtnl process per call",
            _ => "iptables-nft per command",
        };
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            pct(&s, 0.5),
            pct(&s, 0.99),
            pct(&o, 0.5),
            pct(&o, 0.99),
            pct(&t, 0.5),
            pct(&t, 0.99),
            v["failures"]
        );
        rows.push((mode, pct(&s, 0.5), pct(&o, 0.5), pct(&t, 0.5)));
    }
    let get = |m: &str| rows.iter().find(|r| r.0 == m).copied().unwrap();
    let sock = get("socket");
    for (other, target) in [("xtnl", 10.0), ("iptables", 50.0)] {
        let o = get(other);
        let seq = |r: (&str, f64, f64, f64)| r.1 + r.2 + r.3;
        let ratio = seq(o) / seq(sock);
        println!(
            "\nsocket vs {other}: set-up {:.1}x, single {:.1}x, teardown {:.1}x, whole sequence {:.1}x (target >= {target}x: {})",
            o.1 / sock.1,
            o.2 / sock.2,
            o.3 / sock.3,
            ratio,
            if ratio >= target { "PASS" } else { "FAIL" }
        );
    }
}

fn call(r: &mut BufReader<UnixStream>, w: &mut UnixStream, req: &Value) -> Value {
    writeln!(w, "{req}").unwrap();
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or(Value::Null)
}

fn setup_req(chain: &str, port: u64) -> Value {
    json!({"operations": [{"op": "reservation_setup", "chain": chain,
        "jump_comment": format!("VCL: jump to {chain}"),
        "forwards": [{"protocol": "tcp", "public_port": port, "to": "192.0.2.3:3389"}]}]})
}

/// `clients` connections at once, each `cycles` set-up + teardown cycles of its own
/// reservations; returns cycles/s, failures, whether the final ruleset is the model's
/// (nothing left) and the service's ping statistics.
fn serve_clients(
    env: &Env,
    clients: usize,
    cycles: usize,
    existing: usize,
    extra: &[&str],
) -> (f64, usize, bool, Value) {
    env.reset();
    populate(env, "iptables-nft-restore", existing);
    let (server, sock) = env.serve_with("many", extra);
    let t = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|w| {
            let sock = sock.clone();
            std::thread::spawn(move || {
                let mut s = UnixStream::connect(&sock).unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut failures = 0;
                for i in 0..cycles {
                    let chain = format!("vcld-{w}-{}", i % 4);
                    let a = call(&mut r, &mut s, &setup_req(&chain, 1000 + w as u64));
                    let b = call(
                        &mut r,
                        &mut s,
                        &json!({"operations": [{"op": "teardown", "chain": chain}]}),
                    );
                    failures += usize::from(a["ok"] != true) + usize::from(b["ok"] != true);
                }
                failures
            })
        })
        .collect();
    let failures: usize = workers.into_iter().map(|h| h.join().unwrap()).sum();
    let rate = (clients * cycles) as f64 / t.elapsed().as_secs_f64();
    let stats = {
        let mut s = UnixStream::connect(&sock).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        call(&mut r, &mut s, &json!({"ping": {}}))
    };
    stop(server);
    let left = String::from_utf8_lossy(
        &Command::new("iptables-nft")
            .args(["-t", "nat", "-S"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    (rate, failures, model(&left, existing), stats)
}

/// `existing` reservations `vcld-pN` (chain, jump, forward) through `restore --noflush`.
fn populate(env: &Env, restore: &str, existing: usize) {
    if existing == 0 {
        return;
    }
    let mut text = String::from("*nat\n:PREROUTING ACCEPT [0:0]\n");
    for n in 0..existing {
        text.push_str(&format!(":vcld-p{n} - [0:0]\n"));
    }
    for n in 0..existing {
        text.push_str(&format!(
            "-A PREROUTING -m comment --comment \"VCL: jump to vcld-p{n}\" -j vcld-p{n}\n"
        ));
        text.push_str(&format!(
            "-A vcld-p{n} -p tcp -m tcp --dport {} -j DNAT --to-destination 192.0.2.9:22\n",
            30000 + n
        ));
    }
    text.push_str("COMMIT\n");
    let mut c = env
        .cmd(restore)
        .arg("--noflush")
        .stdin(Stdio::piped())
        .spawn()
        .expect("restore");
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    assert!(
        c.wait().unwrap().success(),
        "{restore} of {existing} reservations"
    );
}

/// The model after the run: the `existing` reservations, nothing else.
fn model(listing: &str, existing: usize) -> bool {
    let chains: Vec<&str> = listing.lines().filter(|l| l.starts_with("-N ")).collect();
    chains.len() == existing && chains.iter().all(|l| l.starts_with("-N vcld-p"))
}

fn contention(env: &Env, clients: usize, cycles: usize, legacy_cycles: usize, existing: usize) {
    println!(
        "\n## 2. {clients} clients x {} requests at once, {existing} reservations there already\n",
        cycles * 2
    );
    let (single_rate, single_failures, single_model, _) =
        serve_clients(env, clients, cycles, existing, &["--no-group-commit"]);
    let (serve_rate, failures, model_ok, stats) =
        serve_clients(env, clients, cycles, existing, &[]);
    // 64 iptables-legacy -w workers doing the agent's commands.
    env.reset();
    populate(env, "iptables-legacy-restore", existing);
    let t = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|w| {
            let lock = env.lock.clone();
            std::thread::spawn(move || {
                let ipt = |args: &[&str]| {
                    Command::new("iptables-legacy")
                        .env("XTABLES_LOCKFILE", &lock)
                        .arg("-w")
                        .args(args)
                        .stderr(Stdio::null())
                        .status()
                        .map(|s| s.success())
                        .unwrap_or(false)
                };
                let mut failures = 0;
                for i in 0..legacy_cycles {
                    let c = format!("vcld-{w}-{i}");
                    let comment = format!("VCL: jump to {c}");
                    let port = (1000 + w).to_string();
                    let ok = ipt(&["-t", "nat", "-N", &c])
                        && ipt(&[
                            "-t",
                            "nat",
                            "-I",
                            "PREROUTING",
                            "-j",
                            &c,
                            "-m",
                            "comment",
                            "--comment",
                            &comment,
                        ])
                        && ipt(&[
                            "-t",
                            "nat",
                            "-A",
                            &c,
                            "-p",
                            "tcp",
                            "--dport",
                            &port,
                            "-j",
                            "DNAT",
                            "--to-destination",
                            "192.0.2.3:3389",
                        ])
                        && ipt(&[
                            "-t",
                            "nat",
                            "-D",
                            "PREROUTING",
                            "-j",
                            &c,
                            "-m",
                            "comment",
                            "--comment",
                            &comment,
                        ])
                        && ipt(&["-t", "nat", "-F", &c])
                        && ipt(&["-t", "nat", "-X", &c]);
                    failures += usize::from(!ok);
                }
                failures
            })
        })
        .collect();
    let legacy_failures: usize = workers.into_iter().map(|h| h.join().unwrap()).sum();
    let legacy_rate = (clients * legacy_cycles) as f64 / t.elapsed().as_secs_f64();
    let legacy_left = String::from_utf8_lossy(
        &env.cmd("iptables-legacy")
            .args(["-t", "nat", "-S"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    let legacy_model = model(&legacy_left, existing);
    println!("| path | cycles/s | failures |");
    println!("|---|---|---|");
    println!("| serve (group commit) | {serve_rate:.1} | {failures} |");
    println!(
        "| serve --no-group-commit | {single_rate:.1} | {single_failures} (model: {}) |",
        if single_model { "equal" } else { "DIFFERENT" }
    );
    println!(
        "| iptables-legacy -w | {legacy_rate:.1} | {legacy_failures} (model: {}) |",
        if legacy_model { "equal" } else { "DIFFERENT" }
    );
    let ratio = serve_rate / legacy_rate;
    println!(
        "\nserve vs iptables-legacy -w: {ratio:.1}x (target >= 20x: {}); failures {failures} (target 0: {}); final ruleset equal to the model (the existing reservations, nothing else): {}; group commits {}, split groups {}",
        if ratio >= 20.0 { "PASS" } else { "FAIL" },
        if failures == 0 { "PASS" } else { "FAIL" },
        if model_ok { "PASS" } else { "FAIL" },
        stats["server"]["group_commits"],
        stats["server"]["split_groups"],
    );
}

/// Every reservation in `nat` is whole (its chain with one forward and exactly one jump to
/// it) or absent; returns the ones that are not.
fn torn(env: &Env) -> Vec<String> {
    let out = env
        .cmd("iptables-nft")
        .args(["-t", "nat", "-S"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut bad = Vec::new();
    let chains: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("-N ")).collect();
    for c in &chains {
        let jumps = text
            .lines()
            .filter(|l| l.starts_with("-A PREROUTING") && l.ends_with(&format!("-j {c}")))
            .count();
        let rules = text
            .lines()
            .filter(|l| l.starts_with(&format!("-A {c} ")))
            .count();
        if jumps != 1 || rules != 1 {
            bad.push(format!("{c}: {jumps} jumps, {rules} rules"));
        }
    }
    for l in text.lines().filter(|l| l.starts_with("-A PREROUTING")) {
        let target = l.rsplit(' ').next().unwrap_or("");
        if !chains.contains(&target) {
            bad.push(format!("dangling jump: {l}"));
        }
    }
    bad
}

fn kills(env: &Env, n: usize) {
    println!("\n## 3. {n} kill -9 of the service at random moments\n");
    env.reset();
    let mut torn_states = 0;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut answered = 0;
    for k in 0..n {
        let (mut server, sock) = env.serve(&format!("kill{k}"));
        let client = std::thread::spawn(move || {
            let Ok(mut s) = UnixStream::connect(&sock) else {
                return 0;
            };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut n = 0;
            for i in 0.. {
                let chain = format!("vcld-k{}", i % 8);
                let req = if i % 2 == 0 {
                    setup_req(&chain, 3000 + (i % 8) as u64)
                } else {
                    json!({"operations": [{"op": "teardown", "chain": chain}]})
                };
                if writeln!(s, "{req}").is_err() {
                    break;
                }
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                n += 1;
            }
            n
        });
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % 20_000));
        let _ = server.kill();
        let _ = server.wait();
        answered += client.join().unwrap_or(0);
        let bad = torn(env);
        if !bad.is_empty() {
            torn_states += 1;
            eprintln!("kill {k}: {bad:?}");
        }
    }
    println!(
        "{n} kills, {answered} requests answered in between; rulesets between two requests: {torn_states} (target 0: {})",
        if torn_states == 0 { "PASS" } else { "FAIL" }
    );
}

fn malformed(env: &Env, n: usize) {
    println!("\n## 4. {n} malformed lines\n");
    let mut input = String::new();
    for i in 0..n {
        input.push_str(&format!("{{\"id\": {i}, \"bogus\": [\n"));
    }
    input.push_str("{\"id\": \"alive\", \"ping\": {}}\n");
    let t = Instant::now();
    let mut child = env
        .cmd(&env.xtnl)
        .args(["--audit", "off", "serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect();
    let errors = lines.iter().filter(|l| l["ok"] == false).count();
    let alive = lines
        .last()
        .is_some_and(|l| l["id"] == "alive" && l["ok"] == true);
    println!(
        "{errors} of {n} answered with an error, service alive after them: {alive}, exit {:?}, {:.1} ms in all ({})",
        out.status.code(),
        t.elapsed().as_secs_f64() * 1000.0,
        if errors == n && alive { "PASS" } else { "FAIL" }
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    scratch::enter_new().expect("unshare(CLONE_NEWNET) (benches run as root)");
    scratch::refuse_initial().expect("a scratch namespace");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(format!("serve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let env = Env {
        xtnl: support::locate_xtnl("serve"),
        lock: dir.join("xtables.lock"),
        dir: dir.clone(),
    };
    println!(
        "# xtnl serve benchmark{}",
        if quick { " (--quick)" } else { "" }
    );
    let only = std::env::args().skip_while(|a| a != "--only").nth(1);
    let run = |part: &str| only.as_deref().is_none_or(|o| o == part);
    if run("perl") {
        perl_latency(&env, if quick { 50 } else { 500 });
    }
    if run("contention") {
        let c = if quick { 10 } else { 100 };
        contention(&env, 64, c, if quick { 1 } else { 4 }, 0);
        contention(&env, 64, c, if quick { 1 } else { 2 }, 500);
    }
    if run("kills") {
        kills(&env, if quick { 10 } else { 100 });
    }
    if run("malformed") {
        malformed(&env, 1000);
    }
    env.reset();
    let _ = std::fs::remove_dir_all(&dir);
}
