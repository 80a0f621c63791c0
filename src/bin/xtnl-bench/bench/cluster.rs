//! `xtnl-bench cluster`: restores at cluster scale (issue 22). kube-proxy's nat table of N
//! services ([`super::cluster_input`]) restored whole, then synced partially with
//! `--noflush`, then saved, by each tool in a fresh network namespace of its own (`unshare
//! -n`): iptables-nft-restore and `xtnl restore` on nf_tables, iptables-legacy-restore and
//! `xtnl --backend legacy restore` on x_tables. Each step is one process measured by
//! `/usr/bin/time` (wall, user and system seconds, peak RSS). The floor on nf_tables is the
//! kernel's own time for xtnl's batches: the bytes xtnl sent, captured through the library
//! (`cluster-floor`, in two more namespaces), sent again raw with one `send` into a fresh
//! namespace, timed from the send to the last reply drained.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::cluster_input;
use xtnl::error::{Error, Result};
use xtnl::model::Family;
use xtnl::transport::NlSocket;
use xtnl::wire::netlink::{MsgWriter, NLM_F_REQUEST, NlMsg};
use xtnl::wire::nftables::{NFNL_MSG_BATCH_BEGIN, NFNL_SUBSYS_NFTABLES, nfgenmsg, nfproto};

/// One step's figures from `/usr/bin/time -f '%e %U %S %M'`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Step {
    /// Wall seconds.
    pub wall: f64,
    /// User plus system CPU seconds.
    pub cpu: f64,
    /// Peak resident set, KiB.
    pub rss_kib: u64,
    /// Cut off after [`SAVE_LIMIT`] seconds: the figures are a lower bound.
    pub timed_out: bool,
}

/// A tool as the cluster benchmark runs it.
struct Tool {
    label: &'static str,
    program: PathBuf,
    /// Leading arguments, then `restore`'s or `save`'s own.
    restore: Vec<String>,
    save: Vec<String>,
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

fn tools(xtnl: &Path) -> [Tool; 4] {
    [
        Tool {
            label: "iptables-nft-restore",
            program: "iptables-nft-restore".into(),
            restore: vec![],
            save: vec![],
        },
        Tool {
            label: "xtnl restore",
            program: xtnl.into(),
            restore: words(&["--backend", "nft", "restore"]),
            save: words(&["--backend", "nft", "save"]),
        },
        Tool {
            label: "iptables-legacy-restore",
            program: "iptables-legacy-restore".into(),
            restore: vec![],
            save: vec![],
        },
        Tool {
            label: "xtnl --backend legacy restore",
            program: xtnl.into(),
            restore: words(&["--backend", "legacy", "restore"]),
            save: words(&["--backend", "legacy", "save"]),
        },
    ]
}

fn save_program(t: &Tool) -> PathBuf {
    match t.label {
        "iptables-nft-restore" => "iptables-nft-save".into(),
        "iptables-legacy-restore" => "iptables-legacy-save".into(),
        _ => t.program.clone(),
    }
}

fn bad(m: String) -> Error {
    Error::Precondition(format!("xtnl bench cluster: {m}"))
}

/// A word for `sh -c`: every path and argument here is ours, but quote them anyway.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn read_step(path: &Path) -> Result<Step> {
    let text = std::fs::read_to_string(path).map_err(|e| super::io("read /usr/bin/time", e))?;
    let last = text.lines().last().unwrap_or("");
    let v: Vec<&str> = last.split_whitespace().collect();
    let f = |i: usize| v.get(i).and_then(|s| s.parse::<f64>().ok());
    match (
        f(0),
        f(1),
        f(2),
        v.get(3).and_then(|s| s.parse::<u64>().ok()),
    ) {
        (Some(wall), Some(u), Some(s), Some(rss_kib)) => Ok(Step {
            wall,
            cpu: u + s,
            rss_kib,
            timed_out: false,
        }),
        _ => Err(bad(format!("unexpected /usr/bin/time output {text:?}"))),
    }
}

