//! The results as a markdown report and a CSV of every statistic (the SVG plot is `svg.rs`).

use std::fmt::Write as _;
use std::time::Duration;

use super::contention::WorkerKind;
use super::{Floor, Op, Results, Stats, Tool};

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

pub(super) fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-12)
}

fn fmt_ratio(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}x")
    } else if x >= 10.0 {
        format!("{x:.1}x")
    } else {
        format!("{x:.2}x")
    }
}

/// One target line: name, measured, result.
struct Target {
    name: String,
    measured: String,
    pass: bool,
}

fn targets(r: &Results) -> Vec<Target> {
    let mut t = Vec::new();
    let p50 = |op, tool, n| r.stats(op, tool, n).map(|s| s.p50);
    for &n in &r.sizes {
        if let (Some(lib), Some(bare)) = (
            p50(Op::Flush, Tool::Library, n),
            r.floor(Floor::BareBatch, n).map(|s| s.p50),
        ) {
            let x = ratio(lib, bare);
            t.push(Target {
                name: format!(
                    "library flush within 2x of the bare batch, N = {}",
                    thousands(n)
                ),
                measured: format!("{} ({} vs {})", fmt_ratio(x), fmt(lib), fmt(bare)),
                pass: x <= 2.0,
            });
        }
    }
    let faster = |t: &mut Vec<Target>, op: Op, other: Tool, n: usize, want: f64| {
        if let (Some(bin), Some(o)) = (p50(op, Tool::Binary, n), p50(op, other, n)) {
            let x = ratio(o, bin);
            t.push(Target {
                name: format!(
                    "binary {} >= {want}x faster than {}, N = {}",
                    match op {
                        Op::Flush => "flush",
                        _ => "insert",
                    },
                    other.label(),
                    thousands(n)
                ),
                measured: format!("{} ({} vs {})", fmt_ratio(x), fmt(bin), fmt(o)),
                pass: x >= want,
            });
        }
    };
    for &n in &r.sizes {
        faster(&mut t, Op::Flush, Tool::IptablesNft, n, 10.0);
    }
    for &n in &r.sizes {
        if n == 10 {
            faster(&mut t, Op::Insert, Tool::IptablesNft, n, 2.5);
        } else if n >= 1_000 {
            faster(&mut t, Op::Insert, Tool::IptablesNft, n, 4.0);
        }
    }
    for &n in r.sizes.iter().filter(|&&n| n >= 1_000) {
        faster(&mut t, Op::Flush, Tool::IptablesLegacy, n, 20.0);
        faster(&mut t, Op::Insert, Tool::IptablesLegacy, n, 20.0);
    }
    for run in r.contention.iter().filter(|c| c.kind == WorkerKind::Xtnl) {
        t.push(Target {
            name: format!(
                "xtnl: 0 failures, P = {}{}",
                run.workers,
                if run.mixed {
                    " beside as many iptables-legacy -w workers"
                } else {
                    ""
                }
            ),
            measured: format!("{} failures", run.failures),
            pass: run.failures == 0,
        });
    }
    let max_p = r
        .contention
        .iter()
        .filter(|c| !c.mixed)
        .map(|c| c.workers)
        .max()
        .unwrap_or(0);
    let at = |k: WorkerKind| {
        r.contention
            .iter()
            .find(|c| !c.mixed && c.kind == k && c.workers == max_p)
    };
    if let (Some(x), Some(l)) = (at(WorkerKind::Xtnl), at(WorkerKind::Legacy)) {
        let q = x.throughput() / l.throughput().max(1e-9);
        t.push(Target {
            name: format!("{max_p} workers: xtnl throughput >= 20x iptables-legacy -w"),
            measured: format!(
                "{} ({:.1} vs {:.1} cycles/s)",
                fmt_ratio(q),
                x.throughput(),
                l.throughput()
            ),
            pass: q >= 20.0,
        });
    }
    if let (Some(x), Some(l)) = (at(WorkerKind::Serve), at(WorkerKind::Legacy)) {
        let q = x.throughput() / l.throughput().max(1e-9);
        t.push(Target {
            name: format!(
                "{max_p} workers: one xtnl serve, 0 failures, throughput >= 20x iptables-legacy -w"
            ),
            measured: format!(
                "{} ({:.1} vs {:.1} cycles/s), {} failures",
                fmt_ratio(q),
                x.throughput(),
                l.throughput(),
                x.failures
            ),
            pass: q >= 20.0 && x.failures == 0,
        });
    }
    let mixed: Vec<_> = r.contention.iter().filter(|c| c.mixed).collect();
    if !mixed.is_empty() {
        let fails: usize = mixed.iter().map(|c| c.failures).sum();
        t.push(Target {
            name: "mixed run: no failures on either side".into(),
            measured: mixed
                .iter()
                .map(|c| format!("{}: {}", c.kind.label(), c.failures))
                .collect::<Vec<_>>()
                .join(", "),
            pass: fails == 0,
        });
    }
    if let (Some(&lo), Some(&hi)) = (r.sizes.first(), r.sizes.last()) {
        let missing: Vec<&str> = Tool::ALL
            .iter()
            .filter(|&&tool| {
                Op::ALL.iter().any(|&op| {
                    (op != Op::List || tool.lists())
                        && (p50(op, tool, lo).is_none() || p50(op, tool, hi).is_none())
                })
            })
            .map(|t| t.label())
            .collect();
        t.push(Target {
            name: format!(
                "growth factor N = {} -> {} shown for every tool",
                thousands(lo),
                thousands(hi)
            ),
            measured: if missing.is_empty() {
                "all tools (scaling tables)".into()
            } else {
                format!("missing: {}", missing.join(", "))
            },
            pass: missing.is_empty(),
        });
        let overhead = |n| {
            let lib = p50(Op::Flush, Tool::Library, n)?;
            let bare = r.floor(Floor::BareBatch, n)?.p50;
            Some(lib.as_secs_f64() - bare.as_secs_f64())
        };
        if let (Some(a), Some(b)) = (overhead(lo), overhead(hi)) {
            t.push(Target {
                name: format!(
                    "library overhead above the bare batch does not grow with N \
                     (flush; at N = {} <= 1.5 x at N = {} + 5 µs)",
                    thousands(hi),
                    thousands(lo)
                ),
                measured: format!("{:.1} µs -> {:.1} µs", a * 1e6, b * 1e6),
                pass: b <= 1.5 * a.max(0.0) + 5e-6,
            });
        }
    }
    t
}

