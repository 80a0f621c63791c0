//! Contention: P workers, each setting up and tearing down its own reservation K times on
//! one nat table, all started together. A worker is a thread that runs the tool's processes
//! one after another, as one forked agent process per reservation shells out.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::process::{STOPPED, agent, binary_setup_args, must, p, settle, spawn};
use super::spec::{self, WORKER_PREFIX, worker_chain};
use super::{Env, Results, Stats};
use xtnl::error::{Error, Result};
use xtnl::model::Family;
use xtnl::nft::TableRef;

/// How a worker changes the ruleset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerKind {
    /// `xtnl reservation setup` / `xtnl teardown`: one process each.
    Xtnl,
    /// The agent's sequences with iptables-nft.
    IptablesNft,
    /// The agent's sequences with iptables-legacy -w, one shared lock.
    Legacy,
    /// The same, each worker with its own XTABLES_LOCKFILE (the lock not shared).
    LegacyUnshared,
    /// One `xtnl serve` for all workers, each worker a connection to its socket sending
    /// a `reservation_setup` and a `teardown` request per cycle (see docs/serve.md).
    Serve,
}

impl WorkerKind {
    pub fn label(self) -> &'static str {
        match self {
            WorkerKind::Xtnl => "xtnl binary",
            WorkerKind::IptablesNft => "iptables-nft",
            WorkerKind::Legacy => "iptables-legacy -w",
            WorkerKind::LegacyUnshared => "iptables-legacy -w, unshared locks",
            WorkerKind::Serve => "xtnl serve",
        }
    }
    fn legacy(self) -> bool {
        matches!(self, WorkerKind::Legacy | WorkerKind::LegacyUnshared)
    }
}

/// One group of workers of one kind in one run.
#[derive(Debug, Clone)]
pub struct ContentionRun {
    pub kind: WorkerKind,
    /// Whether it ran beside workers of another kind (the mixed run).
    pub mixed: bool,
    pub workers: usize,
    pub cycles: usize,
    /// Cycles begun before the time box ended.
    pub started: usize,
    /// Sequences stopped between two commands at twice the time box.
    pub stopped: usize,
    /// Cycles whose set-up and teardown both succeeded.
    pub ok_cycles: usize,
    /// Set-ups and teardowns that failed.
    pub failures: usize,
    /// From the common start to the last worker's end.
    pub wall: Duration,
    pub setup: Vec<Duration>,
    pub teardown: Vec<Duration>,
    /// Distinct first error lines, with how often each was seen.
    pub errors: Vec<(String, usize)>,
    /// Worker chains still in the table after the run (cleaned up before the next).
    pub leftover: usize,
}

impl ContentionRun {
    /// Completed set-up/teardown cycles per second.
    pub fn throughput(&self) -> f64 {
        self.ok_cycles as f64 / self.wall.as_secs_f64().max(1e-9)
    }
    pub fn all_latencies(&self) -> Stats {
        let mut v = self.setup.clone();
        v.extend(self.teardown.iter().copied());
        Stats::of(&v).unwrap_or(Stats {
            p50: Duration::ZERO,
            p99: Duration::ZERO,
            count: 0,
        })
    }
}

/// What a worker needs (shared read-only between threads).
struct Ctx {
    xtnl: PathBuf,
    lock: PathBuf,
    dir: PathBuf,
    /// The socket of the `xtnl serve` that [`WorkerKind::Serve`] workers use.
    serve_socket: PathBuf,
}

#[derive(Default)]
struct WorkerOut {
    started: usize,
    stopped: usize,
    ok_cycles: usize,
    failures: usize,
    setup: Vec<Duration>,
    teardown: Vec<Duration>,
    errors: Vec<String>,
}

