//! Reservation set-up + teardown at 500 existing reservations: the xtnl library, the `xtnl`
//! binary, and the NAT-host agent's shell-out sequence (the commands and listings of
//! `shared/notes/nat-host-workload.md`) through `iptables-nft` and `iptables-legacy -w`, in
//! one run, with the ratios and the kernel round trips of each library operation.
//!
//! The agent's sequence, per reservation (one DNAT forward):
//! - set-up: `-t nat -S`; `-N vcld-X`; `-t nat -S`; `-I PREROUTING -j vcld-X -m comment ...`;
//!   `-t nat -S`; `-I vcld-X ... -j DNAT ...`; `iptables-save` (to a file);
//! - teardown: `-t nat -S`; `-F vcld-X`; `-t nat -S`; `-D PREROUTING -j vcld-X -m comment
//!   ...`; `-X vcld-X`.
//!
//! The library does the same with `nathost::setup` and `nathost::teardown` on one long-lived
//! session; the binary with `xtnl reservation setup` and `xtnl teardown`.
//!
//! Settling: a commit that deletes queues nf_tables' deferred destroy work, and the next
//! commit in the namespace waits for it (one RCU grace period: 4-20 ms here, in steps of a
//! scheduler tick; measured: a set-up right after a teardown takes 8-16 ms, after a settle
//! 0.8 ms). Every tool's set-up and teardown are timed after a settle (opening and closing a
//! netlink socket flushes that work), as in `benches/cli.rs`, so that no step pays for the
//! previous one's deletions; the library is also timed back to back, and both are printed.
//!
//! Everything runs in a network namespace the bench creates on its main thread first; the
//! nf_tables side is populated with `iptables-nft-restore --noflush`, the x_tables side with
//! `iptables-legacy-restore --noflush`. Run: `cargo bench --bench nathost` (about a minute),
//! `-- --quick` for a short run. Targets are printed with PASS/FAIL, never asserted.

#[path = "../src/scratch.rs"]
mod scratch;
mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xtnl::lock::{WaitPolicy, XtablesLock};
use xtnl::model::Family;
use xtnl::nathost::{self, Forward, Reservation};
use xtnl::nft::Session;

const EXISTING: usize = 500;

fn chain(id: usize) -> String {
    format!("vcld-{id}")
}

fn jump_comment(c: &str) -> String {
    format!("VCL: jump from nat table PREROUTING chain to reservation NAT chain {c}")
}

fn forward(id: usize) -> (u16, String) {
    (
        (20_000 + id % 40_000) as u16,
        format!(
            "10.{}.{}.{}:3389",
            (id >> 16) & 255,
            (id >> 8) & 255,
            id & 255
        ),
    )
}

fn forward_comment(port: u16, to: &str) -> String {
    format!("VCL: forward eth1:tcp/{port} --> {to}")
}

fn restore_file(n: usize) -> String {
    let mut s = String::from("*nat\n");
    for i in 0..n {
        let _ = writeln!(s, ":{} - [0:0]", chain(i));
    }
    for i in 0..n {
        let c = chain(i);
        let _ = writeln!(
            s,
            "-A PREROUTING -m comment --comment \"{}\" -j {c}",
            jump_comment(&c)
        );
        let (port, to) = forward(i);
        let _ = writeln!(
            s,
            "-A {c} -i eth1 -p tcp -m comment --comment \"{}\" -m tcp --dport {port} -j DNAT --to-destination {to}",
            forward_comment(port, &to)
        );
    }
    s.push_str("COMMIT\n");
    s
}

struct Bench {
    xtnl: PathBuf,
    lock: PathBuf,
    dir: PathBuf,
}