/// Full restore, partial sync and save of one tool in a fresh namespace; also the number of
/// rules its save printed.
fn run_tool(t: &Tool, dir: &Path, files: (&Path, &Path)) -> Result<([Step; 3], Option<usize>)> {
    let lock = dir.join("xtables.lock");
    let time = |step: &str| {
        format!(
            "/usr/bin/time -o {} -f '%e %U %S %M'",
            q(&dir.join(step).display().to_string())
        )
    };
    let args = |a: &[String]| a.iter().map(|w| q(w)).collect::<Vec<_>>().join(" ");
    let program = q(&t.program.display().to_string());
    let saved = dir.join("saved");
    let script = format!(
        "set -e\n\
         {} {program} {} < {} > /dev/null\n\
         {} {program} {} --noflush < {} > /dev/null\n\
         {} timeout {SAVE_LIMIT} {} {} -t nat > {} || echo timeout > {}\n",
        time("full"),
        args(&t.restore),
        q(&files.0.display().to_string()),
        time("partial"),
        args(&t.restore),
        q(&files.1.display().to_string()),
        time("save"),
        q(&save_program(t).display().to_string()),
        args(&t.save),
        q(&saved.display().to_string()),
        q(&dir.join("timeout").display().to_string()),
    );
    let _ = std::fs::remove_file(dir.join("timeout"));
    let out = Command::new("unshare")
        .args(["-n", "--", "sh", "-c", &script])
        .env("XTABLES_LOCKFILE", &lock)
        .output()
        .map_err(|e| super::io("run unshare -n (util-linux)", e))?;
    if !out.status.success() {
        return Err(bad(format!(
            "{} failed: {}",
            t.label,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut steps = [
        read_step(&dir.join("full"))?,
        read_step(&dir.join("partial"))?,
        read_step(&dir.join("save"))?,
    ];
    if dir.join("timeout").exists() {
        // Cut off (iptables-nft-save is quadratic in the rules): its time is a lower bound.
        steps[2].timed_out = true;
        return Ok((steps, None));
    }
    let text = std::fs::read_to_string(&saved).map_err(|e| super::io("read a save", e))?;
    Ok((
        steps,
        Some(text.lines().filter(|l| l.starts_with("-A ")).count()),
    ))
}

/// Seconds after which a save is cut off (iptables-nft-save 1.8.9 is quadratic: some 20 s
/// of CPU at 10,000 services).
const SAVE_LIMIT: u32 = 120;

/// The kernel's time for xtnl's own batches of the full restore and the partial sync, from
/// `cluster-floor` run in a namespace of its own: wall seconds, then CPU seconds, each
/// (full, partial).
fn floor(dir: &Path, files: (&Path, &Path)) -> Result<((f64, f64), (f64, f64))> {
    let me = std::env::current_exe().map_err(|e| super::io("find xtnl-bench", e))?;
    let out = Command::new("unshare")
        .arg("-n")
        .arg("--")
        .arg(me)
        .arg("cluster-floor")
        .arg(files.0)
        .arg(files.1)
        .env("XTABLES_LOCKFILE", dir.join("xtables.lock"))
        .output()
        .map_err(|e| super::io("run cluster-floor", e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match (out.status.success(), v.as_slice()) {
        (true, [full, partial, full_cpu, partial_cpu]) => {
            Ok(((*full, *partial), (*full_cpu, *partial_cpu)))
        }
        _ => Err(bad(format!(
            "cluster-floor failed: {}{}",
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

/// The same batch without the generation id in BEGIN (the namespace it is replayed into
/// has its own).
fn without_genid(batch: &[u8]) -> Result<Vec<u8>> {
    let (begin, rest) = NlMsg::split(batch)?;
    let mut w = MsgWriter::with_capacity(batch.len());
    w.message(
        NFNL_MSG_BATCH_BEGIN,
        NLM_F_REQUEST,
        begin.seq(),
        &nfgenmsg(nfproto::UNSPEC, NFNL_SUBSYS_NFTABLES),
        |_| {},
    );
    let mut out = w.into_bytes();
    out.extend_from_slice(rest);
    Ok(out)
}

/// The CPU time this thread has run, in seconds (`/proc/thread-self/schedstat`: user and
/// system, nanoseconds). The kernel processes a batch inside the `sendmsg`, on the sender's
/// thread, so the difference around a send is the kernel's CPU for the batch.
fn thread_cpu() -> Result<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat")
        .map_err(|e| super::io("read /proc/thread-self/schedstat", e))?;
    text.split_whitespace()
        .next()
        .and_then(|w| w.parse::<u64>().ok())
        .map(|ns| ns as f64 / 1e9)
        .ok_or_else(|| bad(format!("unexpected schedstat {text:?}")))
}

/// `xtnl-bench cluster-floor FULL PARTIAL` (run by [`floor`] under `unshare -n`): restores
/// both files through the library here, keeping the batches it sent, then replays them raw
/// in a fresh namespace. Prints the two replays' wall seconds, then their CPU seconds.
pub fn floor_worker(full: &Path, partial: &Path) -> Result<String> {
    // Held open so that the namespace this process started in outlives its leaving it: a
    // freed namespace's inode can be given to the next one, which would then look like the
    // one the scratch check compares with.
    let _origin = std::fs::File::open("/proc/thread-self/ns/net")
        .map_err(|e| super::io("open /proc/thread-self/ns/net", e))?;
    super::enter_scratch_namespace()?;
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| super::io("read input", e));
    let mut batches = Vec::new();
    let mut session = xtnl::nft::Session::builder()
        .lock_mode(xtnl::lock::LockMode::Never)
        .open()?;
    for (text, noflush) in [(read(full)?, false), (read(partial)?, true)] {
        let blocks = xtnl::ipt::restore::parse_file(&text, Family::Ipv4)?;
        session.socket().record_sends();
        xtnl::ipt::restore::apply(&mut session, &blocks, Family::Ipv4, noflush)?;
        let sent = session.socket().take_recorded();
        let batch = sent
            .into_iter()
            .max_by_key(Vec::len)
            .ok_or_else(|| bad("the restore sent nothing".into()))?;
        batches.push(without_genid(&batch)?);
    }
    drop(session);
    super::enter_scratch_namespace()?;
    let mut sock = NlSocket::open()?;
    let (mut secs, mut cpu) = (Vec::new(), Vec::new());
    for b in &batches {
        sock.size_buffers(b.len(), 1 << 20)?;
        let (start, start_cpu) = (Instant::now(), thread_cpu()?);
        super::floor::send_batch(&mut sock, b)?;
        secs.push(start.elapsed().as_secs_f64());
        cpu.push(thread_cpu()? - start_cpu);
    }
    Ok(format!(
        "{:.4} {:.4} {:.4} {:.4}",
        secs[0], secs[1], cpu[0], cpu[1]
    ))
}

/// Runs the benchmark for each N and returns its report (markdown).
pub fn run(xtnl: &Path, sizes: &[usize], dir: &Path, progress: bool) -> Result<String> {
    std::fs::create_dir_all(dir).map_err(|e| super::io("create scratch dir", e))?;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| services (rules) | tool | full restore s (cpu) | partial sync s (cpu) | save s (cpu) | peak MiB (full) |\n|---|---|---|---|---|---|"
    );
    let mut ratios = String::new();
    for &n in sizes {
        let files = (
            dir.join(format!("full-{n}")),
            dir.join(format!("partial-{n}")),
        );
        std::fs::write(&files.0, cluster_input::full(n)).map_err(|e| super::io("write", e))?;
        std::fs::write(&files.1, cluster_input::partial(n)).map_err(|e| super::io("write", e))?;
        let mut got = Vec::new();
        for t in tools(xtnl) {
            if progress {
                eprintln!("cluster: N = {n}, {}", t.label);
            }
            let (steps, rules) = run_tool(&t, dir, (&files.0, &files.1))?;
            if let Some(rules) = rules
                && rules != cluster_input::rule_count(n)
            {
                return Err(bad(format!(
                    "{}'s save holds {rules} rules, not {}",
                    t.label,
                    cluster_input::rule_count(n)
                )));
            }
            let _ = writeln!(
                md,
                "| {n} ({}) | {} | {:.2} ({:.2}) | {:.2} ({:.2}) | {}{:.2} ({:.2}) | {:.0} |",
                cluster_input::rule_count(n),
                t.label,
                steps[0].wall,
                steps[0].cpu,
                steps[1].wall,
                steps[1].cpu,
                if steps[2].timed_out { "> " } else { "" },
                steps[2].wall,
                steps[2].cpu,
                steps[0].rss_kib as f64 / 1024.0
            );
            got.push(steps);
        }
        if progress {
            eprintln!("cluster: N = {n}, the kernel's floor");
        }
        let ((ff, fp), (ffc, fpc)) = floor(dir, (&files.0, &files.1))?;
        let _ = writeln!(
            md,
            "| {n} | kernel, xtnl's batch sent raw | {ff:.2} ({ffc:.2}) | {fp:.2} ({fpc:.2}) | | |"
        );
        let r = |peer: &Step, us: &Step| peer.wall / us.wall;
        let m = |peer: &Step, us: &Step| peer.rss_kib as f64 / us.rss_kib as f64;
        let _ = writeln!(
            ratios,
            "- N = {n}: nf_tables: full {:.2}x, partial {:.2}x, save {:.2}x faster than \
             iptables-nft; memory {:.2}x of its; full restore {:.2}x and partial {:.2}x the \
             kernel's time. x_tables: full {:.2}x, partial {:.2}x, save {:.2}x faster than \
             iptables-legacy; memory {:.2}x of its.{}",
            r(&got[0][0], &got[1][0]),
            r(&got[0][1], &got[1][1]),
            r(&got[0][2], &got[1][2]),
            1.0 / m(&got[0][0], &got[1][0]),
            got[1][0].wall / ff,
            got[1][1].wall / fp,
            r(&got[2][0], &got[3][0]),
            r(&got[2][1], &got[3][1]),
            r(&got[2][2], &got[3][2]),
            1.0 / m(&got[2][0], &got[3][0]),
            if got.iter().any(|s| s[2].timed_out) {
                format!(" (A save cut off after {SAVE_LIMIT} s: its ratio is a lower bound.)")
            } else {
                String::new()
            },
        );
        // CPU seconds (load moves them less than wall time), and each tool's peak memory
        // as a multiple of the input (the bound docs/benchmarks.md states).
        let c = |peer: &Step, us: &Step| peer.cpu / us.cpu;
        let input = std::fs::metadata(&files.0).map_or(1, |m| m.len().max(1)) as f64;
        let k = |s: &Step| s.rss_kib as f64 * 1024.0 / input;
        let _ = writeln!(
            ratios,
            "- N = {n}, in CPU seconds: nf_tables full {:.2}x, partial {:.2}x, save {:.2}x; \
             xtnl's full restore {:.2}x and partial {:.2}x the kernel's CPU for its batch; \
             x_tables full {:.2}x, partial {:.2}x, save {:.2}x. Peak memory against the input \
             ({:.1} MiB): iptables-nft-restore {:.1}x, xtnl {:.1}x; iptables-legacy-restore \
             {:.1}x, xtnl --backend legacy {:.1}x.",
            c(&got[0][0], &got[1][0]),
            c(&got[0][1], &got[1][1]),
            c(&got[0][2], &got[1][2]),
            got[1][0].cpu / ffc,
            got[1][1].cpu / fpc,
            c(&got[2][0], &got[3][0]),
            c(&got[2][1], &got[3][1]),
            c(&got[2][2], &got[3][2]),
            input / 1048576.0,
            k(&got[0][0]),
            k(&got[1][0]),
            k(&got[2][0]),
            k(&got[3][0]),
        );
    }
    md.push('\n');
    md.push_str(&ratios);
    Ok(md)
}