fn step(
    ctx: &Ctx,
    kind: WorkerKind,
    w: usize,
    setup: bool,
    stop_at: Instant,
) -> Result<std::result::Result<(), String>> {
    let chain = worker_chain(w);
    let lock = match kind {
        WorkerKind::LegacyUnshared => ctx.dir.join(format!("xtables-{w}.lock")),
        _ => ctx.lock.clone(),
    };
    let save = ctx.dir.join(format!("save-worker-{w}.rules"));
    match kind {
        WorkerKind::Xtnl => {
            let args = if setup {
                binary_setup_args(2_000_000 + w, &chain)
            } else {
                spec::words(&["teardown", &chain])
            };
            let e = spawn(&ctx.xtnl, &args, None, &lock)?;
            Ok(if e.ok { Ok(()) } else { Err(e.error_line()) })
        }
        _ => agent(
            kind.legacy(),
            setup.then_some(2_000_000 + w),
            &chain,
            &lock,
            &save,
            Some(stop_at),
        ),
    }
}

fn worker(
    ctx: &Ctx,
    kind: WorkerKind,
    w: usize,
    cycles: usize,
    time_box: Duration,
    start: &Barrier,
) -> Result<WorkerOut> {
    let mut out = WorkerOut::default();
    let mut conn = match kind {
        WorkerKind::Serve => Some(super::serve_worker::connect(&ctx.serve_socket)?),
        _ => None,
    };
    start.wait();
    let t0 = Instant::now();
    let stop_at = t0 + 2 * time_box;
    for _ in 0..cycles {
        if t0.elapsed() > time_box {
            break;
        }
        out.started += 1;
        let mut ok = true;
        for setup in [true, false] {
            let t = Instant::now();
            let r = match conn.as_mut() {
                Some(c) => super::serve_worker::step(c, w, setup)?,
                None => step(ctx, kind, w, setup, stop_at)?,
            };
            let took = t.elapsed();
            // A sequence stopped at the time box says nothing about the tool's latency.
            if r.as_ref().err().is_none_or(|m| m != STOPPED) {
                if setup {
                    out.setup.push(took);
                } else {
                    out.teardown.push(took);
                }
            }
            match r {
                Ok(()) => {}
                Err(m) if m == STOPPED => {
                    ok = false;
                    out.stopped += 1;
                }
                Err(m) => {
                    ok = false;
                    out.failures += 1;
                    out.errors.push(m);
                }
            }
        }
        if ok {
            out.ok_cycles += 1;
        }
    }
    Ok(out)
}

