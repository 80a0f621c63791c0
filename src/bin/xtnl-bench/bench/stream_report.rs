//! `xtnl-bench stream`'s report: per N, each path's p50 per kind of command and its mean per
//! command, the ratios against iptables-nft, each request against the kernel's own cost for
//! its batch, and the targets of issue 22.

use std::fmt::Write as _;
use std::time::Duration;

use super::stream::{Cmd, StreamResults, Via};

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn p50(v: &[Duration]) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    let mut s = v.to_vec();
    s.sort();
    s[(s.len() - 1) / 2]
}

fn mean(v: &[Duration]) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.iter().sum::<Duration>() / v.len() as u32
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

/// Per (path, N): mean per command over the stream.
pub fn per_command(r: &StreamResults, via: Via, n: usize) -> Option<Duration> {
    r.times
        .get(&(via, n))
        .map(|t| mean(&t.iter().map(|x| x.1).collect::<Vec<_>>()))
}

fn kind(r: &StreamResults, via: Via, n: usize, cmd: Cmd) -> Vec<Duration> {
    r.times
        .get(&(via, n))
        .map(|t| t.iter().filter(|x| x.0 == cmd).map(|x| x.1).collect())
        .unwrap_or_default()
}

/// `via` against the kernel's own cost for the same batches, by kind of command: (kind,
/// p50 of `via`, p50 of the kernel).
fn by_kind(r: &StreamResults, via: Via, n: usize) -> Vec<(Cmd, Duration, Duration)> {
    Cmd::ALL
        .iter()
        .map(|&c| {
            (
                c,
                p50(&kind(r, via, n, c)),
                p50(&kind(r, Via::Kernel, n, c)),
            )
        })
        .collect()
}

/// The largest ratio of `via` to the kernel over the kinds of command, and the kind.
fn worst_kind(r: &StreamResults, via: Via, n: usize) -> (Cmd, f64) {
    by_kind(r, via, n)
        .into_iter()
        .map(|(c, a, k)| (c, ratio(a, k)))
        .fold((Cmd::NewChain, 0.0), |w, x| if x.1 > w.1 { x } else { w })
}