/// The report: machine, command, floors, scaling tables, contention, targets.
pub fn markdown(r: &Results) -> String {
    let mut s = String::new();
    let m = &r.machine;
    let _ = writeln!(
        s,
        "# xtnl benchmark suite{}\n",
        if r.quick { " (quick run)" } else { "" }
    );
    let _ = writeln!(s, "- command: `{}`", r.command);
    let _ = writeln!(
        s,
        "- machine: {} CPUs ({}), kernel {}",
        m.nproc, m.cpu, m.kernel
    );
    let _ = writeln!(
        s,
        "- load average (1, 5, 15 min): {} at the start, {} at the end (the machine is shared; \
         compare runs under similar load)",
        m.load_start, m.load_end
    );
    let _ = writeln!(s, "- tools: {}", m.versions.join("; "));
    let _ = writeln!(s, "- whole run: {:.1} s", r.elapsed.as_secs_f64());
    if r.quick {
        let _ = writeln!(
            s,
            "- quick plan: few iterations at small N; it proves the runner works, its figures \
             are not evidence and the targets are not evaluated"
        );
    }
    let _ = writeln!(
        s,
        "\nEvery timed step is preceded by a settle (see `src/bench/mod.rs`); processes are \
         timed from spawn to reap with output captured. Percentiles are nearest-rank: with \
         fewer than 100 samples p99 is the slowest.\n"
    );

    let _ = writeln!(s, "## The floor (same run, p50)\n");
    let _ = writeln!(
        s,
        "| N | bare GETGEN | library GETGEN | bare one-message batch | library flush | \
         library / bare | binary flush / bare | `/bin/true` | `xtnl version` |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for &n in &r.sizes {
        let f = |x: Floor| r.floor(x, n).map(|s| s.p50);
        let lib = r.stats(Op::Flush, Tool::Library, n).map(|s| s.p50);
        let bin = r.stats(Op::Flush, Tool::Binary, n).map(|s| s.p50);
        let cell = |d: Option<Duration>| d.map_or("-".into(), fmt);
        let rat = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
            (Some(a), Some(b)) => fmt_ratio(ratio(a, b)),
            _ => "-".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            thousands(n),
            cell(f(Floor::BareGetgen)),
            cell(f(Floor::LibraryGetgen)),
            cell(f(Floor::BareBatch)),
            cell(lib),
            rat(lib, f(Floor::BareBatch)),
            rat(bin, f(Floor::BareBatch)),
            cell(f(Floor::ProcessTrue)),
            cell(f(Floor::XtnlVersion)),
        );
    }
    let _ = writeln!(
        s,
        "\nThe library's flush and the bare batch are also timed in 5 interleaved pairs per \
         iteration (order alternating), so both rest on more samples than the process-level \
         figures."
    );
    if !r.round_trips.is_empty() {
        let _ = writeln!(
            s,
            "\nKernel round trips (datagrams sent) of the library's operations: {}.",
            r.round_trips
                .iter()
                .map(|(op, n)| format!("{} {n}", op.label()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }

    let _ = writeln!(s, "\n## Scaling: latency per operation (p50 / p99)\n");
    let _ = writeln!(
        s,
        "Table `nat` holds N reservations (chain, jump from PREROUTING, two DNAT rules). \
         Set-up and teardown with iptables-nft and iptables-legacy -w are the agent's \
         command sequences (set-up: list, create, list, insert jump, list, insert DNAT, \
         list, insert DNAT, save; teardown: list, flush, list, delete jump, delete chain); \
         nft's teardown lists PREROUTING with handles, then deletes in one `nft -f`. \
         Growth = p50 at the largest N / p50 at the smallest.\n"
    );
    let header = |s: &mut String, extra: &[&str]| {
        let _ = write!(s, "| tool |");
        for &n in &r.sizes {
            let _ = write!(s, " N = {} |", thousands(n));
        }
        for e in extra {
            let _ = write!(s, " {e} |");
        }
        let _ = write!(s, "\n|---|");
        for _ in 0..r.sizes.len() + extra.len() {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
    };
    for op in Op::ALL {
        let _ = writeln!(s, "### {}\n", op.label());
        header(&mut s, &["growth"]);
        for tool in Tool::ALL {
            if op == Op::List && !tool.lists() {
                continue;
            }
            let _ = write!(s, "| {} |", tool.label());
            for &n in &r.sizes {
                match r.stats(op, tool, n) {
                    Some(st) => {
                        let _ = write!(s, " {} / {} |", fmt(st.p50), fmt(st.p99));
                    }
                    None => {
                        let _ = write!(s, " - |");
                    }
                }
            }
            let growth = match (r.sizes.first(), r.sizes.last()) {
                (Some(&lo), Some(&hi)) => match (r.stats(op, tool, lo), r.stats(op, tool, hi)) {
                    (Some(a), Some(b)) => fmt_ratio(ratio(b.p50, a.p50)),
                    _ => "-".into(),
                },
                _ => "-".into(),
            };
            let _ = writeln!(s, " {growth} |");
        }
        let _ = writeln!(
            s,
            "\nRatio of p50 to the xtnl library's / to the xtnl binary's (how many times slower):\n"
        );
        header(&mut s, &[]);
        for tool in Tool::ALL {
            if op == Op::List && !tool.lists() || tool == Tool::Library {
                continue;
            }
            let _ = write!(s, "| {} |", tool.label());
            for &n in &r.sizes {
                let (Some(t), Some(l), Some(b)) = (
                    r.stats(op, tool, n),
                    r.stats(op, Tool::Library, n),
                    r.stats(op, Tool::Binary, n),
                ) else {
                    let _ = write!(s, " - |");
                    continue;
                };
                let _ = write!(
                    s,
                    " {} / {} |",
                    fmt_ratio(ratio(t.p50, l.p50)),
                    fmt_ratio(ratio(t.p50, b.p50))
                );
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "![latency against N](latency.svg)\n");

    if !r.contention.is_empty() {
        let _ = writeln!(s, "## Contention\n");
        let _ = writeln!(
            s,
            "P workers each set up and tear down their own reservation K times, all started \
             together, on one nat table; a worker runs its tool's processes one after another. \
             Throughput = completed set-up + teardown cycles per second of wall time. A worker \
             starts no cycle after the time box ({:.0} s) and stops a sequence between two \
             commands after twice that (\"stopped\": neither failures nor in the latencies). \"left\" = \
             worker chains found in the table afterwards (removed before the next run).\n",
            r.time_box.as_secs_f64()
        );
        let _ = writeln!(
            s,
            "| workers | P | K | cycles ok / started | failures | stopped | throughput | \
             set-up p50 | set-up p99 | teardown p50 | teardown p99 | all p99 | left | errors |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
        );
        for c in &r.contention {
            let st = |v: &[Duration]| {
                Stats::of(v).map_or(("-".into(), "-".into()), |s| (fmt(s.p50), fmt(s.p99)))
            };
            let (s50, s99) = st(&c.setup);
            let (t50, t99) = st(&c.teardown);
            let errors = if c.errors.is_empty() {
                "-".to_string()
            } else {
                c.errors
                    .iter()
                    .take(3)
                    .map(|(e, n)| format!("{n} x `{}`", e.replace('|', "\\|").replace('`', "'")))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let _ = writeln!(
                s,
                "| {}{} | {} | {} | {} / {} | {} | {} | {:.1}/s | {s50} | {s99} | {t50} | {t99} | {} | {} | {errors} |",
                c.kind.label(),
                if c.mixed { " (mixed)" } else { "" },
                c.workers,
                c.cycles,
                c.ok_cycles,
                c.started,
                c.failures,
                c.stopped,
                c.throughput(),
                fmt(c.all_latencies().p99),
                c.leftover,
            );
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(s, "## Targets\n");
    let _ = writeln!(s, "| target | measured | result |\n|---|---|---|");
    for t in targets(r) {
        let res = if r.quick {
            "- (quick run)"
        } else if t.pass {
            "PASS"
        } else {
            "FAIL"
        };
        let _ = writeln!(s, "| {} | {} | {res} |", t.name, t.measured);
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\n## Run notes\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// Every statistic, one line each: `section,what,tool,n,count,p50_us,p99_us`.
pub fn csv(r: &Results) -> String {
    let mut s = String::from("section,what,tool,n,count,p50_us,p99_us\n");
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for (&(op, tool, n), v) in &r.samples {
        if let Some(st) = Stats::of(v) {
            let _ = writeln!(
                s,
                "scaling,{:?},{},{n},{},{:.2},{:.2}",
                op,
                tool.label(),
                st.count,
                us(st.p50),
                us(st.p99)
            );
        }
    }
    for (&(f, n), v) in &r.floors {
        if let Some(st) = Stats::of(v) {
            let _ = writeln!(
                s,
                "floor,{:?},-,{n},{},{:.2},{:.2}",
                f,
                st.count,
                us(st.p50),
                us(st.p99)
            );
        }
    }
    for c in &r.contention {
        let st = c.all_latencies();
        let _ = writeln!(
            s,
            "contention,{}cycles/s={:.2} failures={},{},{},{},{:.2},{:.2}",
            if c.mixed { "mixed " } else { "" },
            c.throughput(),
            c.failures,
            c.kind.label(),
            c.workers,
            st.count,
            us(st.p50),
            us(st.p99)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(10_000), "10,000");
        assert_eq!(thousands(100), "100");
        assert_eq!(fmt(Duration::from_micros(1500)), "1.50 ms");
    }
}