/// Runs groups of workers together: (kind, count); worker numbers are global to the run so
/// that every worker has its own chain.
fn run_groups(
    env: &Env<'_>,
    groups: &[(WorkerKind, usize)],
    cycles: usize,
    time_box: Duration,
) -> Result<Vec<ContentionRun>> {
    let ctx = Ctx {
        xtnl: env.cfg.xtnl.clone(),
        lock: env.lock.clone(),
        dir: env.dir.clone(),
        serve_socket: env.dir.join("serve.sock"),
    };
    let total: usize = groups.iter().map(|g| g.1).sum();
    let barrier = Barrier::new(total + 1);
    settle()?;
    let (outs, wall) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let mut w = 0;
        for &(kind, count) in groups {
            for _ in 0..count {
                let (ctx, barrier) = (&ctx, &barrier);
                let id = w;
                handles.push((
                    kind,
                    s.spawn(move || worker(ctx, kind, id, cycles, time_box, barrier)),
                ));
                w += 1;
            }
        }
        barrier.wait();
        let start = Instant::now();
        let outs: Vec<(WorkerKind, Result<WorkerOut>)> = handles
            .into_iter()
            .map(|(k, h)| {
                let r = h.join().unwrap_or_else(|_| {
                    Err(Error::Precondition(
                        "xtnl bench: a worker thread panicked".into(),
                    ))
                });
                (k, r)
            })
            .collect();
        (outs, start.elapsed())
    });
    let mut runs = Vec::new();
    for &(kind, count) in groups {
        let mut run = ContentionRun {
            kind,
            mixed: groups.len() > 1,
            workers: count,
            cycles,
            started: 0,
            stopped: 0,
            ok_cycles: 0,
            failures: 0,
            wall,
            setup: Vec::new(),
            teardown: Vec::new(),
            errors: Vec::new(),
            leftover: 0,
        };
        for (k, out) in &outs {
            if *k != kind {
                continue;
            }
            let out = match out {
                Ok(o) => o,
                Err(e) => return Err(Error::Precondition(format!("xtnl bench: worker: {e}"))),
            };
            run.started += out.started;
            run.stopped += out.stopped;
            run.ok_cycles += out.ok_cycles;
            run.failures += out.failures;
            run.setup.extend(&out.setup);
            run.teardown.extend(&out.teardown);
            for m in &out.errors {
                match run.errors.iter_mut().find(|(e, _)| e == m) {
                    Some((_, n)) => *n += 1,
                    None => run.errors.push((m.clone(), 1)),
                }
            }
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Counts the worker chains left on each side and removes them with their jumps.
fn clean_up(env: &mut Env<'_>) -> Result<(usize, usize)> {
    let nat = TableRef::new(Family::Ipv4, "nat");
    let nf_left = env
        .session
        .read(|r| r.chains(&nat))?
        .iter()
        .filter(|c| c.chain.name.starts_with(WORKER_PREFIX))
        .count();
    if nf_left > 0 {
        xtnl::nathost::sweep(
            &mut env.session,
            Family::Ipv4,
            "nat",
            WORKER_PREFIX,
            &BTreeSet::new(),
        )?;
    }
    let listed = must(
        p("iptables-legacy"),
        &spec::words(&["-w", "-t", "nat", "-S"]),
        None,
        &env.lock,
    )?
    .stdout;
    let chains: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.strip_prefix("-N "))
        .filter(|c| c.starts_with(WORKER_PREFIX))
        .collect();
    let jumps: Vec<&str> = listed
        .lines()
        .filter(|l| l.starts_with("-A ") && l.contains(&format!(" -j {WORKER_PREFIX}")))
        .collect();
    if !chains.is_empty() || !jumps.is_empty() {
        let mut text = String::from("*nat\n");
        for j in &jumps {
            text.push_str(&format!("-D {}\n", &j[3..]));
        }
        for c in &chains {
            text.push_str(&format!("-F {c}\n-X {c}\n"));
        }
        text.push_str("COMMIT\n");
        must(
            p("iptables-legacy-restore"),
            &spec::words(&["-w", "--noflush"]),
            Some(&text),
            &env.lock,
        )?;
    }
    settle()?;
    Ok((nf_left, chains.len()))
}

fn record(env: &mut Env<'_>, r: &mut Results, mut runs: Vec<ContentionRun>) -> Result<()> {
    let (nf_left, legacy_left) = clean_up(env)?;
    for run in &mut runs {
        run.leftover = if run.kind.legacy() {
            legacy_left
        } else {
            nf_left
        };
        if env.cfg.progress {
            eprintln!(
                "xtnl bench: contention {}{} P = {}: {} of {} cycles ok, {} failures, {:.1} cycles/s",
                run.kind.label(),
                if run.mixed { " (mixed)" } else { "" },
                run.workers,
                run.ok_cycles,
                run.started,
                run.failures,
                run.throughput()
            );
        }
    }
    r.contention.extend(runs);
    Ok(())
}

/// Every contention run of the plan, on the table as the scaling step left it.
pub(super) fn run(env: &mut Env<'_>, r: &mut Results) -> Result<()> {
    let plan = env.cfg.plan.clone();
    for kind in [
        WorkerKind::Xtnl,
        WorkerKind::IptablesNft,
        WorkerKind::Legacy,
        WorkerKind::LegacyUnshared,
        WorkerKind::Serve,
    ] {
        let service = match kind {
            WorkerKind::Serve => Some(super::serve_worker::Service::start(
                &env.cfg.xtnl,
                &env.dir.join("serve.sock"),
                &env.lock,
            )?),
            _ => None,
        };
        for &workers in &plan.workers {
            let runs = run_groups(env, &[(kind, workers)], plan.cycles, plan.time_box)?;
            record(env, r, runs)?;
        }
        drop(service);
    }
    let m = plan.mixed_workers;
    let runs = run_groups(
        env,
        &[(WorkerKind::Xtnl, m), (WorkerKind::Legacy, m)],
        plan.cycles,
        plan.time_box,
    )?;
    record(env, r, runs)?;
    Ok(())
}