/// The markdown report.
pub fn markdown(r: &StreamResults) -> String {
    let mut s = String::new();
    let plan = r
        .plan
        .clone()
        .unwrap_or_else(super::stream::StreamPlan::quick);
    let _ = writeln!(
        s,
        "# xtnl-bench stream: the agent's command stream back to back{}\n",
        if plan.quick {
            " (quick: a smoke run)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "`{}`; kernel {}; load average {} at the start, {} at the end; {} reservations of 7 \
         commands each per run, no pauses; every path in a fresh network namespace populated \
         with N reservations; {:.1} s in all.\n",
        r.command,
        r.kernel,
        r.load.0,
        r.load.1,
        plan.reservations,
        r.elapsed.as_secs_f64()
    );
    let spawn_xtnl = p50(&r.spawn_xtnl);
    let _ = writeln!(
        s,
        "Floors (p50 of {}): `/bin/true` {} ms, `xtnl -V` {} ms, a GETGEN round trip {} ms, \
         a request line through a pipe to `/bin/cat` and back {} ms, a connect to `xtnl \
         serve --socket` and a ping through it {} ms.\n",
        r.spawn_true.len(),
        ms(p50(&r.spawn_true)),
        ms(spawn_xtnl),
        ms(p50(&r.getgen)),
        ms(p50(&r.pipe)),
        ms(p50(&r.socket_ping))
    );
    for &n in &plan.sizes {
        let _ = writeln!(s, "## N = {n} reservations in table nat\n");
        let mut head = String::from("| path |");
        let mut rule = String::from("|---|");
        for c in Cmd::ALL {
            let _ = write!(head, " {} p50 |", c.label());
            rule.push_str("---|");
        }
        head.push_str(" mean per command | iptables-nft / path |");
        rule.push_str("---|---|");
        let _ = writeln!(s, "ms.\n\n{head}\n{rule}");
        let base = per_command(r, Via::IptablesNft, n);
        for via in Via::ALL {
            let Some(m) = per_command(r, via, n) else {
                continue;
            };
            let mut row = format!("| {} |", via.label());
            for c in Cmd::ALL {
                let _ = write!(row, " {} |", ms(p50(&kind(r, via, n, c))));
            }
            let vs = base.map_or("-".into(), |b| format!("{:.2}x", ratio(b, m)));
            let _ = writeln!(s, "{row} {} | {vs} |", ms(m));
        }
        let _ = writeln!(s);
        for via in [Via::XtnlProcess, Via::Thin] {
            if let Some(k) = per_command(r, Via::Kernel, n)
                && let Some(x) = per_command(r, via, n)
            {
                let floor = spawn_xtnl + k;
                let _ = writeln!(
                    s,
                    "- {} against the spawn floor plus its kernel cost (`xtnl -V` + the \
                     kernel's mean per command = {} ms): {:.2}x.",
                    via.label(),
                    ms(floor),
                    ratio(x, floor)
                );
            }
        }
        for via in [Via::Serve, Via::Library] {
            let kinds: Vec<String> = by_kind(r, via, n)
                .into_iter()
                .map(|(c, a, k)| {
                    format!(
                        "{} {:.2}x (+{:.0} µs)",
                        c.label(),
                        ratio(a, k),
                        (a.as_secs_f64() - k.as_secs_f64()) * 1e6
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "- {} against the kernel's own cost for the same batches (p50 by command, \
                 and what it adds): {}.",
                via.label(),
                kinds.join(", ")
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Targets (issue 22)\n");
    let _ = writeln!(s, "| target | measured | met |\n|---|---|---|");
    for &n in &plan.sizes {
        let (Some(b), Some(x), Some(v)) = (
            per_command(r, Via::IptablesNft, n),
            per_command(r, Via::XtnlProcess, n),
            per_command(r, Via::Serve, n),
        ) else {
            continue;
        };
        let line = |name: String, got: f64, want: f64| {
            format!(
                "| {name} | {got:.2}x | {} |",
                if got >= want { "yes" } else { "no" }
            )
        };
        let _ = writeln!(
            s,
            "{}",
            line(
                format!("N = {n}: a process per command >= 5x iptables-nft"),
                ratio(b, x),
                5.0
            )
        );
        if let Some(t) = per_command(r, Via::Thin, n) {
            let _ = writeln!(
                s,
                "{}",
                line(
                    format!(
                        "N = {n}: a process per command, via serve (thin client) >= 5x \
                         iptables-nft"
                    ),
                    ratio(b, t),
                    5.0
                )
            );
        }
        let _ = writeln!(
            s,
            "{}",
            line(
                format!("N = {n}: xtnl serve >= 30x iptables-nft"),
                ratio(b, v),
                30.0
            )
        );
        let jump = by_kind(r, Via::Serve, n)
            .into_iter()
            .find(|x| x.0 == Cmd::Jump);
        if let Some((_, a, k)) = jump {
            let x = ratio(a, k);
            let _ = writeln!(
                s,
                "| N = {n}: the request that waits in the kernel (-I jump+comment after a \
                 teardown) within 2x of the kernel's cost | {x:.2}x | {} |",
                if x <= 2.0 { "yes" } else { "no" }
            );
        }
        let (c, x) = worst_kind(r, Via::Serve, n);
        let _ = writeln!(
            s,
            "| N = {n}: every kind of serve request within 2x of the kernel's cost (p50) | \
             largest {x:.1}x ({}) | {} |",
            c.label(),
            if x <= 2.0 { "yes" } else { "no" }
        );
    }
    let ceiling: Vec<String> = plan
        .sizes
        .iter()
        .filter_map(|&n| {
            let b = per_command(r, Via::IptablesNft, n)?;
            let k = per_command(r, Via::Kernel, n)?;
            Some(format!("N = {n} {:.2}x", ratio(b, k)))
        })
        .collect();
    let _ = writeln!(
        s,
        "\nThe ceiling of every path: the kernel alone (the same batches, no library, no \
         process, no pipe) against iptables-nft: {}.",
        ceiling.join(", ")
    );
    s
}

/// Every command's time, one line each: N, path, position, command, µs.
pub fn csv(r: &StreamResults) -> String {
    let mut s = String::from("n,path,index,command,us\n");
    for ((via, n), times) in &r.times {
        for (i, (c, d)) in times.iter().enumerate() {
            let _ = writeln!(
                s,
                "{n},{via:?},{i},{},{:.1}",
                c.label(),
                d.as_secs_f64() * 1e6
            );
        }
    }
    s
}