impl Bench {
    fn run(&self, program: &Path, args: &[String]) {
        let out = Command::new(program)
            .args(args)
            .env("XTABLES_LOCKFILE", &self.lock)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("nathost bench: cannot run {}: {e}", program.display()));
        assert!(
            out.status.success(),
            "nathost bench: {} {args:?} failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Waits until deferred destroy work from earlier deletions is done (see the module doc).
fn settle() {
    drop(xtnl::transport::NlSocket::open().expect("netlink socket to settle"));
}

fn words(s: &[&str]) -> Vec<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// The agent's set-up and teardown through one iptables binary; returns their durations.
fn agent_cycle(b: &Bench, tool: &str, id: usize) -> (Duration, Duration) {
    let (ipt, save, wait): (&Path, &Path, &[&str]) = match tool {
        "iptables-nft" => (
            Path::new("/usr/sbin/iptables-nft"),
            Path::new("/usr/sbin/iptables-nft-save"),
            &[],
        ),
        _ => (
            Path::new("/usr/sbin/iptables-legacy"),
            Path::new("/usr/sbin/iptables-legacy-save"),
            &["-w"],
        ),
    };
    let c = chain(id);
    let (port, to) = forward(id);
    let cmd = |args: &[&str]| {
        let mut v = words(wait);
        v.extend(words(args));
        b.run(ipt, &v);
    };
    let list = || cmd(&["--list-rules", "--table", "nat"]);
    let jump = [
        "PREROUTING",
        "--table",
        "nat",
        "--jump",
        &c,
        "--match",
        "comment",
        "--comment",
        &jump_comment(&c),
    ]
    .map(str::to_string);
    settle();
    let start = Instant::now();
    list();
    cmd(&["--new-chain", &c, "--table", "nat"]);
    list();
    let mut insert_jump = vec!["--insert".to_string()];
    insert_jump.extend(jump.iter().cloned());
    cmd(&insert_jump.iter().map(String::as_str).collect::<Vec<_>>());
    list();
    let port_s = port.to_string();
    let fc = forward_comment(port, &to);
    cmd(&[
        "--insert",
        &c,
        "--table",
        "nat",
        "--in-interface",
        "eth1",
        "--protocol",
        "tcp",
        "--match",
        "comment",
        "--comment",
        &fc,
        "--match",
        "tcp",
        "--destination-port",
        &port_s,
        "--jump",
        "DNAT",
        "--to-destination",
        &to,
    ]);
    let saved = std::fs::File::create(b.dir.join("saved.rules")).expect("save file");
    let out = Command::new(save)
        .stdout(saved)
        .status()
        .expect("run iptables-save");
    assert!(out.success(), "{} failed", save.display());
    let setup = start.elapsed();
    settle();
    let start = Instant::now();
    list();
    cmd(&["--flush", &c, "--table", "nat"]);
    list();
    let mut delete_jump = vec!["--delete".to_string()];
    delete_jump.extend(jump.iter().cloned());
    cmd(&delete_jump.iter().map(String::as_str).collect::<Vec<_>>());
    cmd(&["--delete-chain", &c, "--table", "nat"]);
    (setup, start.elapsed())
}

fn reservation(id: usize) -> Reservation {
    let mut r = Reservation::new(chain(id));
    r.jump_comment = Some(jump_comment(&r.chain));
    let (port, to) = forward(id);
    let mut f = Forward::parse_spec(&format!("eth1:tcp/{port}={to}")).expect("forward spec");
    f.comment = Some(forward_comment(port, &to));
    r.forwards.push(f);
    r
}

fn binary_cycle(b: &Bench, id: usize) -> (Duration, Duration) {
    let c = chain(id);
    let (port, to) = forward(id);
    settle();
    let start = Instant::now();
    b.run(
        &b.xtnl,
        &words(&[
            "reservation",
            "setup",
            &c,
            "--forward",
            &format!("eth1:tcp/{port}={to}"),
            "--comment-prefix",
            "VCL: ",
        ]),
    );
    let setup = start.elapsed();
    settle();
    let start = Instant::now();
    b.run(&b.xtnl, &words(&["teardown", &c]));
    (setup, start.elapsed())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    if let Err(e) = scratch::enter_new() {
        panic!("nathost bench: cannot create a network namespace ({e}); it needs root");
    }
    if let Err(e) = scratch::refuse_initial() {
        panic!("nathost bench: still in the initial network namespace, refusing to run: {e}");
    }
    let quick =
        std::env::args().any(|a| a == "--quick") || !std::env::args().any(|a| a == "--bench");
    let (lib_iters, bin_iters, agent_iters) = if quick { (50, 10, 3) } else { (400, 60, 15) };
    let dir = std::env::temp_dir().join(format!("xtnl-nathostbench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let b = Bench {
        xtnl: support::locate_xtnl("nathost"),
        lock: dir.join("xtables.lock"),
        dir,
    };
    let file = b.dir.join("populate.rules");
    std::fs::write(&file, restore_file(EXISTING)).expect("restore file");
    for (tool, args) in [
        ("iptables-nft-restore", vec!["--noflush"]),
        ("iptables-legacy-restore", vec!["-w", "--noflush"]),
    ] {
        let out = Command::new(tool)
            .args(&args)
            .arg(&file)
            .env("XTABLES_LOCKFILE", &b.lock)
            .output()
            .expect("populate");
        assert!(
            out.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The library: one long-lived session, as the agent would hold.
    let mut s = Session::builder()
        .lock(XtablesLock::new(&b.lock, WaitPolicy::Forever))
        .open()
        .expect("session");
    let (mut lib_setup, mut lib_teardown, mut lib_pair) = (Vec::new(), Vec::new(), Vec::new());
    let mut back_to_back = Vec::new();
    let (mut rt_setup, mut rt_teardown) = (0, 0);
    for k in 0..lib_iters + 5 {
        let res = reservation(100_000 + k);
        settle();
        let r0 = s.socket().round_trips();
        let start = Instant::now();
        nathost::setup(&mut s, &res).expect("library setup");
        let setup = start.elapsed();
        let r1 = s.socket().round_trips();
        settle();
        let r1b = s.socket().round_trips();
        let start = Instant::now();
        nathost::teardown(&mut s, Family::Ipv4, "nat", &res.chain, "PREROUTING")
            .expect("library teardown");
        let teardown = start.elapsed();
        let r2 = s.socket().round_trips();
        // The same pair again, back to back: the set-up waits for the teardown before it.
        let res = reservation(150_000 + k);
        let start = Instant::now();
        nathost::setup(&mut s, &res).expect("library setup");
        nathost::teardown(&mut s, Family::Ipv4, "nat", &res.chain, "PREROUTING")
            .expect("library teardown");
        let pair = start.elapsed();
        if k >= 5 {
            lib_setup.push(setup);
            lib_teardown.push(teardown);
            lib_pair.push(setup + teardown);
            back_to_back.push(pair);
            rt_setup = rt_setup.max(r1 - r0);
            rt_teardown = rt_teardown.max(r2 - r1b);
        }
    }
    drop(s);

    let mut bin = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..bin_iters + 2 {
        let (a, t) = binary_cycle(&b, 200_000 + k);
        if k >= 2 {
            bin.0.push(a);
            bin.1.push(t);
            bin.2.push(a + t);
        }
    }
    let mut agents = Vec::new();
    for tool in ["iptables-nft", "iptables-legacy"] {
        let mut v = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..agent_iters + 1 {
            let (a, t) = agent_cycle(&b, tool, 300_000 + k);
            if k >= 1 {
                v.0.push(a);
                v.1.push(t);
                v.2.push(a + t);
            }
        }
        agents.push((tool, v));
    }
    let _ = std::fs::remove_dir_all(&b.dir);

    let lib = (median(lib_setup), median(lib_teardown), median(lib_pair));
    let lib_b2b = median(back_to_back);
    let binm = (median(bin.0), median(bin.1), median(bin.2));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Reservation set-up + teardown at {EXISTING} existing reservations{}\n",
        if quick { " (--quick)" } else { "" }
    );
    let _ = writeln!(
        out,
        "Medians; library {lib_iters} cycles, binary {bin_iters}, agent sequences {agent_iters} per tool.\n"
    );
    let _ = writeln!(
        out,
        "| path | set-up | teardown | set-up + teardown | library is faster by | binary is faster by |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let _ = writeln!(
        out,
        "| xtnl library | {} | {} | {} | | |",
        ms(lib.0),
        ms(lib.1),
        ms(lib.2)
    );
    let _ = writeln!(
        out,
        "| xtnl binary | {} | {} | {} | | |",
        ms(binm.0),
        ms(binm.1),
        ms(binm.2)
    );
    let mut verdicts = Vec::new();
    for (tool, v) in agents {
        let m = (median(v.0), median(v.1), median(v.2));
        let rl = m.2.as_secs_f64() / lib.2.as_secs_f64();
        let rl_b2b = m.2.as_secs_f64() / lib_b2b.as_secs_f64();
        let rb = m.2.as_secs_f64() / binm.2.as_secs_f64();
        let _ = writeln!(
            out,
            "| agent sequence, {tool}{} | {} | {} | {} | {rl:.0}x | {rb:.1}x |",
            if tool == "iptables-legacy" { " -w" } else { "" },
            ms(m.0),
            ms(m.1),
            ms(m.2)
        );
        verdicts.push(format!(
            "- library >= 100x the agent's sequence through {tool}: {rl:.0}x {} \
             (back to back, paying the kernel's deferred reclaim: {rl_b2b:.0}x)",
            if rl >= 100.0 { "PASS" } else { "FAIL" }
        ));
        verdicts.push(format!(
            "- binary >= 10x the agent's sequence through {tool}: {rb:.1}x {}",
            if rb >= 10.0 { "PASS" } else { "FAIL" }
        ));
    }
    let _ = writeln!(
        out,
        "\nKernel round trips (most seen): set-up {rt_setup}, teardown {rt_teardown} {}",
        if rt_setup <= 2 && rt_teardown <= 2 {
            "PASS (<= 2 each)"
        } else {
            "FAIL (> 2)"
        }
    );
    let _ = writeln!(out, "\nTargets:\n{}", verdicts.join("\n"));
    println!("{out}");
}
